"""Cast between fp16 and int4b_t, the count form (``cast_int4``; references:
:mod:`ascend_numba.host.references.convert`).

An int4b_t tensor is an int8 (or uint8) tile holding two elements a byte, element i in the low
four bits of byte i // 2 when i is even and the high four when odd (the device's
``LocalTensor<int4b_t>::GetValue``: impl/basic_api/kernel_tensor_impl.h, cannmirror/asc-devkit at
0da921b).  fp16 -> int4b_t rounds under CAST_RINT, FLOOR, CEIL, ROUND, TRUNC or NONE (as RINT) and
saturates to [-8, 7] (a NaN gives 0); int4b_t -> fp16 is exact (CAST_NONE).  The device takes an
even count (the page); an odd one writes the last element's nibble and leaves its byte's other
nibble, as an even count's neighbour would.

The level-0 form (``cast_int4(ctx, dst, src, mode, mask, repeat_times, UnaryRepeatParams(...))``):
a repeat is the fp16 side's 128 lanes; a 32-byte block of the int4b_t side holds 64 elements, its
strides in those blocks (the Cast page's int4b_t example, cannmirror/asc-devkit at 0da921b,
``docs/zh/api/SIMD-API/基础API/Memory矢量计算/类型转换/Cast.md``: 128 elements a repeat, a
destination repeat stride of 2).  The page wants a continuous mask even and a bit mask's two bits of a byte equal; the twin
computes whatever lanes are set.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import MODES, OPERAND_DST, OPERAND_SRC, PRIMITIVE
from ...checked.ub_shadow import is_local_operand, mark_written, ub_aligned, ub_range_ok, ub_read_ok
from ...host.primitives import CAST_MODES, PRIMITIVES, UnaryRepeatParams
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f16_to_f32, f32_to_f16
from ..lane import _address
from .cmpsel import NO_OPERAND, _trace, check_with_mode
from .convert import ODD, _to_integer, store_low8
from .masks import (_DST_BLK, _DST_REP, _REPEAT_TIMES, _SRC0_BLK, _SRC0_REP, MAX_REPEAT, _param_ok, call_mask,
                    count_form_done, lane_index, lane_on, repeats_of, stride_u8, stride_u16)
from .preload import advance_preload
from .vector import declared

__all__ = ["cast_int4"]

_CAST, _CODE = PRIMITIVE["Cast"], EVENT["cast_int4"]
_ROUND_MODE = MODES.index("RoundMode")
_PACK_MODES = sum(1 << int(m) for m in CAST_MODES[("float16", "int4b_t")])
_UNPACK_MODES = sum(1 << int(m) for m in CAST_MODES[("int4b_t", "float16")])
LANES, NIBBLES = 128, 64  # a repeat's lanes (the fp16 side's), int4b_t elements a 32-byte block


@jit(always_inline=True)
def nibble(tile, i):
    """int4b_t element ``i`` of a byte tile, sign-extended."""
    v = (np.int64(tile[i // 2]) >> (4 * (i % 2))) & 0xF
    return v - 16 if v >= 8 else v


@jit(always_inline=True)
def set_nibble(tile, i, value):
    shift = 4 * (i % 2)
    byte = np.int64(tile[i // 2]) & 0xFF
    store_low8(tile, i // 2, (byte & ~(0xF << shift)) | ((np.int64(value) & 0xF) << shift))


def _packs(dst, src):
    raise NotImplementedError  # compiled only


@overload(_packs, jit_options=OVERLOAD_OPTIONS)
def _ov_packs(dst, src):
    # True: fp16 (a uint16 tile) into int4b_t (a byte tile); False: the other way.
    if src.dtype == types.uint16 and dst.dtype in (types.int8, types.uint8):
        return lambda dst, src: True
    if dst.dtype == types.uint16 and src.dtype in (types.int8, types.uint8):
        return lambda dst, src: False
    raise TypingError(f"cast_int4 takes fp16 (uint16) and int4b_t (an int8 or uint8 tile) tiles; got {src.dtype} -> "
                      f"{dst.dtype}")


@checked_rule
@jit
def check_int4_repeats(ctx, mode_ok, m, repeat_times, counter, high, low, dst_addr, dst_nbytes, src_addr, src_nbytes,
                       packs, d_blk, s_blk, d_rep, s_rep):
    """Cast's level-0 form with an int4b_t side: the mode the pair takes, the fields in range; each
    lane set read inside its source (written before) and written inside its destination (the
    int4b_t side's byte)."""
    enter(ctx, _CAST)
    if not mode_ok:
        report.mode_out_of_range(ctx, _CAST, OPERAND_DST, mode=_ROUND_MODE, value=m)
        return False
    if not (_param_ok(ctx, _CAST, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
            and _param_ok(ctx, _CAST, _DST_BLK, d_blk, 0, 0xFFFF) and _param_ok(ctx, _CAST, _SRC0_BLK, s_blk, 0, 0xFFFF)
            and _param_ok(ctx, _CAST, _DST_REP, d_rep, 0, 0xFF) and _param_ok(ctx, _CAST, _SRC0_REP, s_rep, 0, 0xFF)):
        return False
    if not (is_local_operand(ctx, _CAST, OPERAND_DST, dst_addr) and ub_aligned(ctx, _CAST, OPERAND_DST, dst_addr, 0)
            and is_local_operand(ctx, _CAST, OPERAND_SRC, src_addr)
            and ub_aligned(ctx, _CAST, OPERAND_SRC, src_addr, 0)):
        return False
    nrep = repeats_of(counter, low, repeat_times, LANES)
    for r in range(nrep):
        for k in range(LANES):
            if not lane_on(counter, high, low, LANES, r, k):
                continue
            half_at = 2 * lane_index(r, k, s_blk if packs else d_blk, s_rep if packs else d_rep, 16)
            byte_at = _nibble_index(r, k, d_blk if packs else s_blk, d_rep if packs else s_rep) // 2
            s_at, s_n = (half_at, 2) if packs else (byte_at, 1)
            d_at, d_n = (byte_at, 1) if packs else (half_at, 2)
            if not (ub_range_ok(ctx, _CAST, OPERAND_SRC, src_addr, src_nbytes, s_at, s_n)
                    and ub_read_ok(ctx, _CAST, OPERAND_SRC, src_addr, s_at, s_n)
                    and ub_range_ok(ctx, _CAST, OPERAND_DST, dst_addr, dst_nbytes, d_at, d_n)):
                return False
            mark_written(ctx, np.int64(dst_addr) - ctx.ub_addr + d_at, d_n)
    return True


@jit(always_inline=True)
def _nibble_index(r, k, blk, rep):
    """The int4b_t operand's element for lane ``k`` of repeat ``r``: 64 a 32-byte block."""
    return (r * rep + (k // NIBBLES) * blk) * NIBBLES + k % NIBBLES


def _cast_int4_repeats(ctx, dst, src, m, mask, repeat_times, params, is_set_mask):
    packs = _packs(dst, src)
    taken = _PACK_MODES if packs else _UNPACK_MODES
    counter, high, low = call_mask(ctx, mask, is_set_mask)
    d_blk, s_blk = stride_u16(params[0]), stride_u16(params[1])
    d_rep, s_rep = stride_u8(params[2]), stride_u8(params[3])
    if not check_int4_repeats(ctx, 0 <= m <= ODD and (taken >> m) & 1 == 1, m, np.int64(repeat_times), counter, high,
                              low, _address(dst), dst.nbytes, _address(src), src.nbytes, packs,
                              np.int64(params[0]), np.int64(params[1]), np.int64(params[2]), np.int64(params[3])):
        return
    nrep = repeats_of(counter, low, repeat_times, LANES)
    _trace(ctx, _CODE, nrep * LANES, dst, dst.nbytes, src, src.nbytes, src, src.nbytes)
    advance_preload(ctx)
    for r in range(nrep):
        for k in range(LANES):
            if not lane_on(counter, high, low, LANES, r, k):
                continue
            if packs:
                h, q = lane_index(r, k, s_blk, s_rep, 16), _nibble_index(r, k, d_blk, d_rep)
                if h < src.size and q < 2 * dst.size:
                    set_nibble(dst, q, _to_integer(np.float64(f16_to_f32(src[h])), -8, 7, m))
            else:
                h, q = lane_index(r, k, d_blk, d_rep, 16), _nibble_index(r, k, s_blk, s_rep)
                if h < dst.size and q < 2 * src.size:
                    dst[h] = f32_to_f16(np.float32(nibble(src, q)))


_cast_int4_level_0 = jit(_cast_int4_repeats)


def _cast_int4(ctx, dst, src, mode, count, repeat_times=None, params=UnaryRepeatParams(), is_set_mask=True):
    _int4_form(ctx, dst, src, np.int64(mode), count, repeat_times, params, is_set_mask)


def _int4_form(ctx, dst, src, m, count, repeat_times, params, is_set_mask):
    raise NotImplementedError  # compiled only


@overload(_int4_form, jit_options=OVERLOAD_OPTIONS)
def _ov_int4_form(ctx, dst, src, m, count, repeat_times, params, is_set_mask):
    if isinstance(repeat_times, (types.NoneType, types.Omitted)):
        return lambda ctx, dst, src, m, count, repeat_times, params, is_set_mask: _cast_int4_count(ctx, dst, src, m,
                                                                                                   count)
    return lambda ctx, dst, src, m, count, repeat_times, params, is_set_mask: _cast_int4_level_0(
        ctx, dst, src, m, count, repeat_times, params, is_set_mask)


@jit
def _cast_int4_count(ctx, dst, src, m, count):
    n = max(count, 0)
    packs = _packs(dst, src)
    taken = _PACK_MODES if packs else _UNPACK_MODES
    nibbles = (n + 1) // 2  # the int4b_t side's bytes
    if not check_with_mode(ctx, _CAST, count, 2, 0, m, _ROUND_MODE, 0 <= m <= ODD and (taken >> m) & 1 == 1,
                           _address(dst), dst.nbytes, nibbles if packs else 2 * n, _address(src), src.nbytes,
                           2 * n if packs else nibbles, 0, 0, NO_OPERAND, 0, 0, NO_OPERAND, not packs):
        return
    _trace(ctx, _CODE, n, dst, nibbles if packs else 2 * n, src, 2 * n if packs else nibbles, src,
           2 * n if packs else nibbles)
    advance_preload(ctx)
    count_form_done(ctx)
    if packs:
        for i in range(min(n, src.size, 2 * dst.size)):
            set_nibble(dst, i, _to_integer(np.float64(f16_to_f32(src[i])), -8, 7, m))
    else:
        for i in range(min(n, dst.size, 2 * src.size)):
            dst[i] = f32_to_f16(np.float32(nibble(src, i)))


cast_int4 = declared(_cast_int4, PRIMITIVES["cast_int4"], __name__)
