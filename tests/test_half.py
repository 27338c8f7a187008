"""Compiled fp16/bf16 conversions against NumPy float16 and ml_dtypes bfloat16, bit for bit."""

import ml_dtypes
import numpy as np
import pytest

from ascend_numba.kernels import half

ALL16 = np.arange(1 << 16, dtype=np.uint16)


def _bits32(values):
    return np.asarray(values, dtype=np.uint32)


def _edge_patterns():
    """Every edge class: signed zeros, ties at each rounding point, subnormal boundaries, overflow, inf, NaN."""
    v = []
    for sign in (0, 0x80000000):
        v += [sign | b for b in (
            0, 1, 0x007FFFFF, 0x00800000,                      # fp32 zero, subnormals, min normal
            0x33000000, 0x33000001, 0x32FFFFFF, 0x33800000,    # around half of fp16's min subnormal
            0x387FC000, 0x387FE000, 0x387FFFFF, 0x38800000,    # fp16 subnormal/normal boundary
            0x3F801000, 0x3F803000, 0x3F801001, 0x3F802FFF,    # fp16 ties to even / just past
            0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF,    # bf16 ties to even / just past
            0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000,    # fp16 max, overflow by rounding, overflow
            0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF,                # bf16 overflow by rounding
            0x7F800000, 0x7F800001, 0x7FC00000, 0x7FBFFFFF, 0x7FFFFFFF, 0x7F802000, 0x7F801FFF)]
    # every fp16 subnormal tie: k + 0.5 ulp
    k = np.arange(0, 1024, dtype=np.uint32)
    ties = (k.astype(np.float64) + 0.5) * 2.0 ** -24
    v += list(ties.astype(np.float32).view(np.uint32))
    return _bits32(v)


def test_f16_to_f32_all_patterns():
    out = np.empty(ALL16.size, np.float32)
    half.f16_to_f32_array(ALL16, out)
    ref = ALL16.view(np.float16).astype(np.float32)
    assert np.array_equal(out.view(np.uint32), ref.view(np.uint32))


def test_bf16_to_f32_all_patterns():
    out = np.empty(ALL16.size, np.float32)
    half.bf16_to_f32_array(ALL16, out)
    ref = ALL16.view(ml_dtypes.bfloat16).astype(np.float32)
    assert np.array_equal(out.view(np.uint32), ref.view(np.uint32))


def _check_f32_to_half(bits):
    f = bits.view(np.float32)
    out = np.empty(bits.size, np.uint16)
    half.f32_to_f16_array(f, out)
    with np.errstate(all="ignore"):
        ref = f.astype(np.float16).view(np.uint16)
    bad = np.nonzero(out != ref)[0]
    assert bad.size == 0, f"fp16: {[(hex(bits[i]), hex(out[i]), hex(ref[i])) for i in bad[:5]]}"
    half.f32_to_bf16_array(f, out)
    ref = f.astype(ml_dtypes.bfloat16).view(np.uint16)
    bad = np.nonzero(out != ref)[0]
    assert bad.size == 0, f"bf16: {[(hex(bits[i]), hex(out[i]), hex(ref[i])) for i in bad[:5]]}"


def test_f32_to_half_edge_classes():
    _check_f32_to_half(_edge_patterns())


def test_f32_to_half_every_half_value_and_its_neighbours():
    # Each fp16/bf16 value widened, then nudged by +-1 ulp in fp32: exact values and near-ties.
    w16 = ALL16.view(np.float16).astype(np.float32).view(np.uint32)
    wbf = ALL16.astype(np.uint32) << 16
    base = np.concatenate([w16, wbf])
    mids = np.concatenate([w16[:-1] // 2 + w16[1:] // 2, wbf + 0x8000])  # midpoints (ties) between neighbours
    _check_f32_to_half(np.concatenate([base, base + 1, base - 1, mids, mids + 1, mids - 1]).astype(np.uint32))


def test_f32_to_half_ten_million_random_patterns():
    bits = np.random.default_rng(20261130).integers(0, 1 << 32, 10_000_000, dtype=np.uint32)
    _check_f32_to_half(bits)


@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, 65504.0, 65520.0, 1e-8, -3.14159, float("inf")])
def test_scalar_round_trip(value):
    from numba import njit

    @njit
    def trip(x):
        return half.f16_to_f32(half.f32_to_f16(x)), half.bf16_to_f32(half.f32_to_bf16(x))

    f16, bf16 = trip(np.float32(value))
    assert np.float32(f16).tobytes() == np.float32(value).astype(np.float16).astype(np.float32).tobytes()
    assert np.float32(bf16).tobytes() == \
        np.float32(value).astype(ml_dtypes.bfloat16).astype(np.float32).tobytes()


def _round_f16_both(bits):
    """f32_round_f16 and f32_round_f16_quiet of float32 patterns, as float32 bits."""
    from numba import njit

    @njit
    def rounded(x, full, quiet):
        for i in range(x.size):
            full[i] = half.f32_round_f16(x[i])
            quiet[i] = half.f32_round_f16_quiet(x[i])

    x = bits.view(np.float32)
    full, quiet = np.empty_like(x), np.empty_like(x)
    rounded(x, full, quiet)
    return full.view(np.uint32), quiet.view(np.uint32)


@pytest.mark.parametrize("patterns", ["edges and neighbours", "ten million random"])
def test_round_to_f16_in_one_step_is_numpys_round_trip(patterns):
    """What a fused program keeps between two fp16 ops: NumPy's fp32 -> fp16 -> fp32, bit for bit;
    the quiet form (the hardware's conversions alone) for every pattern but a signalling NaN.
    (Both were checked on all 2^32 float32 patterns once; the suite checks these.)"""
    if patterns == "ten million random":
        bits = np.random.default_rng(20261201).integers(0, 1 << 32, 10_000_000, dtype=np.uint32)
    else:
        w16 = ALL16.view(np.float16).astype(np.float32).view(np.uint32)
        bits = np.concatenate([_edge_patterns(), w16, w16 + 1, w16 - 1, w16 + 0x1000, w16 + 0x0FFF]).astype(np.uint32)
    full, quiet = _round_f16_both(bits)
    with np.errstate(all="ignore"):
        ref = bits.view(np.float32).astype(np.float16).astype(np.float32).view(np.uint32)
    assert np.array_equal(full, ref)
    signalling = ((bits & 0x7F800000) == 0x7F800000) & ((bits & 0x7FFFFF) != 0) & ((bits & 0x400000) == 0)
    assert signalling.any() and np.array_equal(quiet[~signalling], ref[~signalling])
