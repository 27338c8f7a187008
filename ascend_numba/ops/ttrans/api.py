"""``transpose2d`` and ``convert_format``: TTRANS on simulated cores (SPEC §6)."""

from __future__ import annotations

import math

import numpy as np

from ...host.platform import get_platform
from ...host.split import ceil_div
from ...kernels.lane import STATE_TTRANS_SCALAR, STATE_TTRANS_VECTOR
from .._args import as_input, check_block_dim, check_out, empty, source_for
from ..problem import Problem, problem_cache
from .kernel import fractal_z_3d_kernel, fractal_z_kernel, transpose_kernel
from .plan import (
    A5_CONVERSIONS, CONVERSIONS, FORMAT_NDIM, TTransRuleError, check_a5_alignment, check_given_c0, check_ttrans_dtype,
    conversion_output_shape, plan_fractal_z, plan_fractal_z_3d, plan_transpose_blocks, resolve_c0, ttrans_tmp_bytes,
)

__all__ = ["transpose2d", "convert_format", "ttrans_tmp_bytes", "TTransRuleError"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _run(problem: Problem, x: np.ndarray, out: np.ndarray, trace: bool, checked: bool, interpret: bool | None,
         fresh: bool = True):
    """Run on unsigned views of the element width; returns a LaunchTrace when tracing."""
    uint = _UINT[x.itemsize]
    result = problem.run((x.reshape(-1).view(uint), out.reshape(-1).view(uint)), trace=trace, checked=checked,
                         fresh=("y",) if fresh else (), interpret=interpret)
    if trace:
        result.info.update(vector_tiles=int(result.state[:, STATE_TTRANS_VECTOR].sum()),
                           scalar_tiles=int(result.state[:, STATE_TTRANS_SCALAR].sum()))
    return result


def transpose2d(x, *, out=None, block_dim: int | None = None, platform="A2", trace: bool = False,
                checked: bool = False, interpret: bool | None = None):
    """``x.T`` as a C-contiguous array (``out`` when given), transposed tile by tile in UB by
    ``block_dim`` lanes (default: the platform's vector core count).  ``trace=True`` returns
    ``(result, LaunchTrace)``; its info counts the tiles each TTRANS path (vector, scalar) took.
    ``checked=True`` verifies every primitive (KernelCheckError on a violation); ``interpret=True``
    runs the kernel as plain Python (see :func:`~ascend_numba.interpret`)."""
    arr = as_input(x)
    if arr.ndim != 2:
        raise ValueError(f"transpose2d takes a 2-D array, got {arr.ndim}-D")
    h, w = arr.shape
    plat = get_platform(platform)
    if block_dim is not None and type(block_dim) is not int:
        block_dim = check_block_dim(block_dim, plat.aiv_num)  # an int, or the error
    problem = _transpose_call(h, w, arr.dtype, block_dim, plat)
    fresh = out is None
    out = check_out(out, (w, h), arr.dtype)
    result = None
    if arr.size:
        result = _run(problem, source_for(arr, out, fresh), out, trace, checked, interpret, fresh)
    return (out, result) if trace else out


@problem_cache
def _transpose_call(h: int, w: int, dtype: np.dtype, block_dim: int | None, plat) -> Problem:
    """The checked arguments' problem, remembered: a harness repeating a call skips the checks."""
    check_ttrans_dtype(dtype, plat, two_d=True)
    check_a5_alignment(plat, w * dtype.itemsize, h * dtype.itemsize)
    return _transpose_problem(h, w, dtype.itemsize, check_block_dim(block_dim, plat.aiv_num), plat)


@problem_cache
def _transpose_problem(h: int, w: int, elem_bytes: int, block_dim: int, plat) -> Problem:
    # One block: src[h, w] -> dst[w, h].
    tiling = plan_transpose_blocks(outer=1, inner=1, rows=h, cols=w, total_rows=h, total_cols=w, out_rows=h,
                                   src_outer=0, src_inner=0, src_row_stride=w, dst_outer=0, dst_inner=0,
                                   dst_row_stride=h, elem_bytes=elem_bytes, platform=plat)
    return Problem(transpose_kernel, tiling, block_dim, plat)


def _shape(arr: np.ndarray, fmt: str, ndim: int) -> tuple:
    if arr.ndim != ndim:
        raise ValueError(f"{fmt} input must be {ndim}-D, got shape {arr.shape}")
    return arr.shape


def convert_format(x, src: str, dst: str, *, c0: int | None = None, n0: int = 16, c: int | None = None,
                   block_dim: int | None = None, platform="A2", trace: bool = False, checked: bool = False,
                   interpret: bool | None = None):
    """Convert ``x`` from format ``src`` to ``dst`` as TTRANS does, padding with zeros.

    Conversions: NCHW->NC1HWC0, NC1HWC0->NCHW, GNCHW->GNC1HWC0, GNC1HWC0->GNCHW,
    NC1HWC0->FRACTAL_Z, GNC1HWC0->FRACTAL_Z, NCDHW->FRACTAL_Z_3D.  ``c0`` defaults
    to 32 / itemsize (4 is allowed for NCHW->NC1HWC0); ``n0`` is N0 of the fractal
    formats; ``c`` crops NC1HWC0->NCHW to ``c`` channels (default C1*C0).  A shape
    with a zero dim gives the (empty or zero-padded) result NumPy-style, without a launch.
    ``trace=True`` returns ``(result, LaunchTrace)``; ``checked=True`` verifies every primitive;
    ``interpret=True`` runs the kernel as plain Python (see :func:`~ascend_numba.interpret`).
    """
    if not isinstance(src, str) or not isinstance(dst, str):
        raise TypeError(f"src and dst must be format names (str), got {src!r} and {dst!r}")
    src, dst = src.upper(), dst.upper()
    if (src, dst) not in CONVERSIONS:
        raise ValueError(f"unsupported conversion {src} -> {dst}; supported: {sorted(CONVERSIONS)}")
    plat = get_platform(platform)
    if plat.name == "A5" and (src, dst) not in A5_CONVERSIONS:
        raise TTransRuleError(f"TTRANS on A5 supports only {sorted(A5_CONVERSIONS)}; not {src} -> {dst}")
    arr = np.ascontiguousarray(as_input(x))
    check_ttrans_dtype(arr.dtype, plat, two_d=False)
    block_dim = check_block_dim(block_dim, plat.aiv_num)
    n0 = _positive_int("n0", n0)
    c0 = None if c0 is None else _positive_int("c0", c0)
    c = None if c is None else _positive_int("c", c)
    shape = _shape(arr, src, FORMAT_NDIM[src])
    out_shape, problem = _conversion(src, dst, shape, c0, n0, c, arr.itemsize, block_dim, plat)
    if problem is None:
        nothing = np.zeros(out_shape, arr.dtype)  # every element is padding, or there is none
        return (nothing, None) if trace else nothing
    out = empty(out_shape, arr.dtype)
    result = _run(problem, arr, out, trace, checked, interpret)
    return (out, result) if trace else out


@problem_cache
def _conversion(src: str, dst: str, shape: tuple, c0, n0: int, c, size: int, block_dim: int, plat):
    """The output shape and the Problem of one conversion (None when there is nothing to move);
    raises for a shape or C0 the conversion does not take."""
    if src in ("NCHW", "GNCHW"):
        *gn, ch, h, w = shape
        c0 = resolve_c0(c0, size, allow_four=True)
        c1 = ceil_div(ch, c0)
        check_a5_alignment(plat, w * size, c0 * size)
        # Per (g, n), blocks of C0 channels [C0, H*W] -> [H*W, C0], padded channels zero.
        kernel, plan = transpose_kernel, plan_transpose_blocks
        plan_args = dict(outer=math.prod(gn), inner=c1, rows=c0, cols=h * w, total_rows=ch, total_cols=c1 * h * w,
                         out_rows=c0, src_outer=ch * h * w, src_inner=c0 * h * w, src_row_stride=h * w,
                         dst_outer=c1 * h * w * c0, dst_inner=h * w * c0, dst_row_stride=c0)
    elif dst in ("NCHW", "GNCHW"):
        *gn, c1, h, w, cc0 = shape
        check_given_c0(c0, cc0)
        ch = c1 * cc0 if c is None else c
        if ch > c1 * cc0:
            raise ValueError(f"c must be in 1..{c1 * cc0} (C1*C0 of the input), got {c}")
        # Per (g, n), blocks [H*W, C0] -> [C0, H*W], cropped to ``ch`` channels.
        kernel, plan = transpose_kernel, plan_transpose_blocks
        plan_args = dict(outer=math.prod(gn), inner=c1, rows=h * w, cols=cc0, total_rows=c1 * h * w, total_cols=ch,
                         out_rows=h * w, src_outer=c1 * h * w * cc0, src_inner=h * w * cc0, src_row_stride=cc0,
                         dst_outer=ch * h * w, dst_inner=cc0 * h * w, dst_row_stride=h * w)
    elif dst == "FRACTAL_Z":
        *g, n, c1, h, w, cc0 = shape
        check_given_c0(c0, cc0)
        if cc0 * size != plat.block_bytes:
            raise TTransRuleError(f"FRACTAL_Z needs C0 * sizeof = {plat.block_bytes} bytes, got C0={cc0}")
        kernel, plan = fractal_z_kernel, plan_fractal_z
        plan_args = dict(groups=math.prod(g), n=n, k=c1 * h * w, c0=cc0, n_padded=ceil_div(n, n0) * n0)
    else:  # NCDHW -> FRACTAL_Z_3D
        n, ch, d, h, w = shape
        c0 = resolve_c0(c0, size, allow_four=False)
        kernel, plan = fractal_z_3d_kernel, plan_fractal_z_3d
        plan_args = dict(n=n, c=ch, d=d, hw=h * w, c0=c0, n_padded=ceil_div(n, n0) * n0)
    out_shape = conversion_output_shape(shape, size, src, dst, c0=c0, n0=n0, c=c)
    if math.prod(shape) == 0 or math.prod(out_shape) == 0:
        return out_shape, None
    return out_shape, Problem(kernel, plan(**plan_args, elem_bytes=size, platform=plat), block_dim, plat)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return int(value)
