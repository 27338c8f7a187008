"""Brcb: each of 8 source elements a repeat broadcast over a 32-byte block (family ``broadcast``
of :mod:`ascend_numba.host.primitives`).

``brcb(ctx, dst, src, repeat_times, params)`` is the device's ``Brcb(dst, src, repeatTime,
BrcbRepeatParams(dstBlkStride, dstRepStride))``: repeat ``i`` reads ``src[8i .. 8i + 7]``
(contiguous, no source stride) and fills destination block ``32 * (i * dstRepStride + j *
dstBlkStride)`` bytes from ``dst`` with ``src[8i + j]``; the bytes between blocks are left.  Tiles of
2 and 4 bytes (the element's bits are moved, a NaN's kept).  Semantics: cannmirror/asc-devkit at
0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/`` (Brcb), ``include/basic_api/kernel_struct_brcb.h``
and ``impl/basic_api/dav_c220/kernel_operator_vec_brcb_impl.h``: the implementation resets the
mask register first (every lane set, normal mode untouched) and the twin leaves it so.  The page
calls a block stride of 0 undefined; its debug check and the Ascend 950's model read it as 1, as
the twin does.  ``dst`` must not overlap ``src`` (checked mode names the repeat).
"""

from __future__ import annotations

import numpy as np

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC, PRIMITIVE
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, set_garbage, ub_aligned, ub_range_ok,
                                  ub_read_ok)
from ...host.primitives import PRIMITIVES, BrcbRepeatParams
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import _address
from .context import address, trace_event, tracing
from .masks import _DST_BLK, _DST_REP, _REPEAT_TIMES, BLOCK_BYTES, BLOCKS, MAX_REPEAT, _param_ok, reset_mask
from .preload import advance_preload
from .vector import declared

__all__ = ["brcb", "BrcbRepeatParams"]

_PRIM, _CODE = PRIMITIVE["Brcb"], EVENT["brcb"]


def _block_tile(dst, src):
    """A compile-time check: one tile type of 2 or 4 bytes."""
    raise NotImplementedError  # compiled only


@overload(_block_tile, jit_options=OVERLOAD_OPTIONS)
def _ov_block_tile(dst, src):
    if dst.dtype != src.dtype or dst.dtype.bitwidth not in (16, 32):
        raise TypingError(f"Brcb takes one tile type of 2 or 4 bytes (half, bfloat16, int16, uint16, float, int32, "
                          f"uint32); got {dst.dtype} from {src.dtype}")
    return lambda dst, src: None


@jit(always_inline=True)
def _strides(params):
    """BrcbRepeatParams as the device's uint16_t fields hold them, a block stride of 0 as 1."""
    blk = np.int64(params[0]) & 0xFFFF
    return max(blk, 1), np.int64(params[1]) & 0xFFFF


@checked_rule
@jit
def check_brcb(ctx, repeat_times, dst_addr, dst_nbytes, size, blk_field, rep, src_addr, src_nbytes):
    """Brcb: repeatTime 0..255; the 8 source elements of each repeat written before, in ``src``;
    each destination block in ``dst``; no destination block over the bytes the call reads."""
    enter(ctx, _PRIM)
    if not (_param_ok(ctx, _PRIM, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
            and _param_ok(ctx, _PRIM, _DST_BLK, blk_field, 0, 0xFFFF)
            and _param_ok(ctx, _PRIM, _DST_REP, rep, 0, 0xFFFF)):
        return False
    if repeat_times == 0:
        return True
    blk = max(blk_field, 1)
    if not (is_local_operand(ctx, _PRIM, OPERAND_DST, dst_addr) and ub_aligned(ctx, _PRIM, OPERAND_DST, dst_addr, 0)
            and is_local_operand(ctx, _PRIM, OPERAND_SRC, src_addr)
            and ub_aligned(ctx, _PRIM, OPERAND_SRC, src_addr, 0)):
        return False
    n = BLOCKS * repeat_times * size
    if not (ub_range_ok(ctx, _PRIM, OPERAND_SRC, src_addr, src_nbytes, 0, n)
            and ub_read_ok(ctx, _PRIM, OPERAND_SRC, src_addr, 0, n)):
        return False
    ub = np.int64(ctx.ub_addr)
    s_lo = np.int64(src_addr) - ub
    d0 = np.int64(dst_addr) - ub
    for i in range(repeat_times):
        for j in range(BLOCKS):
            off = BLOCK_BYTES * (i * rep + j * blk)
            if not ub_range_ok(ctx, _PRIM, OPERAND_DST, dst_addr, dst_nbytes, off, BLOCK_BYTES):
                return False
            if d0 + off < s_lo + n and s_lo < d0 + off + BLOCK_BYTES:
                report.vector_partial_overlap(ctx, _PRIM, OPERAND_SRC, src_start=s_lo, src_end=s_lo + n, repeat=i,
                                              written_in=i)
                return False
    for i in range(repeat_times):
        for j in range(BLOCKS):
            d = d0 + BLOCK_BYTES * (i * rep + j * blk)
            g = first_garbage(ctx, s_lo + (BLOCKS * i + j) * size, size) >= 0
            set_garbage(ctx, d, BLOCK_BYTES, 1 if g else 0)
            mark_epoch(ctx, d, BLOCK_BYTES)
    return True


def _brcb(ctx, dst, src, repeat_times, params=BrcbRepeatParams()):
    _block_tile(dst, src)
    nrep = np.int64(repeat_times)
    blk, rep = _strides(params)
    if not check_brcb(ctx, nrep, _address(dst), dst.nbytes, dst.itemsize, np.int64(params[0]) & 0xFFFF, rep,
                      _address(src), src.nbytes):
        return
    nrep &= MAX_REPEAT
    reset_mask(ctx)
    per_block = BLOCK_BYTES // dst.itemsize
    if tracing(ctx):
        d, s = address(dst), address(src)
        span = 0 if nrep == 0 else ((nrep - 1) * rep + (BLOCKS - 1) * blk + 1) * BLOCK_BYTES
        trace_event(ctx, _CODE, DIR_VECTOR, nrep * BLOCKS * src.itemsize, nrep * BLOCKS * per_block, d, d + span, s,
                    s + nrep * BLOCKS * src.itemsize, s, s)
    advance_preload(ctx)
    for i in range(min(nrep * BLOCKS, src.size) // BLOCKS):
        for j in range(BLOCKS):
            value = src[BLOCKS * i + j]
            at = (i * rep + j * blk) * per_block
            for e in range(max(min(per_block, dst.size - at), 0)):
                dst[at + e] = value


brcb = declared(_brcb, PRIMITIVES["brcb"], __name__)
