"""Reference Tile / Repeat: every output element read from its source by index arithmetic."""

from __future__ import annotations

import numpy as np


def tile_reference(x, reps) -> np.ndarray:
    """``numpy.tile`` semantics, element by element: ``out[i] = x[i mod shape]``."""
    x = np.asarray(x)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    ndim = max(x.ndim, len(reps))
    shape = (1,) * (ndim - x.ndim) + x.shape
    reps = (1,) * (ndim - len(reps)) + reps
    out_shape = tuple(s * r for s, r in zip(shape, reps))
    src = x.reshape(shape)
    if 0 in out_shape:
        return np.empty(out_shape, x.dtype)
    index = tuple(np.indices(out_shape, sparse=True)[d] % shape[d] for d in range(ndim))
    return src[index] if ndim else src.copy()


def repeat_reference(x, repeats) -> np.ndarray:
    """``torch.Tensor.repeat`` semantics: at least ``x.ndim`` repeats, x left-padded with 1-dims."""
    x = np.asarray(x)
    repeats = (repeats,) if np.ndim(repeats) == 0 else tuple(repeats)
    if len(repeats) < x.ndim:
        raise ValueError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                         "of input tensor")
    if any(r < 0 for r in repeats):
        raise ValueError("repeats must be non-negative")
    return tile_reference(x, repeats)
