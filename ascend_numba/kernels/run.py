"""Running a launch: the lanes' state rows, the launcher a body's mode and residency ask for,
and the lane errors a launch raises (SPEC §3).  A checked launch's host side is
:func:`ascend_numba.checked.run.run_checked`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..checked.run import run_checked
from ..config import KERNEL_PRINT_WORDS, STREAM_BYTES, TRACE_CAPACITY
from ..host.errors import KernelError
from ..host.platform import Platform
from ..host.tpipe import pipe_error
from ..host.trace import LaunchTrace, trace_row_length
from ..memory import take_fresh
from .._numba_compat.call import raised_exception
from .interpret import raised
from .lane import (
    ERR_IB_WAIT, ERR_LANE_RAISED, ERR_PIPE, ERR_SYNC_ABANDONED, ERR_SYNC_NOT_RESIDENT, ERR_TMP_TOO_SMALL,
    ERR_UB_CAPACITY, LANE_STATE_SLOTS, MASK_START, STATE_BARRIER, STATE_ERROR, STATE_ERROR_DETAIL, STATE_EXCEPTION,
    STATE_MASK_HIGH, STATE_MASK_LOW, STATE_PRINT, STATE_STREAM,
)
from .launchers import launch_lanes, launcher, run_resident, run_resident_lane
from .pools import UB_POOL
from .primitives.debug import flush_prints
from .primitives.sync import barrier_lanes
from .threads import launch_threads, on_threads

if TYPE_CHECKING:
    from .launch import KernelBody

__all__ = ["PreparedLaunch", "run_launch", "raise_lane_error"]


class PreparedLaunch:
    """One plain (untraced, unchecked) launch with its lanes, tiling and kernel body fixed:
    calling it with the GM tensors costs little more than the lanes' work.  Ops keep one
    per problem, for harnesses that call them thousands of times on the same shapes."""

    __slots__ = ("body", "block_dim", "platform", "tiling", "gm_bytes", "state_rows")

    def __init__(self, body: "KernelBody", block_dim: int, platform: Platform, tiling: np.ndarray | None,
                 gm_bytes: int):
        self.body = body
        self.block_dim = block_dim
        self.platform = platform
        self.tiling = tiling
        self.gm_bytes = gm_bytes
        self.state_rows = _lane_state(block_dim, gm_bytes)  # each launch's start: copied, not rebuilt

    def __call__(self, gm_args: tuple) -> np.ndarray:
        """Run the lanes on ``gm_args`` (flat GM tensors and scalars); returns the state rows, or
        raises KernelError for the first failing lane."""
        take_fresh(gm_args)  # a buffer from an.empty is the kernel's from its first launch
        body = self.body
        if body.resident or body.prints:
            return run_launch(body, self.block_dim, self.platform, gm_args, self.tiling)
        state = self.state_rows.copy()
        threads = launch_threads(self.block_dim, self.gm_bytes)
        failed = on_threads(launch_lanes, self.block_dim, threads, UB_POOL.get(self.platform.ub_size),
                            self.platform.block_bytes, state, None, *body.bind(gm_args, self.tiling))
        if failed >= 0:
            raise_lane_error(state, self.platform, failed)
        return state


def _lane_state(block_dim: int, gm_bytes: int) -> np.ndarray:
    state = np.zeros((block_dim, LANE_STATE_SLOTS), np.int64)
    state[:, [STATE_MASK_HIGH, STATE_MASK_LOW]] = MASK_START
    if gm_bytes >= STREAM_BYTES:
        state[:, STATE_STREAM] = 1
    return state


def run_launch(body: "KernelBody", block_dim: int, platform: Platform, gm_args: tuple, tiling: np.ndarray | None,
               *, trace_name: str | None = None, trace_info: dict | None = None, arg_names: tuple = (),
               scratch: tuple = (), outputs: tuple = (), fresh: tuple = (), gm_padding: "bool | str" = False):
    """Run ``body`` on ``block_dim`` lanes; raise KernelError for the first failing lane, else
    return the state rows -- or, when ``trace_name`` is given, a LaunchTrace.  A checked body
    raises KernelCheckError (see :func:`ascend_numba.checked.run.run_checked`: ``arg_names``,
    ``scratch``, ``outputs``, ``fresh`` and ``gm_padding`` are its)."""
    if body.interpreted and tiling is not None:
        tiling = tiling.view(np.recarray)  # Python reads the record's fields as attributes
    call = body.bind(gm_args, tiling)
    gm_bytes = sum(a.nbytes for a in gm_args if isinstance(a, np.ndarray))
    state = _lane_state(block_dim, gm_bytes)
    prints = None
    if body.prints:
        prints = np.zeros((block_dim, KERNEL_PRINT_WORDS), np.int64)
        state[:, STATE_PRINT] = prints.ctypes.data + np.arange(block_dim, dtype=np.int64) * prints.strides[0]
    try:
        return _run_lanes(body, block_dim, platform, gm_args, call, state, gm_bytes, trace_name,
                          trace_info, (arg_names, scratch, outputs, fresh, gm_padding))
    finally:
        flush_prints(prints)  # what the lanes printed, lane by lane, also when the launch failed


def _run_lanes(body, block_dim, platform, gm_args, call, state, gm_bytes, trace_name, trace_info,
               checked_args):
    """:func:`run_launch`'s lanes, with the state rows made; ``call``: the body bound to the
    arguments (``KernelBody.bind``)."""
    capacity = TRACE_CAPACITY if trace_name else 0
    trace = np.zeros((block_dim, trace_row_length(capacity)), np.int64) if body.mode != "plain" else None
    barrier = None
    if body.resident:
        _check_resident(block_dim, platform)
        barrier = barrier_lanes(block_dim)
        state[:, STATE_BARRIER] = barrier.ctypes.data
        ub = UB_POOL.resident(platform.ub_size, block_dim)
    else:
        ub = UB_POOL.get(platform.ub_size)
        if body.interpreted:
            ub = ub[:1]  # one host thread: the lanes in lane order
    if body.mode == "checked":
        run_checked(body, block_dim, platform, gm_args, call, state, trace, ub, barrier, *checked_args)
    elif body.resident:
        run_resident(launcher(body, run_resident_lane), block_dim, ub,
                     (platform.block_bytes, state, trace, *call, barrier))
    else:
        threads = 1 if body.interpreted else launch_threads(block_dim, gm_bytes)
        on_threads(launcher(body, launch_lanes), block_dim, threads, ub, platform.block_bytes, state, trace, *call)
    raise_lane_error(state, platform)
    if trace_name:
        return LaunchTrace(trace_name, platform, trace, state, dict(trace_info or {}))
    return state


def _check_resident(block_dim: int, platform: Platform):
    if block_dim > platform.aiv_num:
        raise ValueError(f"block_dim {block_dim} exceeds the {platform.aiv_num} vector cores of {platform.name}: "
                         "a kernel that calls sync_all (SyncAll) needs every lane resident at once")


def raise_lane_error(state: np.ndarray, platform: Platform, lane: int | None = None):
    """Raise KernelError for ``lane`` (default: the first lane whose state row holds an error;
    none: return)."""
    if lane is None:
        errors = state[:, STATE_ERROR]
        if not np.count_nonzero(errors):
            return
        lane = int(np.argmax(errors != 0))
    if state[lane, STATE_ERROR] == ERR_UB_CAPACITY:
        raise KernelError(
            f"lane {lane}: UB allocation of {state[lane, STATE_ERROR_DETAIL]} bytes exceeds "
            f"ub_size {platform.ub_size} ({platform.name})")
    if state[lane, STATE_ERROR] == ERR_TMP_TOO_SMALL:
        raise KernelError(f"lane {lane}: TTRANS temporary tile too small, it needs "
                          f"{state[lane, STATE_ERROR_DETAIL]} elements")
    if state[lane, STATE_ERROR] == ERR_SYNC_NOT_RESIDENT:
        raise KernelError(f"lane {lane}: sync_all (SyncAll) in a launch whose lanes are not all resident: call it "
                          "in the kernel function or a jitted helper it names (the launch looks for it there), "
                          "or launch a kernel declared @kernel(resident=True)")
    if state[lane, STATE_ERROR] == ERR_SYNC_ABANDONED:
        raise KernelError(f"lane {lane}: sync_all (SyncAll) abandoned: {state[lane, STATE_ERROR_DETAIL]} lane(s) "
                          "ended without reaching it (on the device the launch hangs); every lane must call "
                          "SyncAll the same number of times")
    if state[lane, STATE_ERROR] == ERR_IB_WAIT:
        core, event = divmod(int(state[lane, STATE_ERROR_DETAIL]), 65536)
        raise KernelError(f"lane {lane}: IBWait for core {core}'s event {event} can never end (that core ended "
                          "without its IBSet, or every lane waits; the device hangs), or its flag lies past the "
                          "workspace (core count x 32 bytes a flag, event by event)")
    if state[lane, STATE_ERROR] == ERR_PIPE:
        raise KernelError(f"lane {lane}: {pipe_error(int(state[lane, STATE_ERROR_DETAIL]))}")
    if state[lane, STATE_ERROR] == ERR_LANE_RAISED:
        key = int(state[lane, STATE_EXCEPTION])
        exc = raised(key) if key < 0 else raised_exception(key)
        if exc is None:
            raise KernelError(f"lane {lane}: the kernel raised an exception (status {state[lane, STATE_ERROR_DETAIL]})")
        message = str(exc)
        raise KernelError(f"lane {lane}: the kernel raised {type(exc).__name__}" + (f": {message}" if message else "")) \
            from exc
    raise KernelError(f"lane {lane}: error code {state[lane, STATE_ERROR]}")
