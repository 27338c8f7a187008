"""fp16 and bf16 as ``uint16`` bit patterns, converted with compiled round-to-nearest-even (SPEC §3).

Numba has no CPU half arithmetic and NumPy no bf16, so kernels store both as
``uint16`` and go through fp32.  The routines reproduce NumPy's float16 casts
and ml_dtypes' bfloat16 casts bit for bit, NaN payloads included:

* fp32 -> fp16 keeps the top 10 payload bits of a NaN (forcing one bit on when
  they are all zero), overflows to inf, rounds subnormals to nearest even.
* fp32 -> bf16 rounds to nearest even and turns every NaN into the quiet NaN
  ``sign | 0x7fc0``.
* fp16/bf16 -> fp32 are exact.

fp16 goes through the CPU's own conversions (see below); bf16 is bit arithmetic.
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


@intrinsic
def _fptrunc_half(typingctx, x):
    """The hardware's float32 -> half conversion (round to nearest even), as uint16 bits."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return types.uint16(types.float32), codegen


@intrinsic
def _fpext_half(typingctx, h):
    """The hardware's half (uint16 bits) -> float32 conversion (exact)."""
    if h != types.uint16:
        return None

    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())

    return types.float32(types.uint16), codegen


# The conversions are LLVM's fptrunc / fpext (one vector instruction per 8 or 16 elements where
# the CPU has them, F16C on x86: 28x the bit-twiddled version, which did not vectorize), with
# NaNs selected from NumPy's rule: the hardware quiets a signalling NaN, NumPy keeps its payload.
# Checked against NumPy on every fp16 value and every fp32 value from 2**-27 to 2**17.

@jit(always_inline=True)
def f32_to_f16(x):
    """Round a float32 to fp16 (nearest even); returns the fp16 bits as uint16."""
    x = np.float32(x)
    h = _fptrunc_half(x)
    # NaN keeps its top 10 payload bits (forced non-zero), as NumPy does; the hardware sets the
    # quiet bit.  (Selects on a float compare: the loops stay vectorized.)
    payload = np.uint16((f32_as_u32(x) >> np.uint32(13)) & np.uint32(0x3FF))
    nan = (h & np.uint16(0xFC00)) | payload | np.uint16(payload == 0)
    return h if x == x else nan


@jit(always_inline=True)
def f16_to_f32(h):
    """Widen fp16 bits (uint16) to float32, exactly (a NaN keeps its payload, as in NumPy)."""
    h = np.uint16(h)
    v = _fpext_half(h)
    em = np.uint32(h) & np.uint32(0x7FFF)
    nan = u32_as_f32(((np.uint32(h) & np.uint32(0x8000)) << np.uint32(16)) | np.uint32(0x7F800000)
                     | (em << np.uint32(13)))
    return v if v == v else nan


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
