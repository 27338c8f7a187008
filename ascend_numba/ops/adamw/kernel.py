"""ApplyAdamW kernel (SPEC §5, seed 002 §3.2.2).

Compile-time constants, declared below: the TilingKey fields and the datatype
specialization.  Every branch on them folds at compile time; the element loops
inside the vector primitives have none.

Per tile: CopyIn (MTE2) the inputs into the double-buffered in-queues and
announce the next tile's (preload: the device's MTE2 fetches it during this
tile's Compute), Compute (V) with Muls/Mul/Sub/Add/Div/Sqrt/Max/Adds, CopyOut
(MTE3) exactly the tile's elements.  In the native modes (fp32, fp16 seed)
every op runs in the tensor type, so fp16 rounds after each op as the fp16
vector unit does.
"""

import numpy as np

from ...config import COMPUTE_OPS
from ...kernels import (
    add, adds, alloc_buffer, big_small_lane_range, cast_bf16_to_f32, cast_f16_to_f32, cast_f32_to_bf16,
    cast_f32_to_f16, constant, data_copy, data_copy_pad, div, duplicate, kernel, mul, muls, preload, sub, trace_work,
    vmax, vsqrt,
)
from ...kernels._jit import jit
from ...kernels.half import bf16_to_f32, f16_to_f32
from .plan import AdamWKey

# TilingKey fields (AdamWKey): 0 or 1.
Amsgrad = constant("Amsgrad", "1: v is max(max_grad_norm, v) before the square root")
Maximize = constant("Maximize", "1: the gradient is negated")
# Datatype specialization (set by the op, see api._problem).
IO = constant("IO", "element type of the GM tensors and queues: float32, or uint16 holding fp16/bf16")
DTYPE = constant("DTYPE", "0 fp32, 1 fp16, 2 bf16")
VARIANT = constant("VARIANT", "0 seed/TBE op order, 1 A2 op order")
CAST = constant("CAST", "compute through fp32 work tiles, rounding once at the end")


@jit(always_inline=True)
def _as_f32(value):
    return np.float32(value)


# nrt=False: the body allocates nothing, so it needs no reference counts (see launch.kernel).
@kernel(tiling_key=AdamWKey, nrt=False)
def adamw_kernel(ctx, var, m, v, grad, max_grad_norm, scalars, var_out, m_out, v_out, t):
    amsgrad = Amsgrad == 1
    maximize = Maximize == 1
    # Init: this lane's blocks (big/small split) and every UB buffer, bound once.
    start, end = big_small_lane_range(ctx, t.bigCores, t.smallBlocks, t.blockElems, t.totalLength)
    tile = t.tileDataNum
    in_var = alloc_buffer(ctx, 2 * tile, IO)
    in_m = alloc_buffer(ctx, 2 * tile, IO)
    in_v = alloc_buffer(ctx, 2 * tile, IO)
    in_g = alloc_buffer(ctx, 2 * tile, IO)
    if amsgrad:
        in_mgn = alloc_buffer(ctx, 2 * tile, IO)
    out_var = alloc_buffer(ctx, 2 * tile, IO)
    out_m = alloc_buffer(ctx, 2 * tile, IO)
    out_v = alloc_buffer(ctx, 2 * tile, IO)
    if CAST:
        w_var = alloc_buffer(ctx, tile, np.float32)
        w_m = alloc_buffer(ctx, tile, np.float32)
        w_v = alloc_buffer(ctx, tile, np.float32)
        w_g = alloc_buffer(ctx, tile, np.float32)
        if amsgrad:
            w_mgn = alloc_buffer(ctx, tile, np.float32)
        t1 = alloc_buffer(ctx, tile, np.float32)
        t2 = alloc_buffer(ctx, tile, np.float32)
    else:
        t1 = alloc_buffer(ctx, tile, IO)
        t2 = alloc_buffer(ctx, tile, IO)

    # Scalars (scalar unit): read from GM in the tensor type, then all derived values in fp32.
    one = np.float32(1.0)
    if DTYPE == 0:
        widen = _as_f32
    elif DTYPE == 1:
        widen = f16_to_f32
    else:
        widen = bf16_to_f32
    beta1_power, beta2_power = widen(scalars[0]), widen(scalars[1])
    lr, weight_decay = widen(scalars[2]), widen(scalars[3])
    beta1, beta2, epsilon = widen(scalars[4]), widen(scalars[5]), widen(scalars[6])
    decay = one - lr * weight_decay
    b1o = beta1_power * beta1
    b2o = beta2_power * beta2
    step = lr / (b1o - one)

    pos = start
    slot = 0
    while pos < end:
        n = min(tile, end - pos)
        n_al = (n + t.blockElems - 1) // t.blockElems * t.blockElems
        q = slot * tile
        # CopyIn: whole blocks (the last may read GM padding; those lanes are never written back).
        data_copy(ctx, in_var, q, var, pos, n_al)
        data_copy(ctx, in_m, q, m, pos, n_al)
        data_copy(ctx, in_v, q, v, pos, n_al)
        data_copy(ctx, in_g, q, grad, pos, n_al)
        if amsgrad:
            data_copy(ctx, in_mgn, q, max_grad_norm, pos, n_al)
        # The next tile's CopyIn, which the device's MTE2 runs during this tile's Compute.
        ahead = min(tile, end - pos - n)
        if ahead > 0:
            preload(ctx, var, pos + n, ahead, COMPUTE_OPS)
            preload(ctx, m, pos + n, ahead, COMPUTE_OPS)
            preload(ctx, v, pos + n, ahead, COMPUTE_OPS)
            preload(ctx, grad, pos + n, ahead, COMPUTE_OPS)
            if amsgrad:
                preload(ctx, max_grad_norm, pos + n, ahead, COMPUTE_OPS)
        # Compute tensors: the queue slots themselves, or fp32 work tiles cast from them.
        if CAST:
            if DTYPE == 1:
                cast_f16_to_f32(ctx, w_var, in_var[q:], n_al)
                cast_f16_to_f32(ctx, w_m, in_m[q:], n_al)
                cast_f16_to_f32(ctx, w_v, in_v[q:], n_al)
                cast_f16_to_f32(ctx, w_g, in_g[q:], n_al)
                if amsgrad:
                    cast_f16_to_f32(ctx, w_mgn, in_mgn[q:], n_al)
            else:
                cast_bf16_to_f32(ctx, w_var, in_var[q:], n_al)
                cast_bf16_to_f32(ctx, w_m, in_m[q:], n_al)
                cast_bf16_to_f32(ctx, w_v, in_v[q:], n_al)
                cast_bf16_to_f32(ctx, w_g, in_g[q:], n_al)
                if amsgrad:
                    cast_bf16_to_f32(ctx, w_mgn, in_mgn[q:], n_al)
            var_c, m_c, v_c, g_c = w_var, w_m, w_v, w_g
            var_o, m_o, v_o = w_var, w_m, w_v  # results overwrite the work tiles in place
            if amsgrad:
                mgn_c = w_mgn
        else:
            var_c, m_c, v_c, g_c = in_var[q:q + tile], in_m[q:q + tile], in_v[q:q + tile], in_g[q:q + tile]
            var_o, m_o, v_o = out_var[q:q + tile], out_m[q:q + tile], out_v[q:q + tile]
            if amsgrad:
                mgn_c = in_mgn[q:q + tile]

        if maximize:
            muls(ctx, g_c, g_c, -one, n_al)
        if VARIANT == 0:  # seed / TBE order
            muls(ctx, t1, m_c, beta1, n_al)                 # m*b1
            muls(ctx, t2, g_c, beta1 - one, n_al)           # (b1-1)*gt
            sub(ctx, m_o, t1, t2, n_al)
            muls(ctx, t1, v_c, beta2, n_al)                 # v*b2
            muls(ctx, t2, g_c, beta2 - one, n_al)           # (b2-1)*gt
            mul(ctx, t2, t2, g_c, n_al)                     # ((b2-1)*gt)*gt
            sub(ctx, v_o, t1, t2, n_al)
            muls(ctx, var_o, var_c, decay, n_al)            # var_t
            if amsgrad:
                vmax(ctx, t1, mgn_c, v_o, n_al)
                muls(ctx, t1, t1, -one, n_al)               # -x
            else:
                muls(ctx, t1, v_o, -one, n_al)
            duplicate(ctx, t2, b2o - one, n_al)
            div(ctx, t1, t1, t2, n_al)                      # (-x)/(b2o-1)
            vsqrt(ctx, t1, t1, n_al)
            adds(ctx, t1, t1, epsilon, n_al)                # denom
            div(ctx, t2, m_o, t1, n_al)                     # m_out/denom
            muls(ctx, t2, t2, step, n_al)                   # (lr/(b1o-1)) * ...
            add(ctx, var_o, var_o, t2, n_al)
        else:  # A2 order
            muls(ctx, t1, m_c, beta1, n_al)                 # m*b1
            muls(ctx, t2, g_c, one - beta1, n_al)           # g*(1-b1)
            add(ctx, m_o, t1, t2, n_al)
            mul(ctx, t2, g_c, g_c, n_al)                    # g*g
            muls(ctx, t2, t2, one - beta2, n_al)            # (g*g)*(1-b2)
            muls(ctx, t1, v_c, beta2, n_al)                 # v*b2
            add(ctx, v_o, t1, t2, n_al)
            muls(ctx, var_o, var_c, decay, n_al)
            if amsgrad:
                vmax(ctx, t1, mgn_c, v_o, n_al)
                muls(ctx, t1, t1, one / (one - b2o), n_al)  # x * (1/(1-b2o))
            else:
                muls(ctx, t1, v_o, one / (one - b2o), n_al)
            vsqrt(ctx, t1, t1, n_al)
            adds(ctx, t1, t1, epsilon, n_al)
            div(ctx, t2, m_o, t1, n_al)                     # m/denom
            muls(ctx, t2, t2, step, n_al)                   # * (lr/(b1o-1))
            add(ctx, var_o, var_o, t2, n_al)

        if CAST:  # round once, into the out-queue slots
            if DTYPE == 1:
                cast_f32_to_f16(ctx, out_var[q:], var_o, n_al)
                cast_f32_to_f16(ctx, out_m[q:], m_o, n_al)
                cast_f32_to_f16(ctx, out_v[q:], v_o, n_al)
            else:
                cast_f32_to_bf16(ctx, out_var[q:], var_o, n_al)
                cast_f32_to_bf16(ctx, out_m[q:], m_o, n_al)
                cast_f32_to_bf16(ctx, out_v[q:], v_o, n_al)
        # CopyOut: exactly this tile's elements.
        if n == n_al:
            data_copy(ctx, var_out, pos, out_var, q, n)
            data_copy(ctx, m_out, pos, out_m, q, n)
            data_copy(ctx, v_out, pos, out_v, q, n)
        else:
            nbytes = n * out_var.itemsize
            data_copy_pad(ctx, var_out, pos, out_var, q, 1, nbytes, 0, 0)
            data_copy_pad(ctx, m_out, pos, out_m, q, 1, nbytes, 0, 0)
            data_copy_pad(ctx, v_out, pos, out_v, q, 1, nbytes, 0, 0)
        trace_work(ctx, n)
        pos += n
        slot ^= 1
