"""What a new user waits for: each op's first call in a new process with an empty Numba cache
(cold: everything compiles), and every op's first call with the cache filled (warm).

Each case runs ``python -m ascend_numba.warmup`` in a subprocess with its own temporary
``NUMBA_CACHE_DIR`` and records the CPU seconds (getrusage) of the measured first call; the
timed median is the subprocess's wall time, interpreter start and import included.  The
budgets are the cold-start issue's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

ADAMW = "apply_adamw:{mode}:{variant}-a{ams:d}m{ams:d}-{dtype}"

# (case, specs run in order in one process, the spec whose cost is measured (index), budget CPU s);
# a spec is OP:MODE:CASE, CASE one of the op's warmup cases (ascend_numba/ops/<op>/__init__.py).
TILE_PATHS = ("split_mult", "doubling", "build", "gather", "per_row")
CONVERSIONS = (("NCHW", "NC1HWC0"), ("NC1HWC0", "NCHW"), ("GNCHW", "GNC1HWC0"), ("GNC1HWC0", "GNCHW"),
               ("NC1HWC0", "FRACTAL_Z"), ("GNC1HWC0", "FRACTAL_Z"), ("NCDHW", "FRACTAL_Z_3D"))
# TTRANS runs on unsigned views: each dtype's kernel is its width's.
WIDTH = {"uint8": "uint8", "float16": "uint16", "float32": "uint32", "float64": "uint64"}
COLD = [
    *[(f"tile {path} plain", [f"tile:plain:{path}"], 0, 10) for path in TILE_PATHS],
    *[(f"tile split_mult {mode}", [f"tile:{mode}:split_mult"], 0, 20) for mode in ("traced", "checked")],
    ("repeat after tile", ["tile:plain:split_mult", "repeat:plain:leading_dims"], 1, 1),
    *[(f"apply_adamw {dtype} {variant} {'amsgrad+maximize' if ams else 'no key'} plain",
       [ADAMW.format(mode="plain", dtype=dtype, variant=variant, ams=ams)], 0, 8)
      for dtype, variant, ams in (("float32", "seed", False), ("float16", "seed", True), ("bfloat16", "a2", False))],
    *[(f"apply_adamw float32 seed no key {mode}",
       [ADAMW.format(mode=mode, dtype="float32", variant="seed", ams=False)], 0, 16) for mode in ("traced", "checked")],
    *[(f"transpose2d {dtype} plain", [f"transpose2d:plain:{WIDTH[dtype]}"], 0, 5) for dtype in WIDTH],
    *[(f"transpose2d float32 {mode}", [f"transpose2d:{mode}:uint32"], 0, 10) for mode in ("traced", "checked")],
    *[(f"convert_format {src}->{dst} plain", [f"convert_format:plain:{src}->{dst}-uint16"], 0, 5)
      for src, dst in CONVERSIONS],
]
EVERY_OP = ["tile:plain:split_mult", "repeat:plain:leading_dims",
            ADAMW.format(mode="plain", dtype="float32", variant="seed", ams=False), "transpose2d:plain:uint32",
            "convert_format:plain:NCHW->NC1HWC0-uint16"]


def _run(specs: list[str], cache_dir: str) -> list[dict]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-m", "ascend_numba.warmup", *specs], env=env, capture_output=True,
                          text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("case, specs, measured, budget", COLD, ids=[c[0] for c in COLD])
def test_cold_first_call(benchmark, case, specs, measured, budget):
    benchmark.group = "compile: cold first call"
    rows = []

    def cold():
        with tempfile.TemporaryDirectory() as cache_dir:
            rows.append(_run(specs, cache_dir)[measured])

    benchmark.pedantic(cold, rounds=1, iterations=1)
    benchmark.extra_info.update(cpu_s=rows[-1]["cpu"], budget_s=budget, compiled=rows[-1]["compiled"])


def test_warm_first_call_of_every_op(benchmark):
    benchmark.group = "compile: warm first call"
    with tempfile.TemporaryDirectory() as cache_dir:
        _run(EVERY_OP, cache_dir)
        rows = []
        benchmark.pedantic(lambda: rows.append(_run(EVERY_OP, cache_dir)), rounds=3, iterations=1)
    benchmark.extra_info.update(cpu_s=sum(r["cpu"] for r in rows[-1]), budget_s=1.0,
                                compiled=sum(r["compiled"] for r in rows[-1]))


def test_import(benchmark):
    """``import ascend_numba`` in a new interpreter (the host package only: 0.3 s is the target)."""
    benchmark.group = "compile: import"
    benchmark.pedantic(lambda: subprocess.run([sys.executable, "-c", "import ascend_numba"], check=True), rounds=5,
                       iterations=1)
