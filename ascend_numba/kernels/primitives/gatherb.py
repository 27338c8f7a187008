"""Gatherb: 32-byte blocks of a source at byte offsets, gathered into a destination's blocks
(family ``gather`` of :mod:`ascend_numba.host.primitives`).

``gatherb(ctx, dst, src, offsets, repeat_times, GatherRepeatParams(dst_blk_stride, dst_rep_stride))``
is the device's ``Gatherb``: repeat ``i`` copies the 32 bytes at byte ``offsets[8i + j]`` of ``src``
(a uint32 tensor of byte offsets, each a multiple of 32) to destination block ``i * dst_rep_stride
+ j * dst_blk_stride`` (a block stride of 0 as 1), j < 8.  Tiles of 2 or 4 bytes, one type (the
device takes uint16 and uint32; the bytes are moved).  The c220 implementation resets the mask
register first (every lane set), as the twin does.  Semantics: cannmirror/asc-devkit at 0da921b,
``docs/zh/api/SIMD-API/基础API/Memory矢量计算/`` (Gatherb), ``include/basic_api/kernel_struct_gather.h``
and ``impl/basic_api/dav_c220/kernel_operator_vec_gather_impl.h``.
"""

from __future__ import annotations

import numpy as np

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, set_garbage, ub_aligned, ub_range_ok,
                                  ub_read_ok)
from ...host.primitives import PRIMITIVES, GatherRepeatParams
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.jit import jit
from ..lane import _address, _load_i32
from .broadcast import _block_tile
from .context import address, trace_event, tracing
from .masks import _DST_BLK, _DST_REP, _REPEAT_TIMES, BLOCK_BYTES, BLOCKS, MAX_REPEAT, _param_ok, reset_mask
from .preload import advance_preload
from .vector import declared

__all__ = ["gatherb", "GatherRepeatParams"]

_PRIM, _CODE = PRIMITIVE["Gatherb"], EVENT["gatherb"]


@checked_rule
@jit
def check_gatherb(ctx, repeat_times, dst_addr, dst_nbytes, blk, rep, src_addr, src_nbytes, off_addr, off_nbytes):
    """Gatherb: repeatTime 0..255, strides in their uint8 fields; each offset read written before,
    a multiple of 32 and its block inside ``src`` (written before); each destination block inside
    ``dst``, marked written (garbage where its source block was)."""
    enter(ctx, _PRIM)
    if not (_param_ok(ctx, _PRIM, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
            and _param_ok(ctx, _PRIM, _DST_BLK, blk, 0, 0xFF) and _param_ok(ctx, _PRIM, _DST_REP, rep, 0, 0xFF)):
        return False
    if repeat_times == 0:
        return True
    if not (is_local_operand(ctx, _PRIM, OPERAND_DST, dst_addr) and ub_aligned(ctx, _PRIM, OPERAND_DST, dst_addr, 0)
            and is_local_operand(ctx, _PRIM, OPERAND_SRC, src_addr)
            and ub_aligned(ctx, _PRIM, OPERAND_SRC, src_addr, 0)
            and is_local_operand(ctx, _PRIM, OPERAND_SRC1, off_addr)
            and ub_range_ok(ctx, _PRIM, OPERAND_SRC1, off_addr, off_nbytes, 0, BLOCKS * repeat_times * 4)
            and ub_read_ok(ctx, _PRIM, OPERAND_SRC1, off_addr, 0, BLOCKS * repeat_times * 4)):
        return False
    ub = np.int64(ctx.ub_addr)
    for i in range(repeat_times):
        for j in range(BLOCKS):
            at = np.int64(_load_i32(off_addr, BLOCKS * i + j)) & 0xFFFF_FFFF
            if at % BLOCK_BYTES != 0:
                report.ub_address_unaligned(ctx, _PRIM, OPERAND_SRC, ub_offset=np.int64(src_addr) - ub + at,
                                            block_bytes=BLOCK_BYTES)
                return False
            d = BLOCK_BYTES * (i * rep + j * max(blk, 1))
            if not (ub_range_ok(ctx, _PRIM, OPERAND_SRC, src_addr, src_nbytes, at, BLOCK_BYTES)
                    and ub_read_ok(ctx, _PRIM, OPERAND_SRC, src_addr, at, BLOCK_BYTES)
                    and ub_range_ok(ctx, _PRIM, OPERAND_DST, dst_addr, dst_nbytes, d, BLOCK_BYTES)):
                return False
            g = first_garbage(ctx, np.int64(src_addr) - ub + at, BLOCK_BYTES) >= 0
            set_garbage(ctx, np.int64(dst_addr) - ub + d, BLOCK_BYTES, 1 if g else 0)
            mark_epoch(ctx, np.int64(dst_addr) - ub + d, BLOCK_BYTES)
    return True


def _gatherb(ctx, dst, src, offsets_bytes, repeat_times, params=GatherRepeatParams()):
    _block_tile(dst, src)
    blk, rep = np.int64(params[0]) & 0xFF, np.int64(params[1]) & 0xFF
    if not check_gatherb(ctx, np.int64(repeat_times), _address(dst), dst.nbytes, blk, rep, _address(src), src.nbytes,
                         _address(offsets_bytes), offsets_bytes.nbytes):
        return
    nrep = np.int64(repeat_times) & MAX_REPEAT
    reset_mask(ctx)
    per_block = BLOCK_BYTES // dst.itemsize
    if tracing(ctx):
        d, s = address(dst), address(src)
        span = 0 if nrep == 0 else ((nrep - 1) * rep + (BLOCKS - 1) * max(blk, 1) + 1) * BLOCK_BYTES
        trace_event(ctx, _CODE, DIR_VECTOR, nrep * BLOCKS * BLOCK_BYTES, nrep * BLOCKS * per_block, d, d + span, s,
                    s + src.nbytes, address(offsets_bytes), address(offsets_bytes) + nrep * BLOCKS * 4)
    advance_preload(ctx)
    for i in range(min(nrep * BLOCKS, offsets_bytes.size) // BLOCKS):
        for j in range(BLOCKS):
            first = np.int64(offsets_bytes[BLOCKS * i + j]) // dst.itemsize
            at = (i * rep + j * max(blk, 1)) * per_block
            for e in range(per_block):
                if 0 <= first + e < src.size and at + e < dst.size:
                    dst[at + e] = src[first + e]


gatherb = declared(_gatherb, PRIMITIVES["gatherb"], __name__)
