"""Cast (``kernels/primitives/convert.py``): every pair of CAST_MODES under every RoundMode,
compiled and interpreted, bit for bit against the NumPy reference (``host/references/convert.py``);
checked mode names a mode the pair does not take; a pair the device lacks does not compile.  The
level-0 form on a narrowing, a widening, a 2:1 and a bf16 pair, against the lanes of
``host/references/repeat.py``.  bf16 pairs go through ``cast_bf16`` (a uint16 tile is bf16 to it).

One kernel casts every pair (the mode an argument), one more takes the level-0 form: each compiles once.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import import_source, signed_word
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

import ascend_numba as an
from ascend_numba.host.primitives import CAST_MODES, RoundMode
from ascend_numba.host.references.convert import cast as reference
from ascend_numba.host.references.convert import cast_from_int4, cast_int4_repeats, cast_to_int4
from ascend_numba.host.references.dequant import cast_dequant_f16
from ascend_numba.host.references.repeat import level0
from ascend_numba.kernels import UnaryRepeatParams, alloc_buffer, cast, cast_bf16, cast_int4, data_copy, reinterpret

TILE = 256
PAIRS = sorted(p for p in CAST_MODES if "int4b_t" not in p)  # int4b_t: cast_int4, at the end
TILE_TYPE = {"float16": np.uint16, "bfloat16": np.uint16}  # 16-bit float tiles hold uint16 bits
DEQ, DEQ_SCALE = ("int32", "float16"), 0.37  # Cast int32 -> fp16 takes SetDeqScale's fp16 scale
VALUE_TYPE = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}


def _tile_type(name):
    return np.dtype(TILE_TYPE.get(name, name))


def _kernel_source() -> str:
    params = [f"{p}{k}" for k in range(len(PAIRS)) for p in ("x", "y")]
    lines = ["import numpy as np", "import ascend_numba as an", "from ascend_numba.kernels import alloc_buffer, cast, "
             "data_copy, cast_bf16, set_deq_scale", "",
             f"@an.kernel(outputs={tuple(p for p in params if p.startswith('y'))!r})",
             f"def every_cast(ctx, {', '.join(params)}, mode):"]
    for k, (source, target) in enumerate(PAIRS):
        lines += [f"    a{k} = alloc_buffer(ctx, {TILE}, np.{_tile_type(source).name})",
                  f"    b{k} = alloc_buffer(ctx, {TILE}, np.{_tile_type(target).name})",
                  f"    data_copy(ctx, a{k}, 0, x{k}, 0, {TILE})",
                  *([f"    set_deq_scale(ctx, {DEQ_SCALE})"] if (source, target) == DEQ else []),
                  f"    {'cast_bf16' if 'bfloat16' in (source, target) else 'cast'}(ctx, b{k}, a{k}, mode, {TILE})",
                  f"    data_copy(ctx, y{k}, 0, b{k}, 0, {TILE})"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def every_cast(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("cast") / "every_cast.py", _kernel_source()).every_cast


_F32 = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x00000001, 0x7F7FFFFF,
                 0x3FC00000, 0xBFC00000, 0x40200000, 0x477FF000, 0x477FF001, 0x477FEFFF, 0x4F000000, 0xCF000001,
                 0x5F000000, 0x3F801000, 0x3F802000, 0x3F803000, 0x387FC000, 0x33800000, 0x337FFFFF, 0x43000000,
                 0x437F8000, 0xC3010000, 0x46FFFE00, 0x47000000], np.uint32).view(np.float32)


def _source(name: str, rng) -> np.ndarray:
    """A tile of ``name``: special values (ties, the edges of every destination's range, NaNs,
    infinities, subnormals) then random bits; fp16 as its uint16 bits."""
    tile = _tile_type(name)
    bits = rng.integers(0, 2 ** (8 * tile.itemsize), TILE, dtype=np.uint64).astype(f"u{tile.itemsize}").view(tile)
    if name == "float32":
        scaled = (rng.standard_normal(64) * rng.choice([1, 100, 1e5, 3e9], 64)).astype(np.float32)
        halves = (rng.integers(-300, 300, 32) + 0.5).astype(np.float32)
        special = np.concatenate([_F32, scaled, halves])
    elif name == "bfloat16":  # ties, the int32 range's edge, NaNs, infinities, subnormals
        special = np.array([0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x0001, 0x7F7F, 0x3FC0, 0xBFC0, 0x4020,
                            0x4F00, 0xCF00, 0xCF01, 0x4EFF], np.uint16)
    elif name == "float16":
        special = np.concatenate([np.array([0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01, 0x0001, 0x7BFF, 0x3E00,
                                            0xBE00, 0x4100, 0x5BF8, 0x57F8, 0xD800, 0x5800, 0x3C01], np.uint16),
                                  (rng.integers(-200, 200, 48) + 0.5).astype(np.float16).view(np.uint16)])
    else:
        info = np.iinfo(tile)
        special = np.array([0, 1, -1, info.max, info.min, 2049, 2051, 4097, -2051, 32767, 16777217, -16777217,
                            65504, 65520, 2**31 - 1, 2**53 + 1, (2**24 + 1) << 38, ((2**24 + 1) << 38) + 1,
                            -((2**24 + 3) << 38), (2**24 - 1) << 39], np.int64)
        special = special[(special >= info.min) & (special <= info.max)].astype(tile)
    bits[:special.size] = special.view(tile)
    return bits


def _values(name: str, tile: np.ndarray) -> np.ndarray:
    return tile.view(VALUE_TYPE[name]) if name in VALUE_TYPE else tile


def _run(kernel, sources, mode, interpret):
    outs = [np.zeros(TILE, _tile_type(target)) for _, target in PAIRS]
    args = [a for pair in zip(sources, outs) for a in pair]
    kernel.launch(*args, int(mode), block_dim=1, interpret=interpret)
    return outs


@pytest.mark.parametrize("mode", list(RoundMode), ids=lambda m: m.name)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16))
def test_every_pair_and_mode_compiled_and_interpreted_match_numpy(every_cast, mode, seed):
    rng = np.random.default_rng(seed)
    sources = [_source(source, rng) for source, _ in PAIRS]
    compiled = _run(every_cast, sources, mode, False)
    interpreted = _run(every_cast, sources, mode, True)
    for (source, target), x, got, again in zip(PAIRS, sources, compiled, interpreted):
        want = (cast_dequant_f16(x, np.float16(DEQ_SCALE)) if (source, target) == DEQ else
                reference(_values(source, x), VALUE_TYPE.get(target, target), mode)).view(got.dtype)
        as_bits = f"u{got.itemsize}"
        bad = np.flatnonzero(got.view(as_bits) != want.view(as_bits))
        assert bad.size == 0, (f"{source}->{target} {mode.name}: {bad.size} differ, first at {bad[0]}: "
                               f"{_values(source, x)[bad[0]]!r} gave {got[bad[0]]!r}, want {want[bad[0]]!r}")
        assert np.array_equal(got.view(as_bits), again.view(as_bits)), f"{source}->{target} {mode.name}: interpreted"


def test_rint_fp32_to_fp16_is_the_existing_cast():
    """CAST_RINT fp32 -> fp16 gives cast_f32_to_f16's bits (NumPy's rounding), NaNs included."""
    x = _source("float32", np.random.default_rng(1))
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    assert np.array_equal(reference(x, np.float16, RoundMode.CAST_RINT).view(np.uint16), want)


def test_fp32_to_fp32_rounds_to_an_integral_value():
    """The reference itself, by hand: fp32 to fp32 is the A2/A3 form of Truncate."""
    x = np.array([1.5, -2.7, 2.5, 0.3, -0.3, np.inf], np.float32)
    want = {RoundMode.CAST_FLOOR: [1, -3, 2, 0, -1, np.inf], RoundMode.CAST_CEIL: [2, -2, 3, 1, -0.0, np.inf],
            RoundMode.CAST_RINT: [2, -3, 2, 0, -0.0, np.inf], RoundMode.CAST_ROUND: [2, -3, 3, 0, -0.0, np.inf],
            RoundMode.CAST_TRUNC: [1, -2, 2, 0, -0.0, np.inf]}
    for mode, values in want.items():
        got = reference(x, np.float32, mode)
        assert np.array_equal(got.view(np.uint32), np.array(values, np.float32).view(np.uint32)), mode


@an.kernel(outputs=("y",))
def _widen_in_place(ctx, x, y):
    b = alloc_buffer(ctx, 64, np.float32)
    a = reinterpret(b, np.uint16)
    data_copy(ctx, a, 0, x, 0, 64)
    cast(ctx, b, a, 0, 64)
    data_copy(ctx, y, 0, b, 0, 64)


def test_checked_mode_names_a_widening_cast_in_place():
    with pytest.raises(an.KernelCheckError) as caught:
        _widen_in_place.launch(np.arange(64, dtype=np.float16).view(np.uint16), np.zeros(64, np.float32),
                               block_dim=1, checked=True, interpret=True)
    assert caught.value.rule == "cast-overlap"


@an.kernel(outputs=("y",))
def _f32_to_i32(ctx, x, y, mode):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 64, np.int32)
    data_copy(ctx, a, 0, x, 0, 64)
    cast(ctx, b, a, mode, 64)
    data_copy(ctx, y, 0, b, 0, 64)


@pytest.mark.parametrize("mode", [RoundMode.CAST_NONE, RoundMode.CAST_ODD, 9])
def test_checked_mode_names_a_mode_the_pair_does_not_take(mode):
    with pytest.raises(an.KernelCheckError) as caught:
        _f32_to_i32.launch(np.ones(64, np.float32), np.zeros(64, np.int32), int(mode), block_dim=1, checked=True,
                           interpret=True)
    assert caught.value.rule == "mode-out-of-range" and "RoundMode" in str(caught.value)


def test_a_pair_the_device_lacks_does_not_compile():
    @an.kernel(outputs=("y",))
    def i32_to_i8(ctx, x, y):
        a = alloc_buffer(ctx, 64, np.int32)
        b = alloc_buffer(ctx, 64, np.int8)
        data_copy(ctx, a, 0, x, 0, 64)
        cast(ctx, b, a, 1, 64)
        data_copy(ctx, y, 0, b, 0, 64)

    with pytest.raises(Exception, match="not a conversion the device's Cast has"):
        i32_to_i8.launch(np.ones(64, np.int32), np.zeros(64, np.int8), block_dim=1)


# ---- the level-0 form: masks, repeats and strides, a repeat 256 bytes of the wider type -----------

BYTES = 4096
LEVEL0_PAIRS = (("float32", "float16"), ("float16", "float32"), ("float16", "int8"), ("float32", "bfloat16"))


@njit
def _cast_level0(ctx, d, a, mode, lo, hi, repeat, params):
    cast(ctx, d, a, mode, (lo, hi), repeat, params)


@njit
def _cast_bf16_level0(ctx, d, a, mode, lo, hi, repeat, params):
    cast_bf16(ctx, d, a, mode, (lo, hi), repeat, params)


@an.kernel
def cast_level0_kernel(ctx, a_gm, d_gm, pair, mode, lo, hi, repeat, d_blk, a_blk, d_rep, a_rep):
    ta, td = alloc_buffer(ctx, BYTES, np.uint8), alloc_buffer(ctx, BYTES, np.uint8)
    data_copy(ctx, ta, 0, a_gm, 0, BYTES)
    data_copy(ctx, td, 0, d_gm, 0, BYTES)
    params = UnaryRepeatParams(d_blk, a_blk, d_rep, a_rep)
    if pair == 0:
        _cast_level0(ctx, reinterpret(td, np.uint16), reinterpret(ta, np.float32), mode, lo, hi, repeat, params)
    elif pair == 1:
        _cast_level0(ctx, reinterpret(td, np.float32), reinterpret(ta, np.uint16), mode, lo, hi, repeat, params)
    elif pair == 3:
        _cast_bf16_level0(ctx, reinterpret(td, np.uint16), reinterpret(ta, np.float32), mode, lo, hi, repeat, params)
    else:
        _cast_level0(ctx, reinterpret(td, np.int8), reinterpret(ta, np.uint16), mode, lo, hi, repeat, params)
    data_copy(ctx, d_gm, 0, td, 0, BYTES)


def _level0_case(pair, seed):
    source, target = LEVEL0_PAIRS[pair]
    rng = np.random.default_rng(seed)
    a = np.concatenate([_source(source, rng) for _ in range(BYTES // (TILE * _tile_type(source).itemsize))])
    d = rng.integers(0, 256, BYTES).astype(np.uint8)
    return a, d


def _level0_run(pair, mode, lo, hi, repeat, strides, seed, **options):
    a, d = _level0_case(pair, seed)
    cast_level0_kernel.launch(a.view(np.uint8), d, pair, int(mode), np.uint64(lo), np.uint64(hi), repeat, *strides,
                              block_dim=1, **options)
    return d


def _level0_want(pair, mode, lo, hi, repeat, strides, seed):
    source, target = LEVEL0_PAIRS[pair]
    a, d = _level0_case(pair, seed)
    dst = d.view(_tile_type(target))
    d_blk, a_blk, d_rep, a_rep = strides

    def op(x):
        return reference(_values(source, x), VALUE_TYPE.get(target, target), mode).view(dst.dtype)
    return level0(op, dst, [a], max(a.itemsize, dst.itemsize), repeat, hi, lo, False,
                  [(d_blk, d_rep), (a_blk, a_rep)]).view(np.uint8)


_LEVEL0_MODES = {0: [RoundMode.CAST_RINT, RoundMode.CAST_FLOOR, RoundMode.CAST_ODD], 1: [RoundMode.CAST_NONE],
                 2: [RoundMode.CAST_RINT, RoundMode.CAST_TRUNC, RoundMode.CAST_ROUND],
                 3: [RoundMode.CAST_RINT, RoundMode.CAST_CEIL]}


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from([(p, m) for p, modes in _LEVEL0_MODES.items() for m in modes]),
       lo=st.one_of(st.integers(0, 2**64 - 1), st.just(2**64 - 1)), hi=st.integers(0, 2**64 - 1),
       repeat=st.integers(0, 8), strides=st.tuples(st.integers(1, 3), st.integers(0, 3), st.integers(0, 8),
                                                   st.integers(0, 12)), seed=st.integers(0, 2**16))
def test_level0_casts_compute_the_reference_lanes(case, lo, hi, repeat, strides, seed):
    pair, mode = case
    got = _level0_run(pair, mode, lo, hi, repeat, strides, seed)
    want = _level0_want(pair, mode, lo, hi, repeat, strides, seed)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (LEVEL0_PAIRS[pair], mode.name, bad[:4])


@pytest.mark.parametrize("pair", range(len(LEVEL0_PAIRS)), ids=lambda p: "->".join(LEVEL0_PAIRS[p]))
def test_level0_compiled_interpreted_and_checked_agree(pair):
    mode = _LEVEL0_MODES[pair][-1]
    args = (pair, mode, 0xFFFF_0000_0F0F_0001, 2**63 + 5, 3, (1, 2, 4, 12), 5)
    want = _level0_want(*args)
    for options in ({}, {"interpret": True}, {"checked": True, "interpret": True}):
        assert _level0_run(*args, **options).tobytes() == want.tobytes(), options


def test_level0_checks_the_mode():
    with pytest.raises(an.KernelCheckError, match="mode-out-of-range"):
        _level0_run(1, RoundMode.CAST_FLOOR, 1, 0, 1, (1, 1, 8, 4), 0, checked=True, interpret=True)


# ---- int4b_t: two elements a byte ---------------------------------------------------------------------

@an.kernel
def int4_kernel(ctx, h_gm, q_gm, back_gm, mode, count):
    h = alloc_buffer(ctx, TILE, np.uint16)
    q = alloc_buffer(ctx, TILE // 2, np.int8)
    back = alloc_buffer(ctx, TILE, np.uint16)
    data_copy(ctx, h, 0, h_gm, 0, TILE)
    data_copy(ctx, q, 0, q_gm, 0, TILE // 2)
    data_copy(ctx, back, 0, back_gm, 0, TILE)
    cast_int4(ctx, q, h, mode, count)
    cast_int4(ctx, back, q, 0, count)
    data_copy(ctx, q_gm, 0, q, 0, TILE // 2)
    data_copy(ctx, back_gm, 0, back, 0, TILE)


def _int4_run(mode, count, seed, **options):
    rng = np.random.default_rng(seed)
    h = np.concatenate([np.array([0x7E00, 0xFC00, 0x7C00, 0x4700, 0xC880, 0x3800, 0xB800, 0x4100, 0x4300, 0x8000],
                                 np.uint16), (rng.standard_normal(TILE - 10) * 6).astype(np.float16).view(np.uint16)])
    q, back = np.full(TILE // 2, 0x5A, np.int8), np.full(TILE, 0x1234, np.uint16)
    int4_kernel.launch(h, q, back, int(mode), count, block_dim=1, **options)
    return h, q, back


@settings(max_examples=12, deadline=None)
@given(mode=st.sampled_from(sorted(CAST_MODES[("float16", "int4b_t")])), count=st.integers(0, TILE // 2).map(
    lambda n: 2 * n), seed=st.integers(0, 2**16))
def test_int4_packs_and_unpacks_as_the_reference(mode, count, seed):
    h, q, back = _int4_run(mode, count, seed)
    want = np.full(TILE // 2, 0x5A, np.uint8)
    want[:count // 2] = cast_to_int4(h[:count].view(np.float16), mode)
    assert q.view(np.uint8).tobytes() == want.tobytes(), RoundMode(mode).name
    want_back = np.full(TILE, 0x1234, np.uint16)
    want_back[:count] = cast_from_int4(want, count).view(np.uint16)
    assert back.tobytes() == want_back.tobytes()


def test_int4_compiled_interpreted_checked_agree_and_a_mode_is_checked():
    compiled = _int4_run(RoundMode.CAST_FLOOR, 100, 1)
    for options in ({"interpret": True}, {"checked": True, "interpret": True}):
        assert all(c.tobytes() == o.tobytes() for c, o in zip(compiled, _int4_run(RoundMode.CAST_FLOOR, 100, 1,
                                                                                  **options))), options
    with pytest.raises(an.KernelCheckError, match="mode-out-of-range"):
        _int4_run(RoundMode.CAST_ODD, 100, 1, checked=True, interpret=True)


INT4_TILE = 2048  # fp16 elements: room for three repeats at the widest strides


@an.kernel
def int4_repeat_kernel(ctx, h_gm, q_gm, back_gm, mode, low, high, repeat, d_blk, s_blk, d_rep, s_rep):
    h = alloc_buffer(ctx, INT4_TILE, np.uint16)
    q = alloc_buffer(ctx, INT4_TILE // 2, np.uint8)
    back = alloc_buffer(ctx, INT4_TILE, np.uint16)
    data_copy(ctx, h, 0, h_gm, 0, INT4_TILE)
    data_copy(ctx, q, 0, q_gm, 0, INT4_TILE // 2)
    data_copy(ctx, back, 0, back_gm, 0, INT4_TILE)
    cast_int4(ctx, q, h, mode, (low, high), repeat, UnaryRepeatParams(d_blk, s_blk, d_rep, s_rep))
    cast_int4(ctx, back, q, 0, (low, high), repeat, UnaryRepeatParams(s_blk, d_blk, s_rep, d_rep))
    data_copy(ctx, q_gm, 0, q, 0, INT4_TILE // 2)
    data_copy(ctx, back_gm, 0, back, 0, INT4_TILE)


@settings(max_examples=12, deadline=None)
@given(mode=st.sampled_from(sorted(CAST_MODES[("float16", "int4b_t")])), low=st.integers(0, 2**64 - 1),
       high=st.integers(0, 2**64 - 1), repeat=st.integers(0, 3), d_blk=st.integers(1, 2), s_blk=st.integers(1, 2),
       d_rep=st.integers(2, 6), s_rep=st.integers(8, 18), seed=st.integers(0, 2**16))
def test_int4_level0_is_the_reference(mode, low, high, repeat, d_blk, s_blk, d_rep, s_rep, seed):
    rng = np.random.default_rng(seed)
    h = (rng.standard_normal(INT4_TILE) * 6).astype(np.float16).view(np.uint16)
    q, back = np.full(INT4_TILE // 2, 0x5A, np.uint8), np.full(INT4_TILE, 0x1234, np.uint16)
    on = lambda r, k: bool((low >> k) & 1) if k < 64 else bool((high >> (k - 64)) & 1)  # noqa: E731
    want_q = cast_int4_repeats(q, h, mode, on, repeat, d_blk, s_blk, d_rep, s_rep)
    want_back = cast_int4_repeats(back, want_q, 0, on, repeat, s_blk, d_blk, s_rep, d_rep)
    for options in ({}, {"interpret": True}) if seed % 4 == 0 else ({},):
        got_q, got_back = q.copy(), back.copy()
        int4_repeat_kernel.launch(h, got_q, got_back, int(mode), signed_word(low), signed_word(high), repeat, d_blk, s_blk,
                                  d_rep, s_rep, block_dim=1, **options)
        assert got_q.tobytes() == want_q.tobytes() and got_back.tobytes() == want_back.tobytes(), options


def test_int4_level0_checked_names_a_mode_and_a_lane_past_the_tile():
    h = np.zeros(INT4_TILE, np.uint16)
    q, back = np.zeros(INT4_TILE // 2, np.uint8), np.zeros(INT4_TILE, np.uint16)
    with pytest.raises(an.KernelCheckError, match=r"Cast: \[mode-out-of-range\]"):
        int4_repeat_kernel.launch(h, q, back, int(RoundMode.CAST_ODD), -1, -1, 1, 1, 1, 2, 8, block_dim=1,
                                  checked=True)
    with pytest.raises(an.KernelCheckError, match=r"Cast: \[ub-outside-buffer\] src"):  # repeat 2 at block 2 * 255
        int4_repeat_kernel.launch(h, q, back, int(RoundMode.CAST_RINT), -1, -1, 3, 1, 1, 2, 255, block_dim=1,
                                  checked=True)
