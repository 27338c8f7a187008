"""Calls under load (issue #50): each case's median call time quiet, under N busy neighbour
processes (N = the CPUs this process may use; pure CPU-bound loops that stop by themselves), and
under load with one thread (``an.set_threads(1)``), next to NumPy's call in the same conditions.

    python bench/load.py [--calls 31] [--neighbours N]

Prints a Markdown table (milliseconds, medians) for docs/performance.md, "Calls under load".
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

import ascend_numba as an
from ascend_numba.kernels.threads import available_cpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import vector_add  # noqa: E402


def _spin(seconds: float):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@contextlib.contextmanager
def busy_neighbours(n: int, seconds: float = 120.0):
    """``n`` processes spinning on a CPU each, for at most ``seconds``."""
    procs = [multiprocessing.Process(target=_spin, args=(seconds,), daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    time.sleep(0.2)
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
            p.join()


def cases():
    """(name, the twin's call, NumPy's call); every call warmed up (compiled) once."""
    rng = np.random.default_rng(0)
    f8 = np.arange(8, dtype=np.float32)
    i128 = np.arange(128, dtype=np.int8)
    row = np.ones((1, 1024), np.float32)
    cube = rng.integers(-100, 100, (256, 256, 4), dtype=np.int8)
    sq8 = rng.integers(-100, 100, (1024, 1024), dtype=np.int8)
    t16, t1k = rng.normal(size=(16, 16)).astype(np.float32), rng.normal(size=(1024, 1024)).astype(np.float32)
    small = [np.full(64, 0.5, np.float32) for _ in range(4)]
    big = [rng.normal(size=1 << 20).astype(np.float32) for _ in range(4)]
    x = np.arange(1003, dtype=np.float32)
    y = np.full(1003, 0.5, np.float32)

    def adamw(t):
        return lambda: an.apply_adamw(*t[:3], 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, t[3], inplace=False)

    def adamw_np(t):
        return lambda: [t[1] * 0.9 + t[3] * 0.1, t[2] * 0.99 + t[3] * t[3] * 0.01, t[0] * 0.99]

    out = [
        ("tile (8,) fp32 x (2,)", lambda: an.tile(f8, (2,)), lambda: np.tile(f8, (2,))),
        ("tile (128,) int8 x (8192,)", lambda: an.tile(i128, (8192,)), lambda: np.tile(i128, (8192,))),
        ("tile (1, 1024) fp32 x (1024, 1)", lambda: an.tile(row, (1024, 1)), lambda: np.tile(row, (1024, 1))),
        ("tile (256, 256, 4) int8 x (2, 2, 2)", lambda: an.tile(cube, (2, 2, 2)), lambda: np.tile(cube, (2, 2, 2))),
        ("tile (1024, 1024) int8 x (2, 2)", lambda: an.tile(sq8, (2, 2)), lambda: np.tile(sq8, (2, 2))),
        ("transpose2d (16, 16) fp32", lambda: an.transpose2d(t16), lambda: np.ascontiguousarray(t16.T)),
        ("transpose2d (1024, 1024) fp32", lambda: an.transpose2d(t1k), lambda: np.ascontiguousarray(t1k.T)),
        ("apply_adamw 64 fp32", adamw(small), adamw_np(small)),
        ("apply_adamw 1M fp32", adamw(big), adamw_np(big)),
        ("user kernel vector_add 1003", lambda: vector_add.add_arrays(x, y, block_dim=8), lambda: x + y),
    ]
    for _, twin, _numpy in out:
        twin()
    return out


def median_ms(call, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=31)
    parser.add_argument("--neighbours", type=int, default=available_cpus())
    args = parser.parse_args(argv)
    rows = cases()
    quiet = {name: (median_ms(t, args.calls), median_ms(n, args.calls)) for name, t, n in rows}
    with busy_neighbours(args.neighbours):
        loaded = {name: (median_ms(t, args.calls), median_ms(n, args.calls)) for name, t, n in rows}
        with an.set_threads(1):
            one = {name: median_ms(t, args.calls) for name, t, _ in rows}
    print(f"threads {an.threads()}, {args.neighbours} busy neighbours, medians of {args.calls} calls (ms)\n")
    print("| case | quiet | NumPy quiet | loaded | loaded, 1 thread | NumPy loaded | loaded / (3 x quiet + 0.2) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, _, _ in rows:
        q, qn = quiet[name]
        lo, ln = loaded[name]
        print(f"| {name} | {q:.3f} | {qn:.3f} | {lo:.3f} | {one[name]:.3f} | {ln:.3f} | {lo / (3 * q + 0.2):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
