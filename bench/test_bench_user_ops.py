"""The user's own ops (``ASCEND_NUMBA_OPS`` / ``ascend_numba.ops`` entry points, see
``ascend_numba/ops/user.py``): each registered op's ``bench_cases``, the op next to its NumPy
reference and a same-size copy, in one run.  Nothing to run without a user op."""

import numpy as np
import pytest

from ascend_numba.dtypes import dtype_by_name
from ascend_numba.ops import REGISTRY, SHIPPED, load_ops

from conftest import parallel_copy, record, ref

load_ops()
CASES = [(name, group, case) for name, entry in REGISTRY.items() if name not in SHIPPED
         for group, cases in entry.bench_cases.items() for case in cases]


def _inputs(entry, case):
    dtype = dtype_by_name(case.dtype or entry.dtypes[0])
    return entry.test_inputs(case.shapes, dtype, np.random.default_rng(0))


@pytest.mark.parametrize("name, group, case", CASES, ids=[f"{n}-{g}-{c.name}" for n, g, c in CASES])
@pytest.mark.parametrize("form", ["ascend_numba", "reference", "copy"])
def test_user_op(benchmark, name, group, case, form):
    entry = REGISTRY[name]
    inputs = _inputs(entry, case)
    benchmark.group = f"{name} {group} {case.name}"
    if form == "copy":
        ref(benchmark, "copy")
        src = np.concatenate([a.reshape(-1).view(np.uint8) for a in inputs.values()])
        benchmark(parallel_copy, np.empty_like(src), src)
        return
    function = entry.function if form == "ascend_numba" else entry.reference_function
    entry.call(function, inputs, case.attrs, {})  # compile (or load the cache) outside the timing
    if form == "ascend_numba":
        record(benchmark, name, sum(a.nbytes for a in inputs.values()))
    else:
        ref(benchmark, "reference")
    benchmark(entry.call, function, inputs, case.attrs, {})
