"""SetDeqScale and CastDequant (family ``dequant`` of :mod:`ascend_numba.host.primitives`;
references: :mod:`ascend_numba.host.references.dequant`).

The DEQSCALE register is a 64-bit slot of the lane's state.  What the device documents and
implements (cannmirror/asc-devkit at 0da921b: 类型转换/寄存器配置说明/SetDeqScale.md,
复合计算/CastDequant.md, impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h):

* ``set_deq_scale(ctx, scale)`` (``SetDeqScale(half)``): the scale's fp16 bits in bits 0-15, for
  int32 -> fp16;
* ``set_deq_scale(ctx, scale, offset, sign_mode)``: the c220 ``MakeDeqScaleConfig`` word, the fp32
  scale's bits in 0-31, the offset's low 9 bits at 37, ``sign_mode`` at bit 46, for int16 -> 8-bit;
* ``set_deq_scale(ctx, vdeq, scales, offsets, sign_modes)``: 16 such words written into the
  uint64 tile ``vdeq`` (128 bytes) and its UB address in 32-byte units in the register, for the
  per-element (``is_vec_deq``) form.

CastDequant, ``cast_dequant(ctx, dst, src, count, is_vec_deq=True, half_block=True)`` and the
level-0 form ``(ctx, dst, src, mask, repeat_times, UnaryRepeatParams, is_set_mask=True,
is_vec_deq=True, half_block=True)``:

* int16 -> int8 / uint8: ``dst = sat(clamp(rint(src * scale), -256, 255) + offset)``, the scale
  with its low 13 fraction bits dropped (the page: the hardware takes it as 1 sign, 8 exponent and
  10 fraction bits), the offset a signed 9-bit integer, saturated to int8 when ``sign_mode`` is set, else to
  uint8.  Each 32-byte block of the source (16 elements) gives 16 bytes placed in one half of
  a destination block: the high half with ``half_block`` (the c220 call ``vconv_deqs162b8h``),
  the low one without; the other half is left as it was.  ``is_vec_deq``: element j of each
  source block takes word j of the register's tensor, otherwise every element the register's
  own word.
* int32 -> fp16: ``dst = fp16(src * 2**-17 * scale * 2**17)`` in fp32 steps, the fp16 scale of
  ``SetDeqScale(half)``.

The pages name neither the product's precision nor the rounding: the twin takes the steps of the
Ascend 950's software model of these instructions (impl/basic_api/dav_3510/
kernel_operator_vec_vconv_impl.h; see ``deq_b8`` and ``convert.deq_scaled``), fp32 products and ties
to even; an fp16 result past the largest finite value saturates to it (the page: "the output's
overflow saturates"); a NaN scale gives 0 for b8 and the default NaN for fp16. Checked mode verifies
the bytes each form touches (a b8 destination's whole blocks in the level-0 form) and, with
``is_vec_deq`` in the count form, the 128 bytes of the register's tensor.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.dispatch import checked_rule
from ...checked.rules import MODES, PRIMITIVE
from ...checked.ub_shadow import set_garbage
from ...host.primitives import PRIMITIVES
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f32_as_u32, f32_to_f16, u32_as_f32
from ..lane import STATE_DEQSCALE, _address, _load_i64, _store_i64
from .cmpsel import NO_OPERAND, _trace, check_with_mode
from .convert import deq_f16, deq_scaled, store_low8
from .masks import (REPEAT_BYTES, binary_params, call_mask, check_repeat, count_form_done, lane_index, lane_on,
                    mask_length, repeats_of, unary_params)
from .preload import advance_preload
from .vector import (_trace_repeat, _trace_vector, binary_strides, check_vector, count_of, declared, set_value,
                     two_forms, unary_strides)

__all__ = ["set_deq_scale", "cast_dequant", "add_deq_relu"]

_PRIM, _CODE = PRIMITIVE["CastDequant"], EVENT["cast_dequant"]
_ROUND_MODE = MODES.index("RoundMode")
VDEQ_WORDS = 16  # the per-element form's parameter sets


# ---- SetDeqScale ---------------------------------------------------------------------------------------

@jit(always_inline=True)
def deq_config(scale, offset, sign_mode):
    """The c220 ``MakeDeqScaleConfig``: fp32 scale bits 0-31, offset bits 37-45, sign mode bit 46."""
    return (np.int64(f32_as_u32(np.float32(scale))) | ((np.int64(offset) & 0x1FF) << 37)
            | (np.int64(1 if sign_mode else 0) << 46))


def set_deq_scale(ctx, scale, offset=None, sign_mode=None, sign_modes=None):
    """SetDeqScale in its three forms (see the module's docstring)."""
    raise NotImplementedError  # compiled only; interpret mode runs the overload's body


def _set_half(ctx, scale, offset=None, sign_mode=None, sign_modes=None):
    _store_i64(ctx.state_addr, STATE_DEQSCALE, np.int64(f32_to_f16(np.float32(scale))))


def _set_word(ctx, scale, offset=None, sign_mode=None, sign_modes=None):
    _store_i64(ctx.state_addr, STATE_DEQSCALE, deq_config(scale, offset, sign_mode))


def _set_tensor(ctx, scale, offset=None, sign_mode=None, sign_modes=None):
    # (vdeq, scales, offsets, sign_modes) in the parameters' places
    for j in range(VDEQ_WORDS):
        set_value(ctx, scale, j, np.uint64(deq_config(offset[j], sign_mode[j], sign_modes[j])))
    _store_i64(ctx.state_addr, STATE_DEQSCALE, (np.int64(_address(scale)) - np.int64(ctx.ub_addr)) >> 5)


@overload(set_deq_scale, jit_options=OVERLOAD_OPTIONS)
def _ov_set_deq_scale(ctx, scale, offset=None, sign_mode=None, sign_modes=None):
    if isinstance(scale, types.Array):
        if scale.dtype != types.uint64:
            raise TypingError(f"SetDeqScale's tensor form takes a uint64 tile (16 words); got {scale.dtype}")
        return _set_tensor
    if offset is None or isinstance(offset, types.Omitted):
        return _set_half
    return _set_word


# ---- CastDequant -------------------------------------------------------------------------------------

@jit(always_inline=True)
def deq_b8(v, config):
    """An int16 dequantized under a DEQSCALE word to an int64 in int8's or uint8's range, in the
    steps of the Ascend 950's software model of the instruction (asc-devkit 0da921b,
    impl/basic_api/dav_3510/kernel_operator_vec_vconv_impl.h): times the scale with 10 fraction
    bits in fp32, rounded to an integer (ties to even, saturated to int16), clamped to [-256, 255],
    plus the offset (a signed 9-bit field, as the page says), saturated by the sign mode."""
    t = np.float32(np.float32(v) * u32_as_f32(config & 0xFFFFE000))
    r = np.int64(0) if t != t else np.int64(min(max(np.rint(np.float64(t)), -32768.0), 32767.0))
    offset = (config >> 37) & 0x1FF
    r = min(max(r, -256), 255) + (offset - 512 if offset >= 256 else offset)
    return min(max(r, -128), 127) if (config >> 46) & 1 else min(max(r, 0), 255)


def _pair(dst, src):
    raise NotImplementedError  # compiled only


@overload(_pair, jit_options=OVERLOAD_OPTIONS)
def _ov_pair(dst, src):
    # 1: int16 -> 8-bit, 2: int32 -> fp16 (a uint16 tile); anything else does not compile.
    if src.dtype == types.int16 and dst.dtype in (types.int8, types.uint8):
        return lambda dst, src: 1
    if src.dtype == types.int32 and dst.dtype == types.uint16:
        return lambda dst, src: 2
    raise TypingError(f"CastDequant takes int16 -> int8 / uint8 and int32 -> fp16 (uint16) tiles; got {src.dtype} "
                      f"-> {dst.dtype}")


@jit(always_inline=True)
def _b8_index(r, k, d_blk, d_rep, half_block):
    """Lane k of repeat r of an 8-bit result: 16 to a destination block, in one half of it."""
    return (r * d_rep + (k // 16) * d_blk) * 32 + (16 if half_block else 0) + k % 16


@jit(always_inline=True)
def _vdeq_address(ctx):
    """The address of the per-element form's tensor: the DEQSCALE register holds it in 32-byte units
    from the UB's start."""
    return np.int64(ctx.ub_addr) + (_load_i64(ctx.state_addr, STATE_DEQSCALE) << 5)


@jit(always_inline=True)
def _lanes(ctx, dst, src, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, is_vec_deq, half_block):
    config = _load_i64(ctx.state_addr, STATE_DEQSCALE)
    lanes = REPEAT_BYTES // src.itemsize
    words = _vdeq_address(ctx)
    for r in range(nrep):
        for k in range(lanes):
            if not lane_on(counter, high, low, lanes, r, k):
                continue
            i = lane_index(r, k, a_blk, a_rep, 32 // src.itemsize)
            if _pair(dst, src) == 1:
                j = _b8_index(r, k, d_blk, d_rep, half_block)
                if i < src.size and j < dst.size:
                    word = _load_i64(words, k % VDEQ_WORDS) if is_vec_deq else config
                    store_low8(dst, j, deq_b8(src[i], word))
            else:
                j = lane_index(r, k, d_blk, d_rep, 16)
                if i < src.size and j < dst.size:
                    dst[j] = deq_f16(src[i], config)


def _cast_dequant_count(ctx, dst, src, count, is_vec_deq, half_block):
    n = max(count, 0)
    b8 = _pair(dst, src) == 1
    vec = b8 and is_vec_deq
    ext = (((n - 1) // 16) * 32 + (16 if half_block else 0) + (n - 1) % 16 + 1 if n else 0) if b8 else 2 * n
    words = _vdeq_address(ctx)
    if not check_with_mode(ctx, _PRIM, count, src.itemsize, 0, 0, _ROUND_MODE, True, _address(dst), dst.nbytes,
                           ext, _address(src), src.nbytes, n * src.itemsize, words if vec else 0,
                           8 * VDEQ_WORDS if vec else 0, 8 * VDEQ_WORDS if vec else NO_OPERAND, 0, 0, NO_OPERAND,
                           False):
        return
    _trace(ctx, _CODE, n, dst, ext, src, n * src.itemsize, src, n * src.itemsize)
    advance_preload(ctx)
    count_form_done(ctx)
    # The count form is counter mode over contiguous repeats (the destination's: 8 or 4 blocks).
    _lanes(ctx, dst, src, (n + 127) // 128 if b8 else (n + 63) // 64, True, 0, n, 1, 8 if b8 else 4, 1, 8,
           is_vec_deq, half_block)


def _cast_dequant_level0(ctx, dst, src, mask, repeat_times, params, is_set_mask, is_vec_deq, half_block):
    unary_params(params)
    counter, high, low = call_mask(ctx, mask, is_set_mask)
    # An 8-bit destination is checked as 2-byte elements, 16 to a block: a lane's byte lies in its element.
    if not check_repeat(ctx, _PRIM, repeat_times, counter, high, low, mask_length(mask) if is_set_mask else 0, 0xFFFF,
                        _address(dst), dst.nbytes, max(dst.itemsize, 2), params[0], params[2], _address(src),
                        src.nbytes, src.itemsize, params[1], params[3], 0, 0, NO_OPERAND, 0, 0, False):
        return
    d_blk, a_blk, d_rep, a_rep = unary_strides(params)
    nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // src.itemsize)
    _trace_repeat(ctx, _CODE, nrep, dst, d_blk, d_rep, src, a_blk, a_rep, src, a_blk, a_rep)
    advance_preload(ctx)
    _lanes(ctx, dst, src, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, is_vec_deq, half_block)


_cast_dequant_count, _cast_dequant_level0 = two_forms("cast_dequant", _cast_dequant_count, _cast_dequant_level0)


def _cast_dequant(ctx, dst, src, count, repeat_times=None, params=None, is_set_mask=True, is_vec_deq=True,
                  half_block=True):
    if repeat_times is None:
        _cast_dequant_count(ctx, dst, src, count_of(count), is_vec_deq, half_block)
    else:
        _cast_dequant_level0(ctx, dst, src, count, repeat_times, params, is_set_mask, is_vec_deq, half_block)


cast_dequant = declared(_cast_dequant, PRIMITIVES["cast_dequant"], __name__)


# ---- AddDeqRelu --------------------------------------------------------------------------------------

@jit(always_inline=True)
def deq_relu(a, b, config):
    """AddDeqRelu's element as the c220 implementation computes it: the int32 sum (wrapping), scaled
    as ``deq_scaled``, to fp16 (IEEE overflow, the twin's Cast), then Max with +0 (a negative or -0
    result gives +0, a NaN the default NaN)."""
    h = f32_to_f16(deq_scaled((np.int64(a) + np.int64(b) + 2**31) % 2**32 - 2**31, config))
    if h & 0x7FFF > 0x7C00:
        return np.uint16(0x7E00)
    return np.uint16(0) if h & 0x8000 else h


@checked_rule
@jit
def check_sources_overwritten(ctx, a_addr, a_nbytes, a_start, b_addr, b_nbytes, b_start, n):
    """AddDeqRelu on c220 computes in its sources: ``n`` fp32 values over src0 from element
    ``a_start`` and ``n`` fp16 values over src1 from its half ``b_start``.  Those bytes (as far as
    each tensor reaches) hold no value a kernel wrote: marked garbage, so a later use reaching GM
    is reported."""
    ub = np.int64(ctx.ub_addr)
    set_garbage(ctx, np.int64(a_addr) - ub + 4 * a_start, max(min(4 * n, a_nbytes - 4 * a_start), 0), 1)
    set_garbage(ctx, np.int64(b_addr) - ub + 2 * b_start, max(min(2 * n, b_nbytes - 2 * b_start), 0), 1)
    return True


_ADR, _ADR_CODE = PRIMITIVE["AddDeqRelu"], EVENT["add_deq_relu"]
_CHUNK = 2048  # the implementation's temporary: 8 KB of int32


def _add_deq_relu_count(ctx, dst, a, b, count):
    n = max(count, 0)
    if not (_deq_types(dst, a, b) and check_vector(ctx, _ADR, count, _address(dst), dst.nbytes, dst.itemsize,
                                                   _address(a), a.nbytes, a.itemsize, _address(b), b.nbytes,
                                                   b.itemsize)):
        return
    _trace_vector(ctx, _ADR_CODE, count, dst, a, b)
    advance_preload(ctx)
    config = _load_i64(ctx.state_addr, STATE_DEQSCALE)
    for i in range(min(n, dst.size, a.size, b.size)):
        dst[i] = deq_relu(a[i], b[i], config)
    for start in range(0, n, _CHUNK):  # each chunk's halves from the chunk's first byte of src1
        check_sources_overwritten(ctx, _address(a), a.nbytes, start, _address(b), b.nbytes, 2 * start,
                                  min(_CHUNK, n - start))
    count_form_done(ctx)


def _add_deq_relu_level0(ctx, dst, a, b, mask, repeat_times, params, is_set_mask):
    binary_params(params)
    counter, high, low = call_mask(ctx, mask, is_set_mask)
    if not (_deq_types(dst, a, b) and check_repeat(
            ctx, _ADR, repeat_times, counter, high, low, mask_length(mask) if is_set_mask else 0, 0xFF, _address(dst),
            dst.nbytes, dst.itemsize, params[0], params[3], _address(a), a.nbytes, a.itemsize, params[1], params[4],
            _address(b), b.nbytes, b.itemsize, params[2], params[5], False)):
        return
    d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = binary_strides(params)
    nrep = repeats_of(counter, low, repeat_times, 64)
    _trace_repeat(ctx, _ADR_CODE, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, b, b_blk, b_rep)
    advance_preload(ctx)
    config = _load_i64(ctx.state_addr, STATE_DEQSCALE)
    for r in range(nrep):
        for k in range(64):
            if lane_on(counter, high, low, 64, r, k):
                i, j, d = lane_index(r, k, a_blk, a_rep, 8), lane_index(r, k, b_blk, b_rep, 8), lane_index(
                    r, k, d_blk, d_rep, 16)
                if i < a.size and j < b.size and d < dst.size:
                    dst[d] = deq_relu(a[i], b[j], config)
    # 32 repeats a chunk, each computed from its chunk's first element of each source, contiguously.
    for first in range(0, nrep, _CHUNK // 64):
        check_sources_overwritten(ctx, _address(a), a.nbytes, first * a_rep * 8, _address(b), b.nbytes,
                                  2 * first * b_rep * 8, min(_CHUNK // 64, nrep - first) * 64)


def _deq_types(dst, a, b):
    raise NotImplementedError  # compiled only


@overload(_deq_types, jit_options=OVERLOAD_OPTIONS)
def _ov_deq_types(dst, a, b):
    if not (dst.dtype == types.uint16 and a.dtype == types.int32 and b.dtype == types.int32):
        raise TypingError(f"AddDeqRelu takes int32 sources into an fp16 (uint16) tile; got {a.dtype}, {b.dtype} -> "
                          f"{dst.dtype}")
    return lambda dst, a, b: True


_add_deq_relu_count, _add_deq_relu_level0 = two_forms("add_deq_relu", _add_deq_relu_count, _add_deq_relu_level0)


def _add_deq_relu(ctx, dst, a, b, count, repeat_times=None, params=None, is_set_mask=True):
    if repeat_times is None:
        _add_deq_relu_count(ctx, dst, a, b, count_of(count))
    else:
        _add_deq_relu_level0(ctx, dst, a, b, count, repeat_times, params, is_set_mask)


add_deq_relu = declared(_add_deq_relu, PRIMITIVES["add_deq_relu"], __name__)
