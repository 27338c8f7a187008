"""The level-0 (repeat) form of the vector ops: which elements a call computes, in the device's
order, written for clarity (the compiled loops: ``kernels/primitives/masks.py`` and
``vector.py``).

A call runs repeats of 256 bytes, 8 blocks of 32 bytes per operand; lane ``k`` of repeat ``r`` is
element ``k % (32 / size)`` of block ``k // (32 / size)``; an operand's strides (block, repeat)
count 32-byte blocks.  Normal mode: bit ``k`` of the 128-bit mask picks lane ``k`` (a 32-bit type
reads 64 lanes, the low word); counter mode: the low word counts elements over all repeats.
"""

from __future__ import annotations

import numpy as np

__all__ = ["mask_of_length", "lanes", "level0"]

MAX_COUNTER = 0xFFFF_FFFF


def mask_of_length(n: int) -> tuple[int, int]:
    """(high, low) words of the device's continuous mask of ``n`` lanes (``SetMask(len)``)."""
    bits = 0 if n <= 0 else (1 << min(n, 128)) - 1
    return bits >> 64, bits & (2**64 - 1)


def lanes(itemsize: int, repeat_times: int, high: int, low: int, counter: bool, strides: list,
          sizes: list | None = None) -> list:
    """Per operand (``strides``: its ``(block, repeat)`` strides; ``sizes``: its element size,
    default ``itemsize``, the destination's, which sets the lanes of a repeat), the element indices
    the call computes, lane by lane in the device's order."""
    per_repeat = 256 // itemsize
    sizes = sizes or [itemsize] * len(strides)
    if counter:
        total = min(low, MAX_COUNTER)
        repeats = -(-total // per_repeat)
    else:
        total, repeats = None, repeat_times
    bits = (high << 64 | low) if per_repeat > 64 else low
    out = [[] for _ in strides]
    for r in range(repeats):
        for k in range(per_repeat):
            on = r * per_repeat + k < total if counter else (bits >> k) & 1
            if on:
                for got, (blk, rep), size in zip(out, strides, sizes):
                    block, e = divmod(k, 32 // size)
                    got.append((r * rep + block * blk) * (32 // size) + e)
    return [np.array(o, np.int64) for o in out]


def level0(op, dst: np.ndarray, sources: list, itemsize: int, repeat_times: int, high: int, low: int, counter: bool,
           strides: list) -> np.ndarray:
    """``dst`` after a level-0 call of the element-wise ``op`` (a function of the gathered source
    elements returning the results): each computed lane's result at its index, the other
    elements untouched.  ``strides``: ``dst``'s, then each source's; each operand's element size
    is its array's."""
    sizes = [dst.itemsize, *(s.itemsize for s in sources)]
    index = lanes(itemsize, repeat_times, high, low, counter, strides, sizes)
    out = dst.copy()
    if index[0].size:
        out[index[0]] = op(*(s[i] for s, i in zip(sources, index[1:])))
    return out
