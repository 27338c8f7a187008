"""The demo suite (examples/cases.yaml) through `ascend-numba golden` next to a plain NumPy gen_data.py
that writes the same input/output files from the same inputs with the NumPy references."""

from pathlib import Path

import numpy as np
import pytest

from ascend_numba.golden import REGISTRY, load_cases, run_suite
from ascend_numba.golden.cases import DTYPES
from ascend_numba.golden.store import output_file

from conftest import record, ref

SUITE = Path(__file__).resolve().parents[1] / "examples" / "cases.yaml"


def plain_inputs(case) -> dict:
    """Inputs as a gen_data.py draws them: one NumPy stream per tensor, then astype."""
    out = {}
    for i, (name, spec) in enumerate(case.inputs.items()):
        rng = np.random.default_rng([case.seed, i])
        lo, hi = (spec.params + (0, 0))[:2]
        values = {"uniform": lambda: rng.uniform(lo, hi, spec.shape),
                  "normal": lambda: rng.normal(lo, hi, spec.shape),
                  "integers": lambda: rng.integers(int(lo), int(hi), spec.shape, endpoint=True),
                  "special": lambda: rng.choice(np.array(spec.params, np.float64), spec.shape)}[spec.dist]()
        with np.errstate(all="ignore"):
            out[name] = values.astype(DTYPES[case.dtype])
    return out


def numpy_gen_data(cases, out: Path) -> int:
    """What a hand-written gen_data.py does: inputs, NumPy formulas, raw .bin files."""
    total = 0
    for case in cases:
        inputs = plain_inputs(case)
        outputs = REGISTRY[case.op].reference(inputs, case.attrs)
        (out / case.name / "input").mkdir(parents=True, exist_ok=True)
        (out / case.name / "output").mkdir(parents=True, exist_ok=True)
        for name, arr in inputs.items():
            arr.tofile(out / case.name / "input" / f"{name}.bin")
            total += arr.nbytes
        for i, (name, arr) in enumerate(outputs.items()):
            arr.tofile(out / case.name / "output" / output_file(i, name))
            total += arr.nbytes
    return total


@pytest.mark.parametrize("pipeline", ["ascend-numba golden", "numpy gen_data.py"])
def test_demo_suite(benchmark, tmp_path, pipeline):
    cases = load_cases(SUITE)
    benchmark.group = f"golden suite {SUITE.name} ({len(cases)} cases)"
    if pipeline == "numpy gen_data.py":
        ref(benchmark, "numpy")
        fn = lambda: numpy_gen_data(cases, tmp_path / "np")  # noqa: E731
    else:
        def fn():
            return run_suite(cases, tmp_path / "an", cache_dir=None, progress=False, log=lambda line: None).bytes
    nbytes = fn()
    if pipeline == "ascend-numba golden":
        record(benchmark, "golden", nbytes)
    benchmark.pedantic(fn, rounds=3, iterations=1)
    benchmark.extra_info["GBps"] = nbytes / benchmark.stats.stats.median / 1e9
