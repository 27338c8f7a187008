"""GatherMask, written for clarity (the compiled one: ``kernels/primitives/gather_mask.py``)."""

from __future__ import annotations

import numpy as np

__all__ = ["gather_mask"]

BUILTIN = {1: lambda k: k % 2 == 0, 2: lambda k: k % 2 == 1, 3: lambda k: k % 4 == 0, 4: lambda k: k % 4 == 1,
           5: lambda k: k % 4 == 2, 6: lambda k: k % 4 == 3, 7: lambda k: True}


def gather_mask(dst, src, pattern, reduce_mode, mask, src0_block_stride=1, repeat_times=0, src0_repeat_stride=8,
                src1_repeat_stride=8):
    """(a copy of ``dst`` after GatherMask, the count kept); ``pattern``: 1..7 or a uint16 / uint32 array."""
    size = src.itemsize
    lanes, per_block = 256 // size, 32 // size
    per_repeat = mask if reduce_mode else lanes
    bits = None if isinstance(pattern, int) else np.unpackbits(pattern.view(np.uint8), bitorder="little")
    kept = []
    for i in range(repeat_times):
        for k in range(per_repeat):
            if bits is None:
                keep = BUILTIN[pattern](k)
            else:
                b = i * 32 * src1_repeat_stride * 8 + k
                keep = b < bits.size and bits[b] == 1
            if keep:
                block = (i * src0_repeat_stride + (k // lanes) * 8 * src0_block_stride
                         + (k % lanes) // per_block * src0_block_stride)
                kept.append(src[block * per_block + k % per_block])
    out = dst.copy()
    out[:len(kept)] = kept
    return out, len(kept)
