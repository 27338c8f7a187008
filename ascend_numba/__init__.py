"""ascend_numba: a CPU twin of Ascend C vector kernels, compiled with Numba.

Ops: :func:`tile` / :func:`repeat` (aclnnRepeat), :func:`apply_adamw`,
:func:`transpose2d` / :func:`convert_format` (TTRANS).  User kernels:
:func:`kernel` and the primitives in :mod:`ascend_numba.kernels`.
"""

from .host import (
    PRESETS, InvalidArgument, InvalidType, InvalidVal, Platform, TilingError, TilingKeyField, UBPlanError,
    get_platform,
)
from .kernels import Kernel, KernelError, kernel

__version__ = "0.1.0"

__all__ = [
    "__version__", "PRESETS", "Platform", "get_platform",
    "InvalidArgument", "InvalidType", "InvalidVal", "TilingError", "TilingKeyField", "UBPlanError",
    "Kernel", "KernelError", "kernel",
]
