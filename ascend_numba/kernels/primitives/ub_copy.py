"""Copy: the vector unit's masked UB -> UB copy (vcopy), level-0 form (family ``layout`` of
:mod:`ascend_numba.host.primitives`).

``copy(ctx, dst, src, mask, repeat_times, CopyRepeatParams(dst_stride, src_stride, dst_repeat_size,
src_repeat_size), is_set_mask=True)``: lane ``k`` of repeat ``r`` (``256 / sizeof`` lanes) is the
element at block ``r * repeat_size + (k // per_block) * stride``, ``k % per_block`` of each
operand; a lane the mask sets copies its bits, a lane it leaves out leaves ``dst`` as it was.  In
counter mode the count is the lanes of each repeat (it may pass 256 bytes: a repeat then spans
more blocks at the block stride) and ``repeat_times`` is kept, as the Copy page says (not the
generic counter mode's total).  ``mask`` is a count of leading lanes or (high, low) words.
Tiles of 2 or 4 bytes, one type for both (the device's b16 / b32: the bits are moved).  The
strides are uint16 fields, the repeat sizes uint12 (0..4095), ``repeat_times`` 0..255.  Like the
header, ``CopyRepeatParams()`` defaults the block strides to 0: every block of a repeat is the
first one.

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运/
UB与UB数据搬运/`` (Copy), ``include/basic_api/kernel_struct_data_copy.h`` (CopyRepeatParams) and
``impl/basic_api/dav_c220/kernel_operator_data_copy_impl.h`` (the vcopy call).  The count form
``Copy(dst, src, count)`` is the Ascend 950's only and is not provided.
"""

from __future__ import annotations

import collections

import numpy as np

from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC, PRIMITIVE
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, set_garbage, ub_aligned, ub_range_ok,
                                  ub_read_ok)
from ...host.primitives import PRIMITIVES
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.jit import jit
from ..lane import _address
from .context import address, trace_event, tracing
from .dma import copy_bytes
from .tile_types import b16_b32_tiles
from .masks import (_COUNTER, _DST_BLK, _DST_REP, _REPEAT_TIMES, _SRC0_BLK, _SRC0_REP, BLOCK_BYTES, MAX_COUNTER,
                    MAX_REPEAT, REPEAT_BYTES, _param_ok, all_lanes, call_mask, counter_total, lane_on, stride_u16)
from .preload import advance_preload
from .vector import declared

__all__ = ["copy", "CopyRepeatParams"]

_PRIM, _CODE = PRIMITIVE["Copy"], EVENT["copy"]
MAX_REPEAT_SIZE = 0xFFF  # dstRepeatSize / srcRepeatSize: the impl's UINT12 check

CopyRepeatParams = collections.namedtuple("CopyRepeatParams",
                                          ("dst_stride", "src_stride", "dst_repeat_size", "src_repeat_size"),
                                          defaults=(0, 0, 8, 8))


@jit(always_inline=True)
def _lanes_of(counter, low, lanes):
    """The lanes a repeat has: a register's 128 / 64, or counter mode's count."""
    return counter_total(low) if counter else lanes


@jit(always_inline=True)
def _lane_on(counter, high, low, lanes, k):
    return counter or lane_on(False, high, low, lanes, 0, k)


@jit(always_inline=True)
def _at(r, k, stride, repeat_size, per_block):
    return (r * repeat_size + (k // per_block) * stride) * per_block + k % per_block


@checked_rule
@jit
def check_copy(ctx, repeat_times, counter, high, low, dst_addr, dst_nbytes, src_addr, src_nbytes, size, d_blk, s_blk,
               d_rep, s_rep):
    """Copy: the fields in their ranges; both operands in UB on a block; each lane set read inside
    ``src`` and written before, written inside ``dst`` (garbage where its source was)."""
    enter(ctx, _PRIM)
    if not (_param_ok(ctx, _PRIM, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
            and _param_ok(ctx, _PRIM, _DST_BLK, d_blk, 0, 0xFFFF) and _param_ok(ctx, _PRIM, _SRC0_BLK, s_blk, 0, 0xFFFF)
            and _param_ok(ctx, _PRIM, _DST_REP, d_rep, 0, MAX_REPEAT_SIZE)
            and _param_ok(ctx, _PRIM, _SRC0_REP, s_rep, 0, MAX_REPEAT_SIZE)
            and (not counter or _param_ok(ctx, _PRIM, _COUNTER, low, 0, MAX_COUNTER))):
        return False
    if repeat_times == 0:
        return True
    if not (is_local_operand(ctx, _PRIM, OPERAND_DST, dst_addr) and ub_aligned(ctx, _PRIM, OPERAND_DST, dst_addr, 0)
            and is_local_operand(ctx, _PRIM, OPERAND_SRC, src_addr)
            and ub_aligned(ctx, _PRIM, OPERAND_SRC, src_addr, 0)):
        return False
    ub = np.int64(ctx.ub_addr)
    lanes, per_block = REPEAT_BYTES // size, BLOCK_BYTES // size
    for r in range(repeat_times):
        for k in range(min(_lanes_of(counter, low, lanes), ctx.ub_size // size)):
            if not _lane_on(counter, high, low, lanes, k):
                continue
            s, d = _at(r, k, s_blk, s_rep, per_block) * size, _at(r, k, d_blk, d_rep, per_block) * size
            if not (ub_range_ok(ctx, _PRIM, OPERAND_SRC, src_addr, src_nbytes, s, size)
                    and ub_read_ok(ctx, _PRIM, OPERAND_SRC, src_addr, s, size)
                    and ub_range_ok(ctx, _PRIM, OPERAND_DST, dst_addr, dst_nbytes, d, size)):
                return False
            g = first_garbage(ctx, np.int64(src_addr) - ub + s, size) >= 0
            set_garbage(ctx, np.int64(dst_addr) - ub + d, size, 1 if g else 0)
            mark_epoch(ctx, np.int64(dst_addr) - ub + d, size)
    return True


def _copy(ctx, dst, src, mask, repeat_times, params=CopyRepeatParams(), is_set_mask=True):
    b16_b32_tiles(dst, src)
    counter, high, low = call_mask(ctx, mask, is_set_mask)
    d_blk, s_blk = stride_u16(params[0]), stride_u16(params[1])
    d_rep, s_rep = stride_u16(params[2]), stride_u16(params[3])
    size = dst.itemsize
    if not check_copy(ctx, np.int64(repeat_times), counter, high, low, _address(dst), dst.nbytes, _address(src),
                      src.nbytes, size, d_blk, s_blk, d_rep, s_rep):
        return
    nrep = np.int64(repeat_times) & MAX_REPEAT
    lanes = REPEAT_BYTES // size
    n = _lanes_of(counter, low, lanes)
    if tracing(ctx):
        d, s = address(dst), address(src)
        trace_event(ctx, _CODE, DIR_VECTOR, nrep * n * size, nrep * n, d, d + dst.nbytes, s, s + src.nbytes, s, s)
    advance_preload(ctx)
    if (counter or all_lanes(counter, high, low, lanes)) and d_blk == 1 and s_blk == 1:
        for r in range(nrep):  # each repeat's lanes back to back on both sides: one move (a memmove)
            copy_bytes(dst, r * d_rep * BLOCK_BYTES, src, r * s_rep * BLOCK_BYTES, n * size)
    else:  # a repeat of more lanes than the UB holds elements reaches nothing more (counter mode's 2**32)
        _copy_lanes(dst, src, nrep, min(n, ctx.ub_size // size), counter, high, low, d_blk, s_blk, d_rep, s_rep)


@jit(_nrt=True)  # a repeat's lanes in a buffer
def _copy_lanes(dst, src, nrep, n, counter, high, low, d_blk, s_blk, d_rep, s_rep):
    """Lane by lane, each repeat read whole before it is written (as the vector unit does, so an
    overlap gives what the whole-repeat move gives)."""
    lanes, per_block = REPEAT_BYTES // dst.itemsize, BLOCK_BYTES // dst.itemsize
    values = np.empty(max(n, 1), dst.dtype)
    for r in range(nrep):
        for k in range(n):
            si = _at(r, k, s_blk, s_rep, per_block)
            if _lane_on(counter, high, low, lanes, k) and si < src.size:
                values[k] = src[si]
        for k in range(n):
            si, di = _at(r, k, s_blk, s_rep, per_block), _at(r, k, d_blk, d_rep, per_block)
            if _lane_on(counter, high, low, lanes, k) and si < src.size and di < dst.size:
                dst[di] = values[k]


copy = declared(_copy, PRIMITIVES["copy"], __name__)
