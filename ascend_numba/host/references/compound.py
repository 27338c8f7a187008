"""The compound vector ops that read their destination (``host.primitives.COMPOUND_OPS``), one
NumPy function each, written for clarity.

Each takes the tiles as arrays of their element type (fp16 as ``float16``) and returns the new
``dst``: the product rounded to ``dst``'s type, then the sum rounded (two roundings: NumPy's fp16
arithmetic); fp16 sources into an fp32 ``dst`` (Axpy, MulAddDst) multiply exactly in fp32.  A NaN
result is the default NaN; MulAddRelu's Relu keeps it and gives +0 for the rest that is not above 0.
"""

from __future__ import annotations

import numpy as np

from ...dtypes import with_default_nan

__all__ = ["REFERENCES", "reference"]


def _mul_then_add(x, y, add, dst_dtype):
    """``round(round(x * y) + add)`` in ``dst_dtype``, the operands' values exact in fp32."""
    with np.errstate(all="ignore"):  # past fp16's range: inf, as the device rounds
        product = (x.astype(np.float32) * y.astype(np.float32)).astype(dst_dtype).astype(np.float32)
        total = product + add.astype(np.float32)
        return with_default_nan(total).astype(dst_dtype)


def _relu(a):
    return np.where((a > 0) | np.isnan(a), a, np.zeros((), a.dtype))


def axpy(dst, src, scalar):
    """``dst = src * scalar + dst``; the scalar as ``src``'s type."""
    return _mul_then_add(src, np.full(src.shape, src.dtype.type(np.float32(scalar))), dst, dst.dtype)


def mul_add_dst(dst, a, b):
    """``dst = a * b + dst``."""
    return _mul_then_add(a, b, dst, dst.dtype)


def fused_mul_add(dst, a, b):
    """``dst = a * dst + b``."""
    return _mul_then_add(a, dst, b, dst.dtype)


def mul_add_relu(dst, a, b):
    """``dst = Relu(a * dst + b)``."""
    return _relu(_mul_then_add(a, dst, b, dst.dtype))


REFERENCES = {"axpy": axpy, "mul_add_dst": mul_add_dst, "fused_mul_add": fused_mul_add, "mul_add_relu": mul_add_relu}


def reference(name: str, dst, *operands):
    """The reference ``dst`` of compound op ``name`` on its destination and operands."""
    return REFERENCES[name](dst, *operands)
