"""Ascend samples' SubCustom (15_sub_frameworklaunch), ported line for line: z = x - y in fp16, the
cores split former / tail, one tile each, the body under ``TILING_KEY_IS(1)``.

The published tiling rounds the length up to 16 halves, so on the (1, 999) shape its last core
copies 1008 - 999 = 9 elements (18 bytes) past the tensors' end: inside the padding aclrtMalloc
adds, so the sample passes on the device, and ``run(..., checked=True)`` reports the overrun
(``gm-past-end``, lane 7).  ``run(..., corrected=True)`` uses :func:`tiling_func_corrected`: the
same split, the last core's tail moved with DataCopyPad's exact bytes.

Source (not copied here): By-gitee/opDev at 55c84ae (a copy of gitee ascend/samples),
``operator/ascendc/0_introduction/15_sub_frameworklaunch/``: ``SubCustom/op_kernel/sub_custom.cpp``,
``SubCustom/op_host/sub_custom.cpp`` (TilingFunc: BLOCK_DIM 8, ALIGN_NUM 16, SetTilingKey(1)),
``AclOfflineModel/scripts/gen_data.py`` and ``verify_result.py``; ``AclOfflineModel/src/main.cpp``
runs shape (1, 999).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

import ascend_numba as an
from ascend_numba.host import uint32
from ascend_numba.kernels import (
    DataCopyPadExtParams, TPipe, TPosition, TQue, aicore, constant, data_copy, data_copy_pad, get_block_idx,
    get_tiling_data, set_global_buffer, sub,
)

half = np.uint16  # a fp16 tensor holds its bits (the twin's fp16 tiles)
BUFFER_NUM = 2
BLOCK_DIM, ALIGN_NUM = 8, 16  # op_host's TilingFunc: 32 bytes of fp16


@dataclass
class TilingData:
    formerNum: uint32
    tailNum: uint32
    formerLength: uint32
    tailLength: uint32
    alignNum: uint32


@dataclass
class CorrectedTilingData(TilingData):
    totalLength: uint32  # the correction's: the tensor's real length


TILING = an.host.numpy_dtype(TilingData)  # the struct's bytes, fields in order (its C layout)
TILING_CORRECTED = an.host.numpy_dtype(CorrectedTilingData)


class SubKey:
    TILING_KEY = an.TilingKeyField(bits=2, values=[1, 2])  # 1: the sample's body; 2: the corrected tail


TILING_KEY = constant("TILING_KEY", "SubKey: the host's SetTilingKey")
KernelSub = collections.namedtuple("KernelSub", "ctx pipe in_queue_x in_queue_y out_queue_z x_gm y_gm z_gm tile_length")


@aicore
def init(ctx, x, y, z, former_num, tail_num, former_length, tail_length, align_num):
    if get_block_idx(ctx) < former_num:
        tile_length = former_length
        x_gm = set_global_buffer(ctx, x, half, former_length * get_block_idx(ctx), former_length)
        y_gm = set_global_buffer(ctx, y, half, former_length * get_block_idx(ctx), former_length)
        z_gm = set_global_buffer(ctx, z, half, former_length * get_block_idx(ctx), former_length)
    else:
        tile_length = tail_length
        start = former_length * former_num + tail_length * (get_block_idx(ctx) - former_num)
        x_gm = set_global_buffer(ctx, x, half, start, tail_length)
        y_gm = set_global_buffer(ctx, y, half, start, tail_length)
        z_gm = set_global_buffer(ctx, z, half, start, tail_length)
    pipe = TPipe(ctx)
    in_queue_x, in_queue_y = TQue(pipe, TPosition.VECIN, BUFFER_NUM), TQue(pipe, TPosition.VECIN, BUFFER_NUM)
    out_queue_z = TQue(pipe, TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(in_queue_x, BUFFER_NUM, tile_length * 2)
    pipe.init_buffer(in_queue_y, BUFFER_NUM, tile_length * 2)
    pipe.init_buffer(out_queue_z, BUFFER_NUM, tile_length * 2)
    return KernelSub(ctx, pipe, in_queue_x, in_queue_y, out_queue_z, x_gm, y_gm, z_gm, tile_length)


@aicore
def process(op, exact_bytes):
    copy_in(op, exact_bytes)
    compute(op)
    copy_out(op, exact_bytes)


@aicore
def copy_in(op, exact_bytes):
    x_local = op.in_queue_x.alloc_tensor(half)
    y_local = op.in_queue_y.alloc_tensor(half)
    if exact_bytes < 0:
        data_copy(op.ctx, x_local, 0, op.x_gm, 0, op.tile_length)
        data_copy(op.ctx, y_local, 0, op.y_gm, 0, op.tile_length)
    else:  # the correction: the tensor's last bytes, exactly, the tile's last block padded with zeros
        data_copy_pad(op.ctx, x_local, 0, op.x_gm, 0, 1, exact_bytes, 0, 0, DataCopyPadExtParams(True, 0, 0, 0))
        data_copy_pad(op.ctx, y_local, 0, op.y_gm, 0, 1, exact_bytes, 0, 0, DataCopyPadExtParams(True, 0, 0, 0))
    op.in_queue_x.en_que(x_local)
    op.in_queue_y.en_que(y_local)


@aicore
def compute(op):
    x_local = op.in_queue_x.de_que(half)
    y_local = op.in_queue_y.de_que(half)
    z_local = op.out_queue_z.alloc_tensor(half)
    sub(op.ctx, z_local, x_local, y_local, op.tile_length)
    op.out_queue_z.en_que(z_local)
    op.in_queue_x.free_tensor(x_local)
    op.in_queue_y.free_tensor(y_local)


@aicore
def copy_out(op, exact_bytes):
    z_local = op.out_queue_z.de_que(half)
    if exact_bytes < 0:
        data_copy(op.ctx, op.z_gm, 0, z_local, 0, op.tile_length)
    else:
        data_copy_pad(op.ctx, op.z_gm, 0, z_local, 0, 1, exact_bytes, 0, 0)
    op.out_queue_z.free_tensor(z_local)


@an.kernel(nrt=False, tiling_key=SubKey, outputs=("z",))
def sub_custom(ctx, x, y, z, workspace, tiling):
    if TILING_KEY == 1:  # the sample's kernel, its key's body (TILING_KEY_IS(1))
        tiling_data = get_tiling_data(tiling, TILING)  # GET_TILING_DATA(tiling_data, tiling)
        op = init(ctx, x, y, z, tiling_data.formerNum, tiling_data.tailNum, tiling_data.formerLength,
                  tiling_data.tailLength, tiling_data.alignNum)
        process(op, -1)
    elif TILING_KEY == 2:  # the correction: the core holding the tensor's end moves its exact bytes
        t = get_tiling_data(tiling, TILING_CORRECTED)
        op = init(ctx, x, y, z, t.formerNum, t.tailNum, t.formerLength, t.tailLength, t.alignNum)
        end = t.formerLength * t.formerNum + t.tailLength * t.tailNum
        last = get_block_idx(ctx) == t.formerNum + t.tailNum - 1
        process(op, (op.tile_length - (end - t.totalLength)) * 2 if last else -1)


def tiling_func(total_length: int) -> TilingData:
    """op_host's TilingFunc, as published: the length rounded up to ALIGN_NUM, split former / tail."""
    aligned = -(-total_length // ALIGN_NUM) * ALIGN_NUM
    former_num = (aligned // ALIGN_NUM) % BLOCK_DIM
    tail_num = BLOCK_DIM - former_num
    former_length = -(-(aligned // BLOCK_DIM) // ALIGN_NUM) * ALIGN_NUM
    tail_length = (aligned // BLOCK_DIM) // ALIGN_NUM * ALIGN_NUM
    return TilingData(former_num, tail_num, former_length, tail_length, ALIGN_NUM)


def tiling_func_corrected(total_length: int) -> CorrectedTilingData:
    """The same split, the tensor's real length after it (key 2: the last core's tail exact)."""
    t = tiling_func(total_length)
    return CorrectedTilingData(t.formerNum, t.tailNum, t.formerLength, t.tailLength, t.alignNum, total_length)


def run(x, y, *, corrected: bool = False, checked: bool = False, interpret: bool | None = None) -> np.ndarray:
    """The offline model's run: x and y (fp16) in aclrtMalloc'd GM, blockDim 8, z back."""
    x, y = np.asarray(x, np.float16), np.asarray(y, np.float16)
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in shape: {x.shape} and {y.shape}")
    tiling = (tiling_func_corrected if corrected else tiling_func)(x.size)
    x_dev, y_dev, z_dev = an.host.gm_copy(x), an.host.gm_copy(y), an.host.gm_alloc(x.shape, np.float16)
    workspace = an.host.gm_alloc((0,), np.uint8)
    sub_custom.launch(x_dev, y_dev, z_dev, workspace, an.host.gm_tiling(tiling), block_dim=BLOCK_DIM,
                      key={"TILING_KEY": 2 if corrected else 1}, checked=checked, interpret=interpret)
    return z_dev  # the device tensor itself (a view inside its padded allocation)


def gen_data(seed: int = 0, shape=(1, 999)):
    """AclOfflineModel/scripts/gen_data.py: x, y integers in [0, 100) as fp16, golden = (x - y) as fp16."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 100, shape).astype(np.float16)
    y = rng.integers(0, 100, shape).astype(np.float16)
    return (x, y), (x - y).astype(np.float16)


TOLERANCE = {"rtol": 1e-3, "atol": 1e-5, "error_tol": 1e-3}  # verify_result.py (fp16)
