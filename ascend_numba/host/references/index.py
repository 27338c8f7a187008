"""CreateVecIndex, written for clarity (the compiled one: ``kernels/primitives/index.py``).

The A2/A3 implementation's recurrence (``impl/basic_api/dav_c220/
kernel_operator_vec_createvecindex_impl.h``, cannmirror/asc-devkit at 0da921b): the first 32-byte
block is ``first + i`` from the scalar unit, each later block of the first repeat the block before
it plus the block's length, each later repeat the repeat before it plus the repeat's length, each
step in the tile's type (fp16 arithmetic rounds, integers wrap).
"""

from __future__ import annotations

import numpy as np

__all__ = ["create_vec_index", "create_vec_index_level0"]


def create_vec_index(dtype, first, count: int) -> np.ndarray:
    """The ``count`` values CreateVecIndex writes into a tile of ``dtype`` (float16 for fp16)."""
    dtype = np.dtype(dtype)
    per_block, per_repeat = 32 // dtype.itemsize, 256 // dtype.itemsize
    out = np.zeros(count, dtype)
    floating = dtype.kind == "f"
    with np.errstate(over="ignore"):
        start = np.float32(dtype.type(first)) if floating else int(np.array(first).astype(np.int64).astype(dtype))
        for i in range(count):
            if i < per_block:
                value = start + np.float32(i) if floating else start + i
            elif i < per_repeat:
                value = out[i - per_block].astype(np.float32) + np.float32(per_block) if floating \
                    else int(out[i - per_block]) + per_block
            else:
                value = out[i - per_repeat].astype(np.float32) + np.float32(per_repeat) if floating \
                    else int(out[i - per_repeat]) + per_repeat
            out[i] = dtype.type(value) if floating else np.array(value, np.int64).astype(dtype)
    return out


def _in_type(dtype, value):
    """``value`` stored in the tile's type: fp rounds, an integer wraps."""
    if dtype.kind == "f":
        return dtype.type(value)
    return np.array(int(value), np.int64).astype(dtype)


def create_vec_index_level0(tile: np.ndarray, first, mask, repeat_times: int, dst_blk: int = 1,
                            dst_rep: int = 8, counter: bool = False) -> np.ndarray:
    """``tile`` (float16, int16, float32 or int32) after the level-0 CreateVecIndex, the
    implementation's steps replayed one by one: ``mask`` an int (a continuous mask of that many
    lanes) or the pair (mask[0], mask[1]); ``counter``: the mask register in counter mode."""
    out = tile.copy()
    dtype = out.dtype
    per_block, lanes = 32 // dtype.itemsize, 256 // dtype.itemsize
    floating = dtype.kind == "f"

    def position(repeat, lane):
        return repeat * dst_rep * per_block + lane // per_block * dst_blk * per_block + lane % per_block

    def scalar_unit(lane):  # SetValue(first + lane), computed in fp32 or int64
        with np.errstate(over="ignore"):
            start = np.float32(dtype.type(first)) if floating else int(_in_type(dtype, int(first)))
            return _in_type(dtype, start + (np.float32(lane) if floating else lane))

    def adds(at, src, step):  # one vector Adds lane: the tile's type, one rounding
        with np.errstate(over="ignore"):
            value = out[src].astype(np.float32) + np.float32(step) if floating else int(out[src]) + step
        if at < out.size:
            out[at] = _in_type(dtype, value)

    if isinstance(mask, (int, np.integer)):
        m = min(int(mask), lanes)
        on = list(range(m))
        for lane in on:  # the first block from the scalar unit, then each block from the one before
            if position(0, lane) < out.size:
                if lane < per_block:
                    out[position(0, lane)] = scalar_unit(lane)
                else:
                    adds(position(0, lane), position(0, lane - per_block), per_block)
        later = on
    else:
        words = [int(w) % 2**64 for w in mask] + [0]
        bits = words[0] | (words[1] << 64 if lanes > 64 else 0)
        for lane in range(lanes):
            if bits >> lane & 1 and position(0, lane) < out.size:
                out[position(0, lane)] = scalar_unit(lane)
        later = list(range(min(words[0], lanes))) if counter else [k for k in range(lanes) if bits >> k & 1]
    for r in range(1, repeat_times):
        for lane in later:
            adds(position(r, lane), position(r - 1, lane), lanes)
    return out
