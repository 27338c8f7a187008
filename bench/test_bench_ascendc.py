"""The ported Ascend C samples (examples/ascendc/) as goldens: 16M elements of the Add sample
(fp16) and the LeakyRelu sample (fp32) through ``ascend-numba golden`` (the samples registered
as user ops by ``examples/ascendc/ascendc_ops.py``) next to the samples' own gen_data.py
expressions writing the same files, and a parallel copy of the bytes, in one run."""

import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_numba.golden import load_cases, run_suite
from ascend_numba.ops import load_ops

from conftest import parallel_copy, record, ref

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "ascendc"))
load_ops(["ascendc_ops"])

N = 1 << 24
SAMPLES = {
    "ascendc_add": {"dtype": "float16", "inputs": {"x": (1, 100), "y": (1, 100)}, "attrs": {}},
    "ascendc_leaky_relu": {"dtype": "float32", "inputs": {"x": (-100, 100)}, "attrs": {"negative_slope": 0.01}},
}


def _gen_data(op: str, out: Path) -> int:
    """The sample's gen_data.py at 16M: uniform draws cast to the type, its NumPy golden, .bin files."""
    spec = SAMPLES[op]
    dtype = np.dtype(spec["dtype"])
    inputs = {n: np.random.uniform(lo, hi, N).astype(dtype) for n, (lo, hi) in spec["inputs"].items()}
    if op == "ascendc_add":
        golden = (inputs["x"] + inputs["y"]).astype(np.float16)
    else:
        x = inputs["x"]
        golden = np.where(x > 0, x, x * np.float32(spec["attrs"]["negative_slope"]))
    out.mkdir(parents=True, exist_ok=True)
    for name, array in inputs.items():
        array.tofile(out / f"input_{name}.bin")
    golden.tofile(out / "golden.bin")
    return sum(a.nbytes for a in inputs.values()) + golden.nbytes


def _case_file(op: str, path: Path) -> Path:
    spec = SAMPLES[op]
    inputs = ", ".join(f"{n}: {{shape: [{N}], dist: {{uniform: [{lo}, {hi}]}}}}"
                       for n, (lo, hi) in spec["inputs"].items())
    attrs = ", ".join(f"{k}: {v}" for k, v in spec["attrs"].items())
    path.write_text(f"cases:\n  - name: {op}\n    op: {op}\n    dtype: {spec['dtype']}\n    seed: 0\n"
                    f"    inputs: {{{inputs}}}\n    attrs: {{{attrs}}}\n")
    return path


@pytest.mark.parametrize("pipeline", ["ascend-numba golden", "numpy gen_data.py", "parallel copy"])
@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_sample_golden(benchmark, tmp_path, op, pipeline):
    benchmark.group = f"{op} golden 16M {SAMPLES[op]['dtype']}"
    cases = load_cases(_case_file(op, tmp_path / "cases.yaml"))
    if pipeline == "parallel copy":
        ref(benchmark, "copy")
        nbytes = (len(SAMPLES[op]["inputs"]) + 1) * N * np.dtype(SAMPLES[op]["dtype"]).itemsize
        src = np.ones(nbytes, np.uint8)
        benchmark(parallel_copy, np.empty_like(src), src)
        return
    if pipeline == "numpy gen_data.py":
        ref(benchmark, "numpy")
        fn = lambda: _gen_data(op, tmp_path / "np")  # noqa: E731
    else:
        def fn():
            return run_suite(cases, tmp_path / "an", cache_dir=None, progress=False, log=lambda line: None).bytes
    nbytes = fn()  # compile (or load the cache) outside the timing
    if pipeline == "ascend-numba golden":
        record(benchmark, op, nbytes)
    benchmark(fn)
