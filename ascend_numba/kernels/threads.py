"""How many host threads a launch's lanes run on (results never depend on it: SPEC §3).

A plain or traced launch runs its lanes on :func:`launch_threads` threads:

* 1, the calling thread alone, with no parallel region, when the launch moves less than
  :data:`~ascend_numba.config.SERIAL_LAUNCH_BYTES` of GM data.  A parallel region waits for
  every thread of its team: when the machine's CPUs are busy with other work (a harness under
  ``pytest -n auto``, goldens beside a training job), a descheduled worker costs a scheduler time
  slice, 8 ms on every call of a launch that takes 0.16 ms quiet.  Below the threshold a second
  thread saves less than that risk costs, unless nothing else runs there: launches of at least
  :data:`~ascend_numba.config.IDLE_PARALLEL_BYTES` go parallel when :func:`others_idle` says
  the CPUs were free of other processes' work over the last sample;
* otherwise ``min(threads(), block_dim)``, Numba's thread count set to that for the launch
  (:func:`on_threads`).

:func:`threads` is the user's choice (:func:`set_threads`, ``ASCEND_NUMBA_THREADS``) or else the
CPUs this process may use: its affinity mask, its cgroup's CPU quota and, in a pytest-xdist
worker, its share of them (``PYTEST_XDIST_WORKER_COUNT`` workers split the CPUs), never more
than Numba's pool (``NUMBA_NUM_THREADS``).  Under ``pytest -n auto`` every worker therefore runs
its lanes on its own thread and no launch waits for another CPU.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time

import numba

from ..config import (
    IDLE_OTHERS_CPUS, IDLE_PARALLEL_BYTES, IDLE_SAMPLE_SECONDS, SERIAL_LAUNCH_BYTES,
)

__all__ = ["threads", "set_threads", "available_cpus", "others_idle", "launch_threads", "on_threads", "use_threads"]

_ENV = "ASCEND_NUMBA_THREADS"
_chosen: int | None = None  # set_threads' value (None: ASCEND_NUMBA_THREADS, else the CPUs available)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _cgroup_cpus() -> float | None:
    """The CPU quota of this process's cgroup (v2 ``cpu.max``, v1 ``cfs_quota_us``), or None."""
    v2 = _read("/sys/fs/cgroup/cpu.max")
    if v2 is not None:
        quota, period = (v2.split() + ["100000"])[:2]
        return None if quota == "max" else int(quota) / int(period)
    quota, period = _read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), _read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
    if quota is None or period is None or int(quota) <= 0:
        return None
    return int(quota) / int(period)


@functools.lru_cache(maxsize=1)
def available_cpus() -> int:
    """The CPUs this process may use: its affinity mask, its cgroup quota (rounded up) and, in a
    pytest-xdist worker, its share of them (at least 1).  Read once per process."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = _cgroup_cpus()
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if workers.isdigit() and int(workers) > 1:
        cpus = max(1, cpus // int(workers))
    return cpus


def _validated(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n:
        raise ValueError(f"{what} must be a positive int, got {n!r}")
    return min(n, numba.config.NUMBA_NUM_THREADS)  # Numba's pool: the threads there are


def threads() -> int:
    """The host threads a parallel launch may use (see the module doc)."""
    if _chosen is not None:
        return _chosen
    env = os.environ.get(_ENV, "")
    if env:
        return _validated(int(env) if env.isdigit() else env, _ENV)
    return min(available_cpus(), numba.config.NUMBA_NUM_THREADS)


class use_threads:
    """``set_threads(n)``'s result: as a context manager, the previous choice comes back at the
    end of the block."""

    def __init__(self, previous: int | None):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _chosen
        _chosen = self._previous
        return False


def set_threads(n: int | None) -> use_threads:
    """Run parallel launches on at most ``n`` host threads; ``None`` goes back to
    ``ASCEND_NUMBA_THREADS`` or the CPUs available.  Also a context manager: ``with
    an.set_threads(1): ...`` restores the previous choice."""
    global _chosen
    previous = _chosen
    _chosen = None if n is None else _validated(n, "threads")
    return use_threads(previous)


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy clock ticks of the CPUs this process may use, this process's own ticks), or None
    where ``/proc`` does not tell: not Linux, a CPU of the affinity mask missing from
    ``/proc/stat`` (offline, or a container's renumbered view), an unexpected format."""
    stat, own = _read("/proc/stat"), _read("/proc/self/stat")
    if stat is None or own is None or not hasattr(os, "sched_getaffinity"):
        return None
    mask = os.sched_getaffinity(0)
    busy, seen = 0, 0
    try:
        for line in stat.splitlines()[1:]:
            name, *ticks = line.split()
            if not name.startswith("cpu"):
                break
            if int(name[3:]) in mask:  # user nice system idle iowait irq softirq steal: all but idle, iowait
                t = [int(v) for v in ticks[:8]]
                busy += t[0] + t[1] + t[2] + sum(t[5:8])
                seen += 1
        fields = own.rsplit(")", 1)[1].split()  # the name in parentheses may hold spaces
        own_ticks = int(fields[11]) + int(fields[12])  # utime + stime (this process's threads)
    except (ValueError, IndexError):
        return None
    return (busy, own_ticks) if seen == len(mask) else None


# The last sample: [when, _cpu_ticks() then, CPUs other processes took over the window before it],
# the first read on import, so that a process's first launches have a window to judge by.
_sample: list = [time.monotonic(), _cpu_ticks(), None]
_sampling = threading.Lock()


def others_idle(wanted: int) -> bool:
    """Whether other processes left ``wanted`` of this process's CPUs free over the last sample:
    they took at most ``len(CPUs) - wanted + IDLE_OTHERS_CPUS`` CPUs over the window since the
    reading before (at least :data:`~ascend_numba.config.IDLE_SAMPLE_SECONDS`, re-read by the
    first call after it).  False until a window has passed since this module's import, and where
    ``/proc`` does not tell.  Two limits, chosen for launches that need no second reading: after
    a pause the window is the whole pause, so a load that began near its end is seen one window
    later; and CPU time of this process's own threads counts as its own (a second thread launching
    beside the first, or torch in the same process, is not seen)."""
    if time.monotonic() - _sample[0] >= IDLE_SAMPLE_SECONDS and _sampling.acquire(blocking=False):
        try:  # one thread re-reads (others meanwhile judge by the last verdict), unless one just did
            now = time.monotonic()
            window = now - _sample[0]
            if window >= IDLE_SAMPLE_SECONDS:
                ticks, took = _cpu_ticks(), None
                if ticks is not None and _sample[1] is not None:
                    took = ((ticks[0] - _sample[1][0]) - (ticks[1] - _sample[1][1])) / os.sysconf("SC_CLK_TCK")
                    took /= window
                _sample[:] = now, ticks, took
        finally:
            _sampling.release()
    took = _sample[2]
    return took is not None and took <= len(os.sched_getaffinity(0)) - wanted + IDLE_OTHERS_CPUS


def launch_threads(block_dim: int, gm_bytes: int) -> int:
    """The host threads a launch of ``block_dim`` lanes moving ``gm_bytes`` of GM data runs on."""
    if gm_bytes < SERIAL_LAUNCH_BYTES and gm_bytes < IDLE_PARALLEL_BYTES:
        return 1
    wanted = min(threads(), block_dim)
    if gm_bytes < SERIAL_LAUNCH_BYTES and not (wanted > 1 and others_idle(wanted)):
        return 1
    return wanted


def on_threads(launch, block_dim: int, threads: int, *args):
    """``launch(block_dim, threads, *args)`` with Numba's thread count for this thread at
    ``threads`` while it runs a parallel loop (the caller's count put back after): set from
    Python, as Numba's functions for it would make a compiled launcher uncacheable."""
    if threads <= 1:
        return launch(block_dim, threads, *args)
    previous = numba.get_num_threads()
    if previous != threads:
        numba.set_num_threads(threads)
    try:
        return launch(block_dim, threads, *args)
    finally:
        if previous != threads:
            numba.set_num_threads(previous)
