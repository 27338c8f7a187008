import gc
import os

from hypothesis import HealthCheck, settings

from ascend_numba._numba_compat.jit import COMPILE_GC_THRESHOLDS

# A test worker holds every kernel it compiled, and a full collection walks all of it: at Python's
# default thresholds the collector took 31-32 CPU s of each worker's run.  Young collections as
# rare as during a compile, for the whole run.
gc.set_threshold(*COMPILE_GC_THRESHOLDS)

# CI runs a larger hypothesis budget than a quick local run; both are deterministic per seed.
settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True)
settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

pytest_plugins = ["pytester"]

# Fresh op results start as 0xA5 bytes, not whatever the allocator had: a byte a kernel
# forgot to write fails the comparison with the reference instead of passing as a zero.
from ascend_numba.memory import poison_outputs  # noqa: E402

poison_outputs(0xA5)


def pytest_collection_modifyitems(items):
    """The registry tests last: every op's kernels are compiled by its own test file first (and
    cached), instead of by two workers at once (``make test`` keeps the collection order)."""
    items.sort(key=lambda item: item.nodeid.startswith("tests/test_registry.py"))
