"""Cast, as NumPy computes it (``host.primitives.CAST_MODES``): written for clarity, independent
of the kernel's float64 rounding (``kernels/primitives/convert.py``).

* a float destination: NumPy's correctly rounded conversion (to nearest, ties to even) gives the
  nearest value; ``numpy.nextafter`` in the destination type gives its neighbour on the other
  side of the source value; the mode picks one of the two (CAST_FLOOR the lower, CAST_CEIL the
  upper, CAST_TRUNC the one toward zero, CAST_ROUND the nearest with ties away from zero,
  CAST_ODD the one whose last bit is 1); a NaN converts as NumPy converts it;
* an integer destination: ``numpy.rint`` / ``floor`` / ``ceil`` / ``trunc`` (CAST_ROUND: half
  away from zero; CAST_ODD: the truncation, or the next integer away from zero where that is
  even and inexact), a NaN as 0, clipped to the type's range;
* integer to integer: clipped to the destination's range;
* fp32 to fp32: ``numpy.rint`` / ``floor`` / ``ceil`` / ``trunc`` in fp32 (an integral value),
  infinities and NaNs unchanged;
* int64 to fp32: the two fp32 values around each integer found with Python's exact integers (a
  float64 holds no more than 53 bits), then the mode picks one;
* bf16 is ml_dtypes' ``bfloat16``.

Every mode is computed for every pair (the kernel computes a mode its pair does not take the
same way); which pairs take which modes is the table's business.
"""

from __future__ import annotations

import numpy as np

from ..primitives import RoundMode

__all__ = ["cast", "cast_to_int4", "cast_from_int4", "cast_int4_repeats"]


def _float_neighbours(x: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nearest value of ``dtype`` to each ``x`` (float64) and the two values of ``dtype`` around it."""
    with np.errstate(over="ignore"):
        nearest = x.astype(dtype)
    up = np.nextafter(nearest, dtype.type(np.inf))
    down = np.nextafter(nearest, dtype.type(-np.inf))
    below = nearest.astype(np.float64) < x
    lo = np.where(below, nearest, down)
    hi = np.where(below, up, nearest)
    return nearest, lo, hi


def _to_float(x: np.ndarray, dtype, mode: RoundMode) -> np.ndarray:
    nearest, lo, hi = _float_neighbours(x, dtype)
    exact = nearest.astype(np.float64) == x
    if mode in (RoundMode.CAST_NONE, RoundMode.CAST_RINT):
        chosen = nearest
    elif mode == RoundMode.CAST_FLOOR:
        chosen = lo
    elif mode == RoundMode.CAST_CEIL:
        chosen = hi
    elif mode == RoundMode.CAST_TRUNC:
        chosen = np.where(x > 0, lo, hi)
    elif mode == RoundMode.CAST_ROUND:
        with np.errstate(invalid="ignore"):
            tie = (x - lo.astype(np.float64)) == (hi.astype(np.float64) - x)
        chosen = np.where(tie, np.where(x > 0, hi, lo), nearest)
    else:  # CAST_ODD
        bits = lo.view(f"u{lo.itemsize}")
        chosen = np.where(bits & 1 == 1, lo, hi)
    return np.where(exact, nearest, chosen)


def _to_integer(x: np.ndarray, dtype, mode: RoundMode) -> np.ndarray:
    truncated = np.trunc(x)
    inexact = truncated != x
    rounded = {
        RoundMode.CAST_NONE: np.rint, RoundMode.CAST_RINT: np.rint, RoundMode.CAST_FLOOR: np.floor,
        RoundMode.CAST_CEIL: np.ceil, RoundMode.CAST_TRUNC: np.trunc,
        RoundMode.CAST_ROUND: lambda v: np.where(np.abs(v - truncated) >= 0.5, truncated + np.sign(v), truncated),
        RoundMode.CAST_ODD: lambda v: np.where(inexact & (truncated % 2 == 0), truncated + np.sign(v), truncated),
    }[mode](x)
    info = np.iinfo(dtype)
    rounded = np.where(np.isnan(x), 0.0, rounded)
    out = np.clip(rounded, float(info.min), float(info.max))
    result = np.empty(x.shape, dtype)
    top = out >= float(info.max)  # (int64's largest is no float64: 2**63 would not convert)
    result[top] = info.max
    result[~top] = out[~top].astype(dtype)
    return result


def _to_integral(x: np.ndarray, mode: RoundMode) -> np.ndarray:
    """fp32 to fp32: NumPy's rounding to an integral value, in fp32 (signed zeros as NumPy keeps them)."""
    truncated = np.trunc(x)
    away = truncated + np.copysign(np.float32(1), x)
    return {
        RoundMode.CAST_NONE: np.rint, RoundMode.CAST_RINT: np.rint, RoundMode.CAST_FLOOR: np.floor,
        RoundMode.CAST_CEIL: np.ceil, RoundMode.CAST_TRUNC: np.trunc,
        RoundMode.CAST_ROUND: lambda v: np.where(np.abs(v - truncated) >= 0.5, away, truncated),
        RoundMode.CAST_ODD: lambda v: np.where((truncated != v) & (truncated % 2 == 0), away, truncated),
    }[mode](x).astype(np.float32)


def _int64_to_float(src: np.ndarray, dtype, mode: RoundMode) -> np.ndarray:
    out = np.empty(src.shape, dtype)
    for k, v in enumerate(src.tolist()):
        # Within a step of v; then the one at or below v (Python compares a float and an int exactly,
        # and a value this far from 0 is an integer).
        lo = dtype.type(float(v))
        while float(lo) > v:
            lo = np.nextafter(lo, dtype.type(-np.inf))
        while float(np.nextafter(lo, dtype.type(np.inf))) <= v:
            lo = np.nextafter(lo, dtype.type(np.inf))
        hi = lo if float(lo) == v else np.nextafter(lo, dtype.type(np.inf))
        below, above = v - int(lo), int(hi) - v
        if below == 0 or mode == RoundMode.CAST_FLOOR or (mode == RoundMode.CAST_TRUNC and v > 0):
            out[k] = lo
        elif mode == RoundMode.CAST_CEIL or mode == RoundMode.CAST_TRUNC:
            out[k] = hi
        elif mode == RoundMode.CAST_ODD:  # (the pair does not take it; computed as for every pair)
            out[k] = lo if lo.view(f"u{dtype.itemsize}") % 2 == 1 else hi
        elif below != above:
            out[k] = lo if below < above else hi
        elif mode == RoundMode.CAST_ROUND:
            out[k] = hi if v > 0 else lo
        else:  # a tie to even
            out[k] = lo if lo.view(f"u{dtype.itemsize}") % 2 == 0 else hi
    return out


def cast(src: np.ndarray, dtype, mode) -> np.ndarray:
    """``src`` (fp16 as ``float16``, bf16 as ml_dtypes' ``bfloat16``) cast to ``dtype`` (the same
    16-bit types) under RoundMode ``mode``."""
    dtype, mode = np.dtype(dtype), RoundMode(mode)
    if src.dtype == np.int64 and dtype.kind == "f":
        return _int64_to_float(src, dtype, mode)
    if src.dtype == np.float32 and dtype == np.float32:
        with np.errstate(invalid="ignore"):
            out = _to_integral(src, mode)
        return np.where(np.isfinite(src), out, src)
    if src.dtype.kind in "iu" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(src.astype(np.int64), info.min, info.max).astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):  # (a signalling NaN, an overflow: the results say)
        x = src.astype(np.float64)
        if dtype.kind in "fV":  # (ml_dtypes' bfloat16 is of kind V)
            out = _to_float(x, dtype, mode)
            nan = np.isnan(x)
            return np.where(nan, src.astype(dtype) if src.dtype.kind in "fV" else out, out).astype(dtype)
        return _to_integer(x, dtype, mode)


def cast_to_int4(src: np.ndarray, mode) -> np.ndarray:
    """fp16 ``src`` to int4b_t under ``mode`` (saturated to [-8, 7]), packed two a byte (element i
    in the low nibble of byte i // 2 when i is even), as uint8; an odd count's last high nibble 0."""
    values = np.clip(cast(src, np.int8, mode).astype(np.int64), -8, 7) & 0xF
    values = np.concatenate([values, np.zeros(values.size % 2, np.int64)])
    return (values[0::2] | (values[1::2] << 4)).astype(np.uint8)


def cast_from_int4(packed: np.ndarray, count: int) -> np.ndarray:
    """``count`` int4b_t elements of the bytes ``packed`` as fp16 (exact)."""
    nibbles = np.stack([packed & 0xF, packed >> 4], axis=1).reshape(-1)[:count].astype(np.int64)
    return np.where(nibbles >= 8, nibbles - 16, nibbles).astype(np.float16)


def cast_int4_repeats(dst: np.ndarray, src: np.ndarray, mode, lane_on, repeat_times: int, dst_blk: int, src_blk: int,
                      dst_rep: int, src_rep: int) -> np.ndarray:
    """A copy of ``dst`` after the level-0 Cast between fp16 (uint16 bits) and int4b_t (uint8 bytes,
    two elements each): 128 lanes a repeat, the fp16 side's lane k at block ``r * rep + (k // 16) *
    blk``, the int4b_t side's at block ``r * rep + (k // 64) * blk`` (64 elements a block)."""
    out = dst.copy()
    packs = dst.dtype == np.uint8
    for r in range(repeat_times):
        for k in range(128):
            if not lane_on(r, k):
                continue
            h = lambda blk, rep: (r * rep + (k // 16) * blk) * 16 + k % 16  # noqa: E731
            q = lambda blk, rep: (r * rep + (k // 64) * blk) * 64 + k % 64  # noqa: E731
            if packs:
                i, value = q(dst_blk, dst_rep), cast_to_int4(src[h(src_blk, src_rep):][:1].view(np.float16), mode)[0]
                shift = 4 * (i % 2)
                out[i // 2] = (int(out[i // 2]) & ~(0xF << shift) | ((int(value) & 0xF) << shift)) & 0xFF
            else:
                i = q(src_blk, src_rep)
                out[h(dst_blk, dst_rep)] = cast_from_int4(src[i // 2:i // 2 + 1], 2)[i % 2].view(np.uint16)
    return out
