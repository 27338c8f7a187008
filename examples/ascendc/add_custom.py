"""Ascend samples' AddKernelInvocationNeo, ported line for line: z = x + y in fp16 on 8 cores, each
core's 2048 elements in 16 tiles of 128 through double-buffered queues.

Source (not copied here; hold it beside this file): By-gitee/opDev at 55c84ae (a copy of gitee
ascend/samples), ``operator/ascendc/0_introduction/3_add_kernellaunch/AddKernelInvocationNeo/``:
``add_custom.cpp`` (the kernel), ``main.cpp`` (blockDim 8), ``scripts/gen_data.py`` (the golden),
``scripts/verify_result.py`` (the tolerance).  The class's members are a named tuple built by
``init``; its methods are ``@aicore`` functions taking it first.
"""

from __future__ import annotations

import collections

import numpy as np

import ascend_numba as an
from ascend_numba.kernels import (
    TPipe, TPosition, TQue, add, aicore, data_copy, get_block_idx, set_global_buffer,
)

half = np.uint16  # a fp16 tensor holds its bits (the twin's fp16 tiles)
TOTAL_LENGTH = 8 * 2048
USE_CORE_NUM = 8
BLOCK_LENGTH = TOTAL_LENGTH // USE_CORE_NUM
TILE_NUM = 8
BUFFER_NUM = 2
TILE_LENGTH = BLOCK_LENGTH // TILE_NUM // BUFFER_NUM

KernelAdd = collections.namedtuple("KernelAdd", "ctx pipe in_queue_x in_queue_y out_queue_z x_gm y_gm z_gm")


@aicore
def init(ctx, x, y, z):
    pipe = TPipe(ctx)
    in_queue_x, in_queue_y = TQue(pipe, TPosition.VECIN, BUFFER_NUM), TQue(pipe, TPosition.VECIN, BUFFER_NUM)
    out_queue_z = TQue(pipe, TPosition.VECOUT, BUFFER_NUM)
    x_gm = set_global_buffer(ctx, x, half, BLOCK_LENGTH * get_block_idx(ctx), BLOCK_LENGTH)
    y_gm = set_global_buffer(ctx, y, half, BLOCK_LENGTH * get_block_idx(ctx), BLOCK_LENGTH)
    z_gm = set_global_buffer(ctx, z, half, BLOCK_LENGTH * get_block_idx(ctx), BLOCK_LENGTH)
    pipe.init_buffer(in_queue_x, BUFFER_NUM, TILE_LENGTH * 2)
    pipe.init_buffer(in_queue_y, BUFFER_NUM, TILE_LENGTH * 2)
    pipe.init_buffer(out_queue_z, BUFFER_NUM, TILE_LENGTH * 2)
    return KernelAdd(ctx, pipe, in_queue_x, in_queue_y, out_queue_z, x_gm, y_gm, z_gm)


@aicore
def process(op):
    loop_count = TILE_NUM * BUFFER_NUM
    for i in range(loop_count):
        copy_in(op, i)
        compute(op, i)
        copy_out(op, i)


@aicore
def copy_in(op, progress):
    x_local = op.in_queue_x.alloc_tensor(half)
    y_local = op.in_queue_y.alloc_tensor(half)
    data_copy(op.ctx, x_local, 0, op.x_gm, progress * TILE_LENGTH, TILE_LENGTH)
    data_copy(op.ctx, y_local, 0, op.y_gm, progress * TILE_LENGTH, TILE_LENGTH)
    op.in_queue_x.en_que(x_local)
    op.in_queue_y.en_que(y_local)


@aicore
def compute(op, progress):
    x_local = op.in_queue_x.de_que(half)
    y_local = op.in_queue_y.de_que(half)
    z_local = op.out_queue_z.alloc_tensor(half)
    add(op.ctx, z_local, x_local, y_local, TILE_LENGTH)
    op.out_queue_z.en_que(z_local)
    op.in_queue_x.free_tensor(x_local)
    op.in_queue_y.free_tensor(y_local)


@aicore
def copy_out(op, progress):
    z_local = op.out_queue_z.de_que(half)
    data_copy(op.ctx, op.z_gm, progress * TILE_LENGTH, z_local, 0, TILE_LENGTH)
    op.out_queue_z.free_tensor(z_local)


@an.kernel(nrt=False, outputs=("z",))
def add_custom(ctx, x, y, z):
    op = init(ctx, x, y, z)
    process(op)


def run(x, y, *, checked: bool = False, interpret: bool | None = None) -> np.ndarray:
    """main.cpp: x and y (fp16, 8 x 2048) to the device, the kernel on blockDim 8, z back."""
    x, y = np.asarray(x, np.float16), np.asarray(y, np.float16)
    if x.shape != (8, 2048) or y.shape != (8, 2048):
        raise ValueError(f"the sample's shapes are fixed at (8, 2048), got {x.shape} and {y.shape}")
    x_dev, y_dev, z_dev = an.host.gm_copy(x), an.host.gm_copy(y), an.host.gm_alloc(x.shape, np.float16)
    add_custom.launch(x_dev, y_dev, z_dev, block_dim=USE_CORE_NUM, checked=checked, interpret=interpret)
    return z_dev  # the device tensor itself (a view inside its padded allocation)


def gen_data(seed: int = 0):
    """scripts/gen_data.py: x, y uniform in [1, 100) as fp16, golden = (x + y) as fp16."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(1, 100, [8, 2048]).astype(np.float16)
    y = rng.uniform(1, 100, [8, 2048]).astype(np.float16)
    return (x, y), (x + y).astype(np.float16)


TOLERANCE = {"rtol": 1e-3, "atol": 1e-5, "error_tol": 1e-3}  # scripts/verify_result.py (fp16)


if __name__ == "__main__":
    (x_in, y_in), golden = gen_data()
    z_out = run(x_in, y_in)
    print("add_custom:", "bit-exact" if np.array_equal(z_out, golden) else "differs from the golden")
