"""Brcb, written for clarity (the compiled one: ``kernels/primitives/broadcast.py``).

Repeat ``i`` broadcasts ``src[8i + j]`` over destination block ``i * dst_rep_stride + j *
dst_blk_stride`` (32-byte blocks), for ``j < 8``; every other destination byte is left.
"""

from __future__ import annotations

import numpy as np

__all__ = ["brcb"]


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
