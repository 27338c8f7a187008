"""AUTO-mode rules a lane's run shows and its source cannot (seed 003; the source's rules are
:mod:`ascend_numba.lint`'s): ``redundant-load`` and ``tile-rebound``.

Checked launches of a ``mode="auto"`` kernel set ``STATE_AUTO`` in each lane's state row; every
function here does nothing otherwise.  The third part of the UB shadow (see :mod:`.ub_shadow`)
holds, per UB byte, the lane's epoch where a GM -> UB copy brought the byte in and no primitive
has read its 32-byte block since: a primitive overwriting such a byte is a redundant load.
"""

from __future__ import annotations

import numpy as np
from numba import carray

from .._numba_compat.jit import jit
from ..kernels.lane import STATE_AUTO, STATE_MOVED, STATE_PRIMITIVE, _load_i64, _store_i64, _voidptr
from ..kernels.pipe_table import PIPE_V, T_PIPE_NOW, pipe_on, t_store
from . import report
from .rules import OPERAND_DST

__all__ = ["auto_mode", "enter", "moved_data", "mark_loaded", "auto_read", "auto_overwrite", "LOADED_PART"]

LOADED_PART = 2  # the UB shadow's part holding the loads not yet read (see .ub_shadow)


@jit(always_inline=True)
def auto_mode(ctx):
    return _load_i64(ctx.state_addr, STATE_AUTO) != 0


@jit(always_inline=True)
def enter(ctx, prim):
    """A rule function starts: the lane moves data with ``prim`` (for tile-rebound) and it is the
    primitive a redundant-load or a pipeline rule found while marking its writes is reported
    against; its accesses are the vector unit's unless it says otherwise (``pipeline.set_pipe``)."""
    _store_i64(ctx.state_addr, STATE_PRIMITIVE, prim)
    if pipe_on(ctx):
        t_store(ctx, T_PIPE_NOW, PIPE_V)


@jit(always_inline=True)
def moved_data(ctx):
    _store_i64(ctx.state_addr, STATE_MOVED, 1)


@jit(always_inline=True)
def tile_rebound(ctx, prim, end):
    """An ``alloc_buffer`` ending at UB byte ``end``: not after the lane's first data movement (3.3)."""
    if auto_mode(ctx) and _load_i64(ctx.state_addr, STATE_MOVED) != 0:
        report.tile_rebound(ctx, prim, OPERAND_DST, end=end)
        return False
    return True


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def mark_loaded(ctx, start, n):
    """UB bytes a GM -> UB copy brought in, not yet read by any primitive."""
    if auto_mode(ctx):
        marks = carray(_voidptr(ctx.shadow_addr + LOADED_PART * ctx.ub_size + start), n, np.uint8)
        epoch = np.uint8(ctx.epoch)
        for i in range(n):
            marks[i] = epoch


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def auto_read(ctx, start, n):
    """A primitive reads UB bytes: the loads of the 32-byte blocks holding them were used."""
    if not auto_mode(ctx) or n <= 0:
        return
    bb = ctx.block_bytes
    lo = start // bb * bb
    hi = min((start + n + bb - 1) // bb * bb, ctx.ub_size)
    marks = carray(_voidptr(ctx.shadow_addr + LOADED_PART * ctx.ub_size + lo), hi - lo, np.uint8)
    for i in range(marks.size):
        marks[i] = 0


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def auto_overwrite(ctx, start, n):
    """A primitive writes UB bytes: a byte loaded from GM and never read is a redundant load."""
    if not auto_mode(ctx) or n <= 0:
        return
    marks = carray(_voidptr(ctx.shadow_addr + LOADED_PART * ctx.ub_size + start), n, np.uint8)
    epoch = np.uint8(ctx.epoch)
    hit = False
    for i in range(n):
        hit |= marks[i] == epoch
    if hit:
        for i in range(n):
            if marks[i] == epoch:
                report.redundant_load(ctx, _load_i64(ctx.state_addr, STATE_PRIMITIVE), OPERAND_DST,
                                      ub_offset=start + i, start=start, end=start + n)
                return
