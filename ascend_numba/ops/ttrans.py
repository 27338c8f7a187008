"""``transpose2d`` and ``convert_format``: TTRANS on simulated cores (SPEC §6)."""

from __future__ import annotations

import functools
import math

import numpy as np

from ..host.platform import get_platform
from ..host.split import ceil_div
from ..host.tiling import numpy_dtype, to_array
from ..host.ttrans_plan import (
    A5_CONVERSIONS, CONVERSIONS, FORMAT_NDIM, TTransRuleError, check_a5_alignment, check_given_c0, check_ttrans_dtype,
    conversion_output_shape, resolve_c0,
    plan_fractal_z, plan_fractal_z_3d, plan_transpose_blocks, ttrans_tmp_bytes,
)
from ..kernels.primitives import STATE_TTRANS_SCALAR, STATE_TTRANS_VECTOR
from ..kernels.ttrans import fractal_z_3d_kernel, fractal_z_kernel, transpose_kernel
from ._args import as_input, check_block_dim, check_out, empty, source_for

__all__ = ["transpose2d", "convert_format", "ttrans_tmp_bytes", "TTransRuleError"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@functools.lru_cache(maxsize=1024)
def _planned(plan, *args) -> tuple:
    """``plan(*args)``'s tiling as (bytes, layout), kept per problem: serializing a tiling costs
    more than moving a small tensor, and harnesses repeat the same shapes."""
    tiling = plan(*args)
    return to_array(tiling), numpy_dtype(type(tiling))


def _launch(kernel, x: np.ndarray, out: np.ndarray, planned: tuple, block_dim: int, plat, trace: bool,
            checked: bool, fresh: bool = True):
    """Run on unsigned views of the element width; returns a LaunchTrace when tracing."""
    uint = _UINT[x.itemsize]
    tiling_bytes, tiling_dtype = planned
    result = kernel.launch_prepared((x.reshape(-1).view(uint), out.reshape(-1).view(uint)), tiling_bytes,
                                    tiling_dtype, block_dim, plat, trace=trace, checked=checked,
                                    scratch=(1,) if fresh else ())
    if trace:
        result.info.update(vector_tiles=int(result.state[:, STATE_TTRANS_VECTOR].sum()),
                           scalar_tiles=int(result.state[:, STATE_TTRANS_SCALAR].sum()))
        return result
    return None


def transpose2d(x, *, out=None, block_dim: int | None = None, platform="A2", trace: bool = False,
                checked: bool = False):
    """``x.T`` as a C-contiguous array (``out`` when given), transposed tile by tile in UB by
    ``block_dim`` lanes (default: the platform's vector core count).  ``trace=True`` returns
    ``(result, LaunchTrace)``; its info counts the tiles each TTRANS path (vector, scalar) took.
    ``checked=True`` verifies every primitive (KernelCheckError on a violation)."""
    arr = as_input(x)
    if arr.ndim != 2:
        raise ValueError(f"transpose2d takes a 2-D array, got {arr.ndim}-D")
    plat = get_platform(platform)
    check_ttrans_dtype(arr.dtype, plat, two_d=True)
    h, w = arr.shape
    check_a5_alignment(plat, w * arr.itemsize, h * arr.itemsize)
    block_dim = check_block_dim(block_dim, plat.aiv_num)
    fresh = out is None
    out = check_out(out, (w, h), arr.dtype)
    result = None
    if arr.size:
        planned = _planned(plan_transpose_blocks, 1, 1, h, w, h, w, h, 0, 0, w, 0, 0, h, arr.itemsize, plat)
        result = _launch(transpose_kernel, source_for(arr, out, fresh), out, planned, block_dim, plat, trace,
                         checked, fresh)
    return (out, result) if trace else out


def _shape(arr: np.ndarray, fmt: str, ndim: int) -> tuple:
    if arr.ndim != ndim:
        raise ValueError(f"{fmt} input must be {ndim}-D, got shape {arr.shape}")
    return arr.shape


def convert_format(x, src: str, dst: str, *, c0: int | None = None, n0: int = 16, c: int | None = None,
                   block_dim: int | None = None, platform="A2", trace: bool = False, checked: bool = False):
    """Convert ``x`` from format ``src`` to ``dst`` as TTRANS does, padding with zeros.

    Conversions: NCHW->NC1HWC0, NC1HWC0->NCHW, GNCHW->GNC1HWC0, GNC1HWC0->GNCHW,
    NC1HWC0->FRACTAL_Z, GNC1HWC0->FRACTAL_Z, NCDHW->FRACTAL_Z_3D.  ``c0`` defaults
    to 32 / itemsize (4 is allowed for NCHW->NC1HWC0); ``n0`` is N0 of the fractal
    formats; ``c`` crops NC1HWC0->NCHW to ``c`` channels (default C1*C0).  A shape
    with a zero dim gives the (empty or zero-padded) result NumPy-style, without a launch.
    ``trace=True`` returns ``(result, LaunchTrace)``; ``checked=True`` verifies every primitive.
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
    size = arr.itemsize
    block_dim = check_block_dim(block_dim, plat.aiv_num)
    n0 = _positive_int("n0", n0)
    c0 = None if c0 is None else _positive_int("c0", c0)
    c = None if c is None else _positive_int("c", c)
    shape = _shape(arr, src, FORMAT_NDIM[src])
    if src in ("NCHW", "GNCHW"):
        *gn, ch, h, w = shape
        c0 = resolve_c0(c0, size, allow_four=True)
        c1 = ceil_div(ch, c0)
        outer = math.prod(gn)
        check_a5_alignment(plat, w * size, c0 * size)
        kernel = transpose_kernel
        plan = (plan_transpose_blocks, outer, c1, c0, h * w, ch, c1 * h * w, c0, ch * h * w, c0 * h * w, h * w,
                c1 * h * w * c0, h * w * c0, c0, size, plat)
    elif dst in ("NCHW", "GNCHW"):
        *gn, c1, h, w, cc0 = shape
        check_given_c0(c0, cc0)
        ch = c1 * cc0 if c is None else c
        if ch > c1 * cc0:
            raise ValueError(f"c must be in 1..{c1 * cc0} (C1*C0 of the input), got {c}")
        outer = math.prod(gn)
        kernel = transpose_kernel
        plan = (plan_transpose_blocks, outer, c1, h * w, cc0, c1 * h * w, ch, h * w, c1 * h * w * cc0, h * w * cc0,
                cc0, ch * h * w, cc0 * h * w, h * w, size, plat)
    elif dst == "FRACTAL_Z":
        *g, n, c1, h, w, cc0 = shape
        check_given_c0(c0, cc0)
        if cc0 * size != plat.block_bytes:
            raise TTransRuleError(f"FRACTAL_Z needs C0 * sizeof = {plat.block_bytes} bytes, got C0={cc0}")
        groups = math.prod(g)
        n_padded = ceil_div(n, n0) * n0
        kernel = fractal_z_kernel
        plan = (plan_fractal_z, groups, n, c1 * h * w, cc0, n_padded, size, plat)
    else:  # NCDHW -> FRACTAL_Z_3D
        n, ch, d, h, w = shape
        c0 = resolve_c0(c0, size, allow_four=False)
        c1 = ceil_div(ch, c0)
        n_padded = ceil_div(n, n0) * n0
        kernel = fractal_z_3d_kernel
        plan = (plan_fractal_z_3d, n, ch, d, h * w, c0, n_padded, size, plat)
    out_shape = conversion_output_shape(shape, size, src, dst, c0=c0, n0=n0, c=c)
    if arr.size == 0 or math.prod(out_shape) == 0:
        nothing = np.zeros(out_shape, arr.dtype)  # every element is padding, or there is none
        return (nothing, None) if trace else nothing
    out = empty(out_shape, arr.dtype)
    result = _launch(kernel, arr, out, _planned(*plan), block_dim, plat, trace, checked)
    return (out, result) if trace else out


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return int(value)
