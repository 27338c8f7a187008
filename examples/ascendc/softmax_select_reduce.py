"""cann-ops' SelectReduceMaxDSubExpReduceSumDRealDiv, ported line for line: per row of 60 fp16,
c = a where sel else b, then softmax(c) (the max, the shifted exp, the sum, the division), one row
per tile, two rows per core, the last dim fixed at 60 (the kernel's reductions hard-code it).

Source (not copied here): Hayden727/cann-ops at eef0ff7 (a copy of cann-ops),
``src/math/select_reduce_max_d_sub_exp_reduce_sum_d_real_div/``: ``op_kernel/…_real_div.cpp``,
``op_host/…_real_div.cpp`` (TilingFunc: tileNum 2; blockDim from the vector core count),
``examples/AclNNInvocationNaive/gen_data.py`` and ``verify_result.py``.

Three calls are Ascend C's advanced API, which the twin's basic instructions stand in for here,
each a function below named as the C++'s: ``SelectWithBytesMask`` (element by element through
GetValue / SetValue, with the MTE2_S and S_V events a scalar pass needs: a mask byte of 0 takes
``src0``, any other ``src1``; one function per C++ overload used, scalar first or second), ``BroadCast<half, 2, 1>`` (the one value read by the
scalar unit after a V_S event, then duplicated) and ``Exp<half, 15, false>`` (the twin's Exp,
correctly rounded, where the device sums 15 Taylor terms: its last bits may differ).  ``TQue<VECCALC>`` holds the temporaries, as the sample declares them.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

import ascend_numba as an
from ascend_numba.host import uint32
from ascend_numba.kernels import (
    DataCopyPadExtParams, HardEvent, ReduceOrder, TPipe, TPosition, TQue, add, aicore, data_copy_pad, div,
    duplicate, get_block_idx, get_block_num, get_tiling_data, get_value, set_flag, set_global_buffer, set_value,
    sub, vexp, wait_flag, whole_reduce_max, whole_reduce_sum,
)
from ascend_numba.kernels.half import f16_to_f32, f32_to_f16

half = np.uint16  # <bool, half, half, half>: a fp16 tensor holds its bits
BUFFER_NUM = 1
LAST_DIM = 60

SelectWithBytesMaskShapeInfo = collections.namedtuple("SelectWithBytesMaskShapeInfo",
                                                      "first_axis src_last_axis mask_last_axis")


@dataclass
class TilingData:
    totalLength: uint32
    tileNum: uint32
    tmpSize: uint32


TILING = an.host.numpy_dtype(TilingData)  # the struct's bytes, fields in order (its C layout)


Kernel = collections.namedtuple(
    "Kernel", "ctx pipe in_queue_a in_queue_b in_queue_cond out_queue_c tmp_queue0 sel0_tmp_queue sel1_tmp_queue "
    "tmp_queue1 tmp_queue2 tmp_queue3 a_global b_global c_global cond_global tile_num tile_length tile_length_align")


@aicore
def select_with_bytes_mask_scalar_src0(ctx, dst, scalar, src1, mask, tmp, info):
    set_flag(ctx, HardEvent.MTE2_S, 0)  # the scalar unit reads what the copies in wrote
    wait_flag(ctx, HardEvent.MTE2_S, 0)
    for i in range(info.first_axis * info.src_last_axis):
        value = f32_to_f16(np.float32(scalar)) if get_value(ctx, mask, i) == 0 else get_value(ctx, src1, i)
        set_value(ctx, dst, i, value)


@aicore
def select_with_bytes_mask_scalar_src1(ctx, dst, src0, scalar, mask, tmp, info):
    for i in range(info.first_axis * info.src_last_axis):
        value = get_value(ctx, src0, i) if get_value(ctx, mask, i) == 0 else f32_to_f16(np.float32(scalar))
        set_value(ctx, dst, i, value)
    set_flag(ctx, HardEvent.S_V, 0)  # the vector unit reads what the scalar unit wrote (both selections)
    wait_flag(ctx, HardEvent.S_V, 0)


@aicore
def broad_cast(ctx, dst, src, dst_shape1):
    set_flag(ctx, HardEvent.V_S, 0)  # the scalar unit reads what the vector unit just wrote
    wait_flag(ctx, HardEvent.V_S, 0)
    duplicate(ctx, dst, f16_to_f32(get_value(ctx, src, 0)), dst_shape1)


@aicore
def init(ctx, cond, a, b, c, tiling_data):
    block_length = tiling_data.totalLength // get_block_num(ctx)
    tile_num = tiling_data.tileNum
    tile_length = block_length // tile_num // BUFFER_NUM
    tile_length_align = ((tile_length + 16 - 1) // 16) * 16
    pipe = TPipe(ctx)
    in_queue_a, in_queue_b = TQue(pipe, TPosition.VECIN, BUFFER_NUM), TQue(pipe, TPosition.VECIN, BUFFER_NUM)
    in_queue_cond = TQue(pipe, TPosition.VECIN, BUFFER_NUM)
    out_queue_c = TQue(pipe, TPosition.VECOUT, BUFFER_NUM)
    tmp_queue0, sel0_tmp_queue = TQue(pipe, TPosition.VECCALC, BUFFER_NUM), TQue(pipe, TPosition.VECCALC, BUFFER_NUM)
    sel1_tmp_queue = TQue(pipe, TPosition.VECCALC, BUFFER_NUM)
    tmp_queue1, tmp_queue2 = TQue(pipe, TPosition.VECCALC, BUFFER_NUM), TQue(pipe, TPosition.VECCALC, BUFFER_NUM)
    tmp_queue3 = TQue(pipe, TPosition.VECCALC, BUFFER_NUM)
    cond_global = set_global_buffer(ctx, cond, np.uint8, block_length * get_block_idx(ctx), block_length)
    a_global = set_global_buffer(ctx, a, half, block_length * get_block_idx(ctx), block_length)
    b_global = set_global_buffer(ctx, b, half, block_length * get_block_idx(ctx), block_length)
    c_global = set_global_buffer(ctx, c, half, block_length * get_block_idx(ctx), block_length)
    pipe.init_buffer(in_queue_cond, BUFFER_NUM, tile_length_align * 1)
    pipe.init_buffer(in_queue_a, BUFFER_NUM, tile_length_align * 2)
    pipe.init_buffer(in_queue_b, BUFFER_NUM, tile_length_align * 2)
    pipe.init_buffer(out_queue_c, BUFFER_NUM, tile_length_align * 2)
    pipe.init_buffer(tmp_queue0, BUFFER_NUM, tile_length * 2 * 1)
    pipe.init_buffer(sel0_tmp_queue, BUFFER_NUM, tile_length * 2 * 1)
    pipe.init_buffer(sel1_tmp_queue, BUFFER_NUM, tile_length * 2 * 1)
    pipe.init_buffer(tmp_queue1, BUFFER_NUM, tile_length_align * 2)
    pipe.init_buffer(tmp_queue2, BUFFER_NUM, tile_length_align * 2)
    pipe.init_buffer(tmp_queue3, BUFFER_NUM, tile_length_align * 2)
    return Kernel(ctx, pipe, in_queue_a, in_queue_b, in_queue_cond, out_queue_c, tmp_queue0, sel0_tmp_queue,
                  sel1_tmp_queue, tmp_queue1, tmp_queue2, tmp_queue3, a_global, b_global, c_global, cond_global,
                  tile_num, tile_length, tile_length_align)


@aicore
def process(op):
    loop_count = op.tile_num * BUFFER_NUM
    for i in range(loop_count):
        copy_in(op, i)
        compute(op, i)
        copy_out(op, i)


@aicore
def copy_in(op, progress):
    cond_local = op.in_queue_cond.alloc_tensor(np.uint8)
    a_local = op.in_queue_a.alloc_tensor(half)
    b_local = op.in_queue_b.alloc_tensor(half)
    pad = DataCopyPadExtParams(True, 0, 0, 0)
    data_copy_pad(op.ctx, cond_local, 0, op.cond_global, progress * op.tile_length, 1, op.tile_length * 1, 0, 0, pad)
    data_copy_pad(op.ctx, a_local, 0, op.a_global, progress * op.tile_length, 1, op.tile_length * 2, 0, 0, pad)
    data_copy_pad(op.ctx, b_local, 0, op.b_global, progress * op.tile_length, 1, op.tile_length * 2, 0, 0, pad)
    op.in_queue_cond.en_que(cond_local)
    op.in_queue_a.en_que(a_local)
    op.in_queue_b.en_que(b_local)


@aicore
def compute(op, progress):
    ctx = op.ctx
    cond_local = op.in_queue_cond.de_que(np.uint8)
    a_local = op.in_queue_a.de_que(half)
    b_local = op.in_queue_b.de_que(half)
    c_local = op.out_queue_c.alloc_tensor(half)
    tmp_tensor = op.tmp_queue0.alloc_tensor(np.uint8)
    sel0_tmp_tensor = op.sel0_tmp_queue.alloc_tensor(np.uint8)
    sel1_tmp_tensor = op.sel1_tmp_queue.alloc_tensor(np.uint8)
    sel0_local = op.tmp_queue1.alloc_tensor(half)
    sel1_local = op.tmp_queue2.alloc_tensor(half)
    scalar = 0.0
    shape_info = SelectWithBytesMaskShapeInfo(1, op.tile_length_align, op.tile_length_align)
    select_with_bytes_mask_scalar_src0(ctx, a_local, scalar, a_local, cond_local, sel0_tmp_tensor, shape_info)
    select_with_bytes_mask_scalar_src1(ctx, b_local, b_local, scalar, cond_local, sel1_tmp_tensor, shape_info)
    add(ctx, c_local, a_local, b_local, c_local.size)  # cLocal = aLocal + bLocal: dst's size
    op.tmp_queue0.free_tensor(tmp_tensor)
    op.sel0_tmp_queue.free_tensor(sel0_tmp_tensor)
    op.sel1_tmp_queue.free_tensor(sel1_tmp_tensor)
    op.tmp_queue1.free_tensor(sel0_local)
    op.tmp_queue2.free_tensor(sel1_local)
    max_broad_local = op.tmp_queue1.alloc_tensor(half)
    max_local = op.tmp_queue2.alloc_tensor(half)
    sub_local = op.tmp_queue3.alloc_tensor(half)
    whole_reduce_max(ctx, max_local, c_local, 64, 1, 1, 1, 4, ReduceOrder.ORDER_ONLY_VALUE)
    broad_cast(ctx, max_broad_local, max_local, 64)
    sub(ctx, sub_local, c_local, max_broad_local, sub_local.size)  # subLocal = cLocal - maxBroadLocal
    op.tmp_queue1.free_tensor(max_broad_local)
    op.tmp_queue2.free_tensor(max_local)
    exp_local = op.tmp_queue1.alloc_tensor(half)
    vexp(ctx, exp_local, sub_local, op.tile_length_align)  # Exp<half, 15, false>
    op.tmp_queue3.free_tensor(sub_local)
    sum_local = op.tmp_queue2.alloc_tensor(half)
    sum_broad_local = op.tmp_queue3.alloc_tensor(half)
    whole_reduce_sum(ctx, sum_local, exp_local, LAST_DIM, 1, 1, 1, 4)
    broad_cast(ctx, sum_broad_local, sum_local, 64)
    div(ctx, c_local, exp_local, sum_broad_local, exp_local.size)
    op.tmp_queue1.free_tensor(exp_local)
    op.tmp_queue2.free_tensor(sum_local)
    op.tmp_queue3.free_tensor(sum_broad_local)
    op.in_queue_cond.free_tensor(cond_local)
    op.in_queue_a.free_tensor(a_local)
    op.in_queue_b.free_tensor(b_local)
    op.out_queue_c.en_que(c_local)


@aicore
def copy_out(op, progress):
    c_local = op.out_queue_c.de_que(half)
    data_copy_pad(op.ctx, op.c_global, progress * op.tile_length, c_local, 0, 1, op.tile_length * 2, 0, 0)
    op.out_queue_c.free_tensor(c_local)


@an.kernel(nrt=False, outputs=("c",))
def select_reduce_max_d_sub_exp_reduce_sum_d_real_div(ctx, sel, a, b, c, workspace, tiling):
    tiling_data = get_tiling_data(tiling, TILING)  # GET_TILING_DATA(tiling_data, tiling)
    op = init(ctx, sel, a, b, c, tiling_data)
    process(op)


def tiling_func(shape: tuple, platform: an.Platform) -> tuple[TilingData, int]:
    """op_host's TilingFunc: tileNum 2, one core per row, or rows shared evenly past the vector cores."""
    row_dim, aiv_num = shape[0], platform.aiv_num
    block_dim = row_dim if row_dim <= aiv_num else row_dim // ((row_dim - 1) // aiv_num + 1)
    return TilingData(int(np.prod(shape)), 2, 0), block_dim


def run(sel, x1, x2, *, platform="A2", checked: bool = False, interpret: bool | None = None) -> np.ndarray:
    """The aclnn call: sel (bool) and x1, x2 (fp16), last dim 60, TilingFunc's blockDim, the result back."""
    sel, x1, x2 = np.asarray(sel, np.bool_), np.asarray(x1, np.float16), np.asarray(x2, np.float16)
    if not sel.shape == x1.shape == x2.shape or x1.shape[-1] != LAST_DIM:
        raise ValueError(f"sel, x1 and x2 share one shape whose last dim is {LAST_DIM} (the kernel's reductions are "
                         f"fixed to it), got {sel.shape}, {x1.shape}, {x2.shape}")
    plat = an.get_platform(platform)
    tiling, block_dim = tiling_func(x1.shape, plat)
    if (x1.size // block_dim) % (tiling.tileNum * LAST_DIM):
        raise ValueError(f"{x1.shape[0]} rows do not split into {block_dim} cores of {tiling.tileNum} rows")
    cond, a, b = an.host.gm_copy(sel.view(np.uint8)), an.host.gm_copy(x1), an.host.gm_copy(x2)
    c = an.host.gm_alloc(x1.shape, np.float16)
    workspace = an.host.gm_alloc((0,), np.uint8)
    select_reduce_max_d_sub_exp_reduce_sum_d_real_div.launch(cond, a, b, c, workspace, an.host.gm_tiling(tiling),
                                                            block_dim=block_dim, platform=plat, checked=checked,
                                                            interpret=interpret)
    return c  # the device tensor itself (a view inside its padded allocation)


def gen_data(seed: int = 0, shape=(64, 1, 60)):
    """examples/AclNNInvocationNaive/gen_data.py: x1, x2 uniform in [0, 1) fp16, sel random bools; the
    golden softmax(x1 * sel + x2 * ~sel) over the last dim, in fp16 as NumPy computes it."""
    rng = np.random.default_rng(seed)
    input1 = rng.uniform(0.0, 1.0, size=shape).astype(np.float16)
    input2 = rng.uniform(0.0, 1.0, size=shape).astype(np.float16)
    sel = rng.choice([True, False], size=shape).astype(bool)
    reduce_res = input1 * sel + input2 * (~sel)
    exp_res = np.exp(reduce_res - np.max(reduce_res, axis=-1, keepdims=True))
    return (sel, input1, input2), exp_res / np.sum(exp_res, axis=-1, keepdims=True)


TOLERANCE = {"rtol": 1e-3, "atol": 1e-3, "error_tol": 1e-3}  # verify_result.py: LOSS 1e-3, relative or absolute
