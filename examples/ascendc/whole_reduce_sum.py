"""Ascend samples' WholeReduceSumKernelInvocation (19_unaligned_wholereduces_kernellaunch), ported
line for line: each row of a (13, 123) fp16 matrix summed, rows copied in with DataCopyPad to
256-byte UB rows, one WholeReduceSum over 13 repeats with a mask of 123, the tiling copied from GM
word by word (kernel-launch projects have no GET_TILING_DATA).

Source (not copied here): By-gitee/opDev at 55c84ae (a copy of gitee ascend/samples),
``operator/ascendc/0_introduction/19_unaligned_wholereduces_kernellaunch/WholeReduceSumKernelInvocation/``:
``whole_reduce_sum_custom.cpp``, ``whole_reduce_sum_custom_tiling.h``, ``main.cpp`` (blockDim 1),
``scripts/gen_data.py``, ``scripts/verify_result.py``.
"""

from __future__ import annotations

import collections

import numpy as np

import ascend_numba as an
from ascend_numba.kernels import (
    DataCopyPadExtParams, TPipe, TPosition, TQue, aicore, data_copy_pad, set_global_buffer, whole_reduce_sum,
)

half = np.uint16  # KernelWholeReduceSum<half>: a fp16 tensor holds its bits
BYTE_ALIGN = 32

KernelWholeReduceSum = collections.namedtuple(
    "KernelWholeReduceSum", "ctx pipe in_queue_x out_queue_y x_gm y_gm total_length rows cols col_aligned")
WholeReduceSumCustomTilingData = collections.namedtuple("WholeReduceSumCustomTilingData", "totalLength rows cols")


@aicore
def ceil_div(a, b):
    if b == 0:
        return a
    return (a + b - 1) // b


@aicore
def init(ctx, x, y, tiling_data):
    rows = tiling_data.rows
    cols = tiling_data.cols
    total_length = tiling_data.totalLength
    col_aligned = ceil_div(cols * 2, BYTE_ALIGN) * BYTE_ALIGN
    total_size_aligned = col_aligned * rows
    reduced_size_aligned = ceil_div(rows * 2, BYTE_ALIGN) * BYTE_ALIGN
    pipe = TPipe(ctx)
    in_queue_x, out_queue_y = TQue(pipe, TPosition.VECIN, 1), TQue(pipe, TPosition.VECOUT, 1)
    x_gm = set_global_buffer(ctx, x, half, 0, total_length)
    y_gm = set_global_buffer(ctx, y, half, 0, rows)
    pipe.init_buffer(in_queue_x, 1, total_size_aligned)
    pipe.init_buffer(out_queue_y, 1, reduced_size_aligned)
    return KernelWholeReduceSum(ctx, pipe, in_queue_x, out_queue_y, x_gm, y_gm, total_length, rows, cols, col_aligned)


@aicore
def process(op):
    copy_in(op)
    compute(op)
    copy_out(op)


@aicore
def copy_in(op):
    x_local = op.in_queue_x.alloc_tensor(half)
    col_bytes = op.cols * 2
    rpad = (op.col_aligned - op.cols * 2) // 2
    pad_params = DataCopyPadExtParams(False, 0, rpad, 0)
    data_copy_pad(op.ctx, x_local, 0, op.x_gm, 0, op.rows, col_bytes, 0, 0, pad_params)
    op.in_queue_x.en_que(x_local)


@aicore
def compute(op):
    x_local = op.in_queue_x.de_que(half)
    y_local = op.out_queue_y.alloc_tensor(half)
    src_stride = op.col_aligned // BYTE_ALIGN
    whole_reduce_sum(op.ctx, y_local, x_local, op.cols, op.rows, 1, 1, src_stride)
    op.out_queue_y.en_que(y_local)
    op.in_queue_x.free_tensor(x_local)


@aicore
def copy_out(op):
    y_local = op.out_queue_y.de_que(half)
    reduced_bytes = op.rows * 2
    data_copy_pad(op.ctx, op.y_gm, 0, y_local, 0, 1, reduced_bytes, 0, 0)
    op.out_queue_y.free_tensor(y_local)


@aicore
def copy_tiling(tiling_gm):
    return WholeReduceSumCustomTilingData(tiling_gm[0], tiling_gm[1], tiling_gm[2])  # the struct's words, in order


@an.kernel(nrt=False, outputs=("y",))
def whole_reduce_sum_custom(ctx, x, y, tiling):
    tiling_data = copy_tiling(tiling)
    op = init(ctx, x, y, tiling_data)
    process(op)


def run(x, *, checked: bool = False, interpret: bool | None = None) -> np.ndarray:
    """main.cpp: x (fp16, rows x cols) and the tiling words {rows * cols, rows, cols} to the device,
    blockDim 1, y (rows) back."""
    x = np.asarray(x, np.float16)
    if x.ndim != 2 or not 1 <= x.shape[1] <= 128 or not 1 <= x.shape[0] <= 255:
        raise ValueError(f"the sample sums rows of at most 128 fp16 (one repeat) over at most 255 rows, got {x.shape}")
    rows, cols = x.shape
    x_dev, y_dev = an.host.gm_copy(x), an.host.gm_alloc((rows,), np.float16)
    tiling = an.host.gm_copy(np.array([rows * cols, rows, cols], np.uint32))
    whole_reduce_sum_custom.launch(x_dev, y_dev, tiling, block_dim=1, checked=checked, interpret=interpret)
    return y_dev  # the device tensor itself (a view inside its padded allocation)


def gen_data(seed: int = 0, shape=(13, 123)):
    """scripts/gen_data.py: x uniform in [1, 100) as fp16, golden = its rows' sums as fp16."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(1, 100, shape).astype(np.float16)
    return (x,), np.sum(x, axis=1).astype(np.float16)


TOLERANCE = {"rtol": 1e-3, "atol": 1e-5, "error_tol": 1e-3}  # scripts/verify_result.py (fp16)
