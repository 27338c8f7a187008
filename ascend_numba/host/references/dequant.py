"""SetDeqScale's words, CastDequant and AddDeqRelu, written for clarity in NumPy's fp32 (the
compiled ones: ``kernels/primitives/dequant.py``, whose docstrings give the device's sources: the
steps are the Ascend 950's software model of the instructions and c220's AddDeqReluCompute)."""

from __future__ import annotations

import numpy as np

__all__ = ["deq_config", "cast_dequant_b8", "cast_dequant_f16", "add_deq_relu"]


def deq_config(scale: float, offset: int, sign_mode: bool) -> int:
    """The DEQSCALE word: fp32 scale bits 0-31, offset's low 9 bits at 37, sign mode at bit 46."""
    return int(np.float32(scale).view(np.uint32)) | ((int(offset) & 0x1FF) << 37) | (int(bool(sign_mode)) << 46)


def _b8(v: int, word: int) -> int:
    scale = np.uint32(word & 0xFFFFE000).view(np.float32)  # the fp32 scale with 10 fraction bits
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.float32(v) * scale  # rounded to fp32
    r = 0 if np.isnan(t) else int(np.clip(np.rint(np.float64(t)), -32768, 32767))  # ties to even, int16
    offset = (word >> 37) & 0x1FF
    r = int(np.clip(r, -256, 255)) + (offset - 512 if offset >= 256 else offset)
    return int(np.clip(r, -128, 127)) if (word >> 46) & 1 else int(np.clip(r, 0, 255))


def cast_dequant_b8(dst: np.ndarray, src: np.ndarray, words, half_block: bool, lanes) -> np.ndarray:
    """``dst`` (int8 or uint8) after CastDequant of ``src`` (int16): ``words`` one DEQSCALE word or
    16 (the per-element form); ``lanes``: (source index, destination block) of each lane computed."""
    out = dst.copy()
    for i, block in lanes:
        word = words[i % 16] if isinstance(words, (list, tuple)) else words
        low = np.array(_b8(int(src[i]), word) & 0xFF).astype(np.uint8)  # a sign mode unlike the tile's: low 8 bits
        out[block * 32 + (16 if half_block else 0) + i % 16] = low.view(out.dtype)
    return out


def _scaled(x: np.ndarray, scale: np.float16) -> np.ndarray:
    """int32 to fp32, times 2**-17, the scale and 2**17, each product in fp32."""
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(np.float32) * np.float32(2.0 ** -17) * np.float32(scale) * np.float32(2.0 ** 17)


def cast_dequant_f16(src: np.ndarray, scale: np.float16) -> np.ndarray:
    """int32 -> fp16: the scaled fp32 rounded to fp16, saturated to the finite range (a NaN: the
    default NaN)."""
    f = _scaled(src, scale)
    out = np.clip(f, -65504, 65504).astype(np.float16)
    return np.where(np.isnan(f), np.float16(np.nan), out).astype(np.float16)


def add_deq_relu(a: np.ndarray, b: np.ndarray, scale: np.float16) -> np.ndarray:
    """AddDeqRelu: the int32 sum (wrapping), scaled, to fp16 (IEEE overflow), then Relu (+0 for a
    negative or -0 result; a NaN the default NaN)."""
    total = (a.astype(np.int64) + b.astype(np.int64)).astype(np.int32)  # wraps
    with np.errstate(over="ignore", invalid="ignore"):
        h = _scaled(total, scale).astype(np.float16)
    relu = np.where(np.signbit(h), np.float16(0), h)
    return np.where(np.isnan(h), np.float16(np.nan), relu).astype(np.float16)
