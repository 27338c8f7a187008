"""``staged_copy``: copy an array through every lane's UB (the memory-bandwidth reference)."""

from __future__ import annotations

import numpy as np

from ..host.copy_plan import plan_copy
from ..host.platform import get_platform
from ..kernels.copy import staged_copy as _staged_copy_kernel
from ._args import as_input, check_block_dim, check_out, source_for

__all__ = ["staged_copy"]


def staged_copy(x, *, out=None, block_dim: int | None = None, platform="A2", checked: bool = False) -> np.ndarray:
    """Return a copy of ``x`` moved GM -> UB -> GM by ``block_dim`` lanes (default: vector core count);
    ``checked=True`` verifies every primitive."""
    plat = get_platform(platform)
    arr = np.ascontiguousarray(as_input(x))
    block_dim = check_block_dim(block_dim, plat.aiv_num)
    fresh = out is None
    out = check_out(out, arr.shape, arr.dtype)
    src = source_for(arr, out, fresh)
    tiling = plan_copy(src.nbytes, block_dim, plat)
    if src.nbytes:
        _staged_copy_kernel.launch(src.view(np.uint8).reshape(-1), out.view(np.uint8).reshape(-1), tiling,
                                   block_dim=block_dim, platform=plat, checked=checked)
    return out
