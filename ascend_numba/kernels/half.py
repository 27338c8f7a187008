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


_DENORM_MAGIC = np.uint32(((127 - 15) + (23 - 10) + 1) << 23)  # 0.5: aligns fp16 subnormal bits at the bottom


@jit(always_inline=True)
def _f32bits_to_f16bits(f):
    # Branch-free (every case computed, one selected) so that loops over it vectorize.
    f = np.uint32(f)
    sign = (f >> np.uint32(16)) & np.uint32(0x8000)
    a = f & np.uint32(0x7FFFFFFF)
    # Normal range: rebias the exponent, round half to even through the carry.
    odd = (a >> np.uint32(13)) & np.uint32(1)
    normal = (a + np.uint32((15 - 127) << 23) + np.uint32(0xFFF) + odd) >> np.uint32(13)
    # Subnormal range: an fp32 add of 0.5 rounds the 10 fp16 bits into place (nearest even).
    sub = f32_as_u32(u32_as_f32(a) + u32_as_f32(_DENORM_MAGIC)) - _DENORM_MAGIC
    # NaN keeps its top 10 payload bits (forced non-zero), as NumPy does.
    payload = (a >> np.uint32(13)) & np.uint32(0x3FF)
    nan = np.uint32(0x7C00) | payload | (np.uint32(1) if payload == 0 else np.uint32(0))
    finite = sub if a < np.uint32(113 << 23) else normal
    big = nan if a > np.uint32(0x7F800000) else np.uint32(0x7C00)
    return np.uint16(sign | (big if a >= np.uint32(0x47800000) else finite))


@jit(always_inline=True)
def f32_to_f16(x):
    """Round a float32 to fp16 (nearest even); returns the fp16 bits as uint16."""
    return _f32bits_to_f16bits(f32_as_u32(np.float32(x)))


@jit(always_inline=True)
def f16_to_f32(h):
    """Widen fp16 bits (uint16) to float32, exactly."""
    h = np.uint32(h)
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    em = h & np.uint32(0x7FFF)
    normal = (em << np.uint32(13)) + np.uint32(112 << 23)        # exponent rebias
    special = (em << np.uint32(13)) | np.uint32(0x7F800000)       # inf, NaN with its payload
    tiny = f32_as_u32(np.float32(em) * np.float32(5.9604644775390625e-08))  # zero, subnormal: em * 2**-24
    mag = tiny if em < np.uint32(0x0400) else (special if em >= np.uint32(0x7C00) else normal)
    return u32_as_f32(sign | mag)


@jit(always_inline=True)
def f32_to_bf16(x):
    """Round a float32 to bf16 (nearest even, NaN -> quiet NaN); returns uint16 bits."""
    f = f32_as_u32(np.float32(x))
    if (f & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
        return np.uint16(((f >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7FC0))
    bias = np.uint32(0x7FFF) + ((f >> np.uint32(16)) & np.uint32(1))
    return np.uint16((f + bias) >> np.uint32(16))


@jit(always_inline=True)
def bf16_to_f32(h):
    """Widen bf16 bits (uint16) to float32, exactly."""
    return u32_as_f32(np.uint32(h) << np.uint32(16))


@jit(python=True)
def f32_to_f16_array(src, dst):
    for i in range(src.size):
        dst[i] = f32_to_f16(src[i])


@jit(python=True)
def f16_to_f32_array(src, dst):
    for i in range(src.size):
        dst[i] = f16_to_f32(src[i])


@jit(python=True)
def f32_to_bf16_array(src, dst):
    for i in range(src.size):
        dst[i] = f32_to_bf16(src[i])


@jit(python=True)
def bf16_to_f32_array(src, dst):
    for i in range(src.size):
        dst[i] = bf16_to_f32(src[i])
