"""Compare, Compares and Select (``kernels/primitives/cmpsel.py``): compiled, interpreted and the
NumPy references (``host/references/compare.py``) agree bit for bit over dtypes, modes, counts,
scalars and special values; checked mode names a bad mode, a short mask and a count with a tail.

One kernel runs every op on fp32, fp16 and int32 tiles with the modes and the count as
arguments: it compiles once; one more takes Compare's and Compares' level-0 form.  Each output tile is first loaded from its GM array, which the test
fills with a sentinel, so the bytes an op must not write are checked too.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import import_source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

import ascend_numba as an
from ascend_numba.kernels import (
    BinaryRepeatParams, UnaryRepeatParams, alloc_buffer, compare, compare_scalar, data_copy, reinterpret, select,
    select_scalar,
)
from ascend_numba.host.primitives import CMPMODE, COMPARE_OPS, SELMODE
from ascend_numba.host.references.compare import REFERENCES, reference
from ascend_numba.host.references.compare import select_level0 as reference_level0_select
from ascend_numba.host.references.repeat import lanes

TILE = 256  # elements per tile
MASK_BYTES = TILE // 8
# The device's types (fp16, fp32; int32 for EQ) and int32 in every mode, as the twin extends it.
DTYPES = {"f32": np.float32, "f16": np.uint16, "i32": np.int32}
SENTINEL = 0xA5
OUTPUTS = ("cmp", "cmps", "sel", "sels")


def _kernel_source() -> str:
    params = [f"{p}_{w}" for w in DTYPES for p in ("x", "y", *OUTPUTS)]
    lines = ["import numpy as np", "import ascend_numba as an",
             "from ascend_numba.kernels import alloc_buffer, data_copy, compare, compare_scalar, select, select_scalar",
             "", f"@an.kernel(outputs={tuple(p for p in params if not p.startswith(('x_', 'y_')))!r})",
             f"def every_cmpsel(ctx, {', '.join(params)}, mask, cmode, smode, count, s):",
             f"    k = alloc_buffer(ctx, {MASK_BYTES}, np.uint8)", f"    data_copy(ctx, k, 0, mask, 0, {MASK_BYTES})"]
    for w, dtype in DTYPES.items():
        dt = f"np.{np.dtype(dtype).name}"
        lines += [f"    a_{w} = alloc_buffer(ctx, {TILE}, {dt})", f"    b_{w} = alloc_buffer(ctx, {TILE}, {dt})",
                  f"    d_{w} = alloc_buffer(ctx, {TILE}, {dt})", f"    m_{w} = alloc_buffer(ctx, {MASK_BYTES}, np.uint8)",
                  f"    data_copy(ctx, a_{w}, 0, x_{w}, 0, {TILE})", f"    data_copy(ctx, b_{w}, 0, y_{w}, 0, {TILE})"]
        for out, call, tile, n in (("cmp", f"compare(ctx, m_{w}, a_{w}, b_{w}, cmode, count)", "m", MASK_BYTES),
                                   ("cmps", f"compare_scalar(ctx, m_{w}, a_{w}, s, cmode, count)", "m", MASK_BYTES),
                                   ("sel", f"select(ctx, d_{w}, k, a_{w}, b_{w}, smode, count)", "d", TILE),
                                   ("sels", f"select_scalar(ctx, d_{w}, k, a_{w}, s, 1, count)", "d", TILE)):
            lines += [f"    data_copy(ctx, {tile}_{w}, 0, {out}_{w}, 0, {n})", f"    {call}",
                      f"    data_copy(ctx, {out}_{w}, 0, {tile}_{w}, 0, {n})"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def every_cmpsel(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("cmpsel") / "every_cmpsel.py", _kernel_source()).every_cmpsel


SPECIALS = {
    "f32": np.array([0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
                     0x7F800001, 0x00000001, 0x7F7FFFFF, 0x3FC00000], np.uint32).view(np.float32),
    "f16": np.array([0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01, 0x0001, 0x7BFF, 0x3E00],
                    np.uint16),
    "i32": np.array([0, 1, -1, 2**31 - 1, -2**31, 2], np.int32),
}


def _tiles(seed: int) -> dict:
    """Per dtype: x and y of specials and random bits, y equal to x at about a third of the elements."""
    rng = np.random.default_rng(seed)
    out = {}
    for w, dtype in DTYPES.items():
        bits = np.dtype(dtype).itemsize * 8
        unsigned = np.dtype(f"u{bits // 8}")
        x = rng.integers(0, 2**bits, TILE, dtype=np.uint64).astype(unsigned).view(dtype)
        y = rng.integers(0, 2**bits, TILE, dtype=np.uint64).astype(unsigned).view(dtype)
        specials = SPECIALS[w]
        k = len(specials)
        x[:k * k] = np.repeat(specials, k)  # every pair of specials
        y[:k * k] = np.tile(specials, k)
        same = rng.random(TILE) < 0.33
        same[:k * k] = False
        y[same] = x[same]
        out[w] = (x, y)
    return out


def _sentinel_outputs(dtype) -> dict:
    """Each output of one tile type, every byte the sentinel: the comparisons' masks (uint8) and the
    selections (the tile type)."""
    return {name: np.full(MASK_BYTES if name.startswith("cmp") else TILE * np.dtype(dtype).itemsize, SENTINEL,
                          np.uint8).view(np.uint8 if name.startswith("cmp") else dtype) for name in OUTPUTS}


def _run(kernel, tiles, mask, cmode, smode, count, scalar, interpret):
    args, outs = [], {}
    for w, dtype in DTYPES.items():
        outs[w] = _sentinel_outputs(dtype)
        args += [*tiles[w], *outs[w].values()]
    # An integer tile takes the float scalar too: toward zero, NaN 0, saturated to int64, then modulo
    # the width (1e19 and inf as -1 on int32), compiled and interpreted alike.
    kernel.launch(*args, mask, int(cmode), int(smode), count, scalar, block_dim=1, interpret=interpret)
    return outs


def _as_values(w, a):
    return a.view(np.float16) if w == "f16" else a


def _expected(tiles, mask, cmode, smode, count, scalar):
    """The references on the first ``count`` elements; bytes past them keep the sentinel."""
    out = {}
    for w, dtype in DTYPES.items():
        x, y = (t[:count] for t in tiles[w])
        want = _sentinel_outputs(dtype)
        computed = reference("compare", _as_values(w, x), _as_values(w, y), cmode)  # whole repeats
        want["cmp"][:computed.size] = computed
        computed = reference("compare_scalar", _as_values(w, x), scalar, cmode)
        want["cmps"][:computed.size] = computed
        want["sel"][:count] = reference("select", mask, x, y, smode)
        want["sels"][:count] = _as_values(w, reference("select_scalar", mask, _as_values(w, x), scalar,
                                                       SELMODE.VSEL_TENSOR_SCALAR_MODE)).view(dtype)
        out[w] = want
    return out


def _assert_same(got, want, what):
    for w in DTYPES:
        for name in OUTPUTS:
            g, e = got[w][name].view(np.uint8), want[w][name].view(np.uint8)
            bad = np.flatnonzero(g != e)
            assert bad.size == 0, f"{what} {name} {w}: {bad.size} bytes differ, first at {bad[0]}: {g[bad[0]]:#x} " \
                                  f"vs {e[bad[0]]:#x}"


SCALARS = [1.5, -0.0, 0.0, float("nan"), float("inf"), -2.0, 65504.0, 1e-8, 3.0, 1e19]


@pytest.mark.parametrize("cmode", list(CMPMODE), ids=lambda m: m.name)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), smode=st.sampled_from([SELMODE.VSEL_CMPMASK_SPR, SELMODE.VSEL_TENSOR_TENSOR_MODE]),
       count=st.one_of(st.sampled_from([0, 1, 8, 64, 128, TILE]), st.integers(0, TILE)),
       scalar=st.sampled_from(SCALARS))
def test_compiled_interpreted_and_references_agree(every_cmpsel, cmode, seed, smode, count, scalar):
    tiles = _tiles(seed)
    mask = np.random.default_rng(seed + 1).integers(0, 256, MASK_BYTES, dtype=np.uint8)
    want = _expected(tiles, mask, cmode, smode, count, scalar)
    _assert_same(_run(every_cmpsel, tiles, mask, cmode, smode, count, scalar, False), want, "compiled")
    _assert_same(_run(every_cmpsel, tiles, mask, cmode, smode, count, scalar, True), want, "interpreted")


def test_every_op_has_a_reference():
    assert set(COMPARE_OPS) == set(REFERENCES)


def test_nan_makes_every_mode_false_and_signed_zeros_are_equal(every_cmpsel):
    """The A2/A3 boundary values: a NaN operand makes every mode false, NE included; -0.0 == +0.0.
    The compiled op on fp32 and fp16 tiles, and the reference."""
    rows = {"f32": (np.array([np.nan, 0.0, np.nan, 1.0], np.float32), np.array([1.0, -0.0, np.nan, np.nan], np.float32)),
            "f16": (np.array([0x7E00, 0, 0xFE01, 0x3C00], np.uint16), np.array([0x3C00, 0x8000, 0x7E00, 0x7C01], np.uint16))}
    want = {CMPMODE.LT: 0, CMPMODE.GT: 0, CMPMODE.EQ: 0b0010, CMPMODE.LE: 0b0010, CMPMODE.GE: 0b0010, CMPMODE.NE: 0}
    tiles = _tiles(0)
    for w, (a, b) in rows.items():
        tiles[w][0][:4], tiles[w][1][:4] = a, b
    for mode, bits in want.items():
        got = _run(every_cmpsel, tiles, np.zeros(MASK_BYTES, np.uint8), mode, SELMODE.VSEL_TENSOR_TENSOR_MODE, TILE,
                   1.5, False)
        for w, (a, b) in rows.items():
            assert got[w]["cmp"][0] & 0xF == bits, (w, mode)
            assert reference("compare", *(np.resize(_as_values(w, t), TILE) for t in (a, b)), mode)[0] & 0xF == bits


def test_select_spr_mode_repeats_the_first_mask_bits_every_256_bytes():
    mask = np.zeros(MASK_BYTES, np.uint8)
    mask[0] = 0b101
    a, b = np.arange(1, 129, dtype=np.float32), -np.arange(1, 129, dtype=np.float32)
    got = reference("select", mask, a, b, SELMODE.VSEL_CMPMASK_SPR)
    assert got[[0, 1, 2, 64, 65, 66]].tolist() == [1, -2, 3, 65, -66, 67]


# ---- checked mode (interpreted: the rules are the compiled code run as Python) -----------------------

@an.kernel(outputs=("o",))
def _one_select(ctx, x, mask, o, smode, count):
    a = alloc_buffer(ctx, 512, np.float32)
    k = alloc_buffer(ctx, 32, np.uint8)
    d = alloc_buffer(ctx, 512, np.float32)
    data_copy(ctx, a, 0, x, 0, 512)
    data_copy(ctx, k, 0, mask, 0, 32)
    select(ctx, d, k, a, a, smode, count)
    data_copy(ctx, o, 0, d, 0, 512)


@an.kernel(outputs=("o",))
def _one_compare(ctx, x, o, cmode, count):
    a = alloc_buffer(ctx, 512, np.float32)
    k = alloc_buffer(ctx, 64, np.uint8)
    data_copy(ctx, a, 0, x, 0, 512)
    compare(ctx, k, a, a, cmode, count)
    data_copy(ctx, o, 0, k, 0, 64)


@pytest.mark.parametrize("kernel, mode, count, rule, operand", [
    (_one_select, SELMODE.VSEL_TENSOR_SCALAR_MODE, 256, "mode-out-of-range", "dst"),
    (_one_select, 7, 256, "mode-out-of-range", "dst"),
    (_one_select, SELMODE.VSEL_TENSOR_TENSOR_MODE, 512, "ub-outside-buffer", "mask"),  # 512 bits needed, 256 there
    (_one_compare, 6, 64, "mode-out-of-range", "dst"),
    (_one_compare, CMPMODE.LT, 100, "vector-count-unaligned", "src"),  # 400 bytes: one repeat and a tail
    (_one_compare, CMPMODE.LT, -64, "count-out-of-range", "dst"),
], ids=["select-scalar-mode", "select-mode-7", "select-short-mask", "compare-mode-6", "compare-tail",
        "compare-negative"])
def test_checked_mode_names_a_bad_mode_a_short_mask_and_a_tail(kernel, mode, count, rule, operand):
    x = np.ones(512, np.float32)
    args = (x, np.zeros(32, np.uint8), np.zeros(512, np.float32)) if kernel is _one_select else \
        (x, np.zeros(64, np.uint8))
    with pytest.raises(an.KernelCheckError) as caught:
        kernel.launch(*args, int(mode), count, block_dim=1, checked=True, interpret=True)
    assert (caught.value.rule, caught.value.operand) == (rule, operand)


def test_checked_mode_passes_a_correct_kernel_compiled():
    """The compiled checked lane (the rule called through the rule table): a correct call passes and
    computes the unchecked bits, a tail is named.  fp32 Compare only: the rule's every verdict is
    tested interpreted above (the same code)."""
    x = np.random.default_rng(5).standard_normal(512).astype(np.float32)
    got = np.zeros(64, np.uint8)
    _one_compare.launch(x, got, int(CMPMODE.GE), 512, block_dim=1, checked=True)
    assert np.array_equal(got, reference("compare", x, x, CMPMODE.GE)) and got.all()
    with pytest.raises(an.KernelCheckError, match="vector-count-unaligned"):
        _one_compare.launch(x, got, int(CMPMODE.GT), 100, block_dim=1, checked=True)


def test_operand_types_the_device_lacks_do_not_compile():
    @an.kernel(outputs=("o",))
    def wide_mask(ctx, x, o):
        a = alloc_buffer(ctx, 64, np.float32)
        k = alloc_buffer(ctx, 16, np.uint16)
        data_copy(ctx, a, 0, x, 0, 64)
        compare(ctx, k, a, a, 0, 64)
        data_copy(ctx, o, 0, k, 0, 16)

    @an.kernel(outputs=("o",))
    def mixed_select(ctx, x, m, o):
        a = alloc_buffer(ctx, 64, np.float32)
        k = alloc_buffer(ctx, 32, np.uint8)
        d = alloc_buffer(ctx, 64, np.uint16)
        data_copy(ctx, a, 0, x, 0, 64)
        data_copy(ctx, k, 0, m, 0, 32)
        select(ctx, d, k, a, a, 2, 64)
        data_copy(ctx, o, 0, d, 0, 64)

    with pytest.raises(Exception, match="one bit per element into a uint8"):
        wide_mask.launch(np.ones(64, np.float32), np.zeros(16, np.uint16), block_dim=1)
    with pytest.raises(Exception, match="tiles of one type"):
        mixed_select.launch(np.ones(64, np.float32), np.zeros(32, np.uint8), np.zeros(64, np.uint16), block_dim=1)


@an.kernel(outputs=("o",))
def _select_empty_mask(ctx, x, o):
    a = alloc_buffer(ctx, 64, np.float32)
    k = alloc_buffer(ctx, 0, np.uint8)
    d = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    data_copy(ctx, d, 0, o, 0, 64)
    select(ctx, d, k, a, a, 0, 64)
    data_copy(ctx, o, 0, d, 0, 64)


def test_select_with_an_empty_mask_reads_nothing():
    """An empty mask tile (unchecked): nothing selected, nothing read past it (checked mode names it)."""
    out = np.full(64, 7.0, np.float32)
    _select_empty_mask.launch(np.ones(64, np.float32), out, block_dim=1)
    assert (out == 7.0).all()


# ---- the level-0 form: every lane of each repeat, the bits packed from dst's start ------------------

L0_BYTES = 4096
L0_OUT = 256  # result bytes: 8 repeats of 128 lanes at most need 128


@njit
def _level0_pair(ctx, d, a, b, k, c, which, mode, repeat, mask, params, uparams):
    # which: 0 Compare, 1 Compares (into d's bits), 2 Select, 3 Select with a scalar (into c, mask k = d)
    if which == 0:
        compare(ctx, d, a, b, mode, 0, repeat, params)
    elif which == 1:
        compare_scalar(ctx, d, a, 0.5, mode, (1, 2), repeat, uparams)
    elif which == 2:
        select(ctx, c, k, a, b, mode, mask, repeat, params)
    else:
        select_scalar(ctx, c, k, a, 0.5, mode, mask, repeat, params)


@an.kernel(outputs=("d_gm", "c_gm"))
def compare_level0_kernel(ctx, a_gm, b_gm, d_gm, c_gm, wide, which, mode, repeat, lo, hi, d_blk, a_blk, b_blk, d_rep,
                          a_rep, b_rep):
    ta, tb = alloc_buffer(ctx, L0_BYTES, np.uint8), alloc_buffer(ctx, L0_BYTES, np.uint8)
    tc = alloc_buffer(ctx, L0_BYTES, np.uint8)
    td = alloc_buffer(ctx, L0_OUT, np.uint8)
    data_copy(ctx, ta, 0, a_gm, 0, L0_BYTES)
    data_copy(ctx, tb, 0, b_gm, 0, L0_BYTES)
    data_copy(ctx, tc, 0, c_gm, 0, L0_BYTES)
    data_copy(ctx, td, 0, d_gm, 0, L0_OUT)
    params = BinaryRepeatParams(d_blk, a_blk, b_blk, d_rep, a_rep, b_rep)
    uparams = UnaryRepeatParams(d_blk, a_blk, d_rep, a_rep)
    if wide:
        _level0_pair(ctx, td, reinterpret(ta, np.float32), reinterpret(tb, np.float32), td,
                     reinterpret(tc, np.float32), which, mode, repeat, (lo, hi), params, uparams)
    else:
        _level0_pair(ctx, td, reinterpret(ta, np.uint16), reinterpret(tb, np.uint16), td,
                     reinterpret(tc, np.uint16), which, mode, repeat, (lo, hi), params, uparams)
    data_copy(ctx, d_gm, 0, td, 0, L0_OUT)
    data_copy(ctx, c_gm, 0, tc, 0, L0_BYTES)


def _level0_tiles(wide, seed):
    rng = np.random.default_rng(seed)
    dtype = np.float32 if wide else np.float16
    tiles = []
    for _ in range(2):
        t = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0], L0_BYTES // np.dtype(dtype).itemsize).astype(dtype)
        t[rng.integers(0, t.size, 64)] = np.nan
        tiles.append(t)
    return tiles[0], tiles[1], rng.integers(0, 256, L0_OUT).astype(np.uint8)


def _level0_got(wide, which, mode, repeat, strides, seed, mask=(0, 0), **options):
    a, b, d = _level0_tiles(wide, seed)
    c = _level0_tiles(wide, seed + 1)[0].view(np.uint8)
    compare_level0_kernel.launch(a.view(np.uint8), b.view(np.uint8), d, c, wide, which, int(mode), repeat,
                                 np.uint64(mask[0]), np.uint64(mask[1]), *strides, block_dim=1, **options)
    return c.view(a.dtype) if which >= 2 else d


def _level0_want(wide, which, mode, repeat, strides, seed):
    a, b, d = _level0_tiles(wide, seed)
    _, a_blk, b_blk, _, a_rep, b_rep = strides
    ia, ib = lanes(a.itemsize, repeat, 2**64 - 1, 2**64 - 1, False, [(a_blk, a_rep), (b_blk, b_rep)])
    bits = reference("compare", a[ia], b[ib], mode) if which == 0 else reference("compare_scalar", a[ia], 0.5, mode)
    d[:bits.size] = bits
    return d


@settings(max_examples=30, deadline=None)
@given(wide=st.booleans(), which=st.sampled_from([0, 1]), mode=st.sampled_from(list(CMPMODE)),
       repeat=st.integers(0, 8), strides=st.tuples(st.integers(1, 3), st.integers(0, 3), st.integers(0, 3),
                                                   st.integers(0, 8), st.integers(0, 12), st.integers(0, 12)),
       seed=st.integers(0, 2**16))
def test_level0_compare_packs_every_lane_of_each_repeat(wide, which, mode, repeat, strides, seed):
    got = _level0_got(wide, which, mode, repeat, strides, seed)
    want = _level0_want(wide, which, mode, repeat, strides, seed)
    assert got.tobytes() == want.tobytes(), np.flatnonzero(got != want)[:4]


@pytest.mark.parametrize("which", [0, 1], ids=["compare", "compare_scalar"])
def test_level0_compare_compiled_interpreted_and_checked_agree(which):
    args = (False, which, CMPMODE.LE, 3, (1, 2, 1, 4, 12, 8), 9)
    want = _level0_want(*args)
    for options in ({}, {"interpret": True}, {"checked": True, "interpret": True}):
        assert _level0_got(*args, **options).tobytes() == want.tobytes(), options


def _select_level0_want(wide, which, mode, repeat, strides, seed, mask):
    a, b, d = _level0_tiles(wide, seed)
    c = _level0_tiles(wide, seed + 1)[0]
    lo, hi = mask if not wide else (mask[0], 0)  # fp32: 64 lanes, the low word
    other = b if which == 2 else np.array(0.5, a.dtype)
    return reference_level0_select(c, d, a, other, mode, repeat, hi, lo, strides)


# Select's level-0 strides: dst's repeats apart (its lanes written once each), the sources' any.
SELECT_STRIDES = st.tuples(st.integers(1, 2), st.integers(0, 3), st.integers(0, 3), st.integers(0, 4),
                           st.integers(0, 12), st.integers(0, 12)).map(
    lambda s: (s[0], s[1], s[2], 8 * s[0] + s[3], s[4], s[5]))
MASKS = st.sampled_from([(2**64 - 1, 2**64 - 1), (0x0F0F_F0F0_1234_5678, 0), (0b1010, 1 << 63), (2**64 - 1, 0)])


@settings(max_examples=30, deadline=None)
@given(wide=st.booleans(), which=st.sampled_from([2, 3]), repeat=st.integers(0, 5), strides=SELECT_STRIDES,
       mask=MASKS, seed=st.integers(0, 2**16), spr=st.booleans())
def test_level0_select_reads_each_repeats_mask_bits(wide, which, repeat, strides, mask, seed, spr):
    mode = SELMODE.VSEL_TENSOR_SCALAR_MODE if which == 3 else \
        SELMODE.VSEL_CMPMASK_SPR if spr else SELMODE.VSEL_TENSOR_TENSOR_MODE
    got = _level0_got(wide, which, mode, repeat, strides, seed, mask)
    want = _select_level0_want(wide, which, mode, repeat, strides, seed, mask)
    assert got.view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), np.flatnonzero(got != want)[:4]


@pytest.mark.parametrize("which, mode", [(2, SELMODE.VSEL_CMPMASK_SPR), (2, SELMODE.VSEL_TENSOR_TENSOR_MODE),
                                         (3, SELMODE.VSEL_TENSOR_SCALAR_MODE)], ids=["spr", "tensor", "scalar"])
def test_level0_select_compiled_interpreted_and_checked_agree(which, mode):
    args = (False, which, mode, 3, (1, 2, 1, 8, 12, 8), 5, (0xFFFF_0000_FFFF_00FF, 0x0F0F))
    want = _select_level0_want(*args)
    for options in ({}, {"interpret": True}, {"checked": True, "interpret": True}):
        got = _level0_got(*args[:6], mask=args[6], **options)
        assert got.view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), options


def test_level0_select_with_a_short_mask_is_reported():
    # Tensor-tensor fp16: 16 mask bytes a repeat; 17 repeats (all on the same blocks) need 272 of
    # the 256 there.
    with pytest.raises(an.KernelCheckError, match="ub-outside-buffer") as raised:
        _level0_got(False, 2, SELMODE.VSEL_TENSOR_TENSOR_MODE, 17, (1, 1, 1, 0, 0, 0), 0, (1, 0), checked=True,
                    interpret=True)
    assert "mask" in str(raised.value)


def test_level0_compare_result_past_its_tile_is_reported():
    # 8 repeats of fp16 need 128 result bytes; the result tile is 256: fine.  A source read past
    # its tile (repeat stride 255) is ub-outside-buffer.
    with pytest.raises(an.KernelCheckError, match="ub-outside-buffer"):
        _level0_got(False, 0, CMPMODE.LT, 2, (1, 1, 1, 8, 255, 8), 0, checked=True, interpret=True)
