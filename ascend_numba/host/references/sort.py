"""Sort32 and MrgSort, written for clarity (the compiled ones: ``kernels/primitives/sort.py``).

Tiles are NumPy arrays of float32 or uint16 (fp16 bits); a record is 8 bytes, read here as two
uint32 words (the score's word, with an fp16 tile's reserved half above it, and the index).  The
order is descending by the score's IEEE total order; ties keep the input order, and a merge
takes the lower queue's record first.
"""

from __future__ import annotations

import numpy as np

__all__ = ["total_order", "sort32", "mrg_sort"]


def total_order(score_bits: int, bits: int) -> int:
    """The score's place in the IEEE total order as an unsigned integer (-NaN lowest, +NaN highest)."""
    sign = 1 << (bits - 1)
    return ((1 << bits) - 1) ^ score_bits if score_bits & sign else score_bits | sign


def _words(tile: np.ndarray) -> np.ndarray:
    return tile.view(np.uint32).reshape(-1, 2)


def sort32(dst: np.ndarray, src0: np.ndarray, src1: np.ndarray, repeat_time: int) -> np.ndarray:
    """A copy of ``dst`` after Sort32: each run of 32 scores sorted with its indices into records."""
    out = dst.copy()
    records = _words(out)
    bits = 8 * src0.itemsize
    scores = src0.view(np.uint32 if bits == 32 else np.uint16)
    for r in range(repeat_time):
        run = list(range(32 * r, 32 * r + 32))
        ranked = sorted(run, key=lambda i: -total_order(int(scores[i]), bits))  # sorted() is stable
        for place, i in enumerate(ranked):
            records[32 * r + place] = (int(scores[i]), int(src1[i]))  # an fp16 score's reserved half: 0
    return out


def mrg_sort(dst: np.ndarray, queues: list, lengths: list, valid_bit: int, exhausted: bool,
             repeat_times: int) -> tuple:
    """(a copy of ``dst`` after MrgSort of the record tiles ``queues``, the records taken from each
    queue in the last repeat)."""
    out = dst.copy()
    records = _words(out)
    bits = 8 * dst.itemsize
    n = {3: 2, 7: 3, 15: 4}[valid_bit]
    lengths = [lengths[i] if i < n else 0 for i in range(4)]
    total = sum(lengths)
    taken = [0, 0, 0, 0]
    for r in range(repeat_times):
        heads = [0, 0, 0, 0]
        place = r * total
        while True:
            live = [i for i in range(n) if heads[i] < lengths[i]]
            if not live:
                break
            # max() keeps the first of equal keys: the lower queue.
            best = max(live, key=lambda i: total_order(int(_words(queues[i])[r * total + heads[i]][0]) & (
                (1 << bits) - 1), bits))
            records[place] = _words(queues[best])[r * total + heads[best]]
            place += 1
            heads[best] += 1
            if exhausted and heads[best] == lengths[best]:
                break
        taken = heads
    return out, taken
