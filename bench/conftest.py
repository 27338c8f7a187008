"""Benchmark helpers: every group holds the op, what a user would use instead, and a same-size copy.

After the run a ratio table is printed per group: each case's median and its
speed relative to the group's reference cases (``speedup vs X`` > 1 means faster
than X).  Mark references with ``ref(benchmark, "name")``.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np
import pytest

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch not installed (make bench-torch)")


@numba.njit(parallel=True, cache=True)
def _parallel_copy(dst, src):
    n = src.size
    parts = numba.get_num_threads()
    per = (n + parts - 1) // parts
    for p in numba.prange(parts):
        start = min(p * per, n)
        end = min(start + per, n)
        dst[start:end] = src[start:end]


def parallel_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """The bandwidth limit: a plain multi-threaded memcpy of ``src`` into ``dst`` (same size)."""
    _parallel_copy(dst.reshape(-1).view(np.uint8), src.reshape(-1).view(np.uint8))


@contextlib.contextmanager
def output_pool(enabled: bool):
    """Run with ascend_numba's output pool on (the default) or off: off, every fresh result
    pays the operating system's page faults, as np.tile's and torch's do."""
    import ascend_numba as an
    previous = an.output_pool_limit(None if enabled else 0)
    try:
        yield
    finally:
        an.output_pool_limit(previous)


def ref(benchmark, name: str) -> None:
    """Mark this case as a reference of its group under ``name`` (numpy, torch, copy, per_row, ...)."""
    benchmark.extra_info["ref"] = name


def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    groups: dict[str, list] = {}
    for bench in session.benchmarks:
        if bench.stats is not None:
            groups.setdefault(bench.group or "", []).append(bench)
    tr = terminalreporter
    tr.section("medians and ratios (same run)")
    for group in sorted(groups):
        cases = groups[group]
        if group.startswith("compile"):
            tr.write_line(f"[{group}]  (CPU seconds of the first call; wall seconds of the whole process)")
            for b in cases:
                within = "ok" if b.extra_info["cpu_s"] <= b.extra_info["budget_s"] else "OVER BUDGET"
                tr.write_line(f"  {b.name:<60} cpu {b.extra_info['cpu_s']:6.2f} s  budget {b.extra_info['budget_s']:5.1f}"
                              f" s  {within:<11}  process {b.stats.median:6.2f} s  compiled {b.extra_info['compiled']}")
            continue
        refs = {b.extra_info["ref"]: b.stats.median for b in cases if "ref" in b.extra_info}
        tr.write_line(f"[{group}]")
        for b in sorted(cases, key=lambda c: c.stats.median):
            cols = "  ".join(f"{refs[r] / b.stats.median:6.2f}x vs {r}" for r in sorted(refs)
                             if b.extra_info.get("ref") != r)
            extra = f"  {b.extra_info['GBps']:.2f} GB/s" if "GBps" in b.extra_info else ""
            tr.write_line(f"  {b.name:<52} {b.stats.median * 1e3:9.3f} ms{extra}  {cols}")
