"""The lane context: which lane this is, where a tensor lives, and what the lane records.

Every primitive takes the lane context ``ctx`` first, as an Ascend C kernel always has its core
at hand (``GetBlockIdx``, ``GetBlockNum``).  The recording hooks (:func:`trace_work`,
:func:`trace_event`) dispatch on the type of ``ctx``: a :class:`TracedLane` or
:class:`CheckedLane` counts and logs, a plain :class:`Lane` compiles them to nothing.
"""

from __future__ import annotations

import numpy as np
from numba import types

# The trace row layout and event codes live with their host-side reader.
from ...host.trace import (
    COPY_EVENTS, DIR_IN, DIR_LOCAL, DIR_OUT, DIR_SCALAR, EVENT_FIELDS, TRACE_BYTES_IN, TRACE_BYTES_VECTOR,
    TRACE_CALLS_IN, TRACE_CALLS_SCALAR, TRACE_CALLS_VECTOR, TRACE_EVENT_COUNT, TRACE_EVENTS, TRACE_UB_BASE,
    TRACE_WORK,
)
from ..._numba_compat.extending import overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import (
    STATE_ERROR, STATE_ERROR_DETAIL, CheckedLane, TracedLane, _address, _load_i64, _store_i64,
)

__all__ = ["in_ub", "contiguous_lane_range", "big_small_lane_range", "lane_error", "count_event", "trace_work",
           "trace_event", "tracing", "copy_direction", "address", "rows_inside"]


@jit(always_inline=True)
def address(tensor):
    """A tensor's first byte as an int64 (what a trace event records)."""
    return np.int64(_address(tensor))


@jit(always_inline=True)
def rows_inside(off, count, pitch, length, size):
    """Whether ``count`` rows of ``length`` units, ``pitch`` apart from unit ``off``, lie within
    ``size`` units: tested in forms that cannot overflow, as offsets or pitches near 2^63 would
    wrap a sum or a product."""
    if off < 0 or pitch < 0 or length < 0 or off > size or length > size - off:
        return False
    return count <= 1 or pitch <= (size - off - length) // (count - 1)


@jit(always_inline=True)
def in_ub(ctx, tensor):
    """True when ``tensor`` is a view of this lane's UB (a local tensor), False for GM."""
    p = _address(tensor)
    return ctx.ub_addr <= p and p < ctx.ub_addr + ctx.ub_size


@jit(always_inline=True)
def contiguous_lane_range(ctx, total):
    """This lane's tasks ``[start, end)``: ``per = ceil(total / block_num)``; lanes past the end get none."""
    per = (total + ctx.block_num - 1) // ctx.block_num
    start = min(ctx.block_idx * per, total)
    return start, min(start + per, total)


@jit(always_inline=True)
def big_small_lane_range(ctx, big_cores, small_blocks, block_elems, total):
    """This lane's elements ``[start, end)`` when the first ``big_cores`` lanes take one block more."""
    i = ctx.block_idx
    blocks = small_blocks + (1 if i < big_cores else 0)
    start = (i * small_blocks + min(i, big_cores)) * block_elems
    return start, min(start + blocks * block_elems, total)


@jit
def lane_error(ctx, code, detail):
    """Record the lane's first error; the launch raises KernelError with it afterwards."""
    if _load_i64(ctx.state_addr, STATE_ERROR) == 0:
        _store_i64(ctx.state_addr, STATE_ERROR, code)
        _store_i64(ctx.state_addr, STATE_ERROR_DETAIL, detail)


@jit(always_inline=True)
def count_event(ctx, slot):
    """Add one to a counter of the lane's state row."""
    _store_i64(ctx.state_addr, slot, _load_i64(ctx.state_addr, slot) + 1)


def trace_event(ctx, kind, direction, nbytes, count, dst_lo, dst_hi, src_lo, src_hi, src1_lo, src1_hi):
    """Log one primitive call (``host.trace``'s event fields: the address ranges it wrote and read);
    free unless tracing."""
    raise NotImplementedError  # compiled only


def tracing(ctx):
    """True in a lane that logs its calls (a compile-time constant: the logging code folds away
    in a plain lane, arguments and all)."""
    raise NotImplementedError  # compiled only


def _logs(ctx):
    return True


def _does_not_log(ctx):
    return False


@overload(tracing, jit_options=OVERLOAD_OPTIONS)
def _ov_tracing(ctx):
    return _logs if _is_traced(ctx) else _does_not_log


def trace_work(ctx, items):
    """Count ``items`` units of work (rows, tiles, elements) for the lane; free unless tracing."""
    raise NotImplementedError  # compiled only


def _is_traced(ctx_type) -> bool:
    return isinstance(ctx_type, types.NamedTuple) and ctx_type.instance_class in (TracedLane, CheckedLane)


# Hooks take scalars only: an array argument would cost reference counting on every call.
@overload(trace_event, jit_options=OVERLOAD_OPTIONS)
def _ov_trace_event(ctx, kind, direction, nbytes, count, dst_lo, dst_hi, src_lo, src_hi, src1_lo, src1_hi):
    if not _is_traced(ctx):
        return lambda ctx, kind, direction, nbytes, count, dst_lo, dst_hi, src_lo, src_hi, src1_lo, src1_hi: None

    def record(ctx, kind, direction, nbytes, count, dst_lo, dst_hi, src_lo, src_hi, src1_lo, src1_hi):
        base = ctx.trace_addr
        if kind < COPY_EVENTS:
            _store_i64(base, kind, _load_i64(base, kind) + 1)
        if direction <= DIR_LOCAL:
            calls, nbytes_at = TRACE_CALLS_IN + direction, TRACE_BYTES_IN + direction
        elif direction == DIR_SCALAR:
            calls, nbytes_at = TRACE_CALLS_SCALAR, -1
        else:
            calls, nbytes_at = TRACE_CALLS_VECTOR, TRACE_BYTES_VECTOR
        _store_i64(base, calls, _load_i64(base, calls) + 1)
        if nbytes_at >= 0:
            _store_i64(base, nbytes_at, _load_i64(base, nbytes_at) + nbytes)
        _store_i64(base, TRACE_UB_BASE, np.int64(ctx.ub_addr))
        n = _load_i64(base, TRACE_EVENT_COUNT)
        if n < ctx.trace_capacity:
            at = TRACE_EVENTS + EVENT_FIELDS * n
            _store_i64(base, at, kind)
            _store_i64(base, at + 1, direction)
            _store_i64(base, at + 2, nbytes)
            _store_i64(base, at + 3, count)
            _store_i64(base, at + 4, np.int64(dst_lo))
            _store_i64(base, at + 5, np.int64(dst_hi))
            _store_i64(base, at + 6, np.int64(src_lo))
            _store_i64(base, at + 7, np.int64(src_hi))
            _store_i64(base, at + 8, np.int64(src1_lo))
            _store_i64(base, at + 9, np.int64(src1_hi))
        _store_i64(base, TRACE_EVENT_COUNT, n + 1)
    return record


@overload(trace_work, jit_options=OVERLOAD_OPTIONS)
def _ov_trace_work(ctx, items):
    if not _is_traced(ctx):
        return lambda ctx, items: None

    def record(ctx, items):
        _store_i64(ctx.trace_addr, TRACE_WORK, _load_i64(ctx.trace_addr, TRACE_WORK) + items)
    return record


@jit(always_inline=True)
def copy_direction(ctx, dst, src):
    src_local = in_ub(ctx, src)
    if src_local and in_ub(ctx, dst):
        return DIR_LOCAL
    return DIR_OUT if src_local else DIR_IN
