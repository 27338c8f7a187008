"""The reductions, written for clarity (the compiled ones: ``kernels/primitives/reduce.py``).

Tiles are given as NumPy arrays of float16 or float32; a mask as a function ``lane_on(r, k)`` of
repeat and lane.  Sums are binary trees over a group's lanes in lane order (lane 2i with 2i + 1,
then those sums pairwise...), each addition rounded to the tile's type; a lane left out is absent
and its partner passes up.  Max / Min keep the first of equal values, -0.0 equal to +0.0, and a
NaN beats every number (the first NaN wins); an arithmetic NaN (a sum) is the default NaN.
"""

from __future__ import annotations

import numpy as np

__all__ = ["tree", "repeat_reduce", "reduce_tensor", "GROUPS"]

GROUPS = ("whole", "block", "pair")
ORDERS = ("value_index", "index_value", "only_value", "only_index")
_DEFAULT_NAN = {np.dtype(np.float16): np.uint16(0x7E00), np.dtype(np.float32): np.uint32(0x7FC00000)}


def _beats(kind, x, y):
    if np.isnan(x):
        return False
    if np.isnan(y):
        return True
    return y > x if kind == "max" else y < x


def tree(values, on, kind):
    """The binary-tree reduction of ``values`` (length a power of two) where ``on``: (value, position
    of the winner) or None when no lane is on."""
    level = [(v, i) if o else None for i, (v, o) in enumerate(zip(values, on))]
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[0::2], level[1::2]):
            if a is None or b is None:
                nxt.append(a if b is None else b)
            elif kind == "sum":
                with np.errstate(over="ignore", invalid="ignore"):
                    nxt.append((a[0] + b[0], a[1]))  # NumPy scalars of the tile's type: rounded to it
            else:
                nxt.append(b if _beats(kind, a[0], b[0]) else a)
        level = nxt
    return level[0]


def _bits(dtype, value):
    return np.array([value], dtype).view(np.uint16 if dtype.itemsize == 2 else np.uint32)[0]


def _sum_bits(dtype, value):
    return _DEFAULT_NAN[dtype] if np.isnan(value) else _bits(dtype, value)


def _put(out8, at, value, nbytes):
    if 0 <= at and at + nbytes <= out8.size:
        out8[at:at + nbytes] = np.frombuffer(int(value).to_bytes(nbytes, "little"), np.uint8)


def repeat_reduce(dst, src, kind, group, lane_on, repeat_times, dst_rep_stride, src_blk_stride=1,
                  src_rep_stride=8, order="value_index"):
    """A copy of ``dst`` after a WholeReduce* (group "whole"), BlockReduce* ("block") or
    PairReduceSum ("pair") of ``kind`` ("sum", "max", "min")."""
    dtype = src.dtype
    size = dtype.itemsize
    lanes, per_block = 256 // size, 32 // size
    n = {"whole": lanes, "block": per_block, "pair": 2}[group]
    if group == "whole":
        out_bytes = size if kind == "sum" or order == "only_value" else 4 if order == "only_index" else 2 * size
        unit = out_bytes
    else:  # one value a result
        out_bytes, unit, order = size, 8 * size if group == "block" else 128, "only_value"
    out = dst.copy()
    out8 = out.view(np.uint8)
    for r in range(repeat_times):
        for g in range(lanes // n):
            values, on, places = [], [], []
            for k in range(g * n, (g + 1) * n):
                i = (r * src_rep_stride + k // per_block * src_blk_stride) * per_block + k % per_block
                on.append(lane_on(r, k) and i < src.size)
                values.append(src[i] if on[-1] else dtype.type(0))
                places.append((i, k))
            won = tree(values, on, kind)
            if won is None:
                continue
            at = r * dst_rep_stride * unit + g * out_bytes
            if kind == "sum":
                _put(out8, at, _sum_bits(dtype, won[0]), size)
                continue
            element, lane = places[won[1]]
            value = _bits(dtype, src[element])
            layout = {"value_index": [(value, size), (lane, size)], "index_value": [(lane, size), (value, size)],
                      "only_value": [(value, size)], "only_index": [(lane, 4)]}[order]
            for value_bits, nbytes in layout:
                _put(out8, at, value_bits, nbytes)
                at += nbytes
    return out


def reduce_tensor(dst, src, kind, lane_on, repeats, src_rep_stride=8, accumulate=True, cal_index=False):
    """A copy of ``dst`` after ReduceSum / ReduceMax / ReduceMin: ``repeats`` repeats of the lanes
    ``lane_on`` sets (the count form: the first ``count`` elements, ``accumulate`` the repeats' sums
    in order; level-0: trees of a repeat's lanes over them)."""
    dtype = src.dtype
    size = dtype.itemsize
    lanes, per_block = 256 // size, 32 // size
    out = dst.copy()
    out8 = out.view(np.uint8)
    results = []
    for r in range(repeats):
        at = [(r * src_rep_stride + k // per_block) * per_block + k % per_block for k in range(lanes)]
        on = [lane_on(r, k) and at[k] < src.size for k in range(lanes)]
        won = tree([src[i] if o else dtype.type(0) for i, o in zip(at, on)], on, kind)
        results.append(None if won is None else (won[0], at[won[1]], at[won[1]]))  # index: the element offset
    if kind != "sum":
        best = None
        for found in results:
            if found is not None and (best is None or _beats(kind, best[0], found[0])):
                best = found
        if best is not None:
            _put(out8, 0, _bits(dtype, src[best[2]]), size)
            if cal_index:
                _put(out8, size, best[1], size)
        return out
    sums = [None if x is None else x[0] for x in results]
    if accumulate:
        total = None
        with np.errstate(over="ignore", invalid="ignore"):
            for s in sums:
                if s is not None:
                    total = s if total is None else total + s
    else:
        while len(sums) > 1:
            sums = [(lambda w: None if w is None else w[0])(
                tree([s if s is not None else dtype.type(0) for s in chunk] + [dtype.type(0)] * (lanes - len(chunk)),
                     [s is not None for s in chunk] + [False] * (lanes - len(chunk)), "sum"))
                for chunk in (sums[c:c + lanes] for c in range(0, len(sums), lanes))]
        total = sums[0] if sums else None
    if total is not None:
        _put(out8, 0, _sum_bits(dtype, total), size)
    return out
