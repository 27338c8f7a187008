"""How many host threads a launch runs on (issue #50): small launches on the calling thread, no
more threads than the process may use, the user's say (an.set_threads, ASCEND_NUMBA_THREADS),
and the same bits whichever it is."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.config import SERIAL_LAUNCH_BYTES
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


def test_small_launches_run_on_the_calling_thread():
    an.set_threads(2)
    assert threads_module.launch_threads(48, SERIAL_LAUNCH_BYTES - 1) == 1
    assert threads_module.launch_threads(48, SERIAL_LAUNCH_BYTES) == an.threads()
    assert threads_module.launch_threads(1, SERIAL_LAUNCH_BYTES) == 1


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
