"""Where TTRANS's time goes: each op's kernel beside its own tile copies, in one run.

* ``kernel``: the op's kernel launched on its plan (``Problem.run``, as the op runs it, without
  the API's argument checks and output allocation).
* ``tile copies only``: the same plan (its lanes, tiles and UB buffers) launched with a kernel that
  runs the op's tile loop with its DataCopyPads (and the Duplicates of padded rows) and no TTRANS:
  what the device structure's copies cost by themselves, before a tile is transposed.  Its
  results are not a transpose and are not checked.
* ``parallel copy``: the op's bytes, as in test_bench_ttrans.py.
* ``TTRANS`` and ``UB copy`` (``test_ttrans_tile``): one UB tile transposed, and copied UB -> UB, in
  a loop in one lane: the transpose's own speed beside a copy of its bytes.

The kernel's case records its paired ratios against both (``copies only`` and ``copy``), and the
copies-only case its paired ratio against the copy: the most any TTRANS could give the kernel, its
copy / op if the transpose took no time.  Shapes: every 2-D shape of #54's targets and NCDHW ->
FRACTAL_Z_3D, the conversion furthest from them.
"""

import numpy as np
import pytest

from ascend_numba.host.platform import get_platform
from ascend_numba.kernels import (
    alloc_buffer, contiguous_lane_range, data_copy, data_copy_pad, duplicate, kernel, ttrans,
)
from ascend_numba.kernels.primitives.ttrans import align_up
from ascend_numba.memory import empty
from ascend_numba.ops.problem import Problem
from ascend_numba.ops.ttrans import reference as R
from ascend_numba.ops.ttrans.api import _conversion, _transpose_problem
from ascend_numba.ops.ttrans.kernel import fractal_z_3d_chunk, transpose_tile
from ascend_numba.ops.ttrans.plan import plan_transpose_blocks

from conftest import paired, parallel_copy, record, ref


@kernel(nrt=False, outputs=("y",))
def transpose_copies_only(ctx, x, y, t):
    """``transpose_kernel``'s tile loop (ops/ttrans/kernel.py) without its TTRANS call."""
    itemsize = x.itemsize
    src_tile = alloc_buffer(ctx, t.tileRows * t.tileCols, x.dtype)
    dst_tile = alloc_buffer(ctx, t.tileCols * align_up(t.tileRows, 32 if itemsize == 1 else 16), x.dtype)
    task, end = contiguous_lane_range(ctx, t.outerCount * t.innerCount * t.rowTiles * t.colTiles)
    while task < end:
        r, tr, c, src_base, dst_base, _, dst_pitch = transpose_tile(t, task, itemsize, ctx.block_bytes)
        task += 1
        if tr == 0 or c == 0:
            continue
        if tr > r:
            duplicate(ctx, dst_tile, 0, c * dst_pitch)
        if r > 0:
            data_copy_pad(ctx, src_tile, 0, x, src_base, r, c * itemsize, (t.srcRowStride - c) * itemsize, 0)
        data_copy_pad(ctx, y, dst_base, dst_tile, 0, c, tr * itemsize, 0, (t.dstRowStride - tr) * itemsize)


@kernel(nrt=False, outputs=("y",))
def fractal_z_3d_copies_only(ctx, x, y, t):
    """``fractal_z_3d_kernel``'s loop (ops/ttrans/kernel.py) without its TTRANS calls."""
    itemsize = x.itemsize
    row = t.nPadded * t.c0
    out = alloc_buffer(ctx, t.hwChunk * row, x.dtype)
    planes = alloc_buffer(ctx, t.nGroup * t.c0 * t.hwChunk, x.dtype)
    task, end = contiguous_lane_range(ctx, t.d * t.c1 * t.hwChunks)
    while task < end:
        hwc, channels, pitch, src_base, out_base = fractal_z_3d_chunk(t, task, itemsize, ctx.block_bytes)
        if t.n < t.nPadded:
            duplicate(ctx, out, 0, hwc * row)
        for g0 in range(0, t.n, t.nGroup):
            group = min(t.nGroup, t.n - g0)
            if channels < t.c0:
                duplicate(ctx, planes, 0, group * t.c0 * pitch)
            for n in range(g0, g0 + group):
                data_copy_pad(ctx, planes, (n - g0) * t.c0 * pitch, x, src_base + n * t.c * t.d * t.hw, channels,
                              hwc * itemsize, (t.d * t.hw - hwc) * itemsize, 0)
        data_copy(ctx, y, out_base, out, 0, hwc * row)
        task += 1


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
PLATFORM = get_platform("A2")


def _transpose(shape, dtype):
    h, w = shape
    op = _transpose_problem(h, w, np.dtype(dtype).itemsize, PLATFORM.aiv_num, PLATFORM)
    copies = Problem(transpose_copies_only, op.tiling, op.block_dim, PLATFORM)
    return "transpose2d", op, copies, (w, h), lambda x: x.T


def _fractal_z_3d(shape, dtype):
    out_shape, op = _conversion("NCDHW", "FRACTAL_Z_3D", shape, None, 16, None, np.dtype(dtype).itemsize,
                                PLATFORM.aiv_num, PLATFORM)
    copies = Problem(fractal_z_3d_copies_only, op.tiling, op.block_dim, PLATFORM)
    return "convert_format", op, copies, out_shape, lambda x: R.convert_format_reference(x, "NCDHW", "FRACTAL_Z_3D")


FLOOR_CASES = {
    "transpose2d 1024x1024 float32": (_transpose, (1024, 1024), np.float32),
    "transpose2d 4096x4096 float32": (_transpose, (4096, 4096), np.float32),
    "transpose2d 4096x4096 float16": (_transpose, (4096, 4096), np.float16),
    "transpose2d 4096x4096 int8": (_transpose, (4096, 4096), np.int8),
    "transpose2d 4000x3000 float32": (_transpose, (4000, 3000), np.float32),
    "NCDHW -> FRACTAL_Z_3D (32, 64, 8, 28, 28) float16": (_fractal_z_3d, (32, 64, 8, 28, 28), np.float16),
}


@kernel(nrt=False, outputs=("y",))
def ttrans_tile_loop(ctx, x, y, reps, transpose, t):
    """One UB tile of the plan's size, loaded once, then ``reps`` TTRANS into a second tile (or, not
    ``transpose``, ``reps`` UB -> UB DataCopys of it): TTRANS's own speed beside a copy's."""
    src_tile = alloc_buffer(ctx, t.tileRows * t.tileCols, x.dtype)
    dst_tile = alloc_buffer(ctx, t.tileRows * t.tileCols, x.dtype)
    tmp = alloc_buffer(ctx, t.tmpElems, x.dtype)
    data_copy(ctx, src_tile, 0, x, 0, t.tileRows * t.tileCols)
    for _ in range(reps):
        if transpose:
            ttrans(ctx, dst_tile, t.tileRows, src_tile, t.tileCols, t.tileRows, t.tileCols, tmp)
        else:
            data_copy(ctx, dst_tile, 0, src_tile, 0, t.tileRows * t.tileCols)
    data_copy(ctx, y, 0, dst_tile, 0, t.tileRows * t.tileCols)


TILE_REPS = 2000


@pytest.mark.parametrize("case", ["TTRANS", "UB copy"])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_ttrans_tile(benchmark, dtype, case):
    """TTRANS of one UB tile of the 4096² plan's size (int8 256², fp16 160x176, fp32 128², fp64
    80x96), in a loop of TILE_REPS in one lane, beside a UB -> UB DataCopy of the same bytes; time
    per call (one launch spread over the TILE_REPS calls)."""
    itemsize = np.dtype(dtype).itemsize
    t = plan_transpose_blocks(1, 1, 4096, 4096, 4096, 4096, 4096, 0, 0, 4096, 0, 0, 4096, itemsize, PLATFORM)
    x = (np.arange(t.tileRows * t.tileCols) % 97).astype(dtype)
    y = np.empty_like(x)
    benchmark.group = f"ttrans floor one {t.tileRows}x{t.tileCols} tile, {dtype} (per call)"
    transpose = case == "TTRANS"
    if transpose:
        ttrans_tile_loop.launch(x, y, 1, 1, t, block_dim=1)
        assert np.array_equal(y.reshape(t.tileCols, t.tileRows), x.reshape(t.tileRows, t.tileCols).T)
    else:
        ref(benchmark, "UB copy")
    fn = lambda: ttrans_tile_loop.launch(x, y, TILE_REPS, int(transpose), t, block_dim=1)  # noqa: E731
    fn()
    benchmark.pedantic(fn, rounds=7, iterations=1)
    # Each round timed one launch of TILE_REPS calls: the statistics are per call.
    benchmark.stats.stats.data[:] = [v / TILE_REPS for v in benchmark.stats.stats.data]


@pytest.mark.parametrize("case", ["kernel", "tile copies only", "parallel copy"])
@pytest.mark.parametrize("name", list(FLOOR_CASES))
def test_ttrans_floor(benchmark, name, case):
    build, shape, dtype = FLOOR_CASES[name]
    x = (np.arange(int(np.prod(shape))) % 97).astype(dtype).reshape(shape)
    op_name, op, copies, out_shape, reference = build(shape, dtype)
    y = empty(out_shape, dtype)  # aligned as the op's results are (an np.empty starts 16 bytes into a line)
    uint = _UINT[x.itemsize]
    x_bits, y_bits = x.reshape(-1).view(uint), y.reshape(-1).view(uint)
    benchmark.group = f"ttrans floor {name}"
    copy_out = np.empty_like(x)
    refs = {"copies only": lambda: copies.run((x_bits, y_bits)), "copy": lambda: parallel_copy(copy_out, x)}
    if case == "kernel":
        record(benchmark, op_name, 2 * x.nbytes)
        fn = lambda: op.run((x_bits, y_bits))  # noqa: E731
        fn()
        assert np.array_equal(y, reference(x))
    elif case == "tile copies only":
        ref(benchmark, "copies only")
        fn = refs["copies only"]
    else:
        ref(benchmark, "copy")
        fn = refs["copy"]
    fn()
    benchmark(fn)
    if case == "kernel":
        paired(benchmark, fn, refs)
    elif case == "tile copies only":  # the ceiling: copy / op with a TTRANS that took no time
        paired(benchmark, fn, {"copy": refs["copy"]})
