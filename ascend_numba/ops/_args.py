"""Argument checks shared by the public ops: clear Python errors before anything is launched."""

from __future__ import annotations

import numpy as np

from ..host.platform import check_block_dim
from ..memory import empty

__all__ = ["as_input", "byte_view", "check_block_dim", "check_out", "empty", "source_for"]


def as_input(x) -> np.ndarray:
    """Any array-like (``__array__``, lists, scalars) as an ndarray of fixed-size elements."""
    if x is None:
        raise TypeError("input is None")
    arr = np.asarray(x)
    if arr.dtype.hasobject:
        raise TypeError(f"dtype {arr.dtype} holds Python objects; device tensors hold fixed-size elements")
    if arr.dtype.itemsize == 0:
        raise TypeError(f"dtype {arr.dtype!r} has zero-size elements; device tensors hold elements of 1 byte or more")
    return arr


def check_out(out, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A fresh C-contiguous result (from the output pool), or the caller's ``out`` after checking
    it fits exactly."""
    if out is None:
        return empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"out has shape {out.shape}, expected {tuple(shape)}")
    if out.dtype != dtype:
        raise TypeError(f"out has dtype {out.dtype}, expected {dtype}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable")
    return out


def source_for(arr: np.ndarray, out: np.ndarray, fresh: bool) -> np.ndarray:
    """``arr`` C-contiguous for the kernel, copied when the caller's ``out`` overlaps it: the
    result is computed from the input as it was, as NumPy does."""
    src = np.ascontiguousarray(arr)
    if not fresh and np.may_share_memory(src, out):
        src = src.copy()
    return src


def byte_view(a: np.ndarray) -> np.ndarray:
    """A C-contiguous array's bytes, flat: what data-movement kernels take as GM tensors."""
    return a.view(np.uint8) if a.ndim == 1 else a.reshape(-1).view(np.uint8)
