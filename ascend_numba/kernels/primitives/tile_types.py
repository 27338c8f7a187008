"""Compile-time checks of the tiles a primitive takes, shared by the families (a TypingError
names what the device would not take)."""

from __future__ import annotations

from numba import types

from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS

__all__ = ["check_contiguous", "b16_b32_tiles"]


def check_contiguous(*tensors):
    """Raise TypingError for a tensor that is not a C-contiguous array: a device tensor is a run of
    bytes, and the copies move bytes from its first one (a reversed or strided view would be
    written past its end)."""
    for t in tensors:
        if isinstance(t, types.Array) and t.layout != "C":
            raise TypingError(f"a tensor is a C-contiguous run of elements (a LocalTensor / GlobalTensor); got a "
                              f"{t.layout!r}-layout view {t}: copy it into a tile, or slice with step 1")


def b16_b32_tiles(dst, src):
    """A vector move's tiles (Copy, Gather's level-0 form): 2- or 4-byte elements of one type,
    C-contiguous (the device's b16 / b32 forms)."""
    raise NotImplementedError  # compiled only


@overload(b16_b32_tiles, jit_options=OVERLOAD_OPTIONS)
def _ov_b16_b32_tiles(dst, src):
    if dst.dtype != src.dtype or dst.dtype.bitwidth not in (16, 32):
        raise TypingError(f"the vector unit moves 2- or 4-byte elements of one type (b16 / b32); got dst {dst.dtype}, "
                          f"src {src.dtype}")
    check_contiguous(dst, src)
    return lambda dst, src: None
