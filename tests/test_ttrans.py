"""TTRANS: 2-D transpose and the seven format conversions against NumPy references; tmp sizes; rules."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from helpers import data as _data
from helpers import same as _same

import ascend_numba as an
from ascend_numba.dtypes import dtype_by_name
from ascend_numba.host.tiling import int32
from ascend_numba.kernels import KernelError, alloc_buffer, data_copy, kernel, ttrans
from ascend_numba.kernels.lane import STATE_TTRANS_SCALAR, STATE_TTRANS_VECTOR
from ascend_numba.ops.ttrans import reference as R
from ascend_numba.ops.ttrans.plan import TTRANS_DTYPES, _tile_side, plan_transpose_blocks, transpose_tile_paths

DTYPES = [dtype_by_name(name) for name in TTRANS_DTYPES]


@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (33, 65), (200, 300), (1, 1000), (1000, 1), (257, 129),
                                   (1024, 768)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES + [np.float64, np.int64], ids=lambda d: np.dtype(d).name)
def test_transpose2d(shape, dtype):
    x = _data(shape, dtype)
    _same(an.transpose2d(x), R.transpose2d_reference(x))
    _same(an.transpose2d(x, checked=True), R.transpose2d_reference(x))  # no checked-mode rule broken


@pytest.mark.parametrize("block_dim", [1, 3, 48, 200])
def test_transpose2d_block_dims_and_out(block_dim):
    x = _data((300, 517), np.float32, seed=block_dim)
    out = np.empty((517, 300), np.float32)
    assert an.transpose2d(x, out=out, block_dim=block_dim) is out
    _same(out, x.T.copy())


@pytest.mark.parametrize("shape, both", [((200, 300), True), ((517, 300), True), ((100, 1000), False),
                                         ((1000, 100), True), ((256, 256), False)], ids=str)
def test_both_tile_paths_ran_agree_and_match_the_plan(shape, both):
    x = _data(shape, np.float32, seed=1)
    out, trace = an.transpose2d(x, trace=True)
    _same(out, x.T.copy())
    ran = {"vector": trace.info["vector_tiles"], "scalar": trace.info["scalar_tiles"]}
    h, w = shape
    plan = plan_transpose_blocks(1, 1, h, w, h, w, h, 0, 0, w, 0, 0, h, 4, an.get_platform("A2"))
    assert ran == transpose_tile_paths(plan, 4)
    assert (ran["vector"] > 0 and ran["scalar"] > 0) == both


@dataclass
class TTransTiling:
    rows: int32
    cols: int32
    src_stride: int32
    dst_stride: int32
    tmp_elems: int32


@kernel
def ttrans_tile(ctx, x, y, t):
    src = alloc_buffer(ctx, t.rows * t.src_stride, x.dtype)
    dst = alloc_buffer(ctx, t.cols * t.dst_stride, x.dtype)
    tmp = alloc_buffer(ctx, max(1, t.tmp_elems), x.dtype)
    data_copy(ctx, src, 0, x, 0, t.rows * t.src_stride)
    data_copy(ctx, dst, 0, y, 0, t.cols * t.dst_stride)
    ttrans(ctx, dst, t.dst_stride, src, t.src_stride, t.rows, t.cols, tmp)
    data_copy(ctx, y, 0, dst, 0, t.cols * t.dst_stride)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("rows, cols, src_stride, dst_stride, path", [
    (16, 32, 32, 16, "vector"), (20, 40, 64, 32, "vector"), (9, 7, 32, 32, "vector"),
    (16, 32, 33, 16, "scalar"), (20, 40, 64, 21, "scalar"), (5, 3, 7, 5, "scalar"),
])
def test_ttrans_primitive_paths_agree(dtype, rows, cols, src_stride, dst_stride, path):
    size = np.dtype(dtype).itemsize
    rs = 32 if size == 1 else 16
    epb = 32 // size
    vector = dst_stride % rs == 0 and src_stride % epb == 0 and src_stride // epb <= 255
    if (path == "vector") != vector:
        pytest.skip("this stride pair takes the other path for this width")
    x = _data((rows * src_stride,), dtype)
    y = np.full(cols * dst_stride, 7, dtype)
    tmp = cols * (-(-rows // rs) * rs)
    state = ttrans_tile.launch(x, y, TTransTiling(rows, cols, src_stride, dst_stride, tmp), block_dim=1)
    assert state[0, STATE_TTRANS_VECTOR if vector else STATE_TTRANS_SCALAR] == 1
    expect = np.full(cols * dst_stride, 7, dtype)
    for i in range(rows):
        for j in range(cols):
            expect[j * dst_stride + i] = x[i * src_stride + j]
    _same(y, expect)


def test_ttrans_tmp_too_small_is_an_error():
    x = _data((16 * 32,), np.uint32)
    y = np.zeros(32 * 16, np.uint32)
    with pytest.raises(KernelError, match="temporary tile too small, it needs 512 elements"):
        ttrans_tile.launch(x, y, TTransTiling(16, 32, 32, 16, 100), block_dim=1)


@kernel
def ttrans_tmp_copied_out(ctx, x, y, t):
    """TTRANS, then tmp copied out as if it held a result."""
    src = alloc_buffer(ctx, t.rows * t.src_stride, x.dtype)
    dst = alloc_buffer(ctx, t.cols * t.dst_stride, x.dtype)
    tmp = alloc_buffer(ctx, t.tmp_elems, x.dtype)
    data_copy(ctx, src, 0, x, 0, t.rows * t.src_stride)
    ttrans(ctx, dst, t.dst_stride, src, t.src_stride, t.rows, t.cols, tmp)
    data_copy(ctx, y, 0, tmp, 0, t.tmp_elems)


def test_ttrans_tmp_is_garbage_after_it_in_checked_mode():
    """The device computes in tmp (seed 004); the twin leaves its bytes, checked mode marks them."""
    x = _data((16 * 32,), np.uint32)
    y = np.full(512, 7, np.uint32)
    with pytest.raises(an.KernelCheckError) as caught:
        ttrans_tmp_copied_out.launch(x, y, TTransTiling(16, 32, 32, 16, 512), block_dim=1, checked=True)
    assert (caught.value.primitive, caught.value.rule) == ("DataCopy", "gm-write-garbage"), str(caught.value)
    assert (y == 7).all()


@kernel
def ttrans_into_small_dst(ctx, x, y, guard, dst_elems, dst_stride):
    """A 16x16 fp32 TTRANS into a destination ``dst_elems`` long, a guard buffer right after it."""
    src = alloc_buffer(ctx, 16 * 16, x.dtype)
    dst = alloc_buffer(ctx, dst_elems, x.dtype)
    after = alloc_buffer(ctx, 8 * 16, x.dtype)
    tmp = alloc_buffer(ctx, 16 * 16, x.dtype)
    data_copy(ctx, after, 0, guard, 0, 8 * 16)
    data_copy(ctx, dst, 0, y, 0, dst_elems)
    data_copy(ctx, src, 0, x, 0, 16 * 16)
    ttrans(ctx, dst, dst_stride, src, 16, 16, 16, tmp)
    data_copy(ctx, y, 0, dst, 0, dst_elems)
    data_copy(ctx, guard, 0, after, 0, 8 * 16)


@pytest.mark.parametrize("dst_elems, dst_stride", [(128, 16), (16, 12800), (16, 12808), (128, 2**62), (128, 2**62 + 8)],
                         ids=["vector-half-room", "vector-far-stride", "scalar-far-stride", "vector-huge-stride",
                              "scalar-huge-stride"])
def test_ttrans_past_its_destination_skips_those_elements(dst_elems, dst_stride):
    """Elements whose place lies past dst are dropped; nothing past dst (its neighbour in UB, other
    lanes' UB) is written.  A stride near 2^62 overflows j * stride: it wrapped the vector path's
    stores back into row 0, and the scalar path's into the next buffer."""
    x = np.arange(1, 257, dtype=np.float32)
    y = np.zeros(dst_elems, np.float32)
    guard = np.full(8 * 16, -1.0, np.float32)
    ttrans_into_small_dst.launch(x, y, guard, dst_elems, dst_stride, block_dim=1)
    expect = np.zeros(dst_elems, np.float32)
    for j in range(16):
        for i in range(16):
            if j * dst_stride + i < dst_elems:
                expect[j * dst_stride + i] = x[i * 16 + j]
    _same(y, expect)
    assert (guard == -1.0).all()


def test_ttrans_huge_stride_is_reported_in_checked_mode():
    x, y, guard = np.arange(1, 257, dtype=np.float32), np.zeros(128, np.float32), np.full(128, -1.0, np.float32)
    with pytest.raises(an.KernelCheckError, match=r"TTRANS: \[ub-outside-ub\] dst"):
        ttrans_into_small_dst.launch(x, y, guard, 128, 2**62, block_dim=1, checked=True)
    assert not y.any() and (guard == -1.0).all()


def _c0(dtype):
    return 32 // np.dtype(dtype).itemsize


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(2, 37, 5, 6), (1, 8, 1, 1), (3, 70, 9, 11), (2, 16, 56, 56)], ids=str)
def test_nchw_round_trip(dtype, shape):
    x = _data(shape, dtype, seed=2)
    c0 = _c0(dtype)
    y = an.convert_format(x, "NCHW", "NC1HWC0", checked=True)
    _same(y, R.nchw_to_nc1hwc0(x, c0))
    _same(an.convert_format(y, "NC1HWC0", "NCHW", c=shape[1]), x)      # with crop
    _same(an.convert_format(y, "NC1HWC0", "NCHW", checked=True), R.nc1hwc0_to_nchw(y))  # C1*C0 channels


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8], ids=lambda d: np.dtype(d).name)
def test_nchw_c0_four(dtype):
    x = _data((2, 10, 3, 7), dtype, seed=3)
    _same(an.convert_format(x, "NCHW", "NC1HWC0", c0=4), R.nchw_to_nc1hwc0(x, 4))
    _same(an.convert_format(x, "NCHW", "NC1HWC0", c0=4, checked=True), R.nchw_to_nc1hwc0(x, 4))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gnchw_round_trip(dtype):
    x = _data((3, 2, 19, 4, 5), dtype, seed=4)
    y = an.convert_format(x, "GNCHW", "GNC1HWC0")
    _same(y, R.nchw_to_nc1hwc0(x, _c0(dtype)))
    _same(an.convert_format(y, "GNC1HWC0", "GNCHW", c=19, checked=True), x)


@pytest.mark.parametrize("n0", [4, 8, 16])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_fractal_z(dtype, n0):
    c0 = _c0(dtype)
    y = _data((13, 3, 4, 5, c0), dtype, seed=5)  # N = 13, not a multiple of N0
    _same(an.convert_format(y, "NC1HWC0", "FRACTAL_Z", n0=n0), R.nc1hwc0_to_fractal_z(y, n0))
    g = _data((2, 5, 2, 3, 3, c0), dtype, seed=6)  # G > 1
    _same(an.convert_format(g, "GNC1HWC0", "FRACTAL_Z", n0=n0, checked=True), R.nc1hwc0_to_fractal_z(g, n0))


@pytest.mark.parametrize("n0", [4, 8, 16])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_fractal_z_3d(dtype, n0):
    x = _data((5, 37, 3, 4, 6), dtype, seed=7)  # C and N not multiples, D > 1
    _same(an.convert_format(x, "NCDHW", "FRACTAL_Z_3D", n0=n0), R.ncdhw_to_fractal_z_3d(x, _c0(dtype), n0))
    _same(an.convert_format(x, "NCDHW", "FRACTAL_Z_3D", n0=n0, checked=True),
          R.ncdhw_to_fractal_z_3d(x, _c0(dtype), n0))


def test_large_conversion_chunks():
    x = _data((17, 40, 2, 30, 31), np.float16, seed=8)
    _same(an.convert_format(x, "NCDHW", "FRACTAL_Z_3D", checked=True), R.ncdhw_to_fractal_z_3d(x, 16, 16))
    z = _data((161, 20, 1, 3, 3), np.float16, seed=10)  # N1*N0 = 176 in plane groups, the last one short
    _same(an.convert_format(z, "NCDHW", "FRACTAL_Z_3D", checked=True), R.ncdhw_to_fractal_z_3d(z, 16, 16))
    y = _data((40, 3, 30, 31, 16), np.float16, seed=9)
    _same(an.convert_format(y, "NC1HWC0", "FRACTAL_Z", checked=True), R.nc1hwc0_to_fractal_z(y, 16))


TMP_CASES = [
    ((100, 37), np.float32, "ND", "ND", {}, 37 * 112 * 4),
    ((100, 37), np.int8, "ND", "ND", {}, 37 * 128 * 1),
    ((2, 37, 5, 6), np.float16, "NCHW", "NC1HWC0", {}, 30 * 16 * 2),
    ((2, 37, 5, 6), np.int8, "NCHW", "NC1HWC0", {}, 30 * 32 * 1),
    ((2, 37, 5, 6), np.float32, "NCHW", "NC1HWC0", {"c0": 4}, 30 * 16 * 4),
    ((3, 2, 19, 4, 5), np.float32, "GNCHW", "GNC1HWC0", {}, 20 * 16 * 4),
    ((2, 3, 5, 6, 16), np.float16, "NC1HWC0", "NCHW", {}, 16 * 32 * 2),
    ((3, 2, 3, 5, 6, 32), np.int8, "GNC1HWC0", "GNCHW", {}, 32 * 32 * 1),
    ((13, 3, 4, 5, 16), np.float16, "NC1HWC0", "FRACTAL_Z", {}, 0),
    ((2, 13, 3, 4, 5, 8), np.float32, "GNC1HWC0", "FRACTAL_Z", {}, 0),
    ((5, 37, 3, 4, 6), np.float16, "NCDHW", "FRACTAL_Z_3D", {},
     (5 * 3 * 16 * 24 + max(5 * 3 * 16 * 24, 24 * 16)) * 2),
]


@pytest.mark.parametrize("shape, dtype, src, dst, kw, expected", TMP_CASES, ids=lambda v: str(v)[:20])
def test_ttrans_tmp_bytes(shape, dtype, src, dst, kw, expected):
    assert an.ttrans_tmp_bytes(shape, dtype, src, dst, **kw) == expected


def test_platform_rules():
    with pytest.raises(an.TTransRuleError, match="element type float64 not supported"):
        an.convert_format(np.zeros((1, 8, 2, 2)), "NCHW", "NC1HWC0")
    with pytest.raises(an.TTransRuleError, match="element type bool not supported"):
        an.transpose2d(np.zeros((4, 4), bool))
    with pytest.raises(an.TTransRuleError, match="float8"):
        an.transpose2d(np.zeros((4, 4), ml_dtypes.float8_e4m3fn))
    f8 = _data((32, 64), ml_dtypes.float8_e4m3fn)
    _same(an.transpose2d(f8, platform="A5"), f8.T.copy())   # A5: float8 as raw bytes
    with pytest.raises(an.TTransRuleError, match="leading dimension .* must be 32-byte aligned"):
        an.transpose2d(np.zeros((32, 7), np.float32), platform="A5")
    with pytest.raises(an.TTransRuleError, match="A5 supports only"):
        an.convert_format(np.zeros((1, 1, 2, 2, 16), np.float16), "NC1HWC0", "NCHW", platform="A5")
    with pytest.raises(an.TTransRuleError, match="A5 supports only"):
        an.convert_format(np.zeros((1, 16, 1, 2, 2), np.float16), "NCDHW", "FRACTAL_Z_3D", platform="A5")
    x = _data((1, 20, 4, 16), np.float16)
    _same(an.convert_format(x, "NCHW", "NC1HWC0", platform="A5"), R.nchw_to_nc1hwc0(x, 16))
    with pytest.raises(an.TTransRuleError, match="C0 must be 16"):
        an.convert_format(np.zeros((1, 8, 2, 2), np.float16), "NCHW", "NC1HWC0", c0=8)
    with pytest.raises(an.TTransRuleError, match="C0 must be 16 for 2-byte elements, got c0=4"):
        an.convert_format(np.zeros((2, 8, 1, 2, 2), np.float16), "NCDHW", "FRACTAL_Z_3D", c0=4)
    with pytest.raises(ValueError, match="unsupported conversion"):
        an.convert_format(np.zeros((1, 8, 2, 2), np.float16), "NCHW", "FRACTAL_Z")
    with pytest.raises(ValueError, match="2-D"):
        an.transpose2d(np.zeros((2, 2, 2), np.float32))


def test_tmp_bytes_takes_c0_by_the_rule_convert_format_applies():
    x = np.zeros((2, 20, 1, 3, 3), np.float16)
    for fn in (lambda: an.ttrans_tmp_bytes(x.shape, x.dtype, "NCDHW", "FRACTAL_Z_3D", c0=4),
               lambda: an.convert_format(x, "NCDHW", "FRACTAL_Z_3D", c0=4)):
        with pytest.raises(an.TTransRuleError, match="C0 must be 16 for 2-byte elements, got c0=4"):
            fn()
    with pytest.raises(ValueError, match="does not match the input's C0 dim 16"):
        an.ttrans_tmp_bytes((1, 2, 3, 3, 16), np.float16, "NC1HWC0", "NCHW", c0=8)
    assert an.ttrans_tmp_bytes((1, 16, 4, 4), np.float16, "NCHW", "NC1HWC0", c0=4) == 4 * 4 * 16 * 2


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 70), st.integers(1, 70), st.sampled_from(["float32", "float16", "int8", "uint16"]),
       st.integers(1, 48), st.booleans())
def test_property_interpreted_transpose_equals_numpy(h, w, dtype, block_dim, checked):
    # Interpret mode runs TTRANS's vector and scalar tile paths as Python: x.T, bit for bit.
    x = _data((h, w), dtype_by_name(dtype), seed=h * w)
    got = an.transpose2d(x, block_dim=block_dim, checked=checked, interpret=True)
    _same(got, np.ascontiguousarray(x.T))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 80), st.integers(1, 80), st.sampled_from(["float64", "float32", "float16", "int8"]))
def test_property_block_strips_compiled_and_interpreted_equal_numpy(h, w, dtype):
    # Strips of two blocks, of one and of edge columns, whole and part row blocks: each width's
    # register transposes (compiled) and their twin (interpreted) give x.T.
    x = _data((h, w), dtype_by_name(dtype), seed=h + 97 * w)
    _same(an.transpose2d(x, block_dim=1), np.ascontiguousarray(x.T))
    _same(an.transpose2d(x, block_dim=1, interpret=True), np.ascontiguousarray(x.T))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8], ids=lambda d: np.dtype(d).name)
def test_narrow_blocks_get_tall_tiles(dtype):
    """NC1HWC0 -> NCHW transposes [H*W, C0] blocks: their tiles take as many rows as the UB holds
    (a 56x56 plane in two tiles, not twenty), in whole cache lines; the round trip above checks them."""
    size, plat, c0 = np.dtype(dtype).itemsize, an.get_platform("A2"), _c0(dtype)
    t = plan_transpose_blocks(outer=2, inner=1, rows=56 * 56, cols=c0, total_rows=56 * 56, total_cols=c0,
                              out_rows=56 * 56, src_outer=0, src_inner=0, src_row_stride=c0, dst_outer=0,
                              dst_inner=0, dst_row_stride=56 * 56, elem_bytes=size, platform=plat)
    assert t.tileRows > _tile_side(plat.ub_size, size, plat.block_bytes) and t.rowTiles == 2
    assert t.tileRows * size % 64 == 0 and 3 * t.tileRows * t.tileCols * size <= plat.ub_size
