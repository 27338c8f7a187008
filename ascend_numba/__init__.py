"""ascend_numba: a CPU twin of Ascend C vector kernels, compiled with Numba.

Ops: :func:`tile` / :func:`repeat` (aclnnRepeat), :func:`apply_adamw`,
:func:`transpose2d` / :func:`convert_format` (TTRANS).  User kernels:
:func:`kernel` and the primitives in :mod:`ascend_numba.kernels`.
"""

from .host import (
    PRESETS, InvalidArgument, InvalidType, InvalidVal, Platform, TilingError, TilingKeyField, UBPlanError,
    get_platform,
)
from .host.tile_plan import TilePlan, plan_tile
from .kernels import Kernel, KernelCheckError, KernelError, compile_messages, kernel
from .errors import AclnnParamError, ParamDtypeError, ParamInvalidError, ParamNullptrError
from .host.adamw_plan import plan_adamw
from .memory import clear_output_pool, output_pool_info, output_pool_limit
from .ops.adamw import apply_adamw
from .ops.copy import staged_copy
from .ops.tile import repeat, tile
from .ops.ttrans import TTransRuleError, convert_format, transpose2d, ttrans_tmp_bytes

__version__ = "0.1.0"

__all__ = [
    "__version__", "PRESETS", "Platform", "get_platform",
    "InvalidArgument", "InvalidType", "InvalidVal", "TilingError", "TilingKeyField", "UBPlanError",
    "Kernel", "KernelError", "KernelCheckError", "kernel", "compile_messages",
    "tile", "repeat", "plan_tile", "TilePlan", "staged_copy",
    "apply_adamw", "plan_adamw",
    "transpose2d", "convert_format", "ttrans_tmp_bytes", "TTransRuleError",
    "AclnnParamError", "ParamNullptrError", "ParamInvalidError", "ParamDtypeError",
    "output_pool_limit", "output_pool_info", "clear_output_pool",
]
