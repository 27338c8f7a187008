"""Ascend samples' LeakyReluCustom (9_leakyrelu_frameworklaunch), ported line for line: y = x where
x > 0, else x * negative_slope, in fp32, two TBuf temporaries, the tiling read by GET_TILING_DATA.

Source (not copied here): By-gitee/opDev at 55c84ae (a copy of gitee ascend/samples),
``operator/ascendc/0_introduction/9_leakyrelu_frameworklaunch/``: ``LeakyReluCustom/op_kernel/
leaky_relu_custom.cpp``, ``LeakyReluCustom/op_host/leaky_relu_custom.cpp`` (TilingFunc: BLOCK_DIM 8,
TILE_NUM 16), ``AclNNInvocation/scripts/gen_data.py`` and ``verify_result.py``; ``AclNNInvocation/
src/main.cpp`` runs shape (8, 200, 1024).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

import ascend_numba as an
from ascend_numba.host import float32, uint32
from ascend_numba.kernels import (
    TBuf, TPipe, TPosition, TQue, add, aicore, data_copy, get_block_idx, get_block_num, get_tiling_data, maxs, mins,
    muls, set_global_buffer,
)

BUFFER_NUM = 2
BLOCK_DIM, TILE_NUM = 8, 16  # op_host's TilingFunc


@dataclass
class TilingData:  # BEGIN_TILING_DATA_DEF(TilingData), its fields in order
    totalLength: uint32
    tileNum: uint32
    negativeSlope: float32


TILING = an.host.numpy_dtype(TilingData)  # the struct's bytes, fields in order (its C layout)


KernelLeakyRelu = collections.namedtuple(
    "KernelLeakyRelu", "ctx pipe tmp_buffer1 tmp_buffer2 in_queue_x out_queue_y x_gm y_gm block_length tile_num "
    "tile_length negative_slope")


@aicore
def init(ctx, x, y, total_length, tile_num, negative_slope):
    block_length = total_length // get_block_num(ctx)
    tile_length = block_length // tile_num // BUFFER_NUM
    pipe = TPipe(ctx)
    tmp_buffer1, tmp_buffer2 = TBuf(pipe, TPosition.VECCALC), TBuf(pipe, TPosition.VECCALC)
    in_queue_x = TQue(pipe, TPosition.VECIN, BUFFER_NUM)
    out_queue_y = TQue(pipe, TPosition.VECOUT, BUFFER_NUM)
    x_gm = set_global_buffer(ctx, x, np.float32, block_length * get_block_idx(ctx), block_length)
    y_gm = set_global_buffer(ctx, y, np.float32, block_length * get_block_idx(ctx), block_length)
    pipe.init_buffer(in_queue_x, BUFFER_NUM, tile_length * 4)
    pipe.init_buffer(out_queue_y, BUFFER_NUM, tile_length * 4)
    pipe.init_buffer(tmp_buffer1, tile_length * 4)
    pipe.init_buffer(tmp_buffer2, tile_length * 4)
    return KernelLeakyRelu(ctx, pipe, tmp_buffer1, tmp_buffer2, in_queue_x, out_queue_y, x_gm, y_gm, block_length,
                           tile_num, tile_length, np.float32(negative_slope))


@aicore
def process(op):
    loop_count = op.tile_num * BUFFER_NUM
    for i in range(loop_count):
        copy_in(op, i)
        compute(op, i)
        copy_out(op, i)


@aicore
def copy_in(op, progress):
    x_local = op.in_queue_x.alloc_tensor(np.float32)
    data_copy(op.ctx, x_local, 0, op.x_gm, progress * op.tile_length, op.tile_length)
    op.in_queue_x.en_que(x_local)


@aicore
def compute(op, progress):
    x_local = op.in_queue_x.de_que(np.float32)
    y_local = op.out_queue_y.alloc_tensor(np.float32)
    tmp_tensor1 = op.tmp_buffer1.get(np.float32)
    tmp_tensor2 = op.tmp_buffer2.get(np.float32)
    input_val = np.float32(0.0)
    maxs(op.ctx, tmp_tensor1, x_local, input_val, op.tile_length)
    mins(op.ctx, tmp_tensor2, x_local, input_val, op.tile_length)
    muls(op.ctx, tmp_tensor2, tmp_tensor2, op.negative_slope, op.tile_length)
    add(op.ctx, y_local, tmp_tensor1, tmp_tensor2, op.tile_length)
    op.out_queue_y.en_que(y_local)
    op.in_queue_x.free_tensor(x_local)


@aicore
def copy_out(op, progress):
    y_local = op.out_queue_y.de_que(np.float32)
    data_copy(op.ctx, op.y_gm, progress * op.tile_length, y_local, 0, op.tile_length)
    op.out_queue_y.free_tensor(y_local)


@an.kernel(nrt=False, outputs=("y",))
def leaky_relu_custom(ctx, x, y, workspace, tiling):
    tiling_data = get_tiling_data(tiling, TILING)  # GET_TILING_DATA(tiling_data, tiling)
    op = init(ctx, x, y, tiling_data.totalLength, tiling_data.tileNum, tiling_data.negativeSlope)
    process(op)


def tiling_func(total_length: int, negative_slope: float, tile_num: int = TILE_NUM) -> TilingData:
    """op_host's TilingFunc: the shape's size, TILE_NUM (``tile_num``: more tiles for a shape whose
    TILE_NUM tiles would not fit UB), the attribute."""
    return TilingData(total_length, tile_num, negative_slope)


def run(x, negative_slope: float = 0.0, *, tile_num: int = TILE_NUM, checked: bool = False,
        interpret: bool | None = None) -> np.ndarray:
    """The aclnn call: x (fp32) to the device, TilingFunc's tiling, blockDim 8, y back."""
    x = np.asarray(x, np.float32)
    if x.size % (BLOCK_DIM * tile_num * BUFFER_NUM * 8):
        raise ValueError(f"the sample's tiling splits {x.size} elements into {BLOCK_DIM} x {tile_num} x {BUFFER_NUM} "
                         "tiles of whole 32-byte blocks: they do not split so")
    x_dev, y_dev = an.host.gm_copy(x), an.host.gm_alloc(x.shape, np.float32)
    workspace = an.host.gm_alloc((0,), np.uint8)
    leaky_relu_custom.launch(x_dev, y_dev, workspace, an.host.gm_tiling(tiling_func(x.size, negative_slope, tile_num)),
                             block_dim=BLOCK_DIM, checked=checked, interpret=interpret)
    return y_dev  # the device tensor itself (a view inside its padded allocation)


def gen_data(seed: int = 0, shape=(8, 200, 1024), negative_slope: float = 0.0):
    """AclNNInvocation/scripts/gen_data.py: x uniform in [-100, 100) fp32, golden = where(x > 0, x, x * slope)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-100, 100, shape).astype(np.float32)
    return (x, negative_slope), np.where(x > 0, x, x * np.float32(negative_slope)).astype(np.float32)


TOLERANCE = {"rtol": 1e-6, "atol": 1e-9, "error_tol": 1e-4}  # verify_result.py (fp32)
