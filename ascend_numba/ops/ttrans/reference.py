"""Reference TTRANS conversions: pad, reshape, transpose in NumPy, one line of index logic each."""

from __future__ import annotations

import numpy as np


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def transpose2d_reference(x) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x).T)


def nchw_to_nc1hwc0(x, c0: int) -> np.ndarray:
    """[.., N, C, H, W] -> [.., N, C1, H, W, C0]: dst[n, c//C0, h, w, c%C0] = src[n, c, h, w], pad 0."""
    *lead, c, h, w = x.shape
    c1 = _ceil(c, c0)
    pad = [(0, 0)] * len(lead) + [(0, c1 * c0 - c), (0, 0), (0, 0)]
    xp = np.pad(x, pad)
    return np.ascontiguousarray(np.moveaxis(xp.reshape(*lead, c1, c0, h, w), -3, -1))


def nc1hwc0_to_nchw(x, c: int | None = None) -> np.ndarray:
    """Inverse of :func:`nchw_to_nc1hwc0`, cropped to ``c`` channels (default C1*C0)."""
    *lead, c1, h, w, c0 = x.shape
    full = np.moveaxis(x, -1, -3).reshape(*lead, c1 * c0, h, w)
    return np.ascontiguousarray(full[..., : (c1 * c0 if c is None else c), :, :])


def nc1hwc0_to_fractal_z(x, n0: int) -> np.ndarray:
    """[(G,) N, C1, H, W, C0] -> [(G*)C1*H*W, N1, N0, C0]: dst[g*K + k, n//N0, n%N0, :] = src[g, n, k, :]."""
    if x.ndim == 5:
        x = x[None]
    g, n, c1, h, w, c0 = x.shape
    n1 = _ceil(n, n0)
    xp = np.pad(x, [(0, 0), (0, n1 * n0 - n), (0, 0), (0, 0), (0, 0), (0, 0)])
    k = c1 * h * w
    return np.ascontiguousarray(xp.reshape(g, n1 * n0, k, c0).transpose(0, 2, 1, 3)).reshape(g * k, n1, n0, c0)


def ncdhw_to_fractal_z_3d(x, c0: int, n0: int) -> np.ndarray:
    """[N, C, D, H, W] -> [D*C1*H*W, N1, N0, C0]:
    dst[d*C1*H*W + (c//C0)*H*W + h*W + w, n//N0, n%N0, c%C0] = src[n, c, d, h, w], pad 0."""
    n, c, d, h, w = x.shape
    c1, n1 = _ceil(c, c0), _ceil(n, n0)
    xp = np.pad(x, [(0, n1 * n0 - n), (0, c1 * c0 - c), (0, 0), (0, 0), (0, 0)])
    # [N', C1, C0, D, H, W] -> [D, C1, H, W, N', C0]
    y = xp.reshape(n1 * n0, c1, c0, d, h, w).transpose(3, 1, 4, 5, 0, 2)
    return np.ascontiguousarray(y).reshape(d * c1 * h * w, n1, n0, c0)


def convert_format_reference(x, src: str, dst: str, *, c0: int | None = None, n0: int = 16,
                             c: int | None = None) -> np.ndarray:
    """``convert_format`` by the four references above (``c0`` defaults to 32 / itemsize)."""
    x = np.asarray(x)
    dst = dst.upper()
    c0 = c0 or 32 // x.itemsize
    if dst in ("NC1HWC0", "GNC1HWC0"):
        return nchw_to_nc1hwc0(x, c0)
    if dst in ("NCHW", "GNCHW"):
        return nc1hwc0_to_nchw(x, c)
    if dst == "FRACTAL_Z":
        return nc1hwc0_to_fractal_z(x, n0)
    return ncdhw_to_fractal_z_3d(x, c0, n0)
