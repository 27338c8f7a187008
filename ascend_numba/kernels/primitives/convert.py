"""Cast: every (source, destination) pair of tile types and RoundMode of
:data:`~ascend_numba.host.primitives.CAST_MODES` (family ``convert``; references:
:mod:`ascend_numba.host.references.convert`), in the count form ``(ctx, dst, src, mode, count)``
and the level-0 form ``(..., mask, repeat_times, UnaryRepeatParams, is_set_mask=True)``, where a
repeat is 256 bytes of the wider type (the device's mask counts the wider type's lanes) and each
operand's strides count its own blocks.  ``cast`` reads a uint16 tile as fp16, ``cast_bf16`` as
bf16 (its pairs are the ones with a bf16 side); both come from one factory.

One implementation for every pair, compiled and interpreted alike: the source element as a
float64 (exact for every source type here), rounded under the mode by exact float64 arithmetic
(``frexp``, ``ldexp``, ``floor``, scaling by powers of two) to the destination's format, then
stored exactly.  The semantics (the asc-devkit Cast page and its precision-conversion notes,
cannmirror/asc-devkit at 0da921b):

* CAST_RINT to nearest, ties to even; CAST_ROUND to nearest, ties away from zero; CAST_FLOOR,
  CAST_CEIL, CAST_TRUNC toward -inf, +inf, zero; CAST_ODD: an inexact result's last bit set;
  CAST_NONE as CAST_RINT (the pairs that take it round only where they are inexact);
* an integer destination saturates to its range (the device's default overflow mode); a NaN
  gives 0 and an infinity the range's end (the device's pages leave NaN and infinity open for
  A2/A3: the twin takes the Ascend 950's documented rule);
* a float destination follows IEEE overflow (the Inf/NaN mode the twin models): past the largest
  finite value, the modes toward it give it (FLOOR of a positive, CEIL of a negative, TRUNC,
  ODD), the others infinity; a NaN stays a NaN, converted as the existing casts convert it
  (sign and top payload bits, quiet);
* integer narrowing (int32 -> int16, int64 -> int32) saturates;
* fp32 to fp32 rounds to an integral value (the sign of a zero result kept: TRUNC of -0.3 is
  -0.0), infinities and NaNs unchanged.

Checked mode (:func:`~.cmpsel.check_with_mode`): a RoundMode the pair does not take is a
mode-out-of-range, a widening conversion whose destination overlaps its source a cast-overlap
(the device's page: wrong results); a pair the device does not convert is refused when the
kernel compiles.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from ...checked.rules import MODES, PRIMITIVE
from ...host.primitives import CAST_MODES, PRIMITIVES, RoundMode
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, as_dtype, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16
from ..lane import STATE_DEQSCALE, _address, _load_i64
from .cmpsel import NO_OPERAND, _trace, check_with_mode
from .masks import REPEAT_BYTES, call_mask, count_form_done, repeats_of
from .preload import advance_preload
from .vector import (_bits_load, _bits_store, _check_unary_repeat, _trace_repeat, count_of, declared, repeat_loop,
                     saturated, two_forms, unary_strides)

__all__ = ["cast", "cast_bf16"]

_ROUND_MODE = MODES.index("RoundMode")
NONE, RINT, FLOOR, CEIL, ROUND, TRUNC, ODD = (int(m) for m in RoundMode)
_CAST = PRIMITIVE["Cast"]
# A tile's element type as CAST_MODES names it (uint16 tiles are fp16).
_TYPE_NAME = {types.float32: "float32", types.uint16: "float16", types.int8: "int8", types.uint8: "uint8",
              types.int16: "int16", types.int32: "int32", types.int64: "int64"}
# Fraction bits, least and greatest exponent.
_FORMATS = {"float32": (23, -126, 127), "float16": (10, -14, 15), "bfloat16": (7, -126, 127)}
FP16_MAX = 65504.0
_DEQ = ("int32", "float16")  # the conversion under SetDeqScale(half)
_HALF = {"float16": (f16_to_f32, f32_to_f16), "bfloat16": (bf16_to_f32, f32_to_bf16)}  # 16-bit float: widen, narrow


# ---- rounding: exact float64 arithmetic ------------------------------------------------------------

@jit(always_inline=True)
def _round_magnitude(t, negative, mode):
    """An integral value next to ``t >= 0`` under ``mode`` (``negative``: the value's sign)."""
    k = np.floor(t)  # (a float compiled and interpreted: Python's math.floor is an int)
    frac = t - k
    if frac == 0.0 or mode == TRUNC:
        return k
    if mode == FLOOR:
        return k + 1.0 if negative else k
    if mode == CEIL:
        return k if negative else k + 1.0
    if mode == ROUND:
        return k + 1.0 if frac >= 0.5 else k
    if mode == ODD:
        return k if k % 2.0 == 1.0 else k + 1.0
    return k + 1.0 if frac > 0.5 or (frac == 0.5 and k % 2.0 == 1.0) else k  # RINT, NONE


@jit(always_inline=True)
def _to_float(x, mbits, emin, emax, mode):
    """``x`` (finite, not a NaN) rounded to the binary format of ``mbits`` fraction bits and
    exponents ``emin..emax``; past the largest finite value, IEEE overflow under ``mode``."""
    if x == 0.0 or math.isinf(x):
        return x
    negative = x < 0.0
    a = -x if negative else x
    e = math.frexp(a)[1]
    quantum = math.ldexp(1.0, max(e - 1, emin) - mbits)  # subnormals share emin's quantum
    r = _round_magnitude(a / quantum, negative, mode) * quantum
    largest = math.ldexp(2.0 - math.ldexp(1.0, -mbits), emax)
    if r > largest:
        toward = mode == TRUNC or mode == ODD or (mode == FLOOR and not negative) or (mode == CEIL and negative)
        r = largest if toward else math.inf
    return -r if negative else r


@jit(always_inline=True)
def _to_integer(x, lo, hi, mode):
    """``x`` rounded to an integral value under ``mode``, saturated to ``[lo, hi]`` (int64); a NaN
    gives 0."""
    if x != x:
        return np.int64(0)
    if math.isinf(x):
        return lo if x < 0.0 else hi
    negative = x < 0.0
    r = _round_magnitude(-x if negative else x, negative, mode)
    return saturated(-r if negative else r, lo, hi)


@jit(always_inline=True)
def deq_scaled(v, config):
    """An int32 times the fp16 scale of a DEQSCALE word as the device computes it (the Ascend 950's
    software model of the instruction, asc-devkit 0da921b, impl/basic_api/dav_3510/
    kernel_operator_vec_vconv_impl.h, CastDeqS322f16ImplVF; c220's AddDeqReluCompute the same):
    to fp32, times 2**-17, the scale and 2**17, each product rounded to fp32."""
    f = np.float32(np.float32(v) * np.float32(2.0 ** -17))
    f = np.float32(f * f16_to_f32(np.uint16(config & 0xFFFF)))
    return np.float32(f * np.float32(2.0 ** 17))


@jit(always_inline=True)
def deq_f16(v, config):
    """An int32 dequantized to fp16 bits: ``deq_scaled`` rounded to fp16, saturated to the largest
    finite value (the CastDequant page); a NaN scale gives the default NaN."""
    f = deq_scaled(v, config)
    if f != f:
        return np.uint16(0x7E00)
    return f32_to_f16(np.float32(min(max(f, -FP16_MAX), FP16_MAX)))


def store_low8(dst, j, value):
    """``dst[j]`` (an int8 or uint8 tile) = the low 8 bits of ``value``, compiled and interpreted
    alike (NumPy refuses an out-of-range integer)."""
    raise NotImplementedError  # compiled only


@overload(store_low8, jit_options=OVERLOAD_OPTIONS)
def _ov_store_low8(dst, j, value):
    scalar = as_dtype(dst.dtype).type  # NumPy's scalar type: a cast compiled, a constructor interpreted
    if dst.dtype.signed:
        def store(dst, j, value):
            low = np.int64(value) & 0xFF
            dst[j] = scalar(low - 256 if low >= 128 else low)
        return store

    def store_unsigned(dst, j, value):
        dst[j] = scalar(np.int64(value) & 0xFF)
    return store_unsigned


# ---- one conversion per pair ------------------------------------------------------------------------

@jit(always_inline=True)
def _int64_wide(v):
    """An int64 as a float64 that any rounding to fp32 takes to the same result as ``v`` itself:
    exact below 2**53, else its top 53 bits with a sticky last bit (the bits shifted out, or'ed)."""
    negative = v < 0
    a = np.uint64(0) - np.uint64(v) if negative else np.uint64(v)  # |INT64_MIN| too, as an unsigned
    shift = np.uint64(0)
    while (a >> shift) >= np.uint64(1 << 53):
        shift += np.uint64(1)
    q = a >> shift
    if shift and a & ((np.uint64(1) << shift) - np.uint64(1)):
        q |= np.uint64(1)
    x = math.ldexp(np.float64(q), int(shift))
    return -x if negative else x


def _pairs(half: str):
    """The conversions of a Cast whose uint16 tiles hold ``half`` ("float16" or "bfloat16"): the
    pair of a (dst, src) and the overloaded element functions ``(convert, convert_rint,
    modes_taken)``, each a constant of the compiled primitive."""
    names = {**_TYPE_NAME, types.uint16: half}
    widen, narrow = _HALF[half]

    def pair(dst, src):
        return names.get(src.dtype), names.get(dst.dtype)

    def wide(src, v):
        raise NotImplementedError  # compiled only

    @overload(wide, jit_options=OVERLOAD_OPTIONS)
    def _ov_wide(src, v):
        # A source element as a float64, exactly (a 16-bit float's bits through fp32; an int64 as
        # _int64_wide takes it).
        if src.dtype == types.uint16:
            return lambda src, v: np.float64(widen(v))
        if src.dtype == types.int64:
            return lambda src, v: _int64_wide(v)
        return lambda src, v: np.float64(v)

    def as_f32(src, v):
        raise NotImplementedError  # compiled only

    @overload(as_f32, jit_options=OVERLOAD_OPTIONS)
    def _ov_as_f32(src, v):
        # A NaN source element as fp32, bits kept (a 16-bit float: the exact widening).
        if src.dtype == types.uint16:
            return lambda src, v: widen(v)
        return lambda src, v: np.float32(v)

    def convert(dst, src, v, mode):
        raise NotImplementedError  # compiled only

    @overload(convert, jit_options=OVERLOAD_OPTIONS)
    def _ov_convert(dst, src, v, mode):
        source, target = pair(dst, src)
        if (source, target) not in CAST_MODES or (half == "bfloat16" and half not in (source, target)):
            raise TypingError(f"Cast from {source or src.dtype} to {target or dst.dtype} tiles: not a conversion the "
                              f"device's Cast has (A2/A3: {', '.join(f'{s}->{d}' for s, d in CAST_MODES)}; "
                              f"cast_bf16 takes the bfloat16 ones, cast the others)")
        dtype = dst.dtype
        if (source, target) == _DEQ:  # the mode slot carries the DEQSCALE word
            return lambda dst, src, v, mode: deq_f16(v, mode)
        if target in _FORMATS:
            mbits, emin, emax = _FORMATS[target]
            if target in _HALF:
                def to_half(dst, src, v, mode):
                    x = wide(src, v)
                    if x != x:  # the existing fp32 -> 16-bit conversion: sign and top payload bits, quiet
                        return narrow(as_f32(src, v))
                    return narrow(np.float32(_to_float(x, mbits, emin, emax, mode)))
                return to_half

            if source == "float32":  # fp32 to fp32: to an integral value (the A2/A3 form of Truncate)
                def to_integral(dst, src, v, mode):
                    x = wide(src, v)
                    if x != x or math.isinf(x):
                        return v
                    negative = x < 0.0
                    r = _round_magnitude(-x if negative else x, negative, mode)
                    return np.float32(-r if negative else r)
                return to_integral

            def to_f32(dst, src, v, mode):
                x = wide(src, v)
                if x != x:
                    return as_f32(src, v)
                return np.float32(_to_float(x, mbits, emin, emax, mode))
            return to_f32
        info = np.iinfo(target)
        lo, hi = np.int64(info.min), np.int64(info.max)
        if source in ("int32", "int64"):  # integer narrowing or widening: saturated, no rounding
            return lambda dst, src, v, mode: dtype(min(max(np.int64(v), lo), hi))
        return lambda dst, src, v, mode: dtype(_to_integer(wide(src, v), lo, hi, mode))

    def convert_rint(dst, src, v):
        raise NotImplementedError  # compiled only

    @overload(convert_rint, jit_options=OVERLOAD_OPTIONS)
    def _ov_convert_rint(dst, src, v):
        # CAST_RINT (and CAST_NONE) through the CPU's own round-to-nearest-even conversions: the bits
        # of convert's at a fraction of its work (the source is exact in fp32 or float64, so one
        # rounding; an int64's conversion rounds once too).
        source, target = pair(dst, src)
        dtype = dst.dtype
        if target in _HALF:
            if source == "float32":
                return lambda dst, src, v: narrow(v)
            if target == "float16":
                return lambda dst, src, v: narrow(np.float32(v))  # int8 / uint8 / int16: exact in fp32
        if target == "float32":
            if source == "float32":  # to an integral value; a NaN keeps its bits
                return lambda dst, src, v: v if v != v else np.rint(v)
            if source in _HALF:
                return lambda dst, src, v: widen(v)
            return lambda dst, src, v: np.float32(v)
        if source in ("float32", *_HALF):
            info = np.iinfo(target)
            lo, hi = np.int64(info.min), np.int64(info.max)
            return lambda dst, src, v: dtype(saturated(np.rint(wide(src, v)), lo, hi))
        return lambda dst, src, v: convert(dst, src, v, RINT)

    def modes_taken(dst, src):
        raise NotImplementedError  # compiled only

    @overload(modes_taken, jit_options=OVERLOAD_OPTIONS)
    def _ov_modes_taken(dst, src):
        # The pair's RoundModes as a bit set (bit m: mode m).
        taken = sum(1 << int(m) for m in CAST_MODES.get(pair(dst, src), ()))
        return lambda dst, src: taken

    def word_of(ctx, dst, src, m):
        raise NotImplementedError  # compiled only

    @overload(word_of, jit_options=OVERLOAD_OPTIONS)
    def _ov_word_of(ctx, dst, src, m):
        # What a conversion takes beside the element: the RoundMode, or for int32 -> fp16 the
        # DEQSCALE register (the device ignores the mode there).
        if pair(dst, src) == _DEQ:
            return lambda ctx, dst, src, m: _load_i64(ctx.state_addr, STATE_DEQSCALE)
        return lambda ctx, dst, src, m: m

    def rint(dst, src, m):
        raise NotImplementedError  # compiled only

    @overload(rint, jit_options=OVERLOAD_OPTIONS)
    def _ov_rint(dst, src, m):
        # The conversion is CAST_RINT's (the DEQSCALE one takes no mode).
        if pair(dst, src) == _DEQ:
            return lambda dst, src, m: False
        return lambda dst, src, m: m == RINT or m == NONE

    return convert, convert_rint, modes_taken, word_of, rint


PAIRS = {"cast": _pairs("float16"), "cast_bf16": _pairs("bfloat16")}


def _cast_element(name: str):
    """One element of Cast ``name`` given its ``word_of`` (the mode, or the DEQSCALE word): what a
    fused vector program computes (kernels/primitives/fusion_codegen.py)."""
    convert, convert_rint, _, _, rint = PAIRS[name]

    @jit(always_inline=True)
    def element(dst, src, v, word):
        return convert_rint(dst, src, v) if rint(dst, src, word) else convert(dst, src, v, word)
    return element


# A fused program's names for the Cast rows: each one's element and its word (from the mode).
FUSED = {name: (_cast_element(name), PAIRS[name][3]) for name in PAIRS}


def _cast_primitive(name: str, half: str):
    """Primitive ``name`` (a row of host.primitives): Cast with its uint16 tiles holding ``half``."""
    convert, convert_rint, modes_taken, word_of, rint = PAIRS[name]
    code = EVENT[name]

    @jit(always_inline=True)
    def mode_ok(dst, src, m):
        return 0 <= m <= ODD and (modes_taken(dst, src) >> m) & 1 == 1

    @jit(inline="always")
    def apply_cast(op, load, a, i, b, j, word, dst, k, lane):
        # The scalar slot carries word_of's value.
        return convert_rint(dst, a, a[i]) if rint(dst, a, word) else convert(dst, a, a[i], word)

    def count_form(ctx, dst, src, mode, count):
        m = np.int64(mode)
        n = max(count, 0)
        if not check_with_mode(ctx, _CAST, count, src.itemsize, 0, m, _ROUND_MODE, mode_ok(dst, src, m),
                               _address(dst), dst.nbytes, n * dst.itemsize, _address(src), src.nbytes,
                               n * src.itemsize, 0, 0, NO_OPERAND, 0, 0, NO_OPERAND, dst.itemsize > src.itemsize):
            return
        _trace(ctx, code, n, dst, n * dst.itemsize, src, n * src.itemsize, src, n * src.itemsize)
        advance_preload(ctx)
        count_form_done(ctx)  # the device's level-2 Cast ends in normal mode with a full mask
        if rint(dst, src, m):  # the common case, in a loop of its own: it vectorizes
            for i in range(max(min(count, dst.size, src.size), 0)):
                dst[i] = convert_rint(dst, src, src[i])
        else:
            word = word_of(ctx, dst, src, m)
            for i in range(max(min(count, dst.size, src.size), 0)):
                dst[i] = convert(dst, src, src[i], word)

    def level_0(ctx, dst, src, mode, mask, repeat_times, params, is_set_mask):
        m = np.int64(mode)
        counter, high, low = call_mask(ctx, mask, is_set_mask)
        # The mode first (no elements), then the lanes: a repeat is 256 bytes of the wider type.
        if not (check_with_mode(ctx, _CAST, 0, src.itemsize, 0, m, _ROUND_MODE, mode_ok(dst, src, m),
                                _address(dst), dst.nbytes, 0, _address(src), src.nbytes, 0, 0, 0, NO_OPERAND, 0, 0,
                                NO_OPERAND, False)
                and _check_unary_repeat(ctx, _CAST, dst, src, mask, repeat_times, params, is_set_mask, counter,
                                        high, low)):
            return
        d_blk, a_blk, d_rep, a_rep = unary_strides(params)
        nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // max(dst.itemsize, src.itemsize))
        _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, src, a_blk, a_rep, src, a_blk, a_rep)
        advance_preload(ctx)
        repeat_loop(dst, src, src, word_of(ctx, dst, src, m), nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep,
                    a_blk, a_rep, apply_cast, 0, _bits_load, _bits_store)

    count_form, level_0 = two_forms(name, count_form, level_0)

    def primitive(ctx, dst, src, mode, count, repeat_times=None, params=None, is_set_mask=True):
        if repeat_times is None:
            count_form(ctx, dst, src, mode, count_of(count))
        else:
            level_0(ctx, dst, src, mode, count, repeat_times, params, is_set_mask)

    return declared(primitive, PRIMITIVES[name], __name__)


cast = _cast_primitive("cast", "float16")
cast_bf16 = _cast_primitive("cast_bf16", "bfloat16")
