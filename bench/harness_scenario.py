"""The harness scenario (issue #50): bench/harness_calls.py (2,000 tests' worth of mixed small
calls) under ``pytest -n <CPUs>``, calling the twin and calling NumPy, wall time of each run and
their ratio (medians of ``--rounds`` alternating runs).

    python bench/harness_scenario.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from ascend_numba.kernels.threads import available_cpus

HERE = Path(__file__).resolve().parent


def run(impl: str, workers: int) -> float:
    env = dict(os.environ, HARNESS_IMPL=impl)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers),
                    str(HERE / "harness_calls.py")], env=env, check=True, capture_output=True, cwd=HERE)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    workers = available_cpus()
    run("twin", workers)  # warm: compile the kernels into the on-disk cache
    times = {"twin": [], "numpy": []}
    for _ in range(args.rounds):
        for impl in times:
            times[impl].append(run(impl, workers))
    twin, numpy = (sorted(times[k])[len(times[k]) // 2] for k in ("twin", "numpy"))
    print(f"pytest -n {workers}, median of {args.rounds}: twin {twin:.2f} s, NumPy {numpy:.2f} s, "
          f"ratio {twin / numpy:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
