"""The launchers: compiled code that runs a kernel body on its lanes (plain, traced, checked,
resident), shared by every kernel.

A launcher builds each lane's context (:mod:`.lane`) and calls the body's entry through its
address (:mod:`.entry`), on the launch's payload.  Calling through an address keeps the body's
code out of the launcher's LLVM module: a direct call would link the whole kernel in and optimize
and generate it a second time (measured: 5.3 of a Tile kernel's 17.8 CPU seconds, before the other
savings).  The payload and the addresses are the same types for every kernel, so each launcher
is compiled once per kind of lane and cached like everything else.  In interpret mode they run as
Python (:func:`launcher`).
"""

from __future__ import annotations

import threading

import numba
import numpy as np
from numba import get_thread_id, prange, types

from ..checked.pipeline import check_pipe_end
from ..checked.rules import CHECK_RULE
from ..host.trace import EVENT_FIELDS, TRACE_EVENTS
from .._numba_compat.extending import overload
from .._numba_compat.jit import OVERLOAD_OPTIONS, jit
from .entry import call_entry
from .interpret import python_function
from .lane import ERR_LANE_RAISED, PIPE_TABLE_BYTES, STATE_ERROR, STATE_ERROR_DETAIL, STATE_EXCEPTION, \
    CheckedLane, Lane, TracedLane, _address
from .primitives.sync import barrier_finish, barrier_wait_turn

__all__ = ["launch_lanes", "launch_lanes_checked", "run_resident_lane", "run_resident_lane_checked", "run_resident",
           "launcher", "body_signature"]


@jit(always_inline=True)
def _ub_size(ub):
    # A UB row ends with the lane's pipe table (see lane.PIPE_TABLE_BYTES): not UB.
    return np.int64(ub.size - PIPE_TABLE_BYTES)


def _make_lane(i, block_dim, ub, block_bytes, state, trace):
    raise NotImplementedError  # compiled only


@overload(_make_lane, jit_options=OVERLOAD_OPTIONS)
def _ov_make_lane(i, block_dim, ub, block_bytes, state, trace):
    # The plain launcher passes trace=None; a traced one passes the trace rows.
    if isinstance(trace, types.NoneType):
        def plain(i, block_dim, ub, block_bytes, state, trace):
            return Lane(np.int64(i), np.int64(block_dim), _address(ub), _ub_size(ub), np.int64(block_bytes),
                        _address(state))
        return plain

    def traced(i, block_dim, ub, block_bytes, state, trace):
        row = trace[i]
        return TracedLane(np.int64(i), np.int64(block_dim), _address(ub), _ub_size(ub),
                          np.int64(block_bytes), _address(state), _address(row),
                          np.int64((row.size - TRACE_EVENTS) // EVENT_FIELDS))
    return traced


@jit
def _make_checked_lane(i, block_dim, ub, block_bytes, state, trace, check, shadow, epoch, regions):
    # shadow: this lane's UB shadow (see checked.ub_shadow); regions: the GM region table
    # (checked.regions) and the rule function table (checked.dispatch).
    row = trace[i]
    table, rules = regions
    return CheckedLane(np.int64(i), np.int64(block_dim), _address(ub), _ub_size(ub), np.int64(block_bytes),
                       _address(state), _address(row), np.int64((row.size - TRACE_EVENTS) // EVENT_FIELDS),
                       _address(check[i]), _address(shadow), np.int64(epoch), _address(table),
                       np.int64(table.shape[0]), _address(rules))


def _canonical(t):
    # Read-only and unaligned arrays have the same data model: one body serves them all.
    if isinstance(t, types.Array):
        return types.Array(t.dtype, t.ndim, t.layout)
    return t


def body_signature(ctx, args, tiling) -> tuple:
    """The argument types a kernel body is compiled for: its context, the GM tensors and
    scalars (``args``, a tuple type), and the tiling record unless ``tiling`` is none."""
    tail = () if isinstance(tiling, types.NoneType) else (tiling,)
    return (ctx, *(_canonical(t) for t in args.types), *tail)


@jit
def _interleaved_lane(k, per_thread, threads):
    # prange hands each host thread a contiguous run of k; mapping run position j of thread t
    # to lane j * threads + t spreads lanes round-robin, so the idle trailing lanes of a split
    # do not leave one thread with all the work.  Results never depend on this mapping.
    return (k % per_thread) * threads + k // per_thread


@jit
def _lane_raised(state_row, result):
    status, exception = result
    if status != 0 and state_row[STATE_ERROR] == 0:
        state_row[STATE_ERROR] = ERR_LANE_RAISED
        state_row[STATE_ERROR_DETAIL] = status
        state_row[STATE_EXCEPTION] = exception


@jit(python=True, parallel=True)
def launch_lanes(block_dim, threads, ub_pool, block_bytes, state, trace, payload, entry, body):
    """Run lanes 0..block_dim-1 on ``threads`` host threads (``kernels.threads`` chooses, and sets
    Numba's count to it), each lane on the UB of the thread running it: one thread runs them in
    order on the calling thread, with no parallel region.  Returns the first lane that failed
    (its state row holds the error), or -1."""
    if threads <= 1:
        for i in range(block_dim):
            ctx = _make_lane(i, block_dim, ub_pool[0], block_bytes, state[i], trace)
            _lane_raised(state[i], call_entry(entry, ctx, payload, body))
        return _first_failed(state)
    per_thread = (block_dim + threads - 1) // threads
    for k in prange(per_thread * threads):
        i = _interleaved_lane(k, per_thread, threads)
        if i < block_dim:
            ctx = _make_lane(i, block_dim, ub_pool[get_thread_id()], block_bytes, state[i], trace)
            _lane_raised(state[i], call_entry(entry, ctx, payload, body))
    return _first_failed(state)


@jit
def _first_failed(state):
    # Here rather than in NumPy afterwards: a launch of a few elements is mostly such overheads.
    for i in range(state.shape[0]):
        if state[i, STATE_ERROR] != 0:
            return i
    return -1


# Checked launches run the lanes one after another on one UB: the owner maps need no atomics,
# the first violation is always the same one, and the launch stops at the lane that found it.

@jit(python=True)
def launch_lanes_checked(block_dim, ub_pool, block_bytes, state, trace, check, shadow, first_epoch, regions, payload,
                         entry, body):
    """Run lanes 0..block_dim-1 one after another, stopping at the first that broke a rule;
    returns how many ran."""
    for i in range(block_dim):
        # Each lane marks the shadow with its own epoch, so what earlier lanes (of this launch or
        # an earlier one: the shadow is pooled) wrote reads as unwritten; the shadow is cleared
        # every 255 lanes.
        epoch = (first_epoch + i) % 255 + 1
        if epoch == 1:
            shadow[:] = 0
        ctx = _make_checked_lane(i, block_dim, ub_pool[0], block_bytes, state[i], trace, check, shadow, epoch,
                                 regions)
        _lane_raised(state[i], call_entry(entry, ctx, payload, body))
        check_pipe_end(ctx)
        if check[i, CHECK_RULE] != 0 or state[i, STATE_ERROR] != 0:
            return i + 1
    return block_dim


# A kernel that calls sync_all runs every lane on a host thread of its own (all resident, as
# SyncAll needs on the device), each with its own UB; the threads run these without the GIL.

@jit(python=True, nogil=True)
def run_resident_lane(i, block_dim, ub, block_bytes, state, trace, payload, entry, body, barrier):
    ctx = _make_lane(i, block_dim, ub, block_bytes, state[i], trace)
    _lane_raised(state[i], call_entry(entry, ctx, payload, body))
    barrier_finish(_address(barrier), i, False)


@jit(python=True, nogil=True)
def run_resident_lane_checked(i, block_dim, ub, block_bytes, state, trace, check, shadow, regions, payload, entry,
                              body, barrier):
    # One lane at a time, in index order from barrier to barrier (see primitives.sync).
    barrier_wait_turn(_address(barrier), i)
    ctx = _make_checked_lane(i, block_dim, ub, block_bytes, state[i], trace, check, shadow, 1, regions)
    _lane_raised(state[i], call_entry(entry, ctx, payload, body))
    check_pipe_end(ctx)
    barrier_finish(_address(barrier), i, True)


def run_resident(lane_launcher, block_dim: int, ub_rows: np.ndarray, lane_args, shadow=None):
    """Run ``lane_launcher(i, block_dim, ub_rows[i], *lane_args)`` (``shadow[i]`` after the first
    three of ``lane_args`` in checked launches) on ``block_dim`` threads at once."""
    def lane_call(i):
        if shadow is None:
            return (i, block_dim, ub_rows[i], *lane_args)
        return (i, block_dim, ub_rows[i], *lane_args[:4], shadow[i], *lane_args[4:])

    if hasattr(lane_launcher, "compile"):  # interpret mode's launchers are Python
        lane_launcher.compile(tuple(numba.typeof(a) for a in lane_call(0)))  # once, not on every thread
    threads = [threading.Thread(target=lane_launcher, args=lane_call(i), daemon=True) for i in range(block_dim)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def launcher(body, compiled):
    """A launcher for ``body``: ``compiled`` itself, or its Python in interpret mode."""
    return python_function(compiled.py_func) if body.interpreted else compiled
