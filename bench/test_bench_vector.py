"""The vector API on 16M fp32 elements: Ascend C style kernels (tiles copied in, count-form
instructions, copied out, 2 lanes) next to the same loop in plain Numba, the NumPy expression a
gen_data.py would use and a same-size memory copy (issue #51, "Speed").

The "plain numba" form is the fused loop (one pass, no staging); "plain numba tiled" is the
kernel's own structure (the same tiles copied into per-lane buffers, computed, copied out)
written in plain Numba, for the one-instruction and three-instruction groups: the twin's
primitives are at plain-Numba speed when they match the tiled form; the distance from the tiled
form to the fused loop is what staging through a UB costs on a CPU.

Groups: one instruction (Add), a chain of three (Mul, Adds, Relu), compare-then-select (a
threshold: ``where(x > y, x, y)`` through a bit mask) and Add in the level-0 form under a
continuous mask (48 of each repeat's 64 lanes: the lane-by-lane path).
"""

import numba
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.kernels import (CMPMODE, SELMODE, BinaryRepeatParams, add, adds, alloc_buffer, compare,
                                  contiguous_lane_range, data_copy, mul, relu, select)

from conftest import parallel_copy, record, ref

N = 1 << 24
TILE = 8192  # elements per UB tile: 32 KB of fp32 (a 192 KB UB holds the five tiles)
LANES = 2
LANES_ON = 48  # the masked Add's lanes of each 64-lane repeat


@an.kernel(outputs=("z",))
def ported_add(ctx, x, y, z, n):
    start, end = contiguous_lane_range(ctx, n // TILE)
    a = alloc_buffer(ctx, TILE, np.float32)
    b = alloc_buffer(ctx, TILE, np.float32)
    for t in range(start, end):
        data_copy(ctx, a, 0, x, t * TILE, TILE)
        data_copy(ctx, b, 0, y, t * TILE, TILE)
        add(ctx, a, a, b, TILE)
        data_copy(ctx, z, t * TILE, a, 0, TILE)


@an.kernel(outputs=("z",))
def ported_chain(ctx, x, y, z, n, shift):
    start, end = contiguous_lane_range(ctx, n // TILE)
    a = alloc_buffer(ctx, TILE, np.float32)
    b = alloc_buffer(ctx, TILE, np.float32)
    for t in range(start, end):
        data_copy(ctx, a, 0, x, t * TILE, TILE)
        data_copy(ctx, b, 0, y, t * TILE, TILE)
        mul(ctx, a, a, b, TILE)
        adds(ctx, a, a, shift, TILE)
        relu(ctx, a, a, TILE)
        data_copy(ctx, z, t * TILE, a, 0, TILE)


@an.kernel(outputs=("z",))
def ported_threshold(ctx, x, y, z, n):
    start, end = contiguous_lane_range(ctx, n // TILE)
    a = alloc_buffer(ctx, TILE, np.float32)
    b = alloc_buffer(ctx, TILE, np.float32)
    mask = alloc_buffer(ctx, TILE // 8, np.uint8)
    for t in range(start, end):
        data_copy(ctx, a, 0, x, t * TILE, TILE)
        data_copy(ctx, b, 0, y, t * TILE, TILE)
        compare(ctx, mask, a, b, CMPMODE.GT, TILE)
        select(ctx, a, mask, a, b, SELMODE.VSEL_TENSOR_TENSOR_MODE, TILE)
        data_copy(ctx, z, t * TILE, a, 0, TILE)


@an.kernel(outputs=("z",))
def ported_masked_add(ctx, x, y, z, n):
    start, end = contiguous_lane_range(ctx, n // TILE)
    a = alloc_buffer(ctx, TILE, np.float32)
    b = alloc_buffer(ctx, TILE, np.float32)
    for t in range(start, end):
        data_copy(ctx, a, 0, x, t * TILE, TILE)
        data_copy(ctx, b, 0, y, t * TILE, TILE)
        add(ctx, a, a, b, LANES_ON, TILE // 64, BinaryRepeatParams(1, 1, 1, 8, 8, 8))
        data_copy(ctx, z, t * TILE, a, 0, TILE)


@numba.njit(parallel=True, cache=True)
def numba_masked_add(x, y, z):
    for i in numba.prange(x.size):
        z[i] = x[i] + y[i] if i % 64 < LANES_ON else x[i]


def numpy_masked_add(x, y, z):
    z[:] = x
    z.reshape(-1, 64)[:, :LANES_ON] += y.reshape(-1, 64)[:, :LANES_ON]


@numba.njit(parallel=True, cache=True)
def numba_add(x, y, z):
    for i in numba.prange(x.size):
        z[i] = x[i] + y[i]


@numba.njit(parallel=True, cache=True)
def numba_chain(x, y, z, shift):
    for i in numba.prange(x.size):
        v = x[i] * y[i] + shift
        z[i] = v if v > 0 else np.float32(0)


@numba.njit(parallel=True, cache=True)
def numba_threshold(x, y, z):
    for i in numba.prange(x.size):
        z[i] = x[i] if x[i] > y[i] else y[i]


@numba.njit(parallel=True, cache=True)
def numba_add_tiled(x, y, z):
    tiles = x.size // TILE
    for lane in numba.prange(LANES):
        a, b = np.empty(TILE, np.float32), np.empty(TILE, np.float32)
        for t in range(lane * tiles // LANES, (lane + 1) * tiles // LANES):
            a[:] = x[t * TILE:(t + 1) * TILE]
            b[:] = y[t * TILE:(t + 1) * TILE]
            a += b
            z[t * TILE:(t + 1) * TILE] = a


@numba.njit(parallel=True, cache=True)
def numba_chain_tiled(x, y, z, shift):
    tiles = x.size // TILE
    for lane in numba.prange(LANES):
        a, b = np.empty(TILE, np.float32), np.empty(TILE, np.float32)
        for t in range(lane * tiles // LANES, (lane + 1) * tiles // LANES):
            a[:] = x[t * TILE:(t + 1) * TILE]
            b[:] = y[t * TILE:(t + 1) * TILE]
            a *= b
            a += shift
            np.maximum(a, np.float32(0), a)
            z[t * TILE:(t + 1) * TILE] = a


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(N, np.float32), rng.standard_normal(N, np.float32)
    return x, y, np.empty_like(x)


TILED = {"add": numba_add_tiled, "mul adds relu": lambda x, y, z: numba_chain_tiled(x, y, z, np.float32(0.5))}

CASES = {  # group: (twin, plain Numba, NumPy)
    "add": (lambda x, y, z: ported_add.launch(x, y, z, N, block_dim=LANES),
            numba_add, lambda x, y, z: np.add(x, y, out=z)),
    "mul adds relu": (lambda x, y, z: ported_chain.launch(x, y, z, N, 0.5, block_dim=LANES),
                      lambda x, y, z: numba_chain(x, y, z, np.float32(0.5)),
                      lambda x, y, z: np.maximum(x * y + np.float32(0.5), 0, out=z)),
    "compare select": (lambda x, y, z: ported_threshold.launch(x, y, z, N, block_dim=LANES),
                       numba_threshold, lambda x, y, z: np.where(x > y, x, y)),
    "add level-0 masked": (lambda x, y, z: ported_masked_add.launch(x, y, z, N, block_dim=LANES),
                           numba_masked_add, numpy_masked_add),
}


@pytest.mark.parametrize("group", CASES)
@pytest.mark.parametrize("form", ["ascend_numba", "plain numba", "plain numba tiled", "numpy", "copy"])
def test_vector_16M(benchmark, arrays, group, form):
    x, y, z = arrays
    benchmark.group = f"vector {group} 16M fp32"
    twin, plain, numpy_expr = CASES[group]
    if form == "copy":
        ref(benchmark, "copy")
        benchmark(parallel_copy, z, x)
        return
    if form == "plain numba tiled" and group not in TILED:
        pytest.skip("the tiled plain-Numba form is written for add and mul adds relu")
    run = {"ascend_numba": twin, "plain numba": plain, "plain numba tiled": TILED.get(group),
           "numpy": numpy_expr}[form]
    run(x, y, z)  # compile / load the cache outside the timing
    if form == "ascend_numba":
        record(benchmark, f"vector {group}", 3 * x.nbytes)
        benchmark(run, x, y, z)
        want = np.empty_like(z)
        plain(x, y, want)
        assert np.array_equal(z, want)
    else:
        ref(benchmark, form)
        benchmark(run, x, y, z)
