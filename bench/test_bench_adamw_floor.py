"""Where ApplyAdamW's time goes at 16M: the op beside its parts, in one run.

* ``staged copies only``: ApplyAdamW's plan (lanes, tiles, double-buffered queues) with the CopyIn
  of four inputs and the CopyOut of three outputs per tile run stage by stage over whole tiles, as
  the op-by-op path runs them, no Compute.
* ``compute only``: the Compute (the same vector programs, fused) over each lane's tiles as often
  as the op runs it, on UB tiles filled once: no copies.
* ``fused loop on GM``: the seed-order step as one parallel Numba loop over the GM arrays, no UB
  (fp32 only).
* ``streams only``: the op's GM traffic as one parallel Numba loop, no step: read var, m, v, grad,
  write var, m, v back unchanged (an OR with the grad's bits masked by a zero the compiler cannot
  see, so no load or store folds away).  What any loop over these arrays pays before its Compute,
  beside the parallel copy's two streams of the same bytes.
* torch fused (when installed) and a parallel copy of the op's bytes, as in test_bench_adamw.py.
"""

import numba
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.host.platform import get_platform
from ascend_numba.kernels import alloc_buffer, big_small_lane_range, constant, data_copy, duplicate, kernel
from ascend_numba.ops.adamw import SCALARS as ADAMW_SCALARS
from ascend_numba.ops.adamw.kernel import adamw_update, adamw_update_in_fp32
from ascend_numba.ops.adamw.plan import DTYPE_CODES, computes_in_fp32, plan_adamw
from ascend_numba.ops.problem import Problem

from conftest import HAVE_TORCH, parallel_copy, ref
from test_bench_adamw import DTYPES, _tensors, _torch_step

N = 1 << 24
SCALARS = tuple(ADAMW_SCALARS.values())

IO = constant("IO", "element type of the GM tensors and queues")
CAST = constant("CAST", "compute through fp32 work tiles")
DTYPE = constant("DTYPE", "0 fp32, 1 fp16, 2 bf16")


@kernel(nrt=False)
def staged_copies_only(ctx, var, m, v, grad, var_out, m_out, v_out, t):
    """ApplyAdamW's copies per tile (double-buffered queues of its plan), without the Compute."""
    start, end = big_small_lane_range(ctx, t.bigCores, t.smallBlocks, t.blockElems, t.totalLength)
    tile = t.tileDataNum
    in_var = alloc_buffer(ctx, 2 * tile, IO)
    in_m = alloc_buffer(ctx, 2 * tile, IO)
    in_v = alloc_buffer(ctx, 2 * tile, IO)
    in_g = alloc_buffer(ctx, 2 * tile, IO)
    pos, slot = start, 0
    while pos < end:
        n = min(tile, end - pos)
        q = slot * tile
        data_copy(ctx, in_var, q, var, pos, n)
        data_copy(ctx, in_m, q, m, pos, n)
        data_copy(ctx, in_v, q, v, pos, n)
        data_copy(ctx, in_g, q, grad, pos, n)
        data_copy(ctx, var_out, pos, in_var, q, n)
        data_copy(ctx, m_out, pos, in_m, q, n)
        data_copy(ctx, v_out, pos, in_v, q, n)
        pos += n
        slot ^= 1


@kernel(nrt=False)
def compute_only(ctx, var, t):
    """ApplyAdamW's fused Compute over this lane's tiles, on UB tiles filled once (no copies)."""
    start, end = big_small_lane_range(ctx, t.bigCores, t.smallBlocks, t.blockElems, t.totalLength)
    tile = t.tileDataNum
    one = np.float32(1.0)
    b1, b2, eps, decay, b2o, step = (np.float32(0.9), np.float32(0.99), np.float32(1e-8), np.float32(0.99999),
                                     np.float32(0.96), np.float32(-0.01))
    queues = alloc_buffer(ctx, 8 * tile, IO)  # var, m, v, g, var_o, m_o, v_o, mgn
    duplicate(ctx, queues, np.float32(0.5), 8 * tile)
    if CAST:
        work = alloc_buffer(ctx, 7 * tile, np.float32)  # 5 work tiles, t1, t2
        for pos in range(start, end, tile):
            adamw_update_in_fp32(ctx, min(tile, end - pos), True, queues[0:], queues[tile:], queues[2 * tile:],
                                 queues[3 * tile:], queues[7 * tile:], queues[4 * tile:], queues[5 * tile:],
                                 queues[6 * tile:], work[0:], work[tile:], work[2 * tile:], work[3 * tile:],
                                 work[4 * tile:], work[5 * tile:], work[6 * tile:], DTYPE, 0, 0, 0, b1, b2, eps,
                                 decay, b2o, step, one)
    else:
        temps = alloc_buffer(ctx, 2 * tile, IO)
        for pos in range(start, end, tile):
            adamw_update(ctx, min(tile, end - pos), True, queues[0:], queues[tile:], queues[2 * tile:],
                         queues[3 * tile:], queues[7 * tile:], queues[4 * tile:], queues[5 * tile:],
                         queues[6 * tile:], temps[0:], temps[tile:], 0, 0, 0, b1, b2, eps, decay, b2o, step, one)


@numba.njit(parallel=True, cache=True, error_model="numpy")
def _fused_loop_on_gm(var, m, v, g, b1, b2, lr, wd, eps, b1p, b2p):
    one = np.float32(1.0)
    decay, b1o, b2o = one - lr * wd, b1p * b1, b2p * b2
    step = lr / (b1o - one)
    for i in numba.prange(var.size):
        m_o = m[i] * b1 - (b1 - one) * g[i]
        v_o = v[i] * b2 - ((b2 - one) * g[i]) * g[i]
        denom = np.sqrt((-v_o) / (b2o - one)) + eps
        var[i] = var[i] * decay + step * (m_o / denom)
        m[i], v[i] = m_o, v_o


@numba.njit(parallel=True, cache=True)
def _streams_only(var, m, v, g, zero):
    for i in numba.prange(var.size):
        gi = g[i] & zero
        var[i] |= gi
        m[i] |= gi
        v[i] |= gi


def _problem(kernel_, dtype_name, plan, plat):
    """The op's plan (seed order, no key) launched with ``kernel_``."""
    return Problem(kernel_, plan.tiling, plan.block_dim, plat,
                   {"IO": np.float32 if dtype_name == "float32" else np.uint16,
                    "CAST": computes_in_fp32(dtype_name, "seed"), "DTYPE": DTYPE_CODES[dtype_name]})


CASES = ["ascend_numba", "staged copies only", "compute only", "fused loop on GM", "streams only", "torch fused",
         "parallel copy"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_adamw_floor(benchmark, dtype_name, case):
    dtype = DTYPES[dtype_name]
    benchmark.group = f"adamw floor 16M {dtype_name}"
    var, m, v, grad = _tensors(N, dtype)
    plat = get_platform("A2")
    plan = plan_adamw(N, dtype_name, "seed", False, False, None, plat)
    bits = (lambda a: a.view(np.float32)) if dtype_name == "float32" else (lambda a: a.view(np.uint16))
    if case == "ascend_numba":
        ref(benchmark, "op")
        fn = lambda: an.apply_adamw(var, m, v, *SCALARS, grad)  # noqa: E731
    elif case == "staged copies only":
        problem = _problem(staged_copies_only, dtype_name, plan, plat)
        args = tuple(bits(a) for a in (var, m, v, grad, var, m, v))
        fn = lambda: problem.run(args)  # noqa: E731
    elif case == "compute only":
        problem = _problem(compute_only, dtype_name, plan, plat)
        fn = lambda: problem.run((bits(var),))  # noqa: E731
    elif case == "fused loop on GM":
        if dtype_name != "float32":
            pytest.skip("fp32 only: the GM loop has no fp16/bf16 rounding")
        f = np.float32
        fn = lambda: _fused_loop_on_gm(var, m, v, grad, f(0.9), f(0.99), f(1e-3), f(1e-2), f(1e-8), f(0.9),  # noqa: E731
                                       f(0.99))
    elif case == "streams only":
        word = np.uint32 if dtype_name == "float32" else np.uint16
        words = tuple(a.view(word) for a in (var, m, v, grad))
        fn = lambda: _streams_only(*words, word(0))  # noqa: E731
    elif case == "torch fused":
        if not HAVE_TORCH:
            pytest.skip("torch not installed")
        fn = _torch_step(var, m, v, grad, True)
    else:
        src = np.empty(7 * var.nbytes // 2, np.uint8)
        dst = np.empty_like(src)
        fn = lambda: parallel_copy(dst, src)  # noqa: E731
    fn()
    benchmark(fn)
