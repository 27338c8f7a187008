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
  infinities and NaNs unchanged.

Every mode is computed for every pair (the kernel computes a mode its pair does not take the
same way); which pairs take which modes is the table's business.
"""

from __future__ import annotations

import numpy as np

from ..primitives import RoundMode

__all__ = ["cast"]


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


def cast(src: np.ndarray, dtype, mode) -> np.ndarray:
    """``src`` (fp16 as ``float16``) cast to ``dtype`` (fp16: ``float16``) under RoundMode ``mode``."""
    dtype, mode = np.dtype(dtype), RoundMode(mode)
    if src.dtype == np.float32 and dtype == np.float32:
        with np.errstate(invalid="ignore"):
            out = _to_integral(src, mode)
        return np.where(np.isfinite(src), out, src)
    if src.dtype.kind in "iu" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(src.astype(np.int64), info.min, info.max).astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):  # (a signalling NaN, an overflow: the results say)
        x = src.astype(np.float64)
        if dtype.kind == "f":
            out = _to_float(x, dtype, mode)
            nan = np.isnan(x)
            return np.where(nan, src.astype(dtype) if src.dtype.kind == "f" else out, out).astype(dtype)
        return _to_integer(x, dtype, mode)
