"""ApplyAdamW kernel (SPEC §5, seed 002 §3.2.2).

Compile-time constants, declared below: the TilingKey fields and the datatype
specialization.  Every branch on them folds at compile time; the element loops
inside the vector primitives have none.

Per tile: CopyIn (MTE2) the inputs into the double-buffered in-queues and
announce the next tile's (preload: the device's MTE2 fetches it during this
tile's Compute), Compute (V) with Muls/Mul/Sub/Add/Div/Sqrt/Max/Adds (fused: op
after op over L1-sized strips of the tile, see ``fusion_strip``; ``fused`` 0 runs
each op over the whole tile, the op-by-op path), CopyOut
(MTE3) exactly the tile's elements.  In the native modes (fp32, fp16 seed)
every op runs in the tensor type, so fp16 rounds after each op as the fp16
vector unit does.
"""

import numpy as np

from ...config import COMPUTE_OPS
from ...kernels import (
    add, adds, alloc_buffer, big_small_lane_range, cast_bf16_to_f32, cast_f16_to_f32, cast_f32_to_bf16,
    cast_f32_to_f16, constant, data_copy, data_copy_pad, div, duplicate, fusion_strip, kernel, mul, muls, preload, sub,
    trace_work, vmax, vsqrt,
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


# What one element of a strip's operands takes, at most: the four or five inputs and three
# outputs in the tensor type, the fp32 work tiles of the cast variants and the two temporaries.
FUSED_BYTES_PER_ELEMENT = 5 * 2 + 3 * 2 + 5 * 4 + 2 * 4


@jit(always_inline=True)
def _as_f32(value):
    return np.float32(value)


# nrt=False: the body allocates nothing, so it needs no reference counts (see launch.kernel).
@kernel(tiling_key=AdamWKey, nrt=False)
def adamw_kernel(ctx, var, m, v, grad, max_grad_norm, scalars, var_out, m_out, v_out, fused, t):
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
        strip = fusion_strip(ctx, n_al, FUSED_BYTES_PER_ELEMENT) if fused else n_al
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
            # Spread over every op of every strip of this tile's Compute.
            spread = COMPUTE_OPS * (-(-n_al // strip))
            preload(ctx, var, pos + n, ahead, spread)
            preload(ctx, m, pos + n, ahead, spread)
            preload(ctx, v, pos + n, ahead, spread)
            preload(ctx, grad, pos + n, ahead, spread)
            if amsgrad:
                preload(ctx, max_grad_norm, pos + n, ahead, spread)
        # Compute, with tile fusion: every op over one L1-sized strip of the tile, then the next
        # strip (unfused: one strip, the whole tile).  Each op as the device runs it, in its order.
        for s in range(0, n_al, strip):
            k = min(strip, n_al - s)
            ts1, ts2 = t1[s:], t2[s:]
            # Compute tensors: the queue slots themselves, or fp32 work tiles cast from them.
            if CAST:
                if DTYPE == 1:
                    cast_f16_to_f32(ctx, w_var[s:], in_var[q + s:], k)
                    cast_f16_to_f32(ctx, w_m[s:], in_m[q + s:], k)
                    cast_f16_to_f32(ctx, w_v[s:], in_v[q + s:], k)
                    cast_f16_to_f32(ctx, w_g[s:], in_g[q + s:], k)
                    if amsgrad:
                        cast_f16_to_f32(ctx, w_mgn[s:], in_mgn[q + s:], k)
                else:
                    cast_bf16_to_f32(ctx, w_var[s:], in_var[q + s:], k)
                    cast_bf16_to_f32(ctx, w_m[s:], in_m[q + s:], k)
                    cast_bf16_to_f32(ctx, w_v[s:], in_v[q + s:], k)
                    cast_bf16_to_f32(ctx, w_g[s:], in_g[q + s:], k)
                    if amsgrad:
                        cast_bf16_to_f32(ctx, w_mgn[s:], in_mgn[q + s:], k)
                var_c, m_c, v_c, g_c = w_var[s:], w_m[s:], w_v[s:], w_g[s:]
                var_o, m_o, v_o = var_c, m_c, v_c  # results overwrite the work tiles in place
                if amsgrad:
                    mgn_c = w_mgn[s:]
            else:
                var_c, m_c, v_c, g_c = in_var[q + s:], in_m[q + s:], in_v[q + s:], in_g[q + s:]
                var_o, m_o, v_o = out_var[q + s:], out_m[q + s:], out_v[q + s:]
                if amsgrad:
                    mgn_c = in_mgn[q + s:]

            if maximize:
                muls(ctx, g_c, g_c, -one, k)
            if VARIANT == 0:  # seed / TBE order
                muls(ctx, ts1, m_c, beta1, k)                       # m*b1
                muls(ctx, ts2, g_c, beta1 - one, k)                 # (b1-1)*gt
                sub(ctx, m_o, ts1, ts2, k)
                muls(ctx, ts1, v_c, beta2, k)                       # v*b2
                muls(ctx, ts2, g_c, beta2 - one, k)                 # (b2-1)*gt
                mul(ctx, ts2, ts2, g_c, k)                          # ((b2-1)*gt)*gt
                sub(ctx, v_o, ts1, ts2, k)
                muls(ctx, var_o, var_c, decay, k)                   # var_t
                if amsgrad:
                    vmax(ctx, ts1, mgn_c, v_o, k)
                    muls(ctx, ts1, ts1, -one, k)                    # -x
                else:
                    muls(ctx, ts1, v_o, -one, k)
                duplicate(ctx, ts2, b2o - one, k)
                div(ctx, ts1, ts1, ts2, k)                          # (-x)/(b2o-1)
                vsqrt(ctx, ts1, ts1, k)
                adds(ctx, ts1, ts1, epsilon, k)                     # denom
                div(ctx, ts2, m_o, ts1, k)                          # m_out/denom
                muls(ctx, ts2, ts2, step, k)                        # (lr/(b1o-1)) * ...
                add(ctx, var_o, var_o, ts2, k)
            else:  # A2 order
                muls(ctx, ts1, m_c, beta1, k)                       # m*b1
                muls(ctx, ts2, g_c, one - beta1, k)                 # g*(1-b1)
                add(ctx, m_o, ts1, ts2, k)
                mul(ctx, ts2, g_c, g_c, k)                          # g*g
                muls(ctx, ts2, ts2, one - beta2, k)                 # (g*g)*(1-b2)
                muls(ctx, ts1, v_c, beta2, k)                       # v*b2
                add(ctx, v_o, ts1, ts2, k)
                muls(ctx, var_o, var_c, decay, k)
                if amsgrad:
                    vmax(ctx, ts1, mgn_c, v_o, k)
                    muls(ctx, ts1, ts1, one / (one - b2o), k)       # x * (1/(1-b2o))
                else:
                    muls(ctx, ts1, v_o, one / (one - b2o), k)
                vsqrt(ctx, ts1, ts1, k)
                adds(ctx, ts1, ts1, epsilon, k)
                div(ctx, ts2, m_o, ts1, k)                          # m/denom
                muls(ctx, ts2, ts2, step, k)                        # * (lr/(b1o-1))
                add(ctx, var_o, var_o, ts2, k)

            if CAST:  # round once, into the out-queue slots
                if DTYPE == 1:
                    cast_f32_to_f16(ctx, out_var[q + s:], var_o, k)
                    cast_f32_to_f16(ctx, out_m[q + s:], m_o, k)
                    cast_f32_to_f16(ctx, out_v[q + s:], v_o, k)
                else:
                    cast_f32_to_bf16(ctx, out_var[q + s:], var_o, k)
                    cast_f32_to_bf16(ctx, out_m[q + s:], m_o, k)
                    cast_f32_to_bf16(ctx, out_v[q + s:], v_o, k)
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
