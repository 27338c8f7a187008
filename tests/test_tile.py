"""Tile / Repeat: numpy.tile equality for every dtype, every path, edge shapes and bad input."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from helpers import data as _data
from helpers import same as _same
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.dtypes import DEVICE_DTYPES
from ascend_numba.host.tiling import ctype_struct
from ascend_numba.ops.tile.plan import PATHS, TileTilingData, TileTilingData64, merge_dims, plan_tile
from ascend_numba.ops.tile.reference import repeat_reference, tile_reference

DTYPES = [np.dtype(d) for d in DEVICE_DTYPES.values()]

# checked=True on every table of shapes: the kernel breaks no rule of checked mode (SPEC §8).  The
# seed's shapes on every dtype, plain and checked, are registry cases (tests/test_registry.py).
CHECKED = pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])


EDGE_CASES = [
    ((), ()), ((), (3,)), ((), (2, 1, 3)),                  # 0-d
    ((0,), (3,)), ((2, 0, 3), (1, 2, 1)), ((4,), (0,)),    # empty input / zero reps
    ((3, 4), (0, 2)), ((3, 4), (2, 0)),
    ((2, 3, 4), (2,)), ((2, 3, 4), (3, 1)),                # reps shorter than ndim
    ((5,), (2, 3, 4)), ((2, 3), (1, 1, 1, 2)),             # reps longer than ndim
    ((2, 1, 3, 1, 2, 1, 3, 2), (1, 2, 1, 3, 2, 1, 1, 2)),  # 8-D
    ((1, 1, 1, 1), (1, 1, 1, 1)), ((1, 1, 1), (2, 1, 3)),  # dims of 1 everywhere
    ((7,), (1,)), ((3, 5), (1, 1)),                        # pure copies
    ((2, 2, 2, 2, 2, 2, 2, 2, 2, 2), (2, 1, 2, 1, 2, 1, 2, 1, 2, 3)),   # > 8 dims after merging
    ((2,) * 10, (2,) * 10),
    ((3,), 5), ((4, 3), 2),                                # int reps
]


@CHECKED
@pytest.mark.parametrize("shape, reps", EDGE_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.complex128], ids=lambda d: np.dtype(d).name)
def test_edge_shapes(shape, reps, dtype, checked):
    x = _data(shape, dtype, seed=1)
    _same(an.tile(x, reps, checked=checked), np.tile(x, reps))
    _same(an.tile(x, reps), tile_reference(x, reps))


def test_merge_rules_from_the_seed():
    assert merge_dims((1, 1024), (1024, 1)) == ((1024,), (1024,))
    assert merge_dims((256, 256, 4), (2, 2, 2)) == ((256, 256, 4), (2, 2, 2))
    assert merge_dims((128,), (8192,)) == ((128,), (8192,))
    assert merge_dims((4, 5, 6), (2, 1, 1)) == ((120,), (2,))          # rule A twice
    assert merge_dims((1, 5, 1, 6), (1, 2, 3, 1)) == ((5, 6), (2, 3))  # rules A and B
    assert merge_dims((1, 1), (1, 1)) == ((1,), (1,))


# For each path: a shape whose plan picks it (elem dtype, shape, reps).
PATH_SHAPES = {
    "split_mult": (np.float32, (128,), (8192,)),
    "doubling": (np.float32, (64, 256), (1, 16)),
    "build": (np.float32, (256, 64), (1, 3)),
    "gather": (np.float32, (512, 3), (2, 5)),
    "per_row": (np.float32, (1024, 1024), (2, 2)),
}


@CHECKED
@pytest.mark.parametrize("path", PATHS)
def test_each_path_is_selected_and_exact(path, checked):
    dtype, shape, reps = PATH_SHAPES[path]
    x = _data(shape, dtype)
    plan = plan_tile(x.shape, reps, x.itemsize)
    assert plan.path == path == plan.auto_path
    _same(an.tile(x, reps, checked=checked), np.tile(x, reps))


FORCING_CASES = [
    (np.float32, (128,), (8192,)), (np.float32, (64, 256), (1, 16)), (np.float32, (256, 64), (1, 3)),
    (np.float32, (512, 3), (2, 5)), (np.int8, (33, 5), (3, 6)), (np.float16, (7, 16), (4, 4)),
    (np.int8, (4096, 3), (1, 50)), (np.complex128, (9, 2), (2, 7)), (np.uint8, (3, 100000), (2, 3)),
    (np.int32, (5, 7, 3), (3, 1, 4)), (np.int16, (2, 3, 40000), (1, 2, 2)), (np.float64, (30, 4), (1, 8)),
]


@CHECKED
@pytest.mark.parametrize("dtype, shape, reps", FORCING_CASES, ids=str)
def test_every_forcible_path_gives_identical_bytes(dtype, shape, reps, checked):
    x = _data(shape, dtype, seed=3)
    ref = np.tile(x, reps)
    ran = []
    for path in PATHS:
        try:
            got = an.tile(x, reps, path=path, checked=checked)
        except ValueError as e:
            assert "cannot run this shape" in str(e)
            continue
        _same(got, ref)
        ran.append(path)
    assert "per_row" in ran and len(ran) >= 2


@CHECKED
@pytest.mark.parametrize("block_dim", [1, 4, 7, 48])
@pytest.mark.parametrize("dtype, shape, reps", [(np.float32, (3, 1, 100), (1, 5, 3)),
                                                (np.int8, (2, 1, 3, 1, 7), (2, 4, 1, 3, 2)),
                                                (np.float16, (4, 1, 40), (3, 9, 2))], ids=str)
def test_per_row_rows_of_one_source_across_lane_boundaries(dtype, shape, reps, block_dim, checked):
    # isRepeat copies a row forward only from rows its own lane wrote: lanes that start inside a
    # block of rows with one source offset read their first row.
    x = _data(shape, dtype, seed=5)
    _same(an.tile(x, reps, path="per_row", block_dim=block_dim, checked=checked), np.tile(x, reps))


def test_forcing_an_impossible_path_is_a_clear_error():
    x = np.zeros((10, 3), np.float32)
    with pytest.raises(ValueError, match="path 'doubling' cannot run this shape: it needs innerDim aligned"):
        an.tile(x, (1, 4), path="doubling")
    with pytest.raises(ValueError, match="unknown path"):
        an.tile(x, (1, 4), path="fastest")


@CHECKED
@pytest.mark.parametrize("block_dim", [1, 2, 7, 24, 48, 100])
def test_result_independent_of_block_dim(block_dim, checked):
    for dtype, shape, reps in FORCING_CASES[:8]:
        x = _data(shape, dtype, seed=4)
        _same(an.tile(x, reps, block_dim=block_dim, checked=checked), np.tile(x, reps))


@pytest.mark.parametrize("platform", ["A2", "A2_20", "A5", an.get_platform("A5").with_cores(4)])
def test_platforms(platform):
    for dtype, shape, reps in FORCING_CASES[:6]:
        x = _data(shape, dtype, seed=5)
        _same(an.tile(x, reps, platform=platform), np.tile(x, reps))


_dtypes = st.sampled_from(DTYPES + [np.dtype("S3"), np.dtype("V5"), np.longdouble])


@st.composite
def _problems(draw):
    ndim = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
    nreps = draw(st.integers(0, 6))
    reps = tuple(draw(st.lists(st.integers(0, 6), min_size=nreps, max_size=nreps)))
    if draw(st.booleans()) and shape:  # sometimes a long innermost dim
        shape = shape[:-1] + (draw(st.integers(1, 3000)),)
    ndim_out = max(len(shape), len(reps))
    padded_shape = (1,) * (ndim_out - len(shape)) + shape
    padded_reps = (1,) * (ndim_out - len(reps)) + reps
    out_elems = int(np.prod([s * r for s, r in zip(padded_shape, padded_reps)], dtype=np.int64))
    assume(out_elems <= 200_000)
    return (shape, reps, draw(_dtypes), draw(st.sampled_from((None,) + PATHS)), draw(st.integers(1, 48)),
            draw(st.booleans()))


@settings(max_examples=2000)
@given(_problems())
def test_property_equals_numpy_tile(problem):
    shape, reps, dtype, path, block_dim, checked = problem
    x = _data(shape, dtype, seed=len(shape))
    ref = np.tile(x, reps)
    try:
        got = an.tile(x, reps, path=path, block_dim=block_dim, checked=checked)
    except ValueError as e:
        assert path is not None and "cannot run this shape" in str(e)
        got = an.tile(x, reps, block_dim=block_dim, checked=checked)
    _same(got, ref)


@settings(max_examples=150, deadline=None)
@given(_problems())
def test_property_interpreted_equals_numpy_tile(problem):
    # Interpret mode runs the same kernel paths as Python: forced paths, lanes, checked or not.
    shape, reps, dtype, path, block_dim, checked = problem
    x = _data(shape, dtype, seed=len(shape))
    ref = np.tile(x, reps)
    assume(ref.size <= 20_000)
    try:
        got = an.tile(x, reps, path=path, block_dim=block_dim, checked=checked, interpret=True)
    except ValueError as e:
        assert path is not None and "cannot run this shape" in str(e)
        got = an.tile(x, reps, block_dim=block_dim, checked=checked, interpret=True)
    _same(got, ref)


@pytest.mark.parametrize("shape, reps, dtype", [((8, 2160), (1, 1), np.uint8), ((2160,), (2,), np.float64)])
def test_interpreted_build_path_adds_int32_offsets_to_addresses(shape, reps, dtype):
    # Found by the property test above: the build path's 16 KiB copies test a GM address plus an
    # int32 tiling offset for streaming, which overflowed in Python where the compiled sum widens.
    x = _data(shape, dtype, seed=1)
    _same(an.tile(x, reps, path="build", block_dim=1, interpret=True), np.tile(x, reps))


def test_out_parameter_and_aliasing():
    x = _data((64, 48), np.int16)
    out = np.empty((128, 96), np.int16)
    assert an.tile(x, (2, 2), out=out) is out
    _same(out, np.tile(x, (2, 2)))
    big = np.zeros((4, 8), np.int32)
    big[0, :4] = [1, 2, 3, 4]
    src = big[0, :4]
    an.tile(src, (1,), out=big[0, :4].reshape(4))  # out overlaps the input
    assert list(big[0, :4]) == [1, 2, 3, 4]


def test_repeated_calls_on_one_problem_share_nothing_but_the_plan():
    # Calls on the same shapes reuse one prepared plan and launch; data and results must not carry over.
    reps = (3, 1, 2)
    first, second = _data((5, 7, 9), np.float32), -_data((5, 7, 9), np.float32)
    a = an.tile(first, reps)
    b = an.tile(second, reps)
    c = an.tile(first, reps, trace=True)[0]
    d = an.tile(second[::-1].copy(), list(reps), checked=True)
    _same(a, np.tile(first, reps))
    _same(b, np.tile(second, reps))
    _same(c, np.tile(first, reps))
    _same(d, np.tile(second[::-1], reps))
    assert a is not b and not np.may_share_memory(a, b)
    # Arguments equal to a remembered call's but of other types still meet every check.
    with pytest.raises(ValueError, match="non-negative"):
        an.tile(first, (3, 1, -2))
    with pytest.raises(TypeError, match="integers"):
        an.tile(first, (3, True, 2))
    with pytest.raises(TypeError, match="integers"):
        an.tile(first, (3.0, 1, 2))
    with pytest.raises(ValueError, match="block_dim"):
        an.tile(first, reps, block_dim=True)
    _same(an.tile(first, (np.int64(3), 1, 2)), np.tile(first, reps))
    _same(an.repeat(first, reps), np.tile(first, reps))
    with pytest.raises(TypeError, match="integers"):
        an.repeat(first, (3, 1, 2.0))
    with pytest.raises(ValueError, match="smaller"):
        an.repeat(first, (3, 2))


def test_array_likes_and_non_contiguous_input():
    _same(an.tile([[1, 2], [3, 4]], (2, 3)), np.tile([[1, 2], [3, 4]], (2, 3)))
    base = _data((20, 30), np.float32)
    view = base[::2, ::3]
    _same(an.tile(view, (3, 2)), np.tile(view, (3, 2)))

    class Wrapped:
        def __array__(self, dtype=None, copy=None):
            return np.arange(6, dtype=np.int64).reshape(2, 3)
    _same(an.tile(Wrapped(), 2), np.tile(np.arange(6).reshape(2, 3), 2))
    _same(an.tile(5, 3), np.tile(5, 3))


@pytest.mark.parametrize("bad, exc, match", [
    (dict(reps=(-1, 2)), ValueError, "non-negative"),
    (dict(reps=(1.5, 2)), TypeError, "integers"),
    (dict(reps=(True, 2)), TypeError, "integers"),
    (dict(reps=(2, 2), block_dim=0), ValueError, "block_dim"),
    (dict(reps=(2, 2), platform="nope"), ValueError, "unknown platform"),
    (dict(reps=(2, 2), out=np.zeros((8, 7), np.float32)), ValueError, "out has shape"),
    (dict(reps=(2, 2), out=np.zeros((8, 8), np.float64)), TypeError, "out has dtype"),
    (dict(reps=(2, 2), out=np.zeros((8, 16), np.float32)[:, ::2]), ValueError, "C-contiguous"),
])
def test_bad_input_raises_and_touches_nothing(bad, exc, match):
    x = np.ones((4, 4), np.float32)
    sentinel = np.full((8, 8), 7, np.float32)
    kwargs = dict(bad)
    kwargs.setdefault("out", sentinel)
    out_before = kwargs["out"].copy()
    with pytest.raises(exc, match=match):
        an.tile(x, **kwargs)
    assert np.array_equal(kwargs["out"], out_before)


def test_object_arrays_rejected():
    with pytest.raises(TypeError, match="Python objects"):
        an.tile(np.array([object()]), 2)


def test_repeat_contract():
    x = _data((3, 4), np.float32)
    _same(an.repeat(x, (2, 1, 3)), repeat_reference(x, (2, 1, 3)))
    _same(an.repeat(x, [2, 2]), np.tile(x, (2, 2)))
    _same(an.repeat(x, (0, 2)), np.empty((0, 8), np.float32))
    with pytest.raises(ValueError, match="can not be smaller than number of dimensions"):
        an.repeat(x, (2,))
    with pytest.raises(ValueError, match="non-negative"):
        an.repeat(x, (2, -1))




@pytest.mark.parametrize("repeats", [(2, 3), (1, 2, 3), (4, 1, 1, 2), (0, 2)])
def test_repeat_against_torch(repeats):
    torch = pytest.importorskip("torch")
    x = _data((3, 5), np.float32, seed=7)
    ref = torch.from_numpy(x.copy()).repeat(*repeats).numpy()
    _same(an.repeat(x, repeats), ref)


def test_plan_exposes_tiling_bytes_and_core_ranges():
    plan = plan_tile((256, 256, 4), (2, 2, 2), 4)
    assert plan.merged_shape == (256, 256, 4) and plan.inner_dim == 4 and plan.inner_mult == 2
    assert plan.output_inner_dim == 8 and plan.outer_count == 512 * 512
    assert plan.buffer_bytes == 65536 and plan.buf_elems == 16384 and plan.c0_count == 8
    assert plan.block_dim == 24 and plan.path == "gather" and not plan.split_by_mult
    struct = ctype_struct(TileTilingData)
    ref = struct(numDims=3, inputShape=(ctypes.c_int32 * 8)(256, 256, 4, 1, 1, 1, 1, 1),
                 multiples=(ctypes.c_int32 * 8)(2, 2, 2, 1, 1, 1, 1, 1),
                 outputShape=(ctypes.c_int32 * 8)(512, 512, 8, 1, 1, 1, 1, 1),
                 inputStrides=(ctypes.c_int32 * 8)(1024, 4, 1), outputStrides=(ctypes.c_int32 * 8)(4096, 8, 1),
                 totalInputElems=262144, totalOutputElems=2097152, elemBytes=4, blockDim=24, ubSize=65536)
    assert plan.tiling_bytes == bytes(ref) and len(plan.tiling_bytes) == 4 * (1 + 5 * 8 + 5)
    per = -(-plan.outer_count // 24)
    assert plan.core_ranges()[:2] == [(0, per), (per, 2 * per)] and plan.core_ranges()[-1][1] == plan.outer_count
    split = plan_tile((128,), (8192,), 4)
    assert split.split_by_mult and split.core_ranges()[0] == (0, -(-8192 // 24))


def test_int64_plan_beyond_int32_elements():
    plan = plan_tile((1 << 16,), (1 << 16,), 1)
    assert isinstance(plan.tiling, TileTilingData64) and plan.int64
    assert not plan_tile((1 << 15,), (1 << 15,), 1).int64


@pytest.mark.slow
def test_int64_variant_runs_past_int32():
    x = np.arange(1 << 20, dtype=np.uint8)
    out = an.tile(x, 2049)  # 2**31 + 2**20 elements
    assert out.size > 2**31 - 1
    view = out.reshape(2049, 1 << 20)
    for r in (0, 1, 1024, 2048):
        assert np.array_equal(view[r], x)
