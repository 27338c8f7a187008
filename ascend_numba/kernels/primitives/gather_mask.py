"""GatherMask: the elements of a source whose pattern bit is 1, packed to the front of ``dst``
(family ``gather_mask`` of :mod:`ascend_numba.host.primitives`).

``rsvd_cnt = gather_mask(ctx, dst, src, pattern, reduce_mode, mask, params)`` is the device's
``GatherMask(dst, src0, src1Pattern, reduceMode, mask, GatherMaskParams, rsvdCnt)``, the count
returned (``get_gather_mask_remain_count(ctx)`` reads it again, as GetGatherMaskRemainCount).
``pattern``: a built-in pattern 1..7 (1: even elements, 2: odd, 3..6: element 4j + 0..3, 7: every
element) or a uint16 / uint32 tensor of bits (element k of a repeat: bit k % 8 of byte k // 8, the
repeat's bits ``32 * src1_repeat_stride`` bytes on from the last).  Normal mode (``reduce_mode``
False): ``repeat_times`` repeats of 256 bytes, ``mask`` unused; counter mode (True): ``mask``
elements a repeat, a repeat past 256 bytes going on 8 blocks further (the Ascend 950 model's chain).
Element k of repeat i is read at block ``i * src0_repeat_stride + (k // lanes) * 8 *
src0_block_stride + (k % lanes) // per_block * src0_block_stride``.  Nothing past the kept
elements is written.  The call leaves normal mode and the mask register ``(0, mask)``, as c220
does.  Tiles of 2 bytes (uint16 pattern) or 4 bytes (uint32 pattern); bits are moved.

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/`` (GatherMask),
``include/basic_api/kernel_struct_gather.h``, ``impl/basic_api/dav_c220/`` (the vreducev2 call) and, for
what one instruction hides there, ``impl/basic_api/dav_3510/`` (the 950's software model).
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, set_garbage, ub_aligned, ub_range_ok,
                                  ub_read_ok)
from ...host.primitives import PRIMITIVES, GatherMaskParams
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import STATE_MASK_COUNTER, STATE_MASK_HIGH, STATE_MASK_LOW, STATE_RSVD_CNT, _address, _load_i64, _store_i64
from .context import address, trace_event, tracing
from .masks import _COUNTER, _REPEAT_TIMES, _SRC0_BLK, _SRC0_REP, _SRC1_REP, BLOCK_BYTES, MAX_COUNTER, _param_ok
from .preload import advance_preload
from .vector import declared

__all__ = ["gather_mask", "get_gather_mask_remain_count", "GatherMaskParams"]

_PRIM, _CODE = PRIMITIVE["GatherMask"], EVENT["gather_mask"]
_LANE_BYTES = 256


def _pattern_kind(src0, pattern):
    """0 for a built-in pattern number, else the pattern tensor's element size (a compile-time check)."""
    raise NotImplementedError  # compiled only


@overload(_pattern_kind, jit_options=OVERLOAD_OPTIONS)
def _ov_pattern_kind(src0, pattern):
    if src0.dtype.bitwidth not in (16, 32):
        raise TypingError(f"GatherMask takes 2- or 4-byte tiles; got {src0.dtype}")
    if isinstance(pattern, types.Integer):
        return lambda src0, pattern: 0
    if not (isinstance(pattern, types.Array) and pattern.dtype.bitwidth == src0.dtype.bitwidth
            and pattern.dtype in (types.uint16, types.uint32)):
        raise TypingError(f"GatherMask's pattern: a number 1..7 or a uint{src0.dtype.bitwidth} tensor for "
                          f"{src0.dtype} tiles; got {pattern}")
    return lambda src0, pattern: 1


def _pattern_bit(pattern, byte, k):
    """Bit ``k`` of the pattern tensor's bits from ``byte`` on (a built-in pattern: its rule)."""
    raise NotImplementedError  # compiled only


@overload(_pattern_bit, jit_options=OVERLOAD_OPTIONS)
def _ov_pattern_bit(pattern, byte, k):
    if isinstance(pattern, types.Integer):
        def builtin(pattern, byte, k):
            if pattern == 7:
                return True
            if pattern <= 2:
                return k % 2 == pattern - 1
            return k % 4 == pattern - 3
        return builtin
    width = pattern.dtype.bitwidth

    def tensor_bit(pattern, byte, k):
        bit = byte * 8 + k
        e = bit // width
        return e < pattern.size and (np.int64(pattern[e]) >> (bit % width)) & 1 == 1
    return tensor_bit


@jit(always_inline=True)
def _element(i, k, size, blk, rep):
    """The element index of element ``k`` of repeat ``i`` (strides in blocks)."""
    lanes, per_block = _LANE_BYTES // size, BLOCK_BYTES // size
    block = i * rep + (k // lanes) * 8 * blk + (k % lanes) // per_block * blk
    return block * per_block + k % per_block


@checked_rule
@jit
def check_gather_mask(ctx, kind, repeat_times, per_repeat, counter, dst_addr, dst_nbytes, src_addr, src_nbytes, size,
                      blk, rep, pat_addr, pat_nbytes, pat_rep, kept):
    """GatherMask: its parameters in their fields; every element of every repeat inside ``src0``
    and written before; the pattern bits a tensor gives inside it; the ``kept`` results inside
    ``dst``, marked written (all garbage when a source element read is)."""
    enter(ctx, _PRIM)
    if not (_param_ok(ctx, _PRIM, _REPEAT_TIMES, repeat_times, 0, 0xFFFF)
            and _param_ok(ctx, _PRIM, _SRC0_BLK, blk, 0, 0xFF) and _param_ok(ctx, _PRIM, _SRC0_REP, rep, 0, 0xFFFF)
            and _param_ok(ctx, _PRIM, _SRC1_REP, pat_rep, 0, 0xFF)
            and (not counter or _param_ok(ctx, _PRIM, _COUNTER, per_repeat, 1, MAX_COUNTER))):
        return False
    if repeat_times == 0:
        return True
    if not (is_local_operand(ctx, _PRIM, OPERAND_SRC, src_addr) and ub_aligned(ctx, _PRIM, OPERAND_SRC, src_addr, 0)
            and is_local_operand(ctx, _PRIM, OPERAND_DST, dst_addr)
            and ub_aligned(ctx, _PRIM, OPERAND_DST, dst_addr, 0)):
        return False
    garbage = False
    s0 = np.int64(src_addr) - np.int64(ctx.ub_addr)
    for i in range(repeat_times):
        for k in range(per_repeat):
            at = _element(i, k, size, blk, rep) * size
            if not (ub_range_ok(ctx, _PRIM, OPERAND_SRC, src_addr, src_nbytes, at, size)
                    and ub_read_ok(ctx, _PRIM, OPERAND_SRC, src_addr, at, size)):
                return False
            garbage = garbage or first_garbage(ctx, s0 + at, size) >= 0
    if kind != 0:
        if not is_local_operand(ctx, _PRIM, OPERAND_SRC1, pat_addr):
            return False
        need = (repeat_times - 1) * BLOCK_BYTES * pat_rep + (per_repeat + 7) // 8
        if not (ub_range_ok(ctx, _PRIM, OPERAND_SRC1, pat_addr, pat_nbytes, 0, need)
                and ub_read_ok(ctx, _PRIM, OPERAND_SRC1, pat_addr, 0, need)):
            return False
    if not ub_range_ok(ctx, _PRIM, OPERAND_DST, dst_addr, dst_nbytes, 0, kept * size):
        return False
    d0 = np.int64(dst_addr) - np.int64(ctx.ub_addr)
    set_garbage(ctx, d0, kept * size, 1 if garbage else 0)  # any garbage source: every result (one mark)
    mark_epoch(ctx, d0, kept * size)
    return True


@jit(always_inline=True)
def _kept(src0, pattern, nrep, per_repeat, pat_rep):
    n = np.int64(0)
    for i in range(nrep):
        for k in range(per_repeat):
            n += 1 if _pattern_bit(pattern, i * BLOCK_BYTES * pat_rep, k) else 0
    return n


def _gather_mask(ctx, dst, src, pattern, reduce_mode, mask, params):
    kind = _pattern_kind(src, pattern)
    size = src.itemsize
    blk, nrep, rep, pat_rep = (np.int64(params[0]) & 0xFF, np.int64(params[1]) & 0xFFFF, np.int64(params[2]) & 0xFFFF,
                               np.int64(params[3]) & 0xFF)
    per_repeat = np.int64(mask) & 0xFFFF_FFFF if reduce_mode else np.int64(_LANE_BYTES // size)
    if kind == 0:
        pat_rep = np.int64(0)
    kept = _kept(src, pattern, nrep, per_repeat, pat_rep)
    if not check_gather_mask(ctx, kind, np.int64(params[1]), per_repeat, reduce_mode, _address(dst), dst.nbytes,
                             _address(src), src.nbytes, size, blk, rep, _address(src) if kind == 0 else
                             _address_of(pattern), _nbytes_of(pattern), pat_rep, kept):
        return np.int64(0)
    if tracing(ctx):
        d, s = address(dst), address(src)
        trace_event(ctx, _CODE, DIR_VECTOR, nrep * per_repeat * size, nrep * per_repeat, d, d + kept * size, s,
                    s + nrep * per_repeat * size, s, s)
    advance_preload(ctx)
    n = np.int64(0)
    for i in range(nrep):
        for k in range(per_repeat):
            if _pattern_bit(pattern, i * BLOCK_BYTES * pat_rep, k):
                e = _element(i, k, size, blk, rep)
                if n < dst.size and e < src.size:
                    dst[n] = src[e]
                n += 1
    _store_i64(ctx.state_addr, STATE_RSVD_CNT, n)
    _store_i64(ctx.state_addr, STATE_MASK_COUNTER, 0)
    _store_i64(ctx.state_addr, STATE_MASK_HIGH, 0)
    _store_i64(ctx.state_addr, STATE_MASK_LOW, np.int64(mask) & 0xFFFF_FFFF)
    return n


def _address_of(pattern):
    raise NotImplementedError  # compiled only


@overload(_address_of, jit_options=OVERLOAD_OPTIONS)
def _ov_address_of(pattern):
    if isinstance(pattern, types.Integer):
        return lambda pattern: np.uint64(0)
    return lambda pattern: _address(pattern)


def _nbytes_of(pattern):
    raise NotImplementedError  # compiled only


@overload(_nbytes_of, jit_options=OVERLOAD_OPTIONS)
def _ov_nbytes_of(pattern):
    if isinstance(pattern, types.Integer):
        return lambda pattern: np.int64(0)
    return lambda pattern: np.int64(pattern.nbytes)


gather_mask = declared(_gather_mask, PRIMITIVES["gather_mask"], __name__)


@jit
def get_gather_mask_remain_count(ctx):
    """GetGatherMaskRemainCount: the elements the lane's last GatherMask kept."""
    return _load_i64(ctx.state_addr, STATE_RSVD_CNT)
