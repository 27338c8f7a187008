"""Checked mode: its cost on the Tile benchmark shapes, and what the hooks cost when it is off.

Two kinds of groups, read from the ratio table:

* ``checked <shape>``: ``an.tile`` unchecked (the reference) next to
  ``checked=True``.  Target: checked within 10x of unchecked.
* ``hooks off``: the staged-copy kernel built on ``data_copy`` (whose check and
  trace hooks compile to nothing on a plain lane) next to the same kernel built
  on the raw byte copy underneath, with no hook in the source at all.  Target:
  1.0x -- unchecked speed is unchanged by checked mode.
"""

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.ops.copy.plan import plan_copy
from ascend_numba.kernels import alloc_buffer, big_small_lane_range, data_copy, kernel
from ascend_numba.kernels.primitives.dma import copy_bytes

from conftest import record, ref
from test_bench_tile import LARGE, SEED

SHAPES = {**{f"{name} {dtype}": (shape, reps, dtype) for name, (shape, reps) in SEED.items()
             for dtype in ("float32", "int8")}, **LARGE}


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
@pytest.mark.parametrize("name", list(SHAPES))
def test_tile_checked_vs_unchecked(benchmark, name, checked):
    shape, reps, dtype = SHAPES[name]
    x = (np.arange(int(np.prod(shape))) % 101).astype(dtype).reshape(shape)
    benchmark.group = f"checked tile {name} (path {an.plan_tile(shape, reps, x.itemsize).path})"
    if not checked:
        ref(benchmark, "unchecked")
    else:
        record(benchmark, "tile checked", x.nbytes * (1 + int(np.prod(reps))),
               path=an.plan_tile(shape, reps, x.itemsize).path)
    expected = np.tile(x, reps)
    assert np.array_equal(an.tile(x, reps, checked=checked), expected)
    benchmark(lambda: an.tile(x, reps, checked=checked))


@kernel
def staged_copy_hooks_compiled_out(ctx, src, dst, tiling):
    """The staged copy kernel, every copy a data_copy (hooks present, compiled to nothing)."""
    start, end = big_small_lane_range(ctx, tiling.bigCores, tiling.smallBlocks, tiling.blockBytes, tiling.totalBytes)
    buf = alloc_buffer(ctx, tiling.bufBytes, np.uint8)
    for pos in range(start, end, tiling.bufBytes):
        n = min(tiling.bufBytes, end - pos)
        data_copy(ctx, buf, 0, src, pos, n)
        data_copy(ctx, dst, pos, buf, 0, n)


@kernel
def staged_copy_no_hooks(ctx, src, dst, tiling):
    """The same kernel on the raw clamped byte copy: no hook in the source at all."""
    start, end = big_small_lane_range(ctx, tiling.bigCores, tiling.smallBlocks, tiling.blockBytes, tiling.totalBytes)
    buf = alloc_buffer(ctx, tiling.bufBytes, np.uint8)
    for pos in range(start, end, tiling.bufBytes):
        n = min(tiling.bufBytes, end - pos)
        copy_bytes(buf, 0, src, pos, n)
        copy_bytes(dst, pos, buf, 0, n)


@pytest.mark.parametrize("nbytes", [1 << 20, 256 << 20], ids=["1MB", "256MB"])
@pytest.mark.parametrize("variant", ["data_copy (hooks compiled out)", "raw copy (no hooks)"])
def test_hooks_cost_nothing_unchecked(benchmark, nbytes, variant):
    plat = an.get_platform("A2")
    src = np.random.default_rng(0).integers(0, 256, nbytes, dtype=np.uint8)
    dst = np.empty_like(src)
    tiling = plan_copy(nbytes, plat.aiv_num, plat)
    k = staged_copy_hooks_compiled_out if variant.startswith("data_copy") else staged_copy_no_hooks
    benchmark.group = f"hooks off: staged copy {nbytes >> 20} MB"
    if k is staged_copy_no_hooks:
        ref(benchmark, "no hooks")
    else:
        record(benchmark, "staged copy (hooks compiled out)", 2 * nbytes)
    k.launch(src, dst, tiling, block_dim=plat.aiv_num)
    assert np.array_equal(dst, src)
    benchmark(lambda: k.launch(src, dst, tiling, block_dim=plat.aiv_num))
