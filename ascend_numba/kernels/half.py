"""fp16 and bf16 as ``uint16`` bit patterns, converted with compiled round-to-nearest-even (SPEC §3).

Numba has no CPU half arithmetic and NumPy no bf16, so kernels store both as
``uint16`` and go through fp32.  The routines reproduce NumPy's float16 casts
and ml_dtypes' bfloat16 casts bit for bit, NaN payloads included:

* fp32 -> fp16 keeps the top 10 payload bits of a NaN (forcing one bit on when
  they are all zero), overflows to inf, rounds subnormals to nearest even.
* fp32 -> bf16 rounds to nearest even and turns every NaN into the quiet NaN
  ``sign | 0x7fc0``.
* fp16/bf16 -> fp32 are exact.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
from ._jit import jit

__all__ = [
    "f32_as_u32", "u32_as_f32",
    "f32_to_f16", "f16_to_f32", "f32_to_bf16", "bf16_to_f32",
    "f32_to_f16_array", "f16_to_f32_array", "f32_to_bf16_array", "bf16_to_f32_array",
]


@intrinsic
def f32_as_u32(typingctx, x):
    """Reinterpret a float32's bits as uint32."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.uint32(types.float32), codegen


@intrinsic
def u32_as_f32(typingctx, x):
    """Reinterpret the low 32 bits of an integer as a float32 (Numba widens uint32 arithmetic to 64 bits)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = args[0]
        if x.bitwidth > 32:
            value = builder.trunc(value, ir.IntType(32))
        elif x.bitwidth < 32:
            value = builder.zext(value, ir.IntType(32))
        return builder.bitcast(value, ir.FloatType())

    return types.float32(x), codegen


@jit(inline="always")
def _f32bits_to_f16bits(f):
    f = np.uint32(f)
    sign = np.uint16((f >> np.uint32(16)) & np.uint32(0x8000))
    f_exp = f & np.uint32(0x7F800000)
    f_sig = f & np.uint32(0x007FFFFF)
    if f_exp >= np.uint32(0x47800000):
        if f_exp == np.uint32(0x7F800000) and f_sig != 0:
            nan = np.uint32(0x7C00) + (f_sig >> np.uint32(13))
            if nan == np.uint32(0x7C00):
                nan += np.uint32(1)
            return np.uint16(sign | np.uint16(nan))
        return np.uint16(sign | np.uint16(0x7C00))
    if f_exp <= np.uint32(0x38000000):
        if f_exp < np.uint32(0x33000000):
            return sign
        shift = np.uint32(113) - (f_exp >> np.uint32(23))
        sig = (np.uint32(0x00800000) + f_sig) >> shift
        # Round half to even; the low 11 source bits the shift dropped break ties.
        if (sig & np.uint32(0x3FFF)) != np.uint32(0x1000) or (f & np.uint32(0x7FF)) != 0:
            sig += np.uint32(0x1000)
        return np.uint16(sign | np.uint16(sig >> np.uint32(13)))
    h_exp = (f_exp - np.uint32(0x38000000)) >> np.uint32(13)
    if (f_sig & np.uint32(0x3FFF)) != np.uint32(0x1000):
        f_sig += np.uint32(0x1000)
    # A carry out of the significand bumps the exponent (up to inf): that is the correct rounding.
    return np.uint16(sign | np.uint16(h_exp + (f_sig >> np.uint32(13))))


@jit(inline="always")
def f32_to_f16(x):
    """Round a float32 to fp16 (nearest even); returns the fp16 bits as uint16."""
    return _f32bits_to_f16bits(f32_as_u32(np.float32(x)))


@jit(inline="always")
def f16_to_f32(h):
    """Widen fp16 bits (uint16) to float32, exactly."""
    h = np.uint32(h)
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    h_exp = h & np.uint32(0x7C00)
    h_sig = h & np.uint32(0x03FF)
    if h_exp == 0:
        # Zero or subnormal: sig * 2**-24 is exact in fp32.
        mag = np.float32(h_sig) * np.float32(5.9604644775390625e-08)
        return u32_as_f32(f32_as_u32(mag) | sign)
    if h_exp == np.uint32(0x7C00):
        return u32_as_f32(sign | np.uint32(0x7F800000) | (h_sig << np.uint32(13)))
    return u32_as_f32(sign | (((h & np.uint32(0x7FFF)) + np.uint32(0x1C000)) << np.uint32(13)))


@jit(inline="always")
def f32_to_bf16(x):
    """Round a float32 to bf16 (nearest even, NaN -> quiet NaN); returns uint16 bits."""
    f = f32_as_u32(np.float32(x))
    if (f & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
        return np.uint16(((f >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7FC0))
    bias = np.uint32(0x7FFF) + ((f >> np.uint32(16)) & np.uint32(1))
    return np.uint16((f + bias) >> np.uint32(16))


@jit(inline="always")
def bf16_to_f32(h):
    """Widen bf16 bits (uint16) to float32, exactly."""
    return u32_as_f32(np.uint32(h) << np.uint32(16))


@jit
def f32_to_f16_array(src, dst):
    for i in range(src.size):
        dst[i] = f32_to_f16(src[i])


@jit
def f16_to_f32_array(src, dst):
    for i in range(src.size):
        dst[i] = f16_to_f32(src[i])


@jit
def f32_to_bf16_array(src, dst):
    for i in range(src.size):
        dst[i] = f32_to_bf16(src[i])


@jit
def bf16_to_f32_array(src, dst):
    for i in range(src.size):
        dst[i] = bf16_to_f32(src[i])
