"""``apply_adamw``: one AdamW step as the ApplyAdamW kernel computes it, bit for bit."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...dtypes import HALF_AND_FLOAT, device_dtype_name
from ...errors import ParamDtypeError, ParamInvalidError, ParamNullptrError
from ...host.platform import get_platform
from ...kernels.launch import as_gm
from .._args import check_block_dim, empty
from ..problem import Problem, problem_cache
from .kernel import adamw_kernel
from .plan import DTYPE_CODES, VARIANTS, computes_in_fp32, plan_adamw

__all__ = ["apply_adamw", "ADAMW_DTYPES", "check_adamw_args", "check_adamw_aliasing"]

ADAMW_DTYPES = HALF_AND_FLOAT  # by name (dtypes.device_dtype_name)
SCALAR_NAMES = ("beta1_power", "beta2_power", "lr", "weight_decay", "beta1", "beta2", "epsilon")
TENSOR_NAMES = ("var", "m", "v", "grad")
UPDATED = ("var", "m", "v")


def check_adamw_args(tensors: dict, scalars: dict, max_grad_norm, amsgrad: bool, variant: str):
    """Validate in the device's order; returns (dtype, scalar array).  Raises AclnnParamError subclasses."""
    for name in TENSOR_NAMES:
        if tensors[name] is None:
            raise ParamNullptrError(f"ApplyAdamW: {name} is missing")
    for name in SCALAR_NAMES:
        if scalars[name] is None:
            raise ParamNullptrError(f"ApplyAdamW: {name} is missing")
    if amsgrad and max_grad_norm is None:
        raise ParamNullptrError("ApplyAdamW: max_grad_norm is required when amsgrad=True")
    for name in TENSOR_NAMES:
        if not isinstance(tensors[name], np.ndarray):
            raise ParamDtypeError(f"ApplyAdamW: {name} must be a numpy array, got {type(tensors[name]).__name__}")
    dtype = tensors["var"].dtype
    if device_dtype_name(dtype) not in ADAMW_DTYPES:
        raise ParamDtypeError(f"ApplyAdamW: dtype {dtype} is not supported; use float32, float16 or bfloat16")
    arrays = dict(tensors)
    if amsgrad:
        if not isinstance(max_grad_norm, np.ndarray):
            raise ParamDtypeError("ApplyAdamW: max_grad_norm must be a numpy array")
        arrays["max_grad_norm"] = max_grad_norm
    for name, arr in arrays.items():
        if arr.dtype != dtype:
            raise ParamDtypeError(f"ApplyAdamW: {name} has dtype {arr.dtype}, var has {dtype}")
    for name, value in scalars.items():
        if type(value) is not float and isinstance(value, np.ndarray) and value.dtype != dtype:
            raise ParamDtypeError(f"ApplyAdamW: {name} has dtype {value.dtype}, var has {dtype}")
    for name, arr in arrays.items():
        if arr.shape != tensors["var"].shape:
            raise ParamInvalidError(f"ApplyAdamW: {name} has shape {arr.shape}, var has {tensors['var'].shape}")
    values = []
    for name in SCALAR_NAMES:
        value = scalars[name]
        if type(value) is float:  # the common case, first: this runs on every step of a harness
            values.append(value)
        elif isinstance(value, np.ndarray):
            if value.size != 1:
                raise ParamInvalidError(f"ApplyAdamW: {name} must hold exactly one element, got {value.size}")
            values.append(value.reshape(()))
        elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
            values.append(value)
        else:
            raise ParamInvalidError(f"ApplyAdamW: {name} must be a number or a one-element array")
    if variant not in VARIANTS:
        raise ParamInvalidError(f"ApplyAdamW: variant must be one of {VARIANTS}, got {variant!r}")
    # Each number becomes the tensor dtype from its own type, as the adapter copies scalars into tensors.
    try:
        with np.errstate(over="ignore"):
            rounded = np.array(values, dtype=dtype)
        _warn_meaning_lost(values, rounded, dtype)
        return dtype, rounded
    except OverflowError:
        for name, value in zip(SCALAR_NAMES, values):
            try:
                float(value)
            except OverflowError:
                raise ParamInvalidError(f"ApplyAdamW: {name} is an integer too large for {dtype}") from None
        raise


# Scalars whose rounding to 1 or to 0 changes what the step does (see _warn_meaning_lost).
_NOT_ONE = {"beta1": "1 - beta1 is 0: m is never updated", "beta2": "1 - beta2 is 0: v is never updated",
            "beta1_power": "beta1_power * beta1 - 1 is 0: the step divides by zero",
            "beta2_power": "beta2_power * beta2 - 1 is 0: the step divides by zero"}
_NOT_ZERO = {"lr": "the step does nothing", "epsilon": "the denominator can be 0",
             "weight_decay": "there is no weight decay"}


def _warn_meaning_lost(values: list, rounded: np.ndarray, dtype: np.dtype) -> None:
    """Warn (RuntimeWarning) for each fp16/bf16 scalar whose rounding to the tensor dtype, as the
    device's adapter does it, changes the update's meaning: to 1.0 where 1 - x matters, to 0 where
    x != 0 matters, or to inf."""
    if device_dtype_name(dtype) == "float32":
        return
    for name, value, got in zip(SCALAR_NAMES, values, rounded.astype(np.float64).tolist()):
        given = float(np.asarray(value, dtype=np.float64))
        why = None
        if name in _NOT_ONE and given != 1.0 and got == 1.0:
            why = _NOT_ONE[name]
        elif name in _NOT_ZERO and given != 0.0 and got == 0.0:
            why = _NOT_ZERO[name]
        elif math.isfinite(given) and not math.isfinite(got):
            why = "it overflows"
        if why:
            warnings.warn(f"ApplyAdamW: {name}={given!r} rounds to {got!r} in {device_dtype_name(dtype)} (scalars "
                          f"enter the kernel as tensors of var's dtype, as on the device): {why}",
                          RuntimeWarning, stacklevel=4)


def _same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides)


def check_adamw_aliasing(tensors: dict) -> None:
    """The aliasing rule of an in-place step: ``var``, ``m`` and ``v`` share no memory with one
    another, and ``grad`` / ``max_grad_norm`` either share none with any tensor or are exactly
    the same view as it (each element is read before it is written, so an exact alias is
    well defined; a shifted one would read elements already updated).  Raises ParamInvalidError."""
    items = [(n, a) for n, a in tensors.items() if a is not None]
    for i, (name_a, a) in enumerate(items):
        for name_b, b in items[i + 1:]:
            if not np.may_share_memory(a, b):
                continue
            if name_a in UPDATED and name_b in UPDATED:
                raise ParamInvalidError(f"ApplyAdamW: {name_a} and {name_b} share memory; each is updated in place")
            if not _same_view(a, b) and np.shares_memory(a, b):
                raise ParamInvalidError(f"ApplyAdamW: {name_b} partially overlaps {name_a}; tensors must be "
                                        "the same view or not overlap at all")


def apply_adamw(var, m, v, beta1_power, beta2_power, lr, weight_decay, beta1, beta2, epsilon, grad,
                max_grad_norm=None, *, amsgrad: bool = False, maximize: bool = False, variant: str = "seed",
                inplace: bool = True, fused: bool = True, block_dim: int | None = None, platform="A2",
                trace: bool = False, checked: bool = False, interpret: bool | None = None):
    """One ApplyAdamW step; returns ``(var, m, v)``.

    ``beta1_power``/``beta2_power`` are beta**(t-1): the op multiplies by beta
    itself.  With ``inplace=True`` (default) var, m, v are updated in place and
    returned; otherwise new arrays are returned and the inputs stay as they
    were.  ``max_grad_norm`` is read (amsgrad), never written.  Dtypes
    float32, float16, bfloat16, every tensor of var's dtype.  Bad arguments
    raise an AclnnParamError subclass (with the aclnn ``code``) before any
    array is touched.  ``trace=True`` returns ``((var, m, v), LaunchTrace)``; ``checked=True``
    verifies every primitive (KernelCheckError on a violation, every array unchanged).
    ``fused=False`` runs the Compute op by op over whole tiles instead of with tile fusion (one
    pass over each tile, see ``kernels.vector_program``): the same bits, slower; traced and
    checked runs are op by op, as are interpreted ones (``interpret=True``: the kernel as plain
    Python, see :func:`~ascend_numba.interpret`).

    Scalars given as Python numbers are first converted to var's dtype, as the device's adapter
    copies them into tensors of that dtype, with every variant (``"a2"`` computes in fp32 from
    those rounded values).  In bf16, ``beta2=0.999`` becomes 1.0, so ``v`` never changes: a
    RuntimeWarning names each scalar whose rounding changes the step's meaning (beta1, beta2 or a
    beta power to 1.0; lr, epsilon or weight_decay to 0; any of them to inf).
    """
    tensors = dict(var=var, m=m, v=v, grad=grad)
    scalars = dict(beta1_power=beta1_power, beta2_power=beta2_power, lr=lr, weight_decay=weight_decay,
                   beta1=beta1, beta2=beta2, epsilon=epsilon)
    dtype, scalar_array = check_adamw_args(tensors, scalars, max_grad_norm, amsgrad, variant)
    plat = get_platform(platform)
    if block_dim is not None:
        block_dim = check_block_dim(block_dim, plat.aiv_num)
    if inplace:
        for name in UPDATED:
            if not tensors[name].flags.c_contiguous or not tensors[name].flags.writeable:
                raise ParamInvalidError(f"ApplyAdamW: {name} must be C-contiguous and writeable to update in place")
        check_adamw_aliasing({**tensors, "max_grad_norm": max_grad_norm if amsgrad else None})
        outs = (var, m, v)
    else:
        outs = tuple(empty(a.shape, a.dtype) for a in (var, m, v))
    if var.size == 0:
        return (outs, None) if trace else outs
    # Traced and checked lanes run the Compute op by op whatever FUSED says: one kernel serves both.
    problem = _problem(var.size, device_dtype_name(dtype), variant, bool(amsgrad), bool(maximize),
                       bool(fused or trace or checked), block_dim, plat)
    inputs = [as_gm(np.ascontiguousarray(a), n) for n, a in tensors.items()]
    mgn = as_gm(np.ascontiguousarray(max_grad_norm), "max_grad_norm") if amsgrad else inputs[0][:1]
    gm_args = (*inputs, mgn, as_gm(scalar_array, "scalars"),
               *(as_gm(o, n) for o, n in zip(outs, ("var", "m", "v"))))
    result = problem.run(gm_args, trace=trace, checked=checked, fresh=() if inplace else ("var_out", "m_out", "v_out"),
                         interpret=interpret)
    if trace:
        result.info.update(dtype=device_dtype_name(dtype), variant=variant, amsgrad=bool(amsgrad),
                           maximize=bool(maximize), tile=problem.tiling.tileDataNum)
        return outs, result
    return outs


@problem_cache
def _problem(size: int, dtype_name: str, variant: str, amsgrad: bool, maximize: bool, fused: bool, block_dim,
             plat) -> Problem:
    """The plan and the kernel's compile-time constants: the TilingKey, the datatype and whether
    the Compute is fused (a kernel of each: the fused one never compiles the op-by-op loops)."""
    plan = plan_adamw(size, dtype_name, variant, amsgrad, maximize, block_dim, plat)
    io = np.float32 if dtype_name == "float32" else np.uint16
    constants = {**plan.key, "IO": io, "DTYPE": DTYPE_CODES[dtype_name], "VARIANT": VARIANTS.index(variant),
                 "CAST": computes_in_fp32(dtype_name, variant), "FUSED": int(fused)}
    return Problem(adamw_kernel, plan.tiling, plan.block_dim, plat, constants)
