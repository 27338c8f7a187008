"""ApplyAdamW kernel (SPEC §5, seed 002 §3.2.2).

Compile-time constants, declared below: the TilingKey fields and the datatype
specialization.  Every branch on them folds at compile time; the element loops
inside the vector primitives have none.

Per tile: announce the next tile's CopyIn (preload: the device's MTE2 fetches it
during this tile's Compute), then the tile as one vector program,
:func:`adamw_tile`: CopyIn (MTE2) the inputs into the double-buffered in-queues,
Compute (V) with Muls/Mul/Sub/Add/Div/Sqrt/Max/Adds, CopyOut (MTE3) exactly the
tile's elements.  Fused (``FUSED`` 1, plain lanes) the three stages run as one
pass, each element GM -> registers -> GM, as the device's pipes run side by side
on different slices of the stream;
``FUSED`` 0 runs each copy and op over the whole tile, the op-by-op path.  In the
native modes (fp32, fp16 seed) every op runs in the tensor type, so fp16 rounds
after each op as the fp16 vector unit does.
"""

import numpy as np

from ...config import COMPUTE_OPS
from ...kernels import (  # the copies and vector ops are the programs' vocabulary
    add, adds, alloc_buffer, big_small_lane_range, cast_bf16_to_f32, cast_f16_to_f32, cast_f32_to_bf16,
    cast_f32_to_f16, constant, data_copy, data_copy_pad, div, duplicate, kernel, mul, muls, preload, sub, trace_work,
    vector_program, vmax, vsqrt,
)
from ..._numba_compat.jit import jit
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
FUSED = constant("FUSED", "1: the Compute's vector programs run fused, 0: op by op (the primitives' loops)")


# The Compute as vector programs (tile fusion, see kernels.vector_program): one pass over a tile
# in a plain lane, op by op in traced and checked lanes and with FUSED 0.  Each line is one vector
# op of the device's Compute, in its order and rounding; t1, t2 are the tmp tiles.

@vector_program(temps=("t1", "t2"))
def adamw_update(var, m, v, g, mgn, var_o, m_o, v_o, t1, t2, variant, amsgrad, maximize,
                 beta1, beta2, epsilon, decay, b2o, step, one):
    """One step on compute tiles of one type: the seed/TBE order (variant 0) or the A2 kernel's."""
    if maximize:
        g = muls(g, -one)
    if variant == 0:
        t1 = muls(m, beta1)                     # m*b1
        t2 = muls(g, beta1 - one)               # (b1-1)*gt
        m_o = sub(t1, t2)
        t1 = muls(v, beta2)                     # v*b2
        t2 = muls(g, beta2 - one)               # (b2-1)*gt
        t2 = mul(t2, g)                         # ((b2-1)*gt)*gt
        v_o = sub(t1, t2)
        var_o = muls(var, decay)                # var_t
        if amsgrad:
            t1 = vmax(mgn, v_o)
            t1 = muls(t1, -one)                 # -x
        else:
            t1 = muls(v_o, -one)
        t2 = duplicate(b2o - one)
        t1 = div(t1, t2)                        # (-x)/(b2o-1)
        t1 = vsqrt(t1)
        t1 = adds(t1, epsilon)                  # denom
        t2 = div(m_o, t1)                       # m_out/denom
        t2 = muls(t2, step)                     # (lr/(b1o-1)) * ...
        var_o = add(var_o, t2)
    else:
        t1 = muls(m, beta1)                     # m*b1
        t2 = muls(g, one - beta1)               # g*(1-b1)
        m_o = add(t1, t2)
        t2 = mul(g, g)                          # g*g
        t2 = muls(t2, one - beta2)              # (g*g)*(1-b2)
        t1 = muls(v, beta2)                     # v*b2
        v_o = add(t1, t2)
        var_o = muls(var, decay)
        if amsgrad:
            t1 = vmax(mgn, v_o)
            t1 = muls(t1, one / (one - b2o))    # x * (1/(1-b2o))
        else:
            t1 = muls(v_o, one / (one - b2o))
        t1 = vsqrt(t1)
        t1 = adds(t1, epsilon)
        t2 = div(m_o, t1)                       # m/denom
        t2 = muls(t2, step)                     # * (lr/(b1o-1))
        var_o = add(var_o, t2)


@vector_program(temps=("t1", "t2", "w_var", "w_m", "w_v", "w_g", "w_mgn"))
def adamw_update_in_fp32(var, m, v, g, mgn, var_o, m_o, v_o, w_var, w_m, w_v, w_g, w_mgn, t1, t2, dtype, variant,
                         amsgrad, maximize, beta1, beta2, epsilon, decay, b2o, step, one):
    """fp16 (dtype 1) or bf16 (dtype 2) tiles computed in fp32: cast in (exact), the step in
    place on the fp32 work tiles, results rounded once into the out-queue tiles."""
    if dtype == 2:
        w_var = cast_bf16_to_f32(var)
        w_m = cast_bf16_to_f32(m)
        w_v = cast_bf16_to_f32(v)
        w_g = cast_bf16_to_f32(g)
        if amsgrad:
            w_mgn = cast_bf16_to_f32(mgn)
    else:
        w_var = cast_f16_to_f32(var)
        w_m = cast_f16_to_f32(m)
        w_v = cast_f16_to_f32(v)
        w_g = cast_f16_to_f32(g)
        if amsgrad:
            w_mgn = cast_f16_to_f32(mgn)
    adamw_update(w_var, w_m, w_v, w_g, w_mgn, w_var, w_m, w_v, t1, t2, variant, amsgrad, maximize,
                 beta1, beta2, epsilon, decay, b2o, step, one)
    if dtype == 2:
        var_o = cast_f32_to_bf16(w_var)
        m_o = cast_f32_to_bf16(w_m)
        v_o = cast_f32_to_bf16(w_v)
    else:
        var_o = cast_f32_to_f16(w_var)
        m_o = cast_f32_to_f16(w_m)
        v_o = cast_f32_to_f16(w_v)


# The queue tiles are temps: each is free once the tile is done (FreeTensor), so a fused pass keeps
# an element of each in registers between its copies and ops, never storing it to UB.
@vector_program(temps=("in_var", "in_m", "in_v", "in_g", "in_mgn", "out_var", "out_m", "out_v", "w_var", "w_m",
                       "w_v", "w_g", "w_mgn", "t1", "t2"))
def adamw_tile(var, m, v, grad, mgn, var_out, m_out, v_out, in_var, in_m, in_v, in_g, in_mgn, out_var, out_m, out_v,
               w_var, w_m, w_v, w_g, w_mgn, t1, t2, whole, nbytes, cast, dtype, variant, amsgrad, maximize, beta1,
               beta2, epsilon, decay, b2o, step, one):
    """One tile: CopyIn of whole blocks (the last may read GM padding), the Compute (through the
    fp32 work tiles when ``cast``), CopyOut of exactly the tile's elements (``nbytes``;
    DataCopyPad unless ``whole`` blocks)."""
    in_var = data_copy(var)
    in_m = data_copy(m)
    in_v = data_copy(v)
    in_g = data_copy(grad)
    if amsgrad:
        in_mgn = data_copy(mgn)
    if cast:
        adamw_update_in_fp32(in_var, in_m, in_v, in_g, in_mgn, out_var, out_m, out_v, w_var, w_m, w_v, w_g, w_mgn,
                             t1, t2, dtype, variant, amsgrad, maximize, beta1, beta2, epsilon, decay, b2o, step, one)
    else:
        adamw_update(in_var, in_m, in_v, in_g, in_mgn, out_var, out_m, out_v, t1, t2, variant, amsgrad, maximize,
                     beta1, beta2, epsilon, decay, b2o, step, one)
    if whole:
        var_out = data_copy(out_var)
        m_out = data_copy(out_m)
        v_out = data_copy(out_v)
    else:
        var_out = data_copy_pad(out_var, nbytes)
        m_out = data_copy_pad(out_m, nbytes)
        v_out = data_copy_pad(out_v, nbytes)


@jit(always_inline=True)
def _as_f32(value):
    return np.float32(value)


# nrt=False: the body allocates nothing, so it needs no reference counts (see launch.kernel).
@kernel(tiling_key=AdamWKey, nrt=False, outputs=("var_out", "m_out", "v_out"), gm_padding="read")
def adamw_kernel(ctx, var, m, v, grad, max_grad_norm, scalars, var_out, m_out, v_out, t):
    amsgrad = Amsgrad == 1
    # Init: this lane's blocks (big/small split) and every UB buffer, bound once.
    start, end = big_small_lane_range(ctx, t.bigCores, t.smallBlocks, t.blockElems, t.totalLength)
    tile = t.tileDataNum
    in_var = alloc_buffer(ctx, 2 * tile, IO)
    in_m = alloc_buffer(ctx, 2 * tile, IO)
    in_v = alloc_buffer(ctx, 2 * tile, IO)
    in_g = alloc_buffer(ctx, 2 * tile, IO)
    if amsgrad:
        in_mgn = alloc_buffer(ctx, 2 * tile, IO)
    else:
        in_mgn = alloc_buffer(ctx, 0, IO)  # no max_grad_norm without amsgrad: empty, never read
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
        else:
            w_mgn = alloc_buffer(ctx, 0, np.float32)
        t1 = alloc_buffer(ctx, tile, np.float32)
        t2 = alloc_buffer(ctx, tile, np.float32)
    else:  # no work tiles: empty, never read
        w_var = w_m = w_v = w_g = w_mgn = alloc_buffer(ctx, 0, np.float32)
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
        # Op by op, the next tile's CopyIn, which the device's MTE2 runs during this tile's Compute,
        # is fetched over the Compute's vector ops.  A fused tile streams its inputs from GM itself
        # (16M fp32: 24 ms with the preload, 19 without).
        ahead = min(tile, end - pos - n)
        if ahead > 0 and FUSED == 0:
            preload(ctx, var, pos + n, ahead, COMPUTE_OPS)
            preload(ctx, m, pos + n, ahead, COMPUTE_OPS)
            preload(ctx, v, pos + n, ahead, COMPUTE_OPS)
            preload(ctx, grad, pos + n, ahead, COMPUTE_OPS)
            if amsgrad:
                preload(ctx, max_grad_norm, pos + n, ahead, COMPUTE_OPS)
        # This tile: CopyIn, Compute and CopyOut over its queue slots (fused: one pass).
        # (Tuples stand for their elements: a call of more than 30 arguments loses its constants.)
        adamw_tile(ctx, n_al, FUSED,
                   (var[pos:], m[pos:], v[pos:], grad[pos:], max_grad_norm[pos:], var_out[pos:], m_out[pos:],
                    v_out[pos:]),
                   (in_var[q:], in_m[q:], in_v[q:], in_g[q:], in_mgn[q:], out_var[q:], out_m[q:], out_v[q:]),
                   (w_var, w_m, w_v, w_g, w_mgn, t1, t2), n == n_al, n * out_var.itemsize, CAST, DTYPE, VARIANT,
                   Amsgrad, Maximize, (beta1, beta2, epsilon, decay, b2o, step, one))
        trace_work(ctx, n)
        pos += n
        slot ^= 1
