"""Gather's level-0 form (vgather under the mask register): ``gather(ctx, dst, src, offsets_bytes,
base, mask, repeat_times, dst_rep_stride)``.

Repeat ``r`` takes the ``256 / sizeof`` offsets from ``offsets_bytes[r * lanes]`` on; lane ``k``,
when the mask sets it, writes ``dst[r * dst_rep_stride * per_block + k] = src[base +
offsets_bytes[r * lanes + k] / sizeof]`` (``base`` in elements, as the count form's); a lane left
out leaves ``dst`` (the twin's choice: the vgather page says only that the mask is honoured).
``mask`` is a count of leading lanes or (low, high) words, counter mode as the other level-0 calls;
``repeat_times`` 0..255, ``dst_rep_stride`` in 32-byte blocks 0..4095.  Tiles of 2 or 4 bytes (the
A2/A3 types).  Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/
Memory矢量计算/离散与聚合/Gather.md`` and ``impl/basic_api/dav_c220/kernel_operator_vec_gather_impl.h``.
"""

from __future__ import annotations

import numpy as np

from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, set_garbage, ub_range_ok,
                                  ub_read_ok)
from ...host.trace import DIR_LOCAL, EVENT_GATHER
from ..._numba_compat.jit import jit
from ..lane import _address, _load_i32
from .context import address, trace_event, tracing
from .tile_types import b16_b32_tiles
from .masks import (_COUNTER, _DST_REP, _REPEAT_TIMES, BLOCK_BYTES, MAX_COUNTER, MAX_REPEAT, REPEAT_BYTES, _param_ok,
                    call_mask, lane_on, repeats_of)

__all__ = ["gather_repeats"]

_PRIM = PRIMITIVE["Gather"]
MAX_DST_REP = 0xFFF


@checked_rule
@jit
def check_gather_repeats(ctx, repeat_times, counter, high, low, d_rep, dst_addr, dst_nbytes, src_addr, src_nbytes,
                         table_addr, table_nbytes, size, base):
    """Gather, level-0: the fields in range; for each lane set, its offset read inside the table
    (written before), its element inside ``src`` (written before), its destination inside ``dst``."""
    enter(ctx, _PRIM)
    if not (_param_ok(ctx, _PRIM, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
            and _param_ok(ctx, _PRIM, _DST_REP, d_rep, 0, MAX_DST_REP)
            and (not counter or _param_ok(ctx, _PRIM, _COUNTER, low, 0, MAX_COUNTER))):
        return False
    lanes, per_block = REPEAT_BYTES // size, BLOCK_BYTES // size
    nrep = repeats_of(counter, low, repeat_times, lanes)
    if nrep == 0:
        return True
    for operand, addr in ((OPERAND_DST, dst_addr), (OPERAND_SRC, src_addr), (OPERAND_SRC1, table_addr)):
        if not is_local_operand(ctx, _PRIM, operand, addr):
            return False
    ub = np.int64(ctx.ub_addr)
    for r in range(nrep):
        for k in range(lanes):
            if not lane_on(counter, high, low, lanes, r, k):
                continue
            t = (r * lanes + k) * 4
            if not (ub_range_ok(ctx, _PRIM, OPERAND_SRC1, table_addr, table_nbytes, t, 4)
                    and ub_read_ok(ctx, _PRIM, OPERAND_SRC1, table_addr, t, 4)):
                return False
            s = (base + (np.int64(_load_i32(table_addr, r * lanes + k)) & 0xFFFF_FFFF) // size) * size
            d = (r * d_rep * per_block + k) * size
            if not (ub_range_ok(ctx, _PRIM, OPERAND_SRC, src_addr, src_nbytes, s, size)
                    and ub_read_ok(ctx, _PRIM, OPERAND_SRC, src_addr, s, size)
                    and ub_range_ok(ctx, _PRIM, OPERAND_DST, dst_addr, dst_nbytes, d, size)):
                return False
            g = first_garbage(ctx, np.int64(src_addr) - ub + s, size) >= 0
            set_garbage(ctx, np.int64(dst_addr) - ub + d, size, 1 if g else 0)
            mark_epoch(ctx, np.int64(dst_addr) - ub + d, size)
    return True


@jit(always_inline=True)
def gather_repeats(ctx, dst, src, offsets_bytes, base, mask, repeat_times, dst_rep_stride):
    """Gather's level-0 form (see the module doc)."""
    b16_b32_tiles(dst, src)
    counter, high, low = call_mask(ctx, mask, True)
    size = src.itemsize
    d_rep = np.int64(dst_rep_stride) & 0xFFFF
    if not check_gather_repeats(ctx, np.int64(repeat_times), counter, high, low, np.int64(dst_rep_stride),
                                _address(dst), dst.nbytes, _address(src), src.nbytes, _address(offsets_bytes),
                                offsets_bytes.nbytes, size, np.int64(base)):
        return
    lanes, per_block = REPEAT_BYTES // size, BLOCK_BYTES // size
    nrep = repeats_of(counter, low, repeat_times, lanes)
    if tracing(ctx):
        d, s, t = address(dst), address(src), address(offsets_bytes)
        trace_event(ctx, EVENT_GATHER, DIR_LOCAL, nrep * REPEAT_BYTES, nrep * lanes, d, d + dst.nbytes, s,
                    s + src.nbytes, t, t + nrep * lanes * 4)
    for r in range(nrep):
        for k in range(lanes):
            i = r * lanes + k
            if i < offsets_bytes.size and lane_on(counter, high, low, lanes, r, k):
                j = base + np.int64(offsets_bytes[i]) // size
                at = r * d_rep * per_block + k
                if 0 <= j < src.size and at < dst.size:
                    dst[at] = src[j]
