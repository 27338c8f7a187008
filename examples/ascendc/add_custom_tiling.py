"""Ascend samples' AddKernelInvocationTilingNeo, ported line for line: add_custom with its tiling
(``AddCustomTilingData {totalLength, tileNum}``) passed by value as the kernel's last argument.

Source (not copied here): By-gitee/opDev at 55c84ae (a copy of gitee ascend/samples),
``operator/ascendc/0_introduction/3_add_kernellaunch/AddKernelInvocationTilingNeo/``: ``add_custom.cpp``,
``add_custom_tiling.h``, ``main.cpp`` (blockDim 8; tiling {8 * 2048, 8}), ``scripts/gen_data.py``,
``scripts/verify_result.py``.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

import ascend_numba as an
from ascend_numba.host import uint32
from ascend_numba.kernels import (
    TPipe, TPosition, TQue, add, aicore, data_copy, get_block_idx, get_block_num, set_global_buffer,
)

half = np.uint16  # a fp16 tensor holds its bits (the twin's fp16 tiles)
BUFFER_NUM = 2


@dataclass
class AddCustomTilingData:
    totalLength: uint32
    tileNum: uint32


KernelAdd = collections.namedtuple(
    "KernelAdd", "ctx pipe in_queue_x in_queue_y out_queue_z x_gm y_gm z_gm block_length tile_num tile_length")


@aicore
def init(ctx, x, y, z, total_length, tile_num):
    block_length = total_length // get_block_num(ctx)
    tile_length = block_length // tile_num // BUFFER_NUM
    pipe = TPipe(ctx)
    in_queue_x, in_queue_y = TQue(pipe, TPosition.VECIN, BUFFER_NUM), TQue(pipe, TPosition.VECIN, BUFFER_NUM)
    out_queue_z = TQue(pipe, TPosition.VECOUT, BUFFER_NUM)
    x_gm = set_global_buffer(ctx, x, half, block_length * get_block_idx(ctx), block_length)
    y_gm = set_global_buffer(ctx, y, half, block_length * get_block_idx(ctx), block_length)
    z_gm = set_global_buffer(ctx, z, half, block_length * get_block_idx(ctx), block_length)
    pipe.init_buffer(in_queue_x, BUFFER_NUM, tile_length * 2)
    pipe.init_buffer(in_queue_y, BUFFER_NUM, tile_length * 2)
    pipe.init_buffer(out_queue_z, BUFFER_NUM, tile_length * 2)
    return KernelAdd(ctx, pipe, in_queue_x, in_queue_y, out_queue_z, x_gm, y_gm, z_gm, block_length, tile_num,
                     tile_length)


@aicore
def process(op):
    loop_count = op.tile_num * BUFFER_NUM
    for i in range(loop_count):
        copy_in(op, i)
        compute(op, i)
        copy_out(op, i)


@aicore
def copy_in(op, progress):
    x_local = op.in_queue_x.alloc_tensor(half)
    y_local = op.in_queue_y.alloc_tensor(half)
    data_copy(op.ctx, x_local, 0, op.x_gm, progress * op.tile_length, op.tile_length)
    data_copy(op.ctx, y_local, 0, op.y_gm, progress * op.tile_length, op.tile_length)
    op.in_queue_x.en_que(x_local)
    op.in_queue_y.en_que(y_local)


@aicore
def compute(op, progress):
    x_local = op.in_queue_x.de_que(half)
    y_local = op.in_queue_y.de_que(half)
    z_local = op.out_queue_z.alloc_tensor(half)
    add(op.ctx, z_local, x_local, y_local, op.tile_length)
    op.out_queue_z.en_que(z_local)
    op.in_queue_x.free_tensor(x_local)
    op.in_queue_y.free_tensor(y_local)


@aicore
def copy_out(op, progress):
    z_local = op.out_queue_z.de_que(half)
    data_copy(op.ctx, op.z_gm, progress * op.tile_length, z_local, 0, op.tile_length)
    op.out_queue_z.free_tensor(z_local)


@an.kernel(nrt=False, outputs=("z",))
def add_custom(ctx, x, y, z, tiling):
    op = init(ctx, x, y, z, tiling.totalLength, tiling.tileNum)
    process(op)


def run(x, y, *, block_dim: int = 8, tile_num: int = 8, checked: bool = False,
        interpret: bool | None = None) -> np.ndarray:
    """main.cpp: x and y (fp16) to the device, the tiling {x.size, tile_num} by value, blockDim 8."""
    x, y = np.asarray(x, np.float16), np.asarray(y, np.float16)
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in shape: {x.shape} and {y.shape}")
    if x.size % (block_dim * tile_num * BUFFER_NUM * 16):
        raise ValueError(f"the sample's tiling takes {block_dim} x {tile_num} x {BUFFER_NUM} tiles of whole 32-byte "
                         f"blocks: {x.size} elements do not split so")
    x_dev, y_dev, z_dev = an.host.gm_copy(x), an.host.gm_copy(y), an.host.gm_alloc(x.shape, np.float16)
    add_custom.launch(x_dev, y_dev, z_dev, AddCustomTilingData(x.size, tile_num), block_dim=block_dim,
                      checked=checked, interpret=interpret)
    return z_dev  # the device tensor itself (a view inside its padded allocation)


def gen_data(seed: int = 0, shape=(8, 2048)):
    """scripts/gen_data.py: x, y uniform in [1, 100) as fp16, golden = (x + y) as fp16."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(1, 100, shape).astype(np.float16)
    y = rng.uniform(1, 100, shape).astype(np.float16)
    return (x, y), (x + y).astype(np.float16)


TOLERANCE = {"rtol": 1e-3, "atol": 1e-5, "error_tol": 1e-3}  # scripts/verify_result.py (fp16)
