"""ascend_numba: a CPU twin of Ascend C vector kernels, compiled with Numba.

Ops (one per entry of :data:`ascend_numba.ops.REGISTRY`): :func:`tile` / :func:`repeat`
(aclnnRepeat), :func:`apply_adamw`, :func:`transpose2d` / :func:`convert_format` (TTRANS),
:func:`staged_copy`.  User kernels: :func:`kernel` and the primitives in
:mod:`ascend_numba.kernels`.
"""

from .errors import AclnnParamError, ParamDtypeError, ParamInvalidError, ParamNullptrError
from .host import (
    PRESETS, InvalidArgument, InvalidType, InvalidVal, Platform, TilingError, TilingKeyField, UBPlanError,
    get_platform,
)
from .kernels import Kernel, KernelCheckError, KernelError, compile_messages, kernel
from .lint import Finding, KernelRuleError, lint
from .memory import clear_output_pool, output_pool_info, output_pool_limit
from .ops import REGISTRY
from .ops.adamw.plan import plan_adamw
from .ops.tile.plan import TilePlan, plan_tile
from .ops.ttrans.plan import TTransRuleError, ttrans_tmp_bytes

__version__ = "0.1.0"

# Every registered op is a function of this module: an op added to the registry needs no line here.
globals().update({name: entry.function for name, entry in REGISTRY.items()})

__all__ = [
    "__version__", "PRESETS", "Platform", "get_platform",
    "InvalidArgument", "InvalidType", "InvalidVal", "TilingError", "TilingKeyField", "UBPlanError",
    "Kernel", "KernelError", "KernelCheckError", "kernel", "compile_messages", "lint", "Finding", "KernelRuleError",
    *REGISTRY, "plan_tile", "TilePlan", "plan_adamw", "ttrans_tmp_bytes", "TTransRuleError",
    "AclnnParamError", "ParamNullptrError", "ParamInvalidError", "ParamDtypeError",
    "output_pool_limit", "output_pool_info", "clear_output_pool",
]
