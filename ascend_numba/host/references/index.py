"""CreateVecIndex, written for clarity (the compiled one: ``kernels/primitives/index.py``).

The A2/A3 implementation's recurrence: the first 32-byte block is ``first + i`` from the scalar
unit, each later block of the first repeat the block before it plus the block's length, each later
repeat the repeat before it plus the repeat's length, each step in the tile's type (fp16 arithmetic
rounds, integers wrap).
"""

from __future__ import annotations

import numpy as np

__all__ = ["create_vec_index"]


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
