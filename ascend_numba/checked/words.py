"""Byte maps a word at a time: a block of up to 8 bytes of a map (UB shadow, GM owner map) is one
word, loaded and stored whole (Tile copies rows of a few bytes, thousands per call).  Every map
has 8 bytes of slack past its end for these."""

from __future__ import annotations

import numpy as np

from .._numba_compat.jit import jit
from ..kernels.lane import _load_word, _store_word

__all__ = ["SMALL_BLOCK", "low_bytes", "repeat_byte", "put_word"]

SMALL_BLOCK = 8


@jit(always_inline=True)
def low_bytes(n):
    """The mask of a word's low ``n`` bytes (1 <= n <= 8)."""
    return np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * n)


@jit(always_inline=True)
def repeat_byte(byte, mask):
    return (np.uint64(byte) * np.uint64(0x0101010101010101)) & mask


@jit(always_inline=True)
def put_word(addr, value, mask):
    """The bytes of ``value`` under ``mask`` stored at ``addr``, the others left as they are."""
    _store_word(addr, (_load_word(addr) & ~mask) | value)
