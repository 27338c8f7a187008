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

from .._numba_compat.extending import python_twin
from .._numba_compat.jit import jit

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


python_twin(f32_as_u32)(lambda x: np.float32(x).view(np.uint32))


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


python_twin(u32_as_f32)(lambda x: np.uint32(int(x) & 0xFFFFFFFF).view(np.float32))


# Every conversion below is an intrinsic: its few instructions are emitted in place, where a
# compiled function would be a call for Numba to type, lower and check at each use (a fused fp16
# program has hundreds: the fp16 amsgrad+maximize ApplyAdamW pass, compiled on its own, took
# 3.0-3.4 CPU s as intrinsics against 4.4-4.8, same bits, 1.46 against 1.58 ns per element).
# Each takes any number (a float: converted to float32 first, as np.float32 would; fp16 / bf16
# bits: to uint16).
#
# fp16 goes through the hardware's conversions, LLVM's fptrunc / fpext (F16C on x86: 28x the
# bit-twiddled version, which did not vectorize), with NaNs selected from NumPy's rule: the
# hardware quiets a signalling NaN, NumPy keeps its payload.  Checked against NumPy on every fp16
# value and every fp32 value from 2**-27 to 2**17.

_I32 = ir.IntType(32)
_I16 = ir.IntType(16)


def _c32(value):
    return ir.Constant(_I32, value)


def _fptrunc_half(builder, x):
    """Codegen: the hardware's float32 -> half (nearest even), as i16 bits."""
    return builder.bitcast(builder.fptrunc(x, ir.HalfType()), _I16)


def _fpext_half(builder, h):
    """Codegen: the hardware's half (i16 bits) -> float32 (exact; a signalling NaN quieted)."""
    return builder.fpext(builder.bitcast(h, ir.HalfType()), ir.FloatType())


def _is_nan(builder, x):
    return builder.fcmp_unordered("uno", x, x)


def _nan_payload(builder, x):
    """Codegen: a float32's bits and the payload fp16 keeps of it when it is a NaN (NumPy's rule:
    its top 10 payload bits, forced non-zero), both i32.  32-bit integer ops throughout: Numba's
    own integer arithmetic widens to 64 bits, which halves a vector loop's width."""
    bits = builder.bitcast(x, _I32)
    payload = builder.and_(builder.lshr(bits, _c32(13)), _c32(0x3FF))
    return bits, builder.or_(payload, builder.zext(builder.icmp_unsigned("==", payload, _c32(0)), _I32))


def _f32_nan_as_f16(builder, x):
    """Codegen: the fp16 bits NumPy makes of NaN ``x``: its sign, the exponent, its top 10 payload
    bits forced non-zero (the hardware would set the quiet bit instead)."""
    bits, payload = _nan_payload(builder, x)
    sign = builder.and_(builder.lshr(bits, _c32(16)), _c32(0x8000))
    return builder.trunc(builder.or_(builder.or_(sign, _c32(0x7C00)), payload), _I16)


def _f16_nan_as_f32(builder, x):
    """Codegen: the float32 NaN that NumPy's fp16 round trip makes of NaN ``x``: its sign, the
    exponent, and its top 10 payload bits forced non-zero."""
    bits, payload = _nan_payload(builder, x)
    sign = builder.and_(bits, _c32(0x80000000))
    return builder.bitcast(builder.or_(builder.or_(sign, _c32(0x7F800000)), builder.shl(payload, _c32(13))),
                           ir.FloatType())


def _f16_bits_to_f32(builder, h):
    """Codegen: fp16 bits widened to float32 exactly, a NaN keeping its payload as NumPy keeps it.
    NaN is found on the integer bits: a compare on the half value has no vector instruction here
    and was split into one per element."""
    value = _fpext_half(builder, h)
    bits = builder.zext(h, _I32)
    magnitude = builder.and_(bits, _c32(0x7FFF))
    is_nan = builder.icmp_unsigned(">", magnitude, _c32(0x7C00))
    sign = builder.shl(builder.and_(bits, _c32(0x8000)), _c32(16))
    nan = builder.or_(builder.or_(sign, _c32(0x7F800000)), builder.shl(magnitude, _c32(13)))
    return builder.select(is_nan, builder.bitcast(nan, ir.FloatType()), value)


def _f32_to_bf16_bits(builder, x):
    """Codegen: float32 -> bf16 bits, nearest even, a NaN -> its sign | 0x7fc0 (a select: Numba's
    integer arithmetic widened it to 64 bits, halving a vector loop's width)."""
    bits = builder.bitcast(x, _I32)
    high = builder.lshr(bits, _c32(16))
    is_nan = builder.icmp_unsigned(">", builder.and_(bits, _c32(0x7FFFFFFF)), _c32(0x7F800000))
    nan = builder.or_(builder.and_(high, _c32(0x8000)), _c32(0x7FC0))
    rounded = builder.lshr(builder.add(bits, builder.add(_c32(0x7FFF), builder.and_(high, _c32(1)))), _c32(16))
    return builder.trunc(builder.select(is_nan, nan, rounded), _I16)


def _conversion(name: str, doc: str, result, emit, *, of_bits: bool):
    """An intrinsic ``name(x)``: ``emit(builder, v)`` on ``x`` as float32 (``of_bits``: as uint16)."""
    operand = types.uint16 if of_bits else types.float32
    accepted = types.Integer if of_bits else types.Number

    def typer(typingctx, x):
        if not isinstance(x, accepted):
            return None

        def codegen(context, builder, signature, args):
            return emit(builder, context.cast(builder, args[0], signature.args[0], operand))

        return result(x), codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


f32_to_f16 = _conversion(
    "f32_to_f16", "Round a float32 to fp16 (nearest even); returns the fp16 bits as uint16.",
    types.uint16, lambda b, x: b.select(_is_nan(b, x), _f32_nan_as_f16(b, x), _fptrunc_half(b, x)), of_bits=False)

f16_to_f32 = _conversion(
    "f16_to_f32", "Widen fp16 bits (uint16) to float32, exactly (a NaN keeps its payload, as in NumPy).",
    types.float32, _f16_bits_to_f32, of_bits=True)

f32_round_f16 = _conversion(
    "f32_round_f16",
    "``f16_to_f32(f32_to_f16(x))`` in one step: a float32 rounded to the nearest fp16 value (a NaN keeps its "
    "sign and top 10 payload bits, forced non-zero), staying float32.  What a fp16 tile holds between two "
    "fused vector ops (see primitives.fusion).",
    types.float32, lambda b, x: b.select(_is_nan(b, x), _f16_nan_as_f32(b, x), _fpext_half(b, _fptrunc_half(b, x))),
    of_bits=False)

# An arithmetic result (+ - * / sqrt) is a number or a quiet NaN on the CPU, and for those the
# hardware's conversions already give NumPy's bits (checked on every float32 bit pattern but the
# signalling NaNs): a fused program rounds such results without the NaN selects.

f32_round_f16_quiet = _conversion(
    "f32_round_f16_quiet", ":func:`f32_round_f16` of ``x`` that is not a signalling NaN.",
    types.float32, lambda b, x: _fpext_half(b, _fptrunc_half(b, x)), of_bits=False)

f16_to_f32_quiet = _conversion(
    "f16_to_f32_quiet",
    ":func:`f16_to_f32` for an operand of arithmetic, which quiets a NaN anyway: the hardware's widening, "
    "which sets a signalling NaN's quiet bit where NumPy keeps it, gives the same result.",
    types.float32, _fpext_half, of_bits=True)

f32_to_f16_quiet = _conversion(
    "f32_to_f16_quiet", ":func:`f32_to_f16` of ``x`` that is not a signalling NaN.",
    types.uint16, _fptrunc_half, of_bits=False)

f32_to_bf16 = _conversion(
    "f32_to_bf16", "Round a float32 to bf16 (nearest even, NaN -> quiet NaN); returns uint16 bits.",
    types.uint16, _f32_to_bf16_bits, of_bits=False)

bf16_to_f32 = _conversion(
    "bf16_to_f32", "Widen bf16 bits (uint16) to float32, exactly.",
    types.float32, lambda b, h: b.bitcast(b.shl(b.zext(h, _I32), _c32(16)), ir.FloatType()), of_bits=True)


# ---- interpret mode: the same conversions on NumPy scalars --------------------------------------

def _bits32(x) -> int:
    return int(np.float32(x).view(np.uint32))


def _f32_of_bits(bits: int):
    return np.uint32(bits & 0xFFFFFFFF).view(np.float32)


def _is_nan32(bits: int) -> bool:
    return bits & 0x7FFFFFFF > 0x7F800000


@python_twin(f32_to_f16)
def _f32_to_f16_py(x):
    bits = _bits32(x)
    if _is_nan32(bits):  # NumPy's rule: top 10 payload bits, forced non-zero
        payload = bits >> 13 & 0x3FF
        return np.uint16(bits >> 16 & 0x8000 | 0x7C00 | (payload or 1))
    return np.float16(np.float32(x)).view(np.uint16)


@python_twin(f32_to_f16_quiet)
def _f32_to_f16_quiet_py(x):
    bits = _bits32(x)
    if _is_nan32(bits):  # the hardware's: top 10 payload bits, the quiet bit set
        return np.uint16(bits >> 16 & 0x8000 | 0x7E00 | bits >> 13 & 0x3FF)
    return np.float16(np.float32(x)).view(np.uint16)


@python_twin(f16_to_f32)
def _f16_to_f32_py(h):
    h = int(h) & 0xFFFF
    if h & 0x7FFF > 0x7C00:  # NumPy keeps the payload
        return _f32_of_bits((h & 0x8000) << 16 | 0x7F800000 | (h & 0x7FFF) << 13)
    return np.float32(np.uint16(h).view(np.float16))


@python_twin(f16_to_f32_quiet)
def _f16_to_f32_quiet_py(h):
    h = int(h) & 0xFFFF
    if h & 0x7FFF > 0x7C00:  # the hardware sets the quiet bit
        return _f32_of_bits((h & 0x8000) << 16 | 0x7FC00000 | (h & 0x3FF) << 13)
    return np.float32(np.uint16(h).view(np.float16))


python_twin(f32_round_f16)(lambda x: _f16_to_f32_py(_f32_to_f16_py(x)))
python_twin(f32_round_f16_quiet)(lambda x: _f16_to_f32_quiet_py(_f32_to_f16_quiet_py(x)))


@python_twin(f32_to_bf16)
def _f32_to_bf16_py(x):
    bits = _bits32(x)
    if _is_nan32(bits):
        return np.uint16(bits >> 16 & 0x8000 | 0x7FC0)
    return np.uint16((bits + 0x7FFF + (bits >> 16 & 1)) >> 16 & 0xFFFF)


python_twin(bf16_to_f32)(lambda h: _f32_of_bits((int(h) & 0xFFFF) << 16))


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
