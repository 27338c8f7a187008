"""``tile`` (numpy.tile semantics) and ``repeat`` (torch.Tensor.repeat / aclnnRepeat semantics)."""

from __future__ import annotations

import numpy as np

from ...config import PROBLEM_CACHE_SIZE
from ...host.platform import get_platform
from ...kernels.interpret import interpreting
from .._args import as_input, byte_view, check_block_dim, check_out, source_for
from ..problem import Problem, problem_cache
from .kernel import tile_kernel
from .plan import TooManyDims, normalize_repeat_reps, normalize_tile_reps, plan_tile_normalized

__all__ = ["tile", "repeat"]


def tile(x, reps, *, out=None, block_dim: int | None = None, platform="A2", path: str | None = None,
         trace: bool = False, checked: bool = False, interpret: bool | None = None):
    """``numpy.tile(x, reps)`` computed by the Ascend C Tile kernel's paths on simulated cores.

    ``block_dim`` defaults to the platform's AI core count; ``path`` forces one
    of ``split_mult, doubling, build, gather, per_row`` when its structural
    needs hold (else ValueError).  ``out`` receives the result when given.
    ``trace=True`` returns ``(result, LaunchTrace)``: per-lane rows processed,
    copies and bytes in each direction, UB use, the path.  ``checked=True`` verifies every
    primitive the kernel runs (KernelCheckError on a violation; ``out`` is then untouched).
    ``interpret=True`` runs the kernel and its primitives as plain Python, for a debugger (see
    :func:`~ascend_numba.interpret`).
    """
    arr = as_input(x)
    return _run(arr, _call_for("tile", normalize_tile_reps, arr, reps, block_dim, platform, path), out, trace,
                checked, interpret)


def repeat(x, repeats, *, out=None, block_dim: int | None = None, platform="A2",
           path: str | None = None, trace: bool = False, checked: bool = False, interpret: bool | None = None):
    """``torch.Tensor.repeat(*repeats)``: ``len(repeats) >= x.ndim``, x left-padded with 1-dims."""
    arr = as_input(x)
    return _run(arr, _call_for("repeat", normalize_repeat_reps, arr, repeats, block_dim, platform, path), out,
                trace, checked, interpret)


class _TileCall:
    """What a call's input shape, reps, element size, lanes, platform and path fix before any
    data: the shapes and the launch (None past 8 merged dims, which take several launches)."""

    def __init__(self, in_shape: tuple, multiples: tuple, elem_bytes: int, block_dim: int, plat, path):
        self.multiples, self.block_dim, self.platform, self.path = multiples, block_dim, plat, path
        self.padded = (1,) * (len(multiples) - len(in_shape)) + in_shape
        self.shape = tuple(s * m for s, m in zip(self.padded, multiples))
        try:
            self.problem = _planned(self.padded, multiples, elem_bytes, block_dim, plat, path)[1]
        except TooManyDims:
            self.problem = None


@problem_cache
def _planned(input_shape: tuple, multiples: tuple, elem_bytes: int, block_dim: int, plat, path):
    """The plan and its problem (TooManyDims past 8 merged dims); remembered, so traced and
    checked calls do not serialize the tiling again."""
    plan = plan_tile_normalized(input_shape, multiples, elem_bytes, block_dim, plat, path)
    return plan, Problem(tile_kernel, plan.tiling, plan.block_dim, plan.platform, plan.key)


@problem_cache
def _call(in_shape: tuple, multiples: tuple, elem_bytes: int, block_dim: int, plat, path) -> _TileCall:
    return _TileCall(in_shape, multiples, elem_bytes, block_dim, plat, path)


# Problems by the arguments exactly as a call gave them, so a harness repeating a call pays one
# dict lookup for its checks and plan.  Only plain ints enter a key: True, 2.0 and numpy ints
# hash like ints but must go through the checks (bools and floats are errors).
_SEEN: dict = {}


def _call_for(op: str, normalize, arr: np.ndarray, reps, block_dim, platform, path) -> _TileCall:
    """The call: remembered under its arguments, else checked, planned and remembered."""
    key = _seen_key(op, arr, reps, block_dim, platform, path)
    call = None if key is None else _SEEN.get(key)
    if call is None:
        if path is not None and not isinstance(path, str):
            raise TypeError(f"path must be a str or None, got {type(path).__name__}")
        multiples = normalize(arr.ndim, reps)
        plat = get_platform(platform)
        call = _call(arr.shape, multiples, arr.itemsize, check_block_dim(block_dim, plat.aic_num), plat, path)
        if key is not None:
            if len(_SEEN) >= PROBLEM_CACHE_SIZE:
                _SEEN.clear()
            _SEEN[key] = call
    return call


def _seen_key(op: str, arr: np.ndarray, reps, block_dim, platform, path):
    if type(reps) is tuple:
        for r in reps:
            if type(r) is not int:
                return None
    elif type(reps) is not int:
        return None
    if (block_dim is not None and type(block_dim) is not int) or type(platform) is not str \
            or (path is not None and type(path) is not str):
        return None
    return op, arr.shape, arr.itemsize, reps, block_dim, platform, path


def _run(arr: np.ndarray, call: _TileCall, out, trace: bool, checked: bool, interpret: bool | None):
    interpret = interpreting(interpret)
    if checked and out is not None:
        # Problems past 8 merged dims take several launches: let the caller's out see only a
        # result every launch of which passed.
        check_out(out, call.shape, arr.dtype)
        result = _run(arr, call, None, trace, checked, interpret)
        np.copyto(out, result[0] if trace else result)
        return (out, result[1]) if trace else out
    fresh = out is None
    out = check_out(out, call.shape, arr.dtype)
    if out.size == 0:
        return (out, None) if trace else out
    src = source_for(arr, out, fresh)
    if call.problem is not None and not (trace or checked or interpret):
        call.problem.run((byte_view(src), byte_view(out)), interpret=False)
        return out
    traces = _tile_into(src.reshape(call.padded), call.multiples, out, call.block_dim, call.platform, call.path,
                        trace, checked, fresh, interpret)
    if trace:
        return out, traces[0] if len(traces) == 1 else traces
    return out


def _tile_into(src: np.ndarray, multiples: tuple, out: np.ndarray, block_dim: int, plat, path,
               trace: bool, checked: bool, fresh: bool, interpret: bool) -> list:
    """Launch the kernel (more than once for problems past 8 merged dims); returns the traces."""
    try:
        plan, problem = _planned(src.shape, multiples, src.itemsize, block_dim, plat, path)
    except TooManyDims:
        # The kernel takes 8 dims; NumPy takes any rank: peel the outermost output dim on the host.
        traces = []
        for i in range(out.shape[0]):
            traces += _tile_into(src[i % src.shape[0]], multiples[1:], out[i], block_dim, plat, path, trace,
                                 checked, fresh, interpret)
        return traces
    info = {"path": plan.path, "split_by_mult": plan.split_by_mult, "merged_shape": plan.merged_shape,
            "merged_multiples": plan.merged_multiples} if trace else None
    result = problem.run((byte_view(src), byte_view(out)), trace=trace,
                                checked=checked, fresh=("y",) if fresh else (), trace_info=info, interpret=interpret)
    return [result] if trace else []
