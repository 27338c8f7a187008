"""ascend_numba: a CPU twin of Ascend C vector kernels, compiled with Numba.

Ops (one per entry of :data:`ascend_numba.ops.REGISTRY`): :func:`tile` / :func:`repeat`
(aclnnRepeat), :func:`apply_adamw`, :func:`transpose2d` / :func:`convert_format` (TTRANS),
:func:`staged_copy`.  User kernels: :func:`kernel` and the primitives in
:mod:`ascend_numba.kernels`.

``import ascend_numba`` imports NumPy and the host package only: Numba, the kernels and
ml_dtypes load on first use of a name that needs them (an op, ``kernel``, ``bfloat16``), so a
process that never launches a kernel never pays for them.
"""

from __future__ import annotations

import importlib

from ._numba_compat import check_numba_version
from .errors import AclnnParamError, ParamDtypeError, ParamInvalidError, ParamNullptrError
from .host import (
    PRESETS, InvalidArgument, InvalidType, InvalidVal, Platform, TilingError, TilingKeyField, UBPlanError,
    get_platform,
)
from .lint import Finding, KernelRuleError, lint
from .memory import clear_output_pool, output_pool_info, output_pool_limit
from .memory import empty_fresh as empty  # an output buffer the caller never initialized

__version__ = "0.1.0"

check_numba_version()

# Names defined by modules that import Numba (or ml_dtypes), loaded on first access.
_LAZY = {
    "Kernel": "kernels", "KernelError": "kernels", "KernelCheckError": "kernels", "kernel": "kernels",
    "compile_messages": "kernels", "kernel_prints": "kernels", "interpret": "kernels",
    "REGISTRY": "ops", "plan_adamw": "ops.adamw.plan", "TilePlan": "ops.tile.plan", "plan_tile": "ops.tile.plan",
    "ttrans_tmp_bytes": "ops.ttrans.plan", "TTransRuleError": "ops.ttrans.plan", "bfloat16": "dtypes",
    "assert_golden": "golden.verify", "VerifyReport": "golden.verify",
    "set_threads": "kernels.threads", "threads": "kernels.threads",
}

_EAGER = [
    "__version__", "PRESETS", "Platform", "get_platform",
    "InvalidArgument", "InvalidType", "InvalidVal", "TilingError", "TilingKeyField", "UBPlanError",
    "AclnnParamError", "ParamNullptrError", "ParamInvalidError", "ParamDtypeError",
    "lint", "Finding", "KernelRuleError", "empty", "output_pool_limit", "output_pool_info", "clear_output_pool",
]


def _registry() -> dict:
    return importlib.import_module(".ops", __name__).REGISTRY


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name == "__all__":
        # Every registered op is a function of this module: an op added to the registry needs no line here.
        value = [*_EAGER, *_LAZY, *_registry()]
    elif not name.startswith("_") and name in _registry():
        value = _registry()[name].function
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
