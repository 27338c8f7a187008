"""ApplyAdamW at 16M on four arrays laid out at a fixed distance from one another, the op and
torch's fused AdamW stepping the same arrays: where the arrays lie moves both (docs/benchmarks.md
"Memory placement").  NumPy places each large array 16 bytes past a page, and arrays allocated
one after another a page or two apart (mod 2 MiB, a huge page): the ``4 KiB`` case."""

import functools

import numpy as np
import pytest

import ascend_numba as an

from conftest import HAVE_TORCH, paired, record, ref
from test_bench_adamw import DTYPES, SCALARS, _tensors, _torch_step

N = 1 << 24
HUGE_PAGE = 1 << 21
SPACINGS = {"4 KiB": 4096, "20 KiB": 20480}


@functools.cache
def _placed(dtype_name: str, spacing: int):
    """Copies of the bench's arrays in one buffer: the first 16 bytes past a huge page, each next
    one ``spacing`` bytes after the previous one ends (one buffer per layout: both cases step it)."""
    arrays = _tensors(N, DTYPES[dtype_name])
    nbytes = arrays[0].nbytes
    buffer = np.empty(len(arrays) * (nbytes + spacing) + 2 * HUGE_PAGE, np.uint8)
    at = (-buffer.ctypes.data) % HUGE_PAGE + 16
    placed = []
    for a in arrays:
        copy = buffer[at:at + nbytes].view(a.dtype)
        copy[:] = a
        placed.append(copy)
        at += nbytes + spacing
    return placed


@pytest.mark.parametrize("case", ["ascend_numba", "torch fused"])
@pytest.mark.parametrize("spacing", list(SPACINGS))
@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_adamw_placement(benchmark, dtype_name, spacing, case):
    if not HAVE_TORCH:
        pytest.skip("torch not installed")
    benchmark.group = f"adamw placement 16M {dtype_name} {spacing}"
    var, m, v, grad = _placed(dtype_name, SPACINGS[spacing])
    torch_fused = _torch_step(var, m, v, grad, True)
    if case == "ascend_numba":
        fn = lambda: an.apply_adamw(var, m, v, *SCALARS, grad)  # noqa: E731
        record(benchmark, "apply_adamw", 7 * var.nbytes)
    else:
        ref(benchmark, "torch_fused")
        fn = torch_fused
    fn()
    benchmark(fn)
    if case == "ascend_numba":
        paired(benchmark, fn, {"torch_fused": torch_fused})
