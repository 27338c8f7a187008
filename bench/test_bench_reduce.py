"""Reductions on 16M fp32 elements (issue #52, "Speed"): a row sum of 64-element rows written as an
Ascend C kernel (tiles copied in, WholeReduceSum per 256-byte repeat, the sums copied out, 2
lanes) next to the same binary tree in plain Numba, the sequential loop a user would write, the
NumPy expression of a gen_data.py and a same-size memory copy."""

import numba
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.kernels import alloc_buffer, contiguous_lane_range, data_copy, whole_reduce_sum

from conftest import parallel_copy, record, ref

N = 1 << 24
ROW = 64  # one 256-byte repeat of fp32
TILE = 8192
LANES = 2


@an.kernel(outputs=("z",))
def ported_row_sum(ctx, x, z, n):
    start, end = contiguous_lane_range(ctx, n // TILE)
    a = alloc_buffer(ctx, TILE, np.float32)
    b = alloc_buffer(ctx, TILE // ROW, np.float32)
    for t in range(start, end):
        data_copy(ctx, a, 0, x, t * TILE, TILE)
        whole_reduce_sum(ctx, b, a, ROW, TILE // ROW, 1, 1, 8)
        data_copy(ctx, z, t * (TILE // ROW), b, 0, TILE // ROW)


@numba.njit(parallel=True, cache=True)
def numba_tree(x, z):
    rows = x.size // ROW
    for lane in numba.prange(LANES):
        v = np.empty(ROW, np.float32)
        for r in range(lane * rows // LANES, (lane + 1) * rows // LANES):
            v[:] = x[r * ROW:(r + 1) * ROW]
            width = ROW
            while width > 1:
                for i in range(width // 2):
                    v[i] = v[2 * i] + v[2 * i + 1]
                width //= 2
            z[r] = v[0]


@numba.njit(parallel=True, cache=True)
def numba_sequential(x, z):
    for r in numba.prange(x.size // ROW):
        s = np.float32(0)
        for k in range(ROW):
            s += x[r * ROW + k]
        z[r] = s


@pytest.fixture(scope="module")
def arrays():
    x = np.random.default_rng(0).standard_normal(N, np.float32)
    return x, np.empty(N // ROW, np.float32)


FORMS = {"ascend_numba": lambda x, z: ported_row_sum.launch(x, z, N, block_dim=LANES),
         "plain numba tree": numba_tree, "plain numba sequential": numba_sequential,
         "numpy": lambda x, z: np.sum(x.reshape(-1, ROW), axis=1, out=z)}


@pytest.mark.parametrize("form", [*FORMS, "copy"])
def test_row_sum_16M(benchmark, arrays, form):
    x, z = arrays
    benchmark.group = "reduce row sum 16M fp32"
    if form == "copy":
        ref(benchmark, "copy")
        y = np.empty_like(x)
        benchmark(parallel_copy, y, x)
        return
    run = FORMS[form]
    run(x, z)
    if form == "ascend_numba":
        record(benchmark, "whole_reduce_sum rows", x.nbytes + z.nbytes)
        benchmark(run, x, z)
        want = np.empty_like(z)
        numba_tree(x, want)
        assert np.array_equal(z, want)  # the same tree, the same bits
    else:
        ref(benchmark, form)
        benchmark(run, x, z)
