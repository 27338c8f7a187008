"""DMA atomics, written for clarity (the compiled ones: ``kernels/primitives/atomic.py``): GM after
copies from several lanes combine into it, one element at a time in the atomic's type."""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = ["accumulate"]

TYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "int16": np.int16,
         "int32": np.int32, "int8": np.int8}


def accumulate(gm: np.ndarray, contributions: list, op: str, type_name: str) -> np.ndarray:
    """``gm`` (raw bytes as uint8) after each contribution (raw bytes of the same length) was
    combined into it in order: "add" (an integer wraps, a NaN sum is the default NaN), "max" /
    "min" (GM's element kept on a tie, a NaN wins, GM's first)."""
    dtype = np.dtype(TYPES[type_name])
    out = gm.copy().view(dtype)
    for c in contributions:
        value = c.view(dtype)
        for i in range(out.size):
            a, b = out[i], value[i]
            if op == "add":
                with np.errstate(over="ignore", invalid="ignore"):
                    r = (np.float32(a) + np.float32(b)) if dtype.kind == "f" or dtype == ml_dtypes.bfloat16 \
                        else np.int64(a) + np.int64(b)
                if dtype.kind in "iu":
                    out[i] = np.array(r, np.int64).astype(dtype)
                elif np.isnan(r):
                    out[i] = np.array(np.nan, dtype)  # the default NaN of the type: positive, quiet
                else:
                    out[i] = dtype.type(r)
            else:
                fa, fb = np.float32(a) if dtype.kind != "i" else a, np.float32(b) if dtype.kind != "i" else b
                keep = np.isnan(fa) or (not np.isnan(fb) and not (fb > fa if op == "max" else fb < fa))
                out[i] = a if keep else b
    return out.view(np.uint8)
