"""Brcb, Gatherb and Transpose, written for clarity (the compiled ones: ``kernels/primitives/broadcast.py``,
``gatherb.py`` and ``transpose.py``).

Brcb's repeat ``i`` broadcasts ``src[8i + j]`` over destination block ``i * dst_rep_stride + j *
dst_blk_stride`` (32-byte blocks), for ``j < 8``; every other destination byte is left.
"""

from __future__ import annotations

import numpy as np

__all__ = ["brcb", "gatherb", "gather_repeats", "transpose_nchw"]


def brcb(dst: np.ndarray, src: np.ndarray, repeat_times: int, dst_blk_stride: int = 1,
         dst_rep_stride: int = 8) -> np.ndarray:
    """A copy of ``dst`` after Brcb from ``src`` (a block stride of 0 read as 1)."""
    out = dst.copy()
    per_block = 32 // dst.itemsize
    blk = dst_blk_stride or 1
    for i in range(repeat_times):
        for j in range(8):
            start = (i * dst_rep_stride + j * blk) * per_block
            out[start:start + per_block] = src[8 * i + j]
    return out


def gatherb(dst: np.ndarray, src: np.ndarray, offsets: np.ndarray, repeat_times: int, dst_blk_stride: int = 1,
            dst_rep_stride: int = 8) -> np.ndarray:
    """A copy of ``dst`` after Gatherb: the 32 bytes at byte ``offsets[8i + j]`` of ``src`` into
    destination block ``i * dst_rep_stride + j * dst_blk_stride`` (a block stride of 0 read as 1)."""
    out = dst.copy()
    out8, src8 = out.view(np.uint8), src.view(np.uint8)
    blk = dst_blk_stride or 1
    for i in range(repeat_times):
        for j in range(8):
            at = 32 * (i * dst_rep_stride + j * blk)
            out8[at:at + 32] = src8[offsets[8 * i + j]:offsets[8 * i + j] + 32]
    return out


def transpose_nchw(src: np.ndarray, n: int, c: int, h: int, w: int, to_nhwc: bool) -> np.ndarray:
    """Transpose's enhanced form: [N, C, H, W] -> [N, H, W, C] (``to_nhwc``) or back, flat."""
    if to_nhwc:
        return src[:n * c * h * w].reshape(n, c, h, w).transpose(0, 2, 3, 1).reshape(-1)
    return src[:n * c * h * w].reshape(n, h, w, c).transpose(0, 3, 1, 2).reshape(-1)


def gather_repeats(dst: np.ndarray, src: np.ndarray, offsets: np.ndarray, base: int, lane_on, repeat_times: int,
                   dst_rep_stride: int) -> np.ndarray:
    """A copy of ``dst`` after Gather's level-0 form: lane ``k`` of repeat ``r``, where
    ``lane_on(r, k)``, takes ``src[base + offsets[r * lanes + k] // sizeof]`` to ``dst[r *
    dst_rep_stride * per_block + k]``."""
    out = dst.copy()
    lanes, per_block = 256 // dst.itemsize, 32 // dst.itemsize
    for r in range(repeat_times):
        for k in range(lanes):
            if lane_on(r, k):
                out[r * dst_rep_stride * per_block + k] = src[base + int(offsets[r * lanes + k]) // dst.itemsize]
    return out
