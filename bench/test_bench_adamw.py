"""ApplyAdamW: next to the NumPy formula (what gen_data.py does), torch fused/foreach AdamW (when
installed), a parallel copy moving the same bytes, and the op-by-op run (``fused=False``: each
copy and op over whole tiles).  Targets at 16M (#37): >= 1.0x torch fused for fp32 and bf16,
>= 0.6x for fp16, the op <= 1.25x the parallel copy, fp32 >= 15x the NumPy formula; 1M fp32 and
bf16 >= 0.7x torch fused.  bench/test_bench_adamw_floor.py shows where the time goes."""

import functools

import ml_dtypes
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.ops import REGISTRY
from ascend_numba.ops.adamw import SCALARS as ADAMW_SCALARS
from ascend_numba.ops.adamw.reference import apply_adamw_reference

from conftest import HAVE_TORCH, paired, parallel_copy, record, ref

SIZES = {name: cases[0].shapes["var"][0] for name, cases in REGISTRY["apply_adamw"].bench_cases.items()}
DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}
SCALARS = tuple(ADAMW_SCALARS.values())  # the registry entry's, in argument order
CASES = ["ascend_numba", "op by op", "numpy formula", "torch fused", "torch foreach", "parallel copy"]


@functools.cache
def _tensors(n, dtype):
    """The arrays every case of a size and dtype steps (here and in the floor bench): where they lie
    moves a 16M step by up to 1.7x (docs/benchmarks.md "Memory placement"), so medians of two
    cases compare only on the same arrays.  The cases update them in place."""
    rng = np.random.default_rng(0)
    var = rng.standard_normal(n).astype(dtype)
    m = (rng.standard_normal(n) * 0.1).astype(dtype)
    v = np.abs(rng.standard_normal(n) * 0.01).astype(dtype)
    grad = rng.standard_normal(n).astype(dtype)
    return var, m, v, grad


def _torch_step(var, m, v, grad, fused):
    """torch's AdamW (fused or foreach) stepping the op's own arrays: its parameter, gradient and
    state share their memory, so both run on the same placement (which moves a 16M step by up to
    1.7x, see docs/benchmarks.md "Memory placement")."""
    import torch

    def shared(a):
        if a.dtype.itemsize == 2:  # fp16 or ml_dtypes' bf16: torch reads the bits
            return torch.from_numpy(a.view(np.int16)).view(torch.float16 if a.dtype == np.float16 else torch.bfloat16)
        return torch.from_numpy(a)

    p = torch.nn.Parameter(shared(var))
    p.grad = shared(grad)
    opt = torch.optim.AdamW([p], lr=1e-3, betas=(0.9, 0.99), eps=1e-8, weight_decay=1e-2,
                            fused=fused, foreach=not fused)
    opt.step()  # creates the state, which then becomes m and v
    opt.state[p]["exp_avg"], opt.state[p]["exp_avg_sq"] = shared(m), shared(v)
    opt.step()
    return opt.step


# Each reference case by the name the ratio tables and tracking use.
REFERENCES = {"numpy formula": "numpy", "parallel copy": "copy", "torch fused": "torch_fused",
              "torch foreach": "torch_foreach"}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("size", list(SIZES))
def test_adamw(benchmark, size, dtype_name, case):
    n, dtype = SIZES[size], DTYPES[dtype_name]
    benchmark.group = f"adamw {size} {dtype_name}"
    var, m, v, grad = _tensors(n, dtype)
    traffic = 7 * var.nbytes  # reads var, m, v, grad; writes var, m, v
    refs = _references(var, m, v, grad, traffic)
    if case == "ascend_numba":
        fn = lambda: an.apply_adamw(var, m, v, *SCALARS, grad)  # noqa: E731
        record(benchmark, "apply_adamw", traffic,
               lambda: an.apply_adamw(var.copy(), m.copy(), v.copy(), *SCALARS, grad, trace=True))
    elif case == "op by op":
        fn = lambda: an.apply_adamw(var, m, v, *SCALARS, grad, fused=False)  # noqa: E731
        record(benchmark, "apply_adamw op by op", traffic)
    elif REFERENCES[case] in refs:
        ref(benchmark, REFERENCES[case])
        fn = refs[REFERENCES[case]]
    else:
        pytest.skip("torch not installed")
    fn()
    benchmark(fn)
    benchmark.extra_info["GBps"] = traffic / benchmark.stats.stats.median / 1e9
    if case == "ascend_numba":
        paired(benchmark, fn, refs)


def _references(var, m, v, grad, traffic):
    """What a user would run instead, by reference name (torch only when installed)."""
    src = np.empty(traffic // 2, np.uint8)
    dst = np.empty_like(src)
    refs = {"numpy": lambda: apply_adamw_reference(var, m, v, *SCALARS, grad),
            "copy": lambda: parallel_copy(dst, src)}
    if HAVE_TORCH:
        refs["torch_fused"] = _torch_step(var, m, v, grad, True)
        refs["torch_foreach"] = _torch_step(var, m, v, grad, False)
    return refs
