"""How many host threads a launch runs on (issue #50): small launches on the calling thread, no
more threads than the process may use, the user's say (an.set_threads, ASCEND_NUMBA_THREADS),
and the same bits whichever it is."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.config import (
    IDLE_OTHERS_CPUS, IDLE_PARALLEL_BYTES, IDLE_SAMPLE_SECONDS, SERIAL_LAUNCH_BYTES,
)
from ascend_numba.kernels import threads as threads_module


@pytest.fixture(autouse=True)
def _fresh_choice(monkeypatch):
    monkeypatch.delenv("ASCEND_NUMBA_THREADS", raising=False)
    threads_module.available_cpus.cache_clear()
    yield
    an.set_threads(None)
    threads_module.available_cpus.cache_clear()


def test_the_user_chooses_and_a_block_restores():
    an.set_threads(1)
    assert an.threads() == 1
    with an.set_threads(2):
        assert an.threads() == min(2, numba.config.NUMBA_NUM_THREADS)
    assert an.threads() == 1
    an.set_threads(None)
    assert an.threads() == min(threads_module.available_cpus(), numba.config.NUMBA_NUM_THREADS)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="threads must be a positive int"):
            an.set_threads(bad)


def test_the_environment_and_the_process_share(monkeypatch):
    monkeypatch.setenv("ASCEND_NUMBA_THREADS", "1")
    assert an.threads() == 1
    monkeypatch.setenv("ASCEND_NUMBA_THREADS", "many")
    with pytest.raises(ValueError, match="ASCEND_NUMBA_THREADS must be a positive int, got 'many'"):
        an.threads()
    monkeypatch.delenv("ASCEND_NUMBA_THREADS")
    cpus = len(__import__("os").sched_getaffinity(0))
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(cpus))  # pytest -n <CPUs>: a CPU a worker
    threads_module.available_cpus.cache_clear()
    assert threads_module.available_cpus() == 1


@pytest.mark.parametrize("idle", [False, True])
def test_small_launches_run_on_the_calling_thread_unless_the_cpus_are_idle(monkeypatch, idle):
    monkeypatch.setattr(threads_module, "others_idle", lambda wanted: idle)
    an.set_threads(2)
    assert threads_module.launch_threads(48, IDLE_PARALLEL_BYTES - 1) == 1
    assert threads_module.launch_threads(48, SERIAL_LAUNCH_BYTES - 1) == (an.threads() if idle else 1)
    assert threads_module.launch_threads(48, SERIAL_LAUNCH_BYTES) == an.threads()
    assert threads_module.launch_threads(1, SERIAL_LAUNCH_BYTES) == 1


def _sampled(monkeypatch, readings):
    """others_idle(2) at each of ``readings``: (seconds, busy ticks of our CPUs, our own ticks)."""
    now = [0.0]
    ticks = {r[0]: None if r[1] is None else r[1:] for r in readings}
    monkeypatch.setattr(threads_module.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(threads_module, "_cpu_ticks", lambda: ticks[now[0]])
    monkeypatch.setattr(threads_module, "_sample", [-float("inf"), None, None])
    monkeypatch.setattr(threads_module.os, "sched_getaffinity", lambda pid: {0, 1})
    verdicts = []
    for r in readings:
        now[0] = r[0]
        verdicts.append(threads_module.others_idle(2))
    return verdicts


def test_others_idle_reads_what_other_processes_took_over_the_last_sample(monkeypatch):
    hz = __import__("os").sysconf("SC_CLK_TCK")
    w = IDLE_SAMPLE_SECONDS
    # ticks over a window of w seconds: ours 2 CPUs' worth, others' a tenth of a CPU, then a whole CPU
    ours, light, heavy = 2 * w * hz, 0.1 * w * hz, 1.0 * w * hz
    readings = [(0.0, 0, 0),                                  # the first sample: nothing known yet
                (w / 2, None),                                # inside the window: not read (None if it were)
                (w, ours + light, ours),                      # others took 0.1 CPU: idle
                (2 * w, 2 * ours + light + heavy, 2 * ours),  # others took 1 CPU: busy
                (3 * w, None)]                                # /proc unreadable: not idle
    assert _sampled(monkeypatch, readings) == [False, False, True, False, False]
    assert 0.1 < IDLE_OTHERS_CPUS < 1.0  # the two loads fall either side of the threshold


def test_others_idle_is_false_where_proc_does_not_tell(monkeypatch):
    assert _sampled(monkeypatch, [(0.0, None), (1.0, None)]) == [False, False]


def test_cpu_ticks_parses_proc(monkeypatch):
    files = {"/proc/stat": "cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 1 2 3 100 50 4 5 6 0 0\ncpu1 10 0 0 0 0 0 0 0 0 0\n"
                           "cpu2 1000 0 0 0 0 0 0 0\nintr 5 6\n",
             "/proc/self/stat": "42 (a name) with spaces) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15"}
    monkeypatch.setattr(threads_module, "_read", files.get)
    monkeypatch.setattr(threads_module.os, "sched_getaffinity", lambda pid: {0, 1})
    # cpu0: all but idle and iowait (1+2+3+4+5+6); cpu1: 10; cpu2 is not ours.  utime 11 + stime 12.
    assert threads_module._cpu_ticks() == (31, 23)
    # a CPU of the mask /proc/stat does not show (offline; a container's renumbered view): no reading
    monkeypatch.setattr(threads_module.os, "sched_getaffinity", lambda pid: {0, 1, 4})
    assert threads_module._cpu_ticks() is None
    monkeypatch.setattr(threads_module.os, "sched_getaffinity", lambda pid: {0, 1})
    files["/proc/self/stat"] = "42 (short) R 1 2"
    assert threads_module._cpu_ticks() is None


def test_cpu_ticks_reads_this_machine():
    ticks = threads_module._cpu_ticks()
    if ticks is None:
        pytest.skip("no /proc here")
    busy, own = ticks
    assert isinstance(busy, int) and isinstance(own, int) and 0 <= own


@pytest.mark.parametrize("shape, reps", [((4, 6), (2, 3)), ((3, 1, 100), (1, 5, 3)), ((1003,), (2,)),
                                         ((33, 65), (3, 1))])
def test_one_thread_or_several_the_same_bytes(monkeypatch, shape, reps):
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    monkeypatch.setattr(threads_module, "SERIAL_LAUNCH_BYTES", 0)  # every launch parallel
    numba.set_num_threads(1)  # the caller's own setting: a parallel launch puts it back
    with an.set_threads(2):
        parallel = an.tile(x, reps, block_dim=7)
        traced = an.tile(x, reps, block_dim=7, trace=True)[1]
    with an.set_threads(1):
        serial = an.tile(x, reps, block_dim=7)
        traced_serial = an.tile(x, reps, block_dim=7, trace=True)[1]
    assert numba.get_num_threads() == 1
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert np.array_equal(parallel, np.tile(x, reps)) and np.array_equal(serial, parallel)
    assert traced.totals() == traced_serial.totals()  # every lane ran and logged, whichever thread ran it


def test_a_lane_error_on_a_worker_is_raised_by_the_launch(monkeypatch):
    monkeypatch.setattr(threads_module, "SERIAL_LAUNCH_BYTES", 0)

    @an.kernel
    def raises_in_lane_5(ctx, x):
        if ctx.block_idx == 5:
            raise ValueError("boom")

    with an.set_threads(2), pytest.raises(an.KernelError, match=r"^lane 5: the kernel raised ValueError: boom$"):
        raises_in_lane_5.launch(np.zeros(8, np.float32), block_dim=8)
