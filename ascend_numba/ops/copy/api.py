"""``staged_copy``: copy an array through every lane's UB (the memory-bandwidth reference)."""

from __future__ import annotations

import numpy as np

from ...host.platform import get_platform
from .._args import as_input, check_block_dim, check_out, source_for
from ..problem import Problem, problem_cache
from .kernel import copy_kernel
from .plan import plan_copy

__all__ = ["staged_copy"]


def staged_copy(x, *, out=None, block_dim: int | None = None, platform="A2", trace: bool = False,
                checked: bool = False, interpret: bool | None = None):
    """Return a copy of ``x`` moved GM -> UB -> GM by ``block_dim`` lanes (default: vector core
    count).  ``trace=True`` returns ``(result, LaunchTrace)``; ``checked=True`` verifies every
    primitive; ``interpret=True`` runs the kernel as plain Python (see :func:`~ascend_numba.interpret`)."""
    plat = get_platform(platform)
    arr = np.ascontiguousarray(as_input(x))
    block_dim = check_block_dim(block_dim, plat.aiv_num)
    fresh = out is None
    out = check_out(out, arr.shape, arr.dtype)
    result = None
    if arr.nbytes:
        src = source_for(arr, out, fresh)
        result = _problem(arr.nbytes, block_dim, plat).run(
            (src.view(np.uint8).reshape(-1), out.view(np.uint8).reshape(-1)), trace=trace, checked=checked,
            fresh=("dst",) if fresh else (), interpret=interpret)
    return (out, result) if trace else out


@problem_cache
def _problem(nbytes: int, block_dim: int, plat) -> Problem:
    return Problem(copy_kernel, plan_copy(nbytes, block_dim, plat), block_dim, plat)
