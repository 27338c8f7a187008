"""SyncAll, the one barrier across the cores of a launch, and IBSet / IBWait, one core waiting for
another (Ascend C ``SyncAll``, ``IBSet``, ``IBWait``).

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
from ..lane import (
    ERR_IB_WAIT, ERR_SYNC_ABANDONED, ERR_SYNC_NOT_RESIDENT, STATE_BARRIER, CheckedLane, _address, _load_i64,
)
from .context import lane_error
from .llvm import atomic_add_i64, atomic_load_i64, atomic_store_i64, atomic_swap_i64, yield_thread

__all__ = ["sync_all", "ib_set", "ib_wait", "BARRIER_SLOTS", "barrier_finish", "barrier_wait_turn", "barrier_lanes"]

# The barrier's slots: a spin lock, the lane count, lanes arrived at the current barrier, lanes
# ended, barriers completed, the lanes a barrier was abandoned for (0: none was), the lane holding
# the token (checked launches), lanes waiting at an IBWait, IBSets so far, then one slot per lane:
# 1 once it ended.
B_LOCK, B_LANES, B_ARRIVED, B_ENDED, B_GENERATION, B_ABANDONED, B_TURN, B_IB_WAITING, B_IB_SETS, B_DONE = range(10)
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


# ---- IBSet / IBWait: one core waits for another's flag in GM ---------------------------------------------

@jit(always_inline=True)
def _ib_flag(ctx, gm_workspace, block_idx, event_id):
    """The barrier's slots and the int64 index of core ``block_idx``'s flag for ``event_id``: 32
    bytes a flag, event by event (the IBSet page's workspace: core count x 32 bytes x events, and
    more); -1 for the index after a lane error (lanes not resident, a flag past the workspace)."""
    b = _load_i64(ctx.state_addr, STATE_BARRIER)
    at = (event_id * ctx.block_num + block_idx) * 32
    if b == 0 or block_idx < 0 or block_idx >= ctx.block_num or event_id < 0 or at + 32 > gm_workspace.nbytes:
        lane_error(ctx, ERR_SYNC_NOT_RESIDENT if b == 0 else ERR_IB_WAIT, block_idx * 65536 + event_id)
        return b, -1
    return b, at // 8


@jit
def ib_set(ctx, gm_workspace, ub_workspace, block_idx, event_id):
    """IBSet: core ``block_idx``'s flag for ``event_id`` set to 1 in ``gm_workspace`` (an int32 GM
    tensor the host zeroed), for the IBWait on the same four arguments; ``ub_workspace`` is the
    device's staging tile (unused here).  Needs every lane resident, as SyncAll does."""
    b, k = _ib_flag(ctx, gm_workspace, block_idx, event_id)
    if k < 0:
        return
    atomic_store_i64(_address(gm_workspace), k, 1)
    atomic_add_i64(b, B_IB_SETS, 1)


@jit
def ib_wait(ctx, gm_workspace, ub_workspace, block_idx, event_id):
    """IBWait: wait until core ``block_idx`` has set its flag for ``event_id`` (IBSet).  What that core
    wrote before its IBSet may then be read (checked mode orders all lanes there, as at a SyncAll:
    it misses races the pairwise order would show, and reports none it would not).  A wait no lane
    can end (the awaited core ended without its IBSet, or every lane waits) is a lane error; on the
    device it hangs."""
    b, k = _ib_flag(ctx, gm_workspace, block_idx, event_id)
    if k < 0:
        return
    if not _ib_wait(ctx, b, _address(gm_workspace), k, block_idx):
        lane_error(ctx, ERR_IB_WAIT, block_idx * 65536 + event_id)
        raise RuntimeError("IBWait can never end")  # the lane stops here, as the device's core would hang


def _ib_wait(ctx, b, flag, k, block_idx):
    raise NotImplementedError  # compiled only


@jit(always_inline=True)
def _progress(b):
    """What changes when any lane gets on: IBSets, lanes ended, barriers completed."""
    return atomic_load_i64(b, B_IB_SETS) + atomic_load_i64(b, B_ENDED) + atomic_load_i64(b, B_GENERATION)


@overload(_ib_wait, jit_options=OVERLOAD_OPTIONS)
def _ov_ib_wait(ctx, b, flag, k, block_idx):
    if isinstance(ctx, types.NamedTuple) and ctx.instance_class is CheckedLane:
        def one_at_a_time(ctx, b, flag, k, block_idx):
            # This lane holds the token: while the flag is down, hand it on and wait for it back; a
            # round in which no lane set a flag, ended or completed a barrier is a deadlock.
            while atomic_load_i64(flag, k) != 1:
                if atomic_load_i64(b, B_DONE + block_idx) != 0:
                    return atomic_load_i64(flag, k) == 1
                progress = _progress(b)
                _pass_turn(b, ctx.block_idx)
                barrier_wait_turn(b, ctx.block_idx)
                if atomic_load_i64(flag, k) != 1 and progress == _progress(b):
                    return False
            end_phase(ctx)
            return True
        return one_at_a_time

    def spinning(ctx, b, flag, k, block_idx):
        atomic_add_i64(b, B_IB_WAITING, 1)
        ok = True
        while atomic_load_i64(flag, k) != 1:
            stuck = atomic_load_i64(b, B_IB_WAITING) + atomic_load_i64(b, B_ARRIVED) + atomic_load_i64(b, B_ENDED)
            if atomic_load_i64(b, B_DONE + block_idx) != 0 or stuck == atomic_load_i64(b, B_LANES):
                ok = atomic_load_i64(flag, k) == 1  # the awaited core ended, or every lane waits: a hang
                break
            yield_thread()
        atomic_add_i64(b, B_IB_WAITING, -1)
        return ok
    return spinning
