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
    "f32_to_f16", "f16_to_f32", "f16_to_f32_quiet", "f32_round_f16", "f32_round_f16_quiet", "f32_to_f16_quiet",
    "f32_to_bf16",
    "bf16_to_f32",
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

def _nan_payload(builder, x):
    """Codegen: a float32's bits and the payload fp16 keeps of it when it is a NaN (NumPy's rule:
    its top 10 payload bits, forced non-zero), both i32."""
    i32 = ir.IntType(32)
    bits = builder.bitcast(x, i32)
    payload = builder.and_(builder.lshr(bits, ir.Constant(i32, 13)), ir.Constant(i32, 0x3FF))
    return bits, builder.or_(payload, builder.zext(builder.icmp_unsigned("==", payload, ir.Constant(i32, 0)), i32))


@intrinsic
def _f32_nan_as_f16(typingctx, x):
    """The fp16 bits NumPy makes of NaN ``x``: its sign, the exponent, its top 10 payload bits
    forced non-zero (the hardware would set the quiet bit instead).  32-bit integer ops: Numba's
    own integer arithmetic widens to 64 bits, which halves a vector loop's width."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        bits, payload = _nan_payload(builder, args[0])
        sign = builder.and_(builder.lshr(bits, ir.Constant(i32, 16)), ir.Constant(i32, 0x8000))
        return builder.trunc(builder.or_(builder.or_(sign, ir.Constant(i32, 0x7C00)), payload), ir.IntType(16))

    return types.uint16(types.float32), codegen


@intrinsic
def _f16_bits_to_f32(typingctx, h):
    """fp16 bits (uint16) widened to float32 exactly, a NaN keeping its payload as NumPy keeps it
    (the hardware would set the quiet bit).  NaN is found on the integer bits: a compare on the
    half value has no vector instruction here and was split into one per element."""
    if h != types.uint16:
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        value = builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
        bits = builder.zext(args[0], i32)
        magnitude = builder.and_(bits, ir.Constant(i32, 0x7FFF))
        is_nan = builder.icmp_unsigned(">", magnitude, ir.Constant(i32, 0x7C00))
        sign = builder.shl(builder.and_(bits, ir.Constant(i32, 0x8000)), ir.Constant(i32, 16))
        nan = builder.or_(builder.or_(sign, ir.Constant(i32, 0x7F800000)), builder.shl(magnitude, ir.Constant(i32, 13)))
        return builder.select(is_nan, builder.bitcast(nan, ir.FloatType()), value)

    return types.float32(types.uint16), codegen


@jit(always_inline=True)
def f32_to_f16(x):
    """Round a float32 to fp16 (nearest even); returns the fp16 bits as uint16."""
    x = np.float32(x)
    # (Selects on a float compare: the loops stay vectorized.)
    return _fptrunc_half(x) if x == x else _f32_nan_as_f16(x)


@jit(always_inline=True)
def f16_to_f32(h):
    """Widen fp16 bits (uint16) to float32, exactly (a NaN keeps its payload, as in NumPy)."""
    return _f16_bits_to_f32(np.uint16(h))


@intrinsic
def _f16_nan_as_f32(typingctx, x):
    """The float32 NaN that NumPy's fp16 round trip makes of NaN ``x``: its sign, the exponent, and
    its top 10 payload bits forced non-zero (32-bit integer ops throughout: Numba's own integer
    arithmetic widens to 64 bits, which halves a vector loop's width)."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        bits, payload = _nan_payload(builder, args[0])
        sign = builder.and_(bits, ir.Constant(i32, 0x80000000))
        nan = builder.or_(builder.or_(sign, ir.Constant(i32, 0x7F800000)), builder.shl(payload, ir.Constant(i32, 13)))
        return builder.bitcast(nan, ir.FloatType())

    return types.float32(types.float32), codegen


@jit(always_inline=True)
def f32_round_f16(x):
    """``f16_to_f32(f32_to_f16(x))`` in one step: a float32 rounded to the nearest fp16 value (a
    NaN keeps its sign and top 10 payload bits, forced non-zero), staying float32.  What a fp16
    tile holds between two fused vector ops (see primitives.fusion)."""
    x = np.float32(x)
    rounded = _fpext_half(_fptrunc_half(x))
    return rounded if x == x else _f16_nan_as_f32(x)


# An arithmetic result (+ - * / sqrt) is a number or a quiet NaN on the CPU, and for those the
# hardware's conversions already give NumPy's bits (checked on every float32 bit pattern but the
# signalling NaNs): a fused program rounds such results without the NaN selects.

@jit(always_inline=True)
def f32_round_f16_quiet(x):
    """:func:`f32_round_f16` of ``x`` that is not a signalling NaN."""
    return _fpext_half(_fptrunc_half(np.float32(x)))


@jit(always_inline=True)
def f16_to_f32_quiet(h):
    """:func:`f16_to_f32` for an operand of arithmetic, which quiets a NaN anyway: the hardware's
    widening, which sets a signalling NaN's quiet bit where NumPy keeps it, gives the same result."""
    return _fpext_half(np.uint16(h))


@jit(always_inline=True)
def f32_to_f16_quiet(x):
    """:func:`f32_to_f16` of ``x`` that is not a signalling NaN."""
    return _fptrunc_half(np.float32(x))


@intrinsic
def _f32_to_bf16_bits(typingctx, x):
    """float32 -> bf16 bits, nearest even, a NaN -> its sign | 0x7fc0.  32-bit integer ops and a
    select: Numba's integer arithmetic widened it to 64 bits, halving a vector loop's width (a
    fused bf16 ApplyAdamW Compute spent more time here than in the step itself)."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        bits = builder.bitcast(args[0], i32)
        high = builder.lshr(bits, ir.Constant(i32, 16))
        is_nan = builder.icmp_unsigned(">", builder.and_(bits, ir.Constant(i32, 0x7FFFFFFF)),
                                       ir.Constant(i32, 0x7F800000))
        nan = builder.or_(builder.and_(high, ir.Constant(i32, 0x8000)), ir.Constant(i32, 0x7FC0))
        bias = builder.add(ir.Constant(i32, 0x7FFF), builder.and_(high, ir.Constant(i32, 1)))
        rounded = builder.lshr(builder.add(bits, bias), ir.Constant(i32, 16))
        return builder.trunc(builder.select(is_nan, nan, rounded), ir.IntType(16))

    return types.uint16(types.float32), codegen


@jit(always_inline=True)
def f32_to_bf16(x):
    """Round a float32 to bf16 (nearest even, NaN -> quiet NaN); returns uint16 bits."""
    return _f32_to_bf16_bits(np.float32(x))


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
