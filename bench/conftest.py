"""Benchmark helpers: every group holds the op, what a user would use instead, and a same-size copy.

After the run a ratio table is printed per group: each case's median and its
speed relative to the group's reference cases (``speedup vs X`` > 1 means faster
than X).  Mark references with ``ref(benchmark, "name")``.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time

# Benchmarks measure compiled kernels, not their prints: kprint / dump_tensor compile to nothing
# here, and ASCEND_NUMBA_INTERPRET (a debugging session's setting) does not apply.
os.environ.setdefault("ASCEND_NUMBA_KERNEL_PRINTS", "0")
os.environ.pop("ASCEND_NUMBA_INTERPRET", None)

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


def record(benchmark, op: str, nbytes: int, traced=None, **facts) -> None:
    """What tracking needs of an ascend_numba case: the op, the bytes it moves, facts such as
    the Tile path, and, given ``traced`` (the same call with ``trace=True``, returning
    ``(result, trace)``), the modelled device time: ``LaunchTrace.modelled_us``, the launch floor
    plus the slowest core's pipe timeline (summed over the launches of a chunked call)."""
    benchmark.extra_info.update(op=op, bytes=int(nbytes), **facts)
    if traced is not None:
        trace = traced()[1]
        traces = trace if isinstance(trace, list) else [trace]
        benchmark.extra_info["modelled_us"] = sum(t.modelled_us for t in traces)


# Paired ratios: the case and each reference timed alternately, so both see the same machine
# state.  Ratios of medians taken minutes apart moved by a median 10-34% (up to 2x) between
# three runs of the same code here; see bench/README section in the top-level README.
PAIRED_ROUNDS = 30
PAIRED_SAMPLE_S = 0.002  # each timing repeats the call until it takes about this long


def _calls_per_sample(fn) -> int:
    fn()  # the first call after another function's pays for the cache state it left
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(PAIRED_SAMPLE_S / once))


def paired(benchmark, fn, refs: dict, rounds: int = PAIRED_ROUNDS) -> None:
    """Record ``extra_info["paired_ratios"]``: for each reference, median(reference time) /
    median(case time) over ``rounds`` rounds, each round timing the case then every reference
    (> 1: the case is faster).  A sample of several calls starts after one untimed call: a
    cache-sized case otherwise pays for the cache state the previous function left (1M ApplyAdamW
    fp32 read 1.8x torch's speed paired where their medians said 0.64x)."""
    calls = {name: _calls_per_sample(f) for name, f in [("", fn), *refs.items()]}
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, f in [("", fn), *refs.items()]:
            if calls[name] > 1:
                f()
            start = time.perf_counter()
            for _ in range(calls[name]):
                f()
            times[name].append((time.perf_counter() - start) / calls[name])
    case = statistics.median(times[""])
    benchmark.extra_info["paired_ratios"] = {name: statistics.median(times[name]) / case for name in refs}
    benchmark.extra_info["paired_rounds"] = rounds


def pytest_benchmark_update_json(config, benchmarks, output_json):
    # Saved runs carry each case's in-run ratios against its group's references: what
    # `ascend-numba bench-compare` and `bench-report` track (absolute times move with the machine).
    from ascend_numba.benchtrack import add_ratios
    add_ratios(output_json["benchmarks"])


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
                if "cpu_s" not in b.extra_info:  # the import: a new interpreter's wall seconds alone
                    tr.write_line(f"  {b.name:<60} process {b.stats.median:6.2f} s")
                    continue
                within = "ok" if b.extra_info["cpu_s"] <= b.extra_info["budget_s"] else "OVER BUDGET"
                tr.write_line(f"  {b.name:<60} cpu {b.extra_info['cpu_s']:6.2f} s  "
                              f"budget {b.extra_info['budget_s']:5.1f} s  {within:<11}  "
                              f"process {b.stats.median:6.2f} s  compiled {b.extra_info['compiled']}")
            continue
        refs = {b.extra_info["ref"]: b.stats.median for b in cases if "ref" in b.extra_info}
        tr.write_line(f"[{group}]")
        for b in sorted(cases, key=lambda c: c.stats.median):
            cols = "  ".join(f"{refs[r] / b.stats.median:6.2f}x vs {r}" for r in sorted(refs)
                             if b.extra_info.get("ref") != r)
            extra = f"  {b.extra_info['GBps']:.2f} GB/s" if "GBps" in b.extra_info else ""
            tr.write_line(f"  {b.name:<52} {b.stats.median * 1e3:9.3f} ms{extra}  {cols}")
