"""SyncAll: the one barrier across the cores of a launch (Ascend C ``SyncAll``).

Cores run in no order within a launch, so a kernel that hands data from one core to another
through GM (partial sums added by one core, say) must put a ``SyncAll`` between the write and
the read.  On the device every core of the launch must be resident for that, which is why
``SyncAll`` requires ``block_dim`` <= the core count; here a launch of a kernel that calls
:func:`sync_all` runs every lane on a host thread of its own for the same reason (see
``launch.py``), and the barrier below really holds each lane until all have reached it.

A checked launch runs those lanes one at a time in index order (a token passed from lane to
lane) so the shadow maps need no atomics and the first violation is always the same: a lane
runs until its ``SyncAll`` and hands the token on; the lane completing the barrier tells
checked mode that everything before it is ordered with everything after (``end_phase``).

The barrier is an int64 array shared by the lanes, reached through its address in each lane's
state row (``STATE_BARRIER``; 0 when the launch is not resident).  A lane that ends while others
wait at a barrier (on the device: a hang) releases them with an error instead.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ..._numba_compat.extending import overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ...checked.gm_ownership import end_phase
from ..lane import ERR_SYNC_ABANDONED, ERR_SYNC_NOT_RESIDENT, STATE_BARRIER, CheckedLane, _load_i64
from .context import lane_error
from .llvm import atomic_add_i64, atomic_load_i64, atomic_store_i64, atomic_swap_i64, yield_thread

__all__ = ["sync_all", "BARRIER_SLOTS", "barrier_finish", "barrier_wait_turn", "barrier_lanes"]

# The barrier's slots: a spin lock, the lane count, lanes arrived at the current barrier, lanes
# ended, barriers completed, the lanes a barrier was abandoned for (0: none was), the lane holding
# the token (checked launches), then one slot per lane: 1 once it ended.
B_LOCK, B_LANES, B_ARRIVED, B_ENDED, B_GENERATION, B_ABANDONED, B_TURN, B_DONE = range(8)
BARRIER_SLOTS = B_DONE


def barrier_lanes(block_dim: int):
    """A barrier for ``block_dim`` lanes: the array the launch keeps and points every lane's
    ``STATE_BARRIER`` at."""
    barrier = np.zeros(BARRIER_SLOTS + block_dim, np.int64)
    barrier[B_LANES] = block_dim
    return barrier


@jit(always_inline=True)
def _lock(b):
    while atomic_swap_i64(b, B_LOCK, 1) != 0:
        yield_thread()


@jit(always_inline=True)
def _unlock(b):
    atomic_store_i64(b, B_LOCK, 0)


@jit
def _release_if_complete(b):
    """Under the lock: if every lane has arrived or ended, the barrier opens (abandoned if some
    ended: they will never arrive).  Returns whether it opened."""
    arrived = atomic_load_i64(b, B_ARRIVED)
    if arrived == 0 or arrived + atomic_load_i64(b, B_ENDED) != atomic_load_i64(b, B_LANES):
        return False
    if atomic_load_i64(b, B_ENDED) > 0:
        atomic_store_i64(b, B_ABANDONED, atomic_load_i64(b, B_ENDED))  # lanes it waited for in vain
    atomic_store_i64(b, B_ARRIVED, 0)
    atomic_add_i64(b, B_GENERATION, 1)
    return True


@jit
def _arrive(b):
    """Threads running at once: arrive and wait until every lane has (or the barrier is
    abandoned).  Returns False when it was abandoned."""
    if atomic_load_i64(b, B_ABANDONED) != 0:
        return False
    _lock(b)
    generation = atomic_load_i64(b, B_GENERATION)
    atomic_add_i64(b, B_ARRIVED, 1)
    _release_if_complete(b)
    _unlock(b)
    while atomic_load_i64(b, B_GENERATION) == generation:
        yield_thread()
    return atomic_load_i64(b, B_ABANDONED) == 0


@jit
def _pass_turn(b, lane):
    """Hand the token to the next lane after ``lane`` (in index order, wrapping) that has not
    ended, or to nobody (-1) when all have."""
    n = atomic_load_i64(b, B_LANES)
    for step in range(1, n + 1):
        j = (lane + step) % n
        if atomic_load_i64(b, B_DONE + j) == 0:
            atomic_store_i64(b, B_TURN, j)
            return
    atomic_store_i64(b, B_TURN, -1)


@jit
def barrier_wait_turn(b, lane):
    """Checked launches: wait until ``lane`` holds the token."""
    while atomic_load_i64(b, B_TURN) != lane:
        yield_thread()


@jit
def barrier_finish(b, lane, sequential):
    """Lane ``lane`` ended: a barrier the others wait at can no longer complete without it; a
    checked (``sequential``) launch hands the token on."""
    _lock(b)
    atomic_store_i64(b, B_DONE + lane, 1)
    atomic_add_i64(b, B_ENDED, 1)
    _release_if_complete(b)
    _unlock(b)
    if sequential:
        _pass_turn(b, lane)


def _sync_lanes(ctx, b):
    raise NotImplementedError  # compiled only


@overload(_sync_lanes, jit_options=OVERLOAD_OPTIONS)
def _ov_sync_lanes(ctx, b):
    if isinstance(ctx, types.NamedTuple) and ctx.instance_class is CheckedLane:
        def one_at_a_time(ctx, b):
            # This lane holds the token: arrive, hand it on, and wait for it to come back (after
            # the last lane arrived, or after the barrier was abandoned).
            if atomic_load_i64(b, B_ABANDONED) != 0:
                return False
            generation = atomic_load_i64(b, B_GENERATION)
            atomic_add_i64(b, B_ARRIVED, 1)
            if _release_if_complete(b):
                end_phase(ctx)
            _pass_turn(b, ctx.block_idx)
            barrier_wait_turn(b, ctx.block_idx)
            return atomic_load_i64(b, B_GENERATION) != generation and atomic_load_i64(b, B_ABANDONED) == 0
        return one_at_a_time
    return lambda ctx, b: _arrive(b)


@jit
def sync_all(ctx):
    """SyncAll(): wait until every lane of the launch has reached this call.  GM bytes a lane
    wrote before it may be read by any lane after it (checked mode treats the two sides as
    ordered).  Every lane must call it the same number of times; the launch needs
    ``block_dim`` <= the platform's vector core count (all lanes resident, as on the device)."""
    b = _load_i64(ctx.state_addr, STATE_BARRIER)
    if b == 0:
        lane_error(ctx, ERR_SYNC_NOT_RESIDENT, 0)
        return
    if not _sync_lanes(ctx, b):
        lane_error(ctx, ERR_SYNC_ABANDONED, atomic_load_i64(b, B_ABANDONED))
