"""msOpST route: ``msopst gen`` against ``golden`` on the equivalent YAML (throughput, same run;
target: within 10%), and the ApplyAdamW expected-data function against the NumPy per-op formula
a user's ``calc_expect_func`` would be (16M fp16; target: >= 50x)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ascend_numba import msopst
from ascend_numba.golden import parse_cases, run_suite
from ascend_numba.golden.msopst_cases import gen_msopst, load_msopst
from ascend_numba.ops.adamw import SCALARS as ADAMW_SCALARS
from ascend_numba.ops.adamw.reference import apply_adamw_reference

from conftest import parallel_copy, ref

N = 1 << 24
SCALARS = tuple(ADAMW_SCALARS.values())


def _tensors():
    rng = np.random.default_rng(0)
    var = rng.standard_normal(N).astype(np.float16)
    m = (rng.standard_normal(N) * 0.1).astype(np.float16)
    v = np.abs(rng.standard_normal(N) * 0.01).astype(np.float16)
    grad = rng.standard_normal(N).astype(np.float16)
    return var, m, v, grad


@pytest.mark.parametrize("case", ["expect func", "numpy formula", "parallel copy"])
def test_adamw_expect_func_16m_fp16(benchmark, case):
    benchmark.group = "msopst ApplyAdamW expect func 16M fp16"
    var, m, v, grad = _tensors()
    if case == "expect func":
        inputs = [{"value": a, "dtype": "float16", "shape": [N]} for a in (var, m, v)]
        scalars = [{"value": np.array([s], np.float16), "dtype": "float16", "shape": [1]} for s in SCALARS]
        fn = lambda: msopst.ApplyAdamW(*inputs, *scalars, {"value": grad, "dtype": "float16"})  # noqa: E731
    elif case == "numpy formula":
        ref(benchmark, "numpy")
        fn = lambda: apply_adamw_reference(var, m, v, *SCALARS, grad)  # noqa: E731
    else:
        ref(benchmark, "copy")
        src = np.empty(7 * var.nbytes // 2, np.uint8)
        dst = np.empty_like(src)
        fn = lambda: parallel_copy(dst, src)  # noqa: E731
    fn()
    benchmark.pedantic(fn, rounds=3 if case == "numpy formula" else 7, iterations=1)


# The same cases, as an msOpST case file and as golden YAML (the same shapes and distributions).
MSOPST = [
    {"case_name": "bench_tile", "op": "Tile",
     "input_desc": [{"name": "x", "format": "ND", "type": "float16", "shape": [2048, 2048],
                     "data_distribute": "uniform", "value_range": [-1.0, 1.0]},
                    {"name": "multiples", "format": "ND", "type": "int64", "shape": [2], "is_const": True,
                     "value": [2, 2]}],
     "output_desc": [{"name": "y", "format": "ND", "type": "float16", "shape": [4096, 4096]}]},
    {"case_name": "bench_adamw", "op": "ApplyAdamW",
     "input_desc": [*({"name": n, "format": "ND", "type": "float32", "shape": [1 << 22], "data_distribute": "uniform",
                       "value_range": [0.0, 0.01]} for n in ("var", "m", "v")),
                    *({"name": n, "format": "ND", "type": "float32", "shape": [1], "value": [s]}
                      for n, s in ADAMW_SCALARS.items()),
                    {"name": "grad", "format": "ND", "type": "float32", "shape": [1 << 22],
                     "data_distribute": "uniform", "value_range": [0.0, 0.01]}],
     "output_desc": [{"name": n, "format": "ND", "type": "float32", "shape": [1 << 22]} for n in ("var", "m", "v")]},
]


def _golden_doc(subcases):
    return {"cases": [s.golden.to_dict() for s in subcases]}


@pytest.mark.parametrize("route", ["golden yaml", "msopst gen"])
def test_msopst_gen_throughput_against_golden(benchmark, route):
    benchmark.group = "msopst gen vs golden"
    work = Path(tempfile.mkdtemp())
    try:
        case_file = work / "cases.json"
        case_file.write_text(json.dumps(MSOPST))
        subcases = load_msopst([case_file])
        golden_cases = parse_cases(_golden_doc(subcases))
        out = work / "out"

        def golden():
            run_suite(golden_cases, out, cache_dir=None, progress=False, log=lambda line: None)

        def gen():
            gen_msopst(subcases, out, run=lambda cases, staging: run_suite(
                cases, staging, cache_dir=None, progress=False, log=lambda line: None))

        def fresh():  # every round writes into an empty directory (not timed)
            shutil.rmtree(out, ignore_errors=True)

        fn = golden if route == "golden yaml" else gen
        if route == "golden yaml":
            ref(benchmark, "golden")
        fn()
        written = sum(p.stat().st_size for p in out.rglob("*.bin"))
        benchmark.pedantic(fn, setup=fresh, rounds=9, iterations=1)
        benchmark.extra_info["MBps"] = written / benchmark.stats.stats.median / 1e6
    finally:
        shutil.rmtree(work, ignore_errors=True)
