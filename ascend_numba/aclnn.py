"""The aclnn two-phase C API, mirrored: ``aclnnXxxGetWorkspaceSize`` then ``aclnnXxx`` (SPEC §4, §5).

Calls return the device's status codes instead of raising, check their
arguments in the device's order, and keep the last error message for
:func:`aclGetRecentErrMsg`.  A call that fails changes no array.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .dtypes import DEVICE_DTYPES, device_dtype_name
from .errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclnnParamError
from .ops.adamw.api import SCALAR_NAMES, apply_adamw, check_adamw_aliasing, check_adamw_args
from .ops.tile.api import repeat as _repeat
from .ops.tile.plan import INT32_MAX, MAX_DIMS

__all__ = [
    "ACLNN_SUCCESS", "ACLNN_ERR_PARAM_NULLPTR", "ACLNN_ERR_PARAM_INVALID",
    "AclOpExecutor", "aclGetRecentErrMsg",
    "aclnnRepeatGetWorkspaceSize", "aclnnRepeat", "REPEAT_DTYPES",
    "aclnnApplyAdamWGetWorkspaceSize", "aclnnApplyAdamW",
]

ACLNN_SUCCESS = 0

REPEAT_DTYPES = frozenset(DEVICE_DTYPES)  # by name (dtypes.device_dtype_name)

_recent = threading.local()


def aclGetRecentErrMsg() -> str:
    """The last error message of this thread's aclnn calls ('' when the last call succeeded)."""
    return getattr(_recent, "message", "")


def _set_error(message: str) -> None:
    _recent.message = message


@dataclass
class AclOpExecutor:
    """What GetWorkspaceSize prepared; runs once, as aclnn executors do."""

    op_name: str
    run: Callable[[], None]
    used: bool = False


def _fail(code: int, message: str):
    _set_error(message)
    return code, 0, None


def aclnnRepeatGetWorkspaceSize(self, repeats, out):
    """Check a Repeat call and prepare it: returns ``(status, workspace_size, executor)``.

    Checks, in order: null self/repeats/out (161001); dtype not supported or
    ``out`` of another dtype (161002); fewer repeats than dims, a negative
    repeat, rank or repeats above 8 (161002); an empty input or a 0 repeat
    succeeds with nothing to do; ``out`` of the wrong shape or past the
    device's int32 element limit (161002).
    """
    if self is None or repeats is None or out is None:
        name = "self" if self is None else "repeats" if repeats is None else "out"
        return _fail(ACLNN_ERR_PARAM_NULLPTR, f"aclnnRepeat: {name} is a null pointer")
    if not isinstance(self, np.ndarray) or not isinstance(out, np.ndarray):
        return _fail(ACLNN_ERR_PARAM_INVALID, "aclnnRepeat: self and out must be tensors (numpy arrays)")
    if device_dtype_name(self.dtype) not in REPEAT_DTYPES:
        return _fail(ACLNN_ERR_PARAM_INVALID, f"aclnnRepeat: self dtype {self.dtype} is not supported; "
                                              f"supported: {sorted(REPEAT_DTYPES)}")
    if out.dtype != self.dtype:
        return _fail(ACLNN_ERR_PARAM_INVALID, f"aclnnRepeat: out dtype {out.dtype} differs from self dtype "
                                              f"{self.dtype}")
    try:
        repeats = [int(r.__index__()) for r in repeats]
    except (AttributeError, TypeError):
        return _fail(ACLNN_ERR_PARAM_INVALID, "aclnnRepeat: repeats must be a sequence of integers")
    if self.ndim > len(repeats):
        return _fail(ACLNN_ERR_PARAM_INVALID, "aclnnRepeat: Number of dimensions of repeat dims can not be "
                                              "smaller than number of dimensions of input tensor")
    if any(r < 0 for r in repeats):
        return _fail(ACLNN_ERR_PARAM_INVALID, f"aclnnRepeat: repeats must be non-negative, got {repeats}")
    if self.ndim > MAX_DIMS or len(repeats) > MAX_DIMS:
        return _fail(ACLNN_ERR_PARAM_INVALID, f"aclnnRepeat: rank {self.ndim} and {len(repeats)} repeats must "
                                              f"not exceed {MAX_DIMS}")
    if self.size == 0 or 0 in repeats:
        _set_error("")
        return ACLNN_SUCCESS, 0, AclOpExecutor("aclnnRepeat", lambda: None)
    padded = (1,) * (len(repeats) - self.ndim) + self.shape
    expected = tuple(s * r for s, r in zip(padded, repeats))
    if out.shape != expected:
        return _fail(ACLNN_ERR_PARAM_INVALID, f"aclnnRepeat: out shape {out.shape} should be {expected}")
    if out.size > INT32_MAX:
        return _fail(ACLNN_ERR_PARAM_INVALID, f"aclnnRepeat: {out.size} output elements exceed the int32 limit")
    if not out.flags.c_contiguous or not out.flags.writeable:
        return _fail(ACLNN_ERR_PARAM_INVALID, "aclnnRepeat: out must be contiguous and writeable")
    _set_error("")
    return ACLNN_SUCCESS, 0, AclOpExecutor("aclnnRepeat", lambda: _repeat(self, repeats, out=out))


def _run_executor(op_name: str, workspace, workspace_size: int, executor, stream) -> int:
    if executor is None:
        _set_error(f"{op_name}: executor is a null pointer")
        return ACLNN_ERR_PARAM_NULLPTR
    if not isinstance(executor, AclOpExecutor) or executor.op_name != op_name:
        _set_error(f"{op_name}: executor was not prepared by {op_name}GetWorkspaceSize")
        return ACLNN_ERR_PARAM_INVALID
    if workspace_size and workspace is None:
        _set_error(f"{op_name}: workspace is a null pointer but workspace_size is {workspace_size}")
        return ACLNN_ERR_PARAM_NULLPTR
    if executor.used:
        _set_error(f"{op_name}: executor already ran (executors are single-use)")
        return ACLNN_ERR_PARAM_INVALID
    try:
        executor.run()
    except AclnnParamError as e:
        _set_error(f"{op_name}: {e}")
        return e.code
    except (TypeError, ValueError) as e:
        # A tensor changed since GetWorkspaceSize (made read-only, reshaped, resized): the op
        # checked it again and refused before touching anything.
        _set_error(f"{op_name}: {e}")
        return ACLNN_ERR_PARAM_INVALID
    executor.used = True
    _set_error("")
    return ACLNN_SUCCESS


def aclnnRepeat(workspace, workspace_size: int, executor, stream=None) -> int:
    """Run a prepared Repeat; returns the status (``stream`` is accepted and unused: lanes run now)."""
    return _run_executor("aclnnRepeat", workspace, workspace_size, executor, stream)


def aclnnApplyAdamWGetWorkspaceSize(varRef, mRef, vRef, beta1Power, beta2Power, lr, weightDecay, beta1, beta2,
                                    epsilon, grad, maxGradNorm, amsgrad: bool, maximize: bool):
    """Check an ApplyAdamW call (argument order of the C API) and prepare it in place on varRef/mRef/vRef.

    Returns ``(status, workspace_size, executor)``: 161001 for a missing tensor or
    a missing maxGradNorm with amsgrad; 161002 for a dtype outside fp32/fp16/bf16
    or differing from varRef, a shape differing from varRef's, a scalar with more
    than one element; an empty varRef succeeds with nothing to do.
    """
    tensors = dict(var=varRef, m=mRef, v=vRef, grad=grad)
    scalars = dict(zip(SCALAR_NAMES, (beta1Power, beta2Power, lr, weightDecay, beta1, beta2, epsilon)))
    try:
        check_adamw_args(tensors, scalars, maxGradNorm, bool(amsgrad), "seed")
        check_adamw_aliasing({**tensors, "max_grad_norm": maxGradNorm if amsgrad else None})
    except AclnnParamError as e:
        return _fail(e.code, f"aclnnApplyAdamW: {e}")
    if not all(a.flags.c_contiguous and a.flags.writeable for a in (varRef, mRef, vRef)):
        return _fail(ACLNN_ERR_PARAM_INVALID, "aclnnApplyAdamW: varRef, mRef, vRef must be contiguous and writeable")
    _set_error("")
    if varRef.size == 0:
        return ACLNN_SUCCESS, 0, AclOpExecutor("aclnnApplyAdamW", lambda: None)

    def run():
        apply_adamw(varRef, mRef, vRef, beta1Power, beta2Power, lr, weightDecay, beta1, beta2, epsilon, grad,
                    maxGradNorm if amsgrad else None, amsgrad=bool(amsgrad), maximize=bool(maximize))
    return ACLNN_SUCCESS, 0, AclOpExecutor("aclnnApplyAdamW", run)


def aclnnApplyAdamW(workspace, workspace_size: int, executor, stream=None) -> int:
    """Run a prepared ApplyAdamW; returns the status."""
    return _run_executor("aclnnApplyAdamW", workspace, workspace_size, executor, stream)
