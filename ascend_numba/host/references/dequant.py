"""SetDeqScale's words and CastDequant, written for clarity with exact fractions (the compiled
ones: ``kernels/primitives/dequant.py``, whose docstring gives the device's sources and the
twin's choices)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["deq_config", "cast_dequant_b8", "cast_dequant_f16", "add_deq_relu"]


def deq_config(scale: float, offset: int, sign_mode: bool) -> int:
    """The DEQSCALE word: fp32 scale bits 0-31, offset's low 9 bits at 37, sign mode at bit 46."""
    return int(np.float32(scale).view(np.uint32)) | ((int(offset) & 0x1FF) << 37) | (int(bool(sign_mode)) << 46)


def _b8(v: int, word: int) -> int:
    scale = np.uint32(word & 0xFFFFE000).view(np.float32)  # the fp32 scale with 10 fraction bits
    offset = (word >> 37) & 0x1FF
    offset = offset - 512 if offset >= 256 else offset
    lo, hi = (-128, 127) if (word >> 46) & 1 else (0, 255)
    if np.isnan(scale) or (np.isinf(scale) and v == 0):  # a NaN product: 0
        return 0
    if np.isinf(scale):
        return hi if (v > 0) == (scale > 0) else lo
    return min(max(round(Fraction(int(v)) * Fraction(float(scale)) + offset), lo), hi)  # round: ties to even


def cast_dequant_b8(dst: np.ndarray, src: np.ndarray, words, half_block: bool, lanes) -> np.ndarray:
    """``dst`` (int8 or uint8) after CastDequant of ``src`` (int16): ``words`` one DEQSCALE word or
    16 (the per-element form); ``lanes``: (source index, destination block) of each lane computed."""
    out = dst.copy()
    for i, block in lanes:
        word = words[i % 16] if isinstance(words, (list, tuple)) else words
        out[block * 32 + (16 if half_block else 0) + i % 16] = np.array(_b8(int(src[i]), word) & 0xFF).astype(np.uint8).view(
            out.dtype)  # a sign mode that does not match the tile: the low 8 bits
    return out


def cast_dequant_f16(src: np.ndarray, scale: np.float16) -> np.ndarray:
    """int32 -> fp16: ``src * scale`` rounded once to nearest-even, saturated to the finite range."""
    with np.errstate(over="ignore", invalid="ignore"):
        exact = src.astype(np.float64) * np.float64(scale)  # 31 + 11 bits: exact
        out = exact.astype(np.float16)  # NumPy rounds a float64 to fp16 once
    out = np.where(np.isinf(out), np.copysign(np.float16(65504), exact).astype(np.float16), out)
    return np.where(np.isnan(exact), np.float16(np.nan), out).astype(np.float16)


def add_deq_relu(a: np.ndarray, b: np.ndarray, scale: np.float16) -> np.ndarray:
    """AddDeqRelu, the c220 implementation's steps in NumPy: the int32 sum (wrapping), to fp32,
    times 2**-17, times the scale, times 2**17 (fp32 products), to fp16, then Relu (+0 for a
    negative or -0 result; a NaN the default NaN)."""
    total = (a.astype(np.int64) + b.astype(np.int64)).astype(np.int32)  # wraps
    with np.errstate(over="ignore", invalid="ignore"):
        f = total.astype(np.float32) * np.float32(2.0 ** -17)
        f = f * np.float32(scale)
        h = (f * np.float32(2.0 ** 17)).astype(np.float16)
    relu = np.where(np.signbit(h), np.float16(0), h)
    return np.where(np.isnan(h), np.float16(np.nan), relu).astype(np.float16)
