"""An element's bits as an integer and back, for the primitives that move or pack bits (reductions'
results, sort records, DMA atomics): an fp32 tile's through a reinterpretation, an integer tile's
(a uint16 tile of fp16 bits too) as its stored value; and a scalar as a tile stores it."""

from __future__ import annotations

import numpy as np
from numba import types

from ..._numba_compat.extending import overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS
from ..half import f32_as_u32, f32_to_f16, u32_as_f32
from .vector import as_element

__all__ = ["bits_of", "put_bits", "stored_scalar"]


def bits_of(t, i):
    """Element ``i``'s bits as a non-negative int64."""
    raise NotImplementedError  # compiled only


@overload(bits_of, jit_options=OVERLOAD_OPTIONS)
def _ov_bits_of(t, i):
    if t.dtype == types.float32:
        return lambda t, i: np.int64(f32_as_u32(t[i]))
    mask = (1 << t.dtype.bitwidth) - 1
    return lambda t, i: np.int64(t[i]) & mask


def put_bits(t, i, bits):
    """Element ``i`` from the low bits of ``bits``."""
    raise NotImplementedError  # compiled only


@overload(put_bits, jit_options=OVERLOAD_OPTIONS)
def _ov_put_bits(t, i, bits):
    if t.dtype == types.float32:
        def put_f32(t, i, bits):
            t[i] = u32_as_f32(np.uint32(np.int64(bits) & 0xFFFF_FFFF))
        return put_f32
    dtype, mask, signed = t.dtype, (1 << t.dtype.bitwidth) - 1, t.dtype.signed

    def put(t, i, bits):
        v = np.int64(bits) & mask
        if signed and v > mask >> 1:  # the value with these bits: in range, so no conversion wraps
            v -= mask + 1
        t[i] = dtype(v)
    return put


def stored_scalar(tensor, value):
    """A scalar as the tile stores it: an fp16 tile's bits of the nearest fp16 (round to nearest
    even), else as :func:`as_element` converts it."""
    raise NotImplementedError  # compiled only


@overload(stored_scalar, jit_options=OVERLOAD_OPTIONS)
def _ov_stored_scalar(tensor, value):
    if tensor.dtype == types.uint16:
        return lambda tensor, value: f32_to_f16(np.float32(value))
    return as_element(tensor.dtype, value)
