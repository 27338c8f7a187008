"""MTE2 running ahead: ``preload`` announces the next tile's CopyIn, vector ops fetch it.

On the device a double-buffered kernel's CopyIn of the next tile runs while the vector unit
computes this one; a lane runs its stages one after another, so it announces the next tile
(preload) and its vector ops fetch it into the CPU cache a share at a time, overlapping the
fetch with the compute as the device overlaps the two pipes.  A hint: it changes no value.
"""

from __future__ import annotations

import numpy as np

from ..._numba_compat.jit import jit
from ..lane import (
    PRELOAD_REGIONS, STATE_PRELOAD, STATE_PRELOAD_PENDING, _address, _load_i64, _store_i64,
)
from .llvm import prefetch_line

__all__ = ["preload", "advance_preload"]


@jit(always_inline=True)
def preload(ctx, src, src_off, count, spread):
    """Announce that the lane will soon ``DataCopy`` ``count`` elements of GM tensor ``src`` from
    ``src_off`` (the next tile of a double-buffered CopyIn).  Each of the lane's next ``spread``
    vector ops then brings a ``1/spread`` share of those bytes into the CPU cache while it
    computes.  Changes no value; the part outside ``src`` is ignored, and with PRELOAD_REGIONS
    regions still being fetched the hint is dropped."""
    if src_off < 0 or count <= 0 or src_off >= src.size:
        return
    base = ctx.state_addr
    nbytes = min(count, src.size - src_off) * src.itemsize
    for r in range(PRELOAD_REGIONS):
        at = STATE_PRELOAD + 3 * r
        if _load_i64(base, at + 1) <= 0:
            _store_i64(base, at, np.int64(_address(src)) + src_off * src.itemsize)
            _store_i64(base, at + 1, nbytes)
            _store_i64(base, at + 2, max(nbytes // max(spread, 1), 64))
            _store_i64(base, STATE_PRELOAD_PENDING, _load_i64(base, STATE_PRELOAD_PENDING) + 1)
            return


@jit
def _fetch_preloaded(base):
    """Prefetch one share of every region still being fetched."""
    for r in range(PRELOAD_REGIONS):
        at = STATE_PRELOAD + 3 * r
        left = _load_i64(base, at + 1)
        if left <= 0:
            continue
        addr = _load_i64(base, at)
        take = min(left, _load_i64(base, at + 2))
        for line in range(addr - addr % 64, addr + take, 64):
            prefetch_line(line)
        _store_i64(base, at, addr + take)
        _store_i64(base, at + 1, left - take)
        if take == left:
            _store_i64(base, STATE_PRELOAD_PENDING, _load_i64(base, STATE_PRELOAD_PENDING) - 1)


@jit(always_inline=True)
def advance_preload(ctx):
    # One load and a branch when nothing is announced: every vector op calls this.
    if _load_i64(ctx.state_addr, STATE_PRELOAD_PENDING) > 0:
        _fetch_preloaded(ctx.state_addr)
