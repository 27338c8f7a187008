"""Reference ApplyAdamW, op by op in NumPy (SPEC §5).

``variant="seed"``: the TBE order.  fp32 in fp32; fp16 in NumPy float16, which
rounds after every op as the fp16 vector unit does, with each scalar rounded
to fp16 where it meets a tensor; bf16 cast to fp32, computed, rounded once.
``variant="a2"``: the public Ascend C A2 kernel's order, fp16/bf16 in fp32 and
rounded once.  Scalars arrive in the tensor dtype; derived scalars are fp32.
"""

from __future__ import annotations

import numpy as np

from ...dtypes import with_default_nan


def _scalars(dtype, beta1_power, beta2_power, lr, weight_decay, beta1, beta2, epsilon):
    """Each scalar as the tensor dtype would hold it, widened to fp32."""
    return [np.float32(np.asarray(s, dtype=dtype).reshape(())) for s in
            (beta1_power, beta2_power, lr, weight_decay, beta1, beta2, epsilon)]


def apply_adamw_reference(var, m, v, beta1_power, beta2_power, lr, weight_decay, beta1, beta2, epsilon,
                          grad, max_grad_norm=None, *, amsgrad=False, maximize=False, variant="seed"):
    """Return ``(var_out, m_out, v_out)`` in the inputs' dtype; the inputs are not modified.

    Overflow and invalid operations give inf and NaN, as on the device, without warnings; a NaN
    is the default NaN (the NaN policy).
    """
    with np.errstate(all="ignore"):
        return _apply_adamw(var, m, v, beta1_power, beta2_power, lr, weight_decay, beta1, beta2, epsilon, grad,
                            max_grad_norm, amsgrad, maximize, variant)


def _apply_adamw(var, m, v, beta1_power, beta2_power, lr, weight_decay, beta1, beta2, epsilon, grad,
                 max_grad_norm, amsgrad, maximize, variant):
    dtype = np.asarray(var).dtype
    b1p, b2p, lr, wd, b1, b2, eps = _scalars(dtype, beta1_power, beta2_power, lr, weight_decay, beta1, beta2,
                                             epsilon)
    one = np.float32(1)
    decay = one - lr * wd
    b1o, b2o = b1p * b1, b2p * b2
    step = lr / (b1o - one)
    native_f16 = dtype == np.float16 and variant == "seed"
    work = np.float16 if native_f16 else np.float32
    # In the native fp16 order a scalar becomes fp16 where it enters a vector op.
    sc = (lambda x: np.float16(x)) if native_f16 else (lambda x: np.float32(x))
    var_, m_, v_, g = (np.asarray(a).astype(work) for a in (var, m, v, grad))
    if maximize:
        g = -g
    if variant == "seed":
        m_out = m_ * sc(b1) - g * sc(b1 - one)
        v_out = v_ * sc(b2) - (g * sc(b2 - one)) * g
        var_t = var_ * sc(decay)
        x = np.maximum(np.asarray(max_grad_norm).astype(work), v_out) if amsgrad else v_out
        denom = np.sqrt((-x) / sc(b2o - one)) + sc(eps)
        var_out = var_t + (m_out / denom) * sc(step)
    elif variant == "a2":
        m_out = m_ * sc(b1) + g * sc(one - b1)
        v_out = v_ * sc(b2) + (g * g) * sc(one - b2)
        var_t = var_ * sc(decay)
        x = np.maximum(np.asarray(max_grad_norm).astype(work), v_out) if amsgrad else v_out
        denom = np.sqrt(x * sc(one / (one - b2o))) + sc(eps)
        var_out = var_t + (m_out / denom) * sc(step)
    else:
        raise ValueError(f"unknown variant {variant!r}")
    # Every output is an arithmetic result: a NaN element is the default NaN, as the vector unit's.
    return tuple(with_default_nan(a.astype(dtype)) for a in (var_out, m_out, v_out))
