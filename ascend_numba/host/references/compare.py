"""Compare, Compares and Select, one NumPy function per declared op (``host.primitives.COMPARE_OPS``).

Written for clarity, from the device's documented semantics (the asc-devkit pages of Compare,
Compares and Select and the A2/A3 boundary-value tables, cannmirror/asc-devkit at 0da921b):

* a comparison holds when its ordered relation does: with a NaN operand none does, NE included
  (the device's rule, not IEEE's NE); -0.0 == +0.0; fp16 tiles compared as ``float16`` values;
  a scalar first becomes the tile's type;
* only whole 256-byte repeats of the sources are compared; the result is one bit per element,
  least significant bit first (``numpy.packbits`` with ``bitorder="little"``);
* Select takes element ``i``'s bit ``i`` of the mask (VSEL_TENSOR_TENSOR_MODE,
  VSEL_TENSOR_SCALAR_MODE), or bit ``i mod (256 / element size)`` (VSEL_CMPMASK_SPR), and moves
  the chosen element's bits.
"""

from __future__ import annotations

import numpy as np

from ..primitives import CMPMODE, SELMODE
from .repeat import lanes

__all__ = ["REFERENCES", "reference", "scalar_as", "compare_register", "select_register"]

_COMPARISONS = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
                CMPMODE.GE: np.greater_equal, CMPMODE.NE: lambda a, b: np.less(a, b) | np.greater(a, b)}
REPEAT_BYTES = 256


def scalar_as(a: np.ndarray, scalar):
    """The scalar as a tile of ``a``'s type holds it: a number enters a float tile as fp32, then the
    tile's type; an integer tile takes an integer modulo its width (a C++ conversion), a float
    first toward zero (a NaN as 0, saturated to int64)."""
    if a.dtype.kind == "f":
        return a.dtype.type(np.float32(scalar))
    if isinstance(scalar, float):
        if np.isnan(scalar):
            scalar = 0
        elif scalar >= 2.0**63:
            scalar = 2**63 - 1
        elif scalar < -2.0**63:
            scalar = -2**63
        else:
            scalar = int(scalar)  # toward zero
    return np.array(int(scalar), np.int64).astype(a.dtype)[()]


def compare(a, b, mode):
    n = a.size * a.itemsize // REPEAT_BYTES * REPEAT_BYTES // a.itemsize  # whole repeats only
    b = b[:n] if np.ndim(b) else b
    with np.errstate(invalid="ignore"):
        return np.packbits(_COMPARISONS[CMPMODE(mode)](a[:n], b), bitorder="little")


def compare_scalar(a, scalar, mode):
    return compare(a, scalar_as(a, scalar), mode)


def select(mask, a, b, mode):
    bits = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), bitorder="little").astype(bool)
    index = np.arange(a.size)
    if SELMODE(mode) == SELMODE.VSEL_CMPMASK_SPR:
        index %= REPEAT_BYTES // a.dtype.itemsize
    return np.where(bits[index], a, b)


def select_scalar(mask, a, scalar, mode):
    return select(mask, a, np.full(a.shape, scalar_as(a, scalar), a.dtype), SELMODE.VSEL_TENSOR_TENSOR_MODE)


def select_level0(dst, mask, a, b, mode, repeat_times, high, low, strides):
    """``dst`` after a level-0 Select in normal mask mode (``b`` a tile, or the scalar as the tile
    stores it): each lane the mask words turn on takes ``a`` where its bit is 1, else ``b``; lane
    ``l`` of repeat ``r`` reads mask bit ``r * lanes + l``, VSEL_CMPMASK_SPR bit ``l``; the other
    elements of ``dst`` stay.  ``strides``: BinaryRepeatParams' six fields."""
    d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = strides
    per_repeat = REPEAT_BYTES // dst.dtype.itemsize
    # A fourth operand with block stride 1 and repeat stride 8 is the lane's number from the start.
    i_d, i_a, i_b, lane = lanes(dst.dtype.itemsize, repeat_times, high, low, False,
                                [(d_blk, d_rep), (a_blk, a_rep), (b_blk, b_rep), (1, 8)])
    if SELMODE(mode) == SELMODE.VSEL_CMPMASK_SPR:
        lane = lane % per_repeat
    bits = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), bitorder="little").astype(bool)
    chosen = b if np.ndim(b) == 0 else b[i_b]
    out = dst.copy()
    out[i_d] = np.where(bits[lane], a[i_a], chosen)
    return out


def compare_register(register, a, b, mode, lanes_on):
    """The compare-mask register (16 bytes, low word first) after a Compare into it: lane k's
    result at bit k for each lane in ``lanes_on`` (booleans, one per lane of the repeat); the other
    bits as they were."""
    n = REPEAT_BYTES // a.dtype.itemsize
    bits = np.unpackbits(np.asarray(register, np.uint8), bitorder="little").astype(bool)
    with np.errstate(invalid="ignore"):
        result = _COMPARISONS[CMPMODE(mode)](a[:n], b[:n])
    bits[:n] = np.where(lanes_on[:n], result, bits[:n])
    return np.packbits(bits, bitorder="little")


def select_register(register, a, b):
    """Select from the register (VSEL_CMPMASK_SPR), every lane of whole contiguous repeats: lane k
    of each repeat takes ``a`` where bit k is 1."""
    return select(np.asarray(register, np.uint8), a, b, SELMODE.VSEL_CMPMASK_SPR)


REFERENCES = {"compare": compare, "compare_scalar": compare_scalar, "select": select, "select_scalar": select_scalar}


def reference(name: str, *operands):
    """The reference ``dst`` of op ``name`` on its operands in declaration order (tiles as arrays
    of their element type, fp16 as ``float16``; the mask as any integer array)."""
    return REFERENCES[name](*operands)
