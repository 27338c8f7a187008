"""Which threading layer runs large launches best, quiet and under load (issue #50 item 1), and
where a launch stops paying for a parallel region (config.SERIAL_LAUNCH_BYTES).

    python bench/threading_layers.py layers [--calls 11]     # one subprocess per layer
    python bench/threading_layers.py threshold [--calls 21]  # serial vs parallel by size

``layers``: Numba's layer is fixed when it first runs a parallel region, so each candidate
(workqueue; omp as it comes and with OMP_WAIT_POLICY passive and active; tbb when installed) measures in a
process of its own: the large cases' median call, quiet and under N busy neighbours (N = the
CPUs this process may use).  ``threshold``: Tile and ApplyAdamW at growing sizes, each launch on
the calling thread and on every thread (the serial threshold lowered for the run), quiet and
under load.  Prints Markdown tables (milliseconds, medians) for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

LAYERS = {  # name -> environment
    "workqueue": {"NUMBA_THREADING_LAYER": "workqueue"},
    "omp (the default here)": {"NUMBA_THREADING_LAYER": "omp"},
    "omp, passive wait": {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "passive"},
    "omp, active wait": {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "active"},
    # PyPI's tbb wheel puts libtbb.so.12 in the environment's lib/, off the loader's path.
    "tbb": {"NUMBA_THREADING_LAYER": "tbb",
            "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [os.path.join(sys.prefix, "lib"),
                                                              os.environ.get("LD_LIBRARY_PATH")]))},
}


def _large_cases():
    import ascend_numba as an

    rng = np.random.default_rng(0)
    square = rng.normal(size=(2048, 2048)).astype(np.float32)
    t = [rng.normal(size=1 << 22).astype(np.float32) for _ in range(4)]
    t[2] = np.abs(t[2])
    return [
        ("tile (2048, 2048) fp32 x (2, 1): 48 MiB", lambda: an.tile(square, (2, 1))),
        ("transpose2d (2048, 2048) fp32: 32 MiB", lambda: an.transpose2d(square)),
        ("apply_adamw 4M fp32: 112 MiB", lambda: an.apply_adamw(*t[:3], 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8,
                                                                 t[3], inplace=False)),
    ]


def _measure_layer(calls: int) -> dict:
    """In the layer's own process: each large case's median, quiet and loaded."""
    import numba

    from load import busy_neighbours, median_ms

    from ascend_numba.kernels.threads import available_cpus

    cases = _large_cases()
    for _, call in cases:
        call()
    layer = numba.threading_layer()
    quiet = {name: median_ms(call, calls) for name, call in cases}
    with busy_neighbours(available_cpus()):
        loaded = {name: median_ms(call, calls) for name, call in cases}
    return {"layer": layer, "quiet": quiet, "loaded": loaded}


def layers(calls: int) -> None:
    rows = []
    for name, env in LAYERS.items():
        done = subprocess.run([sys.executable, __file__, "_one_layer", "--calls", str(calls)],
                              env={**os.environ, **env}, capture_output=True, text=True)
        if done.returncode != 0:
            rows.append((name, None, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"))
            continue
        rows.append((name, json.loads(done.stdout.strip().splitlines()[-1]), ""))
    from ascend_numba.kernels.threads import available_cpus

    names = [n for n, _ in _large_cases()]
    print(f"medians of {calls} calls (ms), quiet / under {available_cpus()} busy neighbours\n")
    print("| layer | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for name, found, why in rows:
        if found is None:
            print(f"| {name} | " + " | ".join(["not available"] * len(names)) + f" |  <!-- {why} -->")
            continue
        cells = [f"{found['quiet'][n]:.2f} / {found['loaded'][n]:.2f}" for n in names]
        print(f"| {name} ({found['layer']}) | " + " | ".join(cells) + " |")


def threshold(calls: int) -> None:
    import ascend_numba as an
    from ascend_numba.kernels import threads as threads_module
    from ascend_numba.kernels.threads import available_cpus
    from load import busy_neighbours, median_ms

    threads_module.SERIAL_LAUNCH_BYTES = 0  # every launch may be parallel: the choice is set_threads'
    rng = np.random.default_rng(0)
    rows = []
    for mib in (1, 4, 16, 64):
        # Tile fp32 x (2, 1): in + out = 3x the input; ApplyAdamW fp32: 8 arrays of n floats.
        side = int(np.sqrt(mib * (1 << 20) / 12))
        x = rng.normal(size=(side, side)).astype(np.float32)
        n = mib * (1 << 20) // 32
        t = [np.abs(rng.normal(size=n)).astype(np.float32) for _ in range(4)]
        rows.append((f"tile fp32 {mib} MiB", lambda x=x: an.tile(x, (2, 1))))
        rows.append((f"apply_adamw fp32 {mib} MiB", lambda t=t: an.apply_adamw(
            *t[:3], 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, t[3], inplace=False)))
    found = {}
    for label, context in (("quiet", None), ("loaded", available_cpus())):
        with (busy_neighbours(context) if context else contextlib.nullcontext()):
            for name, call in rows:
                with an.set_threads(1):
                    call()
                    one = median_ms(call, calls)
                with an.set_threads(available_cpus()):
                    call()
                    many = median_ms(call, calls)
                found[(label, name)] = (one, many)
    print(f"medians of {calls} calls (ms): 1 thread / {available_cpus()} threads\n")
    print("| case | quiet | under load |")
    print("| --- | --- | --- |")
    for name, _ in rows:
        q, lo = found[("quiet", name)], found[("loaded", name)]
        print(f"| {name} | {q[0]:.2f} / {q[1]:.2f} | {lo[0]:.2f} / {lo[1]:.2f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("layers", "threshold", "_one_layer"))
    parser.add_argument("--calls", type=int, default=11)
    args = parser.parse_args(argv)
    if args.what == "_one_layer":
        print(json.dumps(_measure_layer(args.calls)))
    elif args.what == "layers":
        layers(args.calls)
    else:
        threshold(args.calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
