"""Reductions on 16M fp32 elements (issue #52, "Speed"): a row sum of 64-element rows written as an
Ascend C kernel (tiles copied in, WholeReduceSum per 256-byte repeat, the sums copied out, 2
lanes) next to the same binary tree in plain Numba (straight from GM, and staged through the
kernel's tiles: "tiled"), the sequential loop a user would write, the
NumPy expression of a gen_data.py and a same-size memory copy.  A gather group beside it: each
64-element row reversed through Gather's byte-offset table, next to the same loop in plain Numba
(direct and tiled), NumPy's reversed view and the copy."""

import numba
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.kernels import alloc_buffer, contiguous_lane_range, data_copy, gather, set_value, whole_reduce_sum

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


@numba.njit(cache=True, inline="always")
def tree_sum(v, row):
    """The binary tree of ``row`` (lane 2i with 2i + 1, then the pairs' sums...) in the buffer ``v``."""
    v[:] = row
    width = ROW
    while width > 1:
        for i in range(width // 2):
            v[i] = v[2 * i] + v[2 * i + 1]
        width //= 2
    return v[0]


@numba.njit(parallel=True, cache=True)
def numba_tree(x, z):
    rows = x.size // ROW
    for lane in numba.prange(LANES):
        v = np.empty(ROW, np.float32)
        for r in range(lane * rows // LANES, (lane + 1) * rows // LANES):
            z[r] = tree_sum(v, x[r * ROW:(r + 1) * ROW])


@numba.njit(parallel=True, cache=True)
def numba_tree_tiled(x, z):
    # The kernel's own structure in plain Numba: a tile copied into a lane buffer, its rows' trees,
    # the sums copied out.
    tiles = x.size // TILE
    for lane in numba.prange(LANES):
        a, b, v = np.empty(TILE, np.float32), np.empty(TILE // ROW, np.float32), np.empty(ROW, np.float32)
        for t in range(lane * tiles // LANES, (lane + 1) * tiles // LANES):
            a[:] = x[t * TILE:(t + 1) * TILE]
            for r in range(TILE // ROW):
                b[r] = tree_sum(v, a[r * ROW:(r + 1) * ROW])
            z[t * (TILE // ROW):(t + 1) * (TILE // ROW)] = b


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
         "plain numba tree": numba_tree, "plain numba tree tiled": numba_tree_tiled,
         "plain numba sequential": numba_sequential,
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


# ---- Gather: each 64-element row reversed through a byte-offset table -----------------------------------

@an.kernel(outputs=("z",))
def ported_row_reverse(ctx, x, z, n):
    start, end = contiguous_lane_range(ctx, n // TILE)
    a = alloc_buffer(ctx, TILE, np.float32)
    b = alloc_buffer(ctx, TILE, np.float32)
    offsets = alloc_buffer(ctx, TILE, np.uint32)
    for i in range(TILE):  # the table a host would pass in: row r's element ROW - 1 - k, in bytes
        set_value(ctx, offsets, i, np.uint32(((i // ROW) * ROW + ROW - 1 - i % ROW) * 4))
    for t in range(start, end):
        data_copy(ctx, a, 0, x, t * TILE, TILE)
        gather(ctx, b, a, offsets, 0, TILE)
        data_copy(ctx, z, t * TILE, b, 0, TILE)


@numba.njit(parallel=True, cache=True)
def numba_reverse(x, z):
    for r in numba.prange(x.size // ROW):
        for k in range(ROW):
            z[r * ROW + k] = x[r * ROW + ROW - 1 - k]


@numba.njit(parallel=True, cache=True)
def numba_reverse_tiled(x, z):
    tiles = x.size // TILE
    for lane in numba.prange(LANES):
        a, b, index = np.empty(TILE, np.float32), np.empty(TILE, np.float32), np.empty(TILE, np.uint32)
        for i in range(TILE):
            index[i] = (i // ROW) * ROW + ROW - 1 - i % ROW
        for t in range(lane * tiles // LANES, (lane + 1) * tiles // LANES):
            a[:] = x[t * TILE:(t + 1) * TILE]
            for i in range(TILE):
                b[i] = a[index[i]]
            z[t * TILE:(t + 1) * TILE] = b


GATHER_FORMS = {"ascend_numba": lambda x, z: ported_row_reverse.launch(x, z, N, block_dim=LANES),
                "plain numba": numba_reverse, "plain numba tiled": numba_reverse_tiled,
                "numpy": lambda x, z: np.copyto(z.reshape(-1, ROW), x.reshape(-1, ROW)[:, ::-1])}


@pytest.mark.parametrize("form", [*GATHER_FORMS, "copy"])
def test_gather_rows_16M(benchmark, arrays, form):
    x, _ = arrays
    z = np.empty_like(x)
    benchmark.group = "gather row reverse 16M fp32"
    if form == "copy":
        ref(benchmark, "copy")
        benchmark(parallel_copy, z, x)
        return
    run = GATHER_FORMS[form]
    run(x, z)
    if form == "ascend_numba":
        record(benchmark, "gather rows", 2 * x.nbytes)
        benchmark(run, x, z)
        assert np.array_equal(z, x.reshape(-1, ROW)[:, ::-1].ravel())
    else:
        ref(benchmark, form)
        benchmark(run, x, z)
