"""AddReluCast, SubReluCast and MulCast (``host.primitives.CAST_COMPOUND_OPS``), one NumPy function
each, written for clarity.

Each takes the source tiles as arrays of their element type (fp16 as ``float16``) and the
destination's dtype, and returns the destination: the op in the source type (NumPy's fp16
arithmetic rounds to fp16; int16 wraps), Relu (a NaN kept), then the conversion to nearest, ties to
even (``np.rint``), an integer destination saturated with 0 for a NaN, an fp16 one overflowing to
infinity with the default NaN for a NaN.
"""

from __future__ import annotations

import numpy as np

__all__ = ["REFERENCES", "reference"]


def _relu(a):
    return np.where((a > 0) | np.isnan(a), a, np.zeros((), a.dtype)) if a.dtype.kind == "f" else np.maximum(a, 0)


def _convert(value, dst_dtype):
    dst_dtype = np.dtype(dst_dtype)
    with np.errstate(all="ignore"):
        if dst_dtype == np.float16:
            out = value.astype(np.float16)  # to nearest even; past the range: inf
            out[np.isnan(value)] = np.float16(np.nan)  # the default NaN (0x7E00)
            return out
        info = np.iinfo(dst_dtype)
        if value.dtype.kind == "f":
            rounded = np.rint(value.astype(np.float64))
            return np.where(np.isnan(rounded), 0, np.clip(rounded, info.min, info.max)).astype(dst_dtype)
        return np.clip(value.astype(np.int64), info.min, info.max).astype(dst_dtype)


def _in_type(f, a, b):
    with np.errstate(all="ignore"):
        return f(a, b)  # NumPy keeps the sources' type: fp16 rounds, int16 wraps


def add_relu_cast(dst_dtype, a, b):
    """``Cast(Relu(a + b))``."""
    return _convert(_relu(_in_type(np.add, a, b)), dst_dtype)


def sub_relu_cast(dst_dtype, a, b):
    """``Cast(Relu(a - b))``."""
    return _convert(_relu(_in_type(np.subtract, a, b)), dst_dtype)


def mul_cast(dst_dtype, a, b):
    """``Cast(a * b)``."""
    return _convert(_in_type(np.multiply, a, b), dst_dtype)


REFERENCES = {"add_relu_cast": add_relu_cast, "sub_relu_cast": sub_relu_cast, "mul_cast": mul_cast}


def reference(name: str, dst_dtype, a, b):
    """The reference destination of op ``name`` (of ``dst_dtype``) on source tiles ``a`` and ``b``."""
    return REFERENCES[name](dst_dtype, a, b)
