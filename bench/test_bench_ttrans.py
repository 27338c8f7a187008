"""TTRANS: 2-D transposes next to np.ascontiguousarray(a.T) and torch .t().contiguous(); format
conversions next to NumPy pad + reshape + transpose.  Targets: 2-D >= 5x torch and >= 15x NumPy on
4096^2; conversions >= 3x NumPy."""

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.ops import REGISTRY
from ascend_numba.ops.ttrans import reference as R

from conftest import HAVE_TORCH, output_pool, paired, parallel_copy, record, ref

TRANSPOSES = [(c.shapes["x"], c.dtype) for c in REGISTRY["transpose2d"].bench_cases["transpose"]]
CONVERSIONS = {c.name: c for c in REGISTRY["convert_format"].bench_cases["convert"]}
CASES = ["ascend_numba", "ascend_numba no pool", "ascend_numba out=", "numpy", "torch", "parallel copy"]
# "no pool": a fresh result with the output pool off (page faults on every call, as NumPy pays).


REFERENCES = {"numpy": "numpy", "parallel copy": "copy", "torch": "torch"}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape, dtype", TRANSPOSES, ids=[f"{s[0]}x{s[1]}-{d}" for s, d in TRANSPOSES])
def test_transpose2d(benchmark, shape, dtype, case):
    a = (np.arange(shape[0] * shape[1]) % 97).astype(dtype).reshape(shape)
    out = np.empty(shape[::-1], dtype)
    benchmark.group = f"transpose2d {shape[0]}x{shape[1]} {dtype}"
    refs = {"numpy": lambda: np.ascontiguousarray(a.T), "copy": lambda: parallel_copy(out, a)}
    if HAVE_TORCH:
        import torch
        ta = torch.from_numpy(a)
        refs["torch"] = lambda: ta.t().contiguous()
    if case.startswith("ascend_numba"):
        record(benchmark, "transpose2d", 2 * a.nbytes, lambda: an.transpose2d(a, trace=True))
    if case in ("ascend_numba", "ascend_numba no pool"):
        fn = lambda: an.transpose2d(a)  # noqa: E731
    elif case == "ascend_numba out=":
        fn = lambda: an.transpose2d(a, out=out)  # noqa: E731
    elif REFERENCES[case] in refs:
        ref(benchmark, REFERENCES[case])
        fn = refs[REFERENCES[case]]
    else:
        pytest.skip("torch not installed")
    with output_pool(case != "ascend_numba no pool"):
        fn()
        benchmark(fn)
        if case == "ascend_numba":
            paired(benchmark, fn, refs)
    benchmark.extra_info["GBps"] = 2 * a.nbytes / benchmark.stats.stats.median / 1e9


@pytest.mark.parametrize("case", ["ascend_numba", "ascend_numba no pool", "numpy"])
@pytest.mark.parametrize("conversion", list(CONVERSIONS))
def test_conversions(benchmark, conversion, case):
    spec = CONVERSIONS[conversion]
    shape = spec.shapes["x"]
    x = (np.arange(int(np.prod(shape))) % 97).astype(spec.dtype).reshape(shape)
    src, dst = spec.attrs["src"], spec.attrs["dst"]
    benchmark.group = f"convert_format {conversion} {x.shape} float16"
    numpy = (lambda: R.nchw_to_nc1hwc0(x, 16)) if src == "NCHW" else (lambda: R.nc1hwc0_to_fractal_z(x, 16))
    if case == "numpy":
        ref(benchmark, "numpy")
        fn = numpy
    else:
        fn = lambda: an.convert_format(x, src, dst)  # noqa: E731
        record(benchmark, "convert_format", 2 * x.nbytes, lambda: an.convert_format(x, src, dst, trace=True))
    with output_pool(case != "ascend_numba no pool"):
        fn()
        benchmark(fn)
        if case == "ascend_numba":
            paired(benchmark, fn, {"numpy": numpy})
    benchmark.extra_info["GBps"] = 2 * x.nbytes / benchmark.stats.stats.median / 1e9
