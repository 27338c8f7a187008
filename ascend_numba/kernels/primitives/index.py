"""CreateVecIndex in the count and level-0 forms (family ``index`` of
:mod:`ascend_numba.host.primitives`).

``dst[i] = first + i`` computed the way the A2/A3 implementation does
(``impl/basic_api/dav_c220/kernel_operator_vec_createvecindex_impl.h``, cannmirror/asc-devkit at
0da921b): the scalar unit writes the first 32-byte block (``first`` as the tile's type, plus ``i``
in fp32 for a float tile or int64 for an integer one, converted back); each later block of the
first repeat is the block before it plus the block's length, and each later repeat the repeat
before it plus the repeat's length, by vector Adds in the tile's type.  Integers wrap; fp32 is
exact below 2**24; fp16 (uint16 tiles) rounds each Adds, so where its spacing passes 16 (from
16384) the values are the chain's, not ``first + i`` rounded once.  Tiles of fp16, int16, fp32
and int32, as on the device.

The level-0 form ``(ctx, dst, first, mask, repeat_times, dst_block_stride, dst_repeat_stride)``
follows the same implementation: with a continuous mask of m lanes the first repeat is that
recurrence over its first m lanes (blocks ``dst_block_stride`` blocks apart), with mask words the
scalar unit writes ``first + lane`` at each lane set in the first repeat; each later repeat
(``dst_repeat_stride`` blocks on) is the one before plus a repeat's length by an Adds under the
mask (mask words in counter mode: the Adds count the low word's lanes).  The mask register is left
as those Adds leave it.  Two choices where the implementation reads outside the call's lanes: a
continuous mask of fewer lanes than a block writes just its lanes (the implementation's tail
Adds reads the 32 bytes before ``dst``), and one over a repeat's lanes counts as a whole repeat.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.rules import PRIMITIVE
from ...host.primitives import PRIMITIVES
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, as_dtype, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import _address
from .masks import (BLOCK_BYTES, MAX_REPEAT, REPEAT_BYTES, call_mask, check_repeat, lane_on, lanes_of_length,
                    mask_length, mask_words, stride_u8, stride_u16)
from .preload import advance_preload
from .vector import (NO_OPERAND, _trace_repeat, _trace_vector, _vload, _vscalar, _vstore, check_vector, count_of,
                     declared, two_forms)

__all__ = ["create_vec_index"]

_PRIM, _CODE = PRIMITIVE["CreateVecIndex"], EVENT["create_vec_index"]


def _step(dst, n):
    """``n`` as the tile's arithmetic takes it: fp32 for a float (or fp16) tile, int64 for an integer one."""
    raise NotImplementedError  # compiled only


@overload(_step, jit_options=OVERLOAD_OPTIONS)
def _ov_step(dst, n):
    if dst.dtype not in (types.uint16, types.int16, types.float32, types.int32):
        raise TypingError(f"CreateVecIndex takes fp16 (uint16), int16, fp32 and int32 tiles; got {dst.dtype}")
    if dst.dtype in (types.uint16, types.float32):
        return lambda dst, n: np.float32(n)
    return lambda dst, n: np.int64(n)


def _wrapped(dst, value):
    """``value`` in the tile's type: an integer modulo the tile's width (the device's Adds wrap;
    computed in int64, so NumPy's scalars never overflow), a float as it is."""
    raise NotImplementedError  # compiled only


@overload(_wrapped, jit_options=OVERLOAD_OPTIONS)
def _ov_wrapped(dst, value):
    if dst.dtype in (types.int16, types.int32):  # a uint16 tile is fp16
        scalar = as_dtype(dst.dtype).type  # NumPy's scalar type: a cast compiled, a constructor interpreted
        low, span = -(1 << (dst.dtype.bitwidth - 1)), 1 << dst.dtype.bitwidth
        return lambda dst, value: scalar((np.int64(value) - low) % span + low)
    return lambda dst, value: value


def _continuous(mask):
    """Whether a level-0 call's mask is a count of lanes (not mask words)."""
    raise NotImplementedError  # compiled only


@overload(_continuous, jit_options=OVERLOAD_OPTIONS)
def _ov_continuous(mask):
    answer = isinstance(mask, types.Integer)
    return lambda mask: answer


@jit(always_inline=True)
def _leave_mask(ctx, lanes):
    """The mask register as the implementation's last Adds of ``lanes`` lanes sets it (none: 0)."""
    if lanes > 0:
        call_mask(ctx, lanes, True)


def _create_vec_index_count(ctx, dst, first, count):
    if not check_vector(ctx, _PRIM, count, _address(dst), dst.nbytes, dst.itemsize, 0, 0, NO_OPERAND, 0, 0,
                        NO_OPERAND):
        return
    _trace_vector(ctx, _CODE, count, dst, dst, dst)
    advance_preload(ctx)
    per_block, per_repeat = BLOCK_BYTES // dst.itemsize, REPEAT_BYTES // dst.itemsize
    start = _vscalar(dst, first)
    n = min(count, dst.size)
    for i in range(min(n, per_block)):
        _vstore(dst, i, _wrapped(dst, start + _step(dst, i)))
    block_step, repeat_step = _step(dst, per_block), _step(dst, per_repeat)
    for i in range(per_block, min(n, per_repeat)):
        _vstore(dst, i, _wrapped(dst, _vload(dst, i - per_block) + block_step))
    for i in range(per_repeat, n):
        _vstore(dst, i, _wrapped(dst, _vload(dst, i - per_repeat) + repeat_step))
    # The last of the implementation's level-0 Adds: the tail, else a whole block or repeat.
    if count > per_repeat:
        _leave_mask(ctx, count % per_repeat if count % per_repeat else per_repeat)
    elif count > per_block:
        _leave_mask(ctx, count % per_block if count % per_block else per_block)


def _create_vec_index_level0(ctx, dst, first, mask, repeat_times, dst_block_stride, dst_repeat_stride):
    lanes, per_block = REPEAT_BYTES // dst.itemsize, BLOCK_BYTES // dst.itemsize
    continuous = _continuous(mask)
    m = min(mask_length(mask), lanes)
    high, low = lanes_of_length(m) if continuous else mask_words(mask)
    counter = call_mask(ctx, mask, False)[0]
    # The first repeat is written whatever repeat_times is, and every repeat runs (each Adds is one
    # repeat, in counter mode too): checked as normal mode.
    nrep = np.int64(repeat_times) & MAX_REPEAT
    if not check_repeat(ctx, _PRIM, max(nrep, 1), False, high, low, m if continuous else 0, 0xFFFF, _address(dst),
                        dst.nbytes, dst.itemsize, dst_block_stride, dst_repeat_stride, 0, 0, NO_OPERAND, 0, 0, 0, 0,
                        NO_OPERAND, 0, 0, False):
        return
    blk, rep = stride_u16(dst_block_stride), stride_u8(dst_repeat_stride)
    _trace_repeat(ctx, _CODE, max(nrep, 1), dst, blk, rep, dst, blk, rep, dst, blk, rep)
    advance_preload(ctx)
    d_blk, d_rep = blk * per_block, rep * per_block  # in elements
    start, block_step, repeat_step = _vscalar(dst, first), _step(dst, per_block), _step(dst, lanes)
    for k in range(m if continuous else lanes):  # the first repeat
        at = k // per_block * d_blk + k % per_block
        if at >= dst.size:
            continue
        if k < per_block or not continuous:
            if continuous or lane_on(False, high, low, lanes, 0, k):
                _vstore(dst, at, _wrapped(dst, start + _step(dst, k)))
        else:
            _vstore(dst, at, _wrapped(dst, _vload(dst, at - d_blk) + block_step))
    for r in range(1, nrep):
        for k in range(lanes):
            at = r * d_rep + k // per_block * d_blk + k % per_block
            if at < dst.size and (k < m if continuous else lane_on(counter, high, low, lanes, 0, k)):
                _vstore(dst, at, _wrapped(dst, _vload(dst, at - d_rep) + repeat_step))
    if continuous:
        _leave_mask(ctx, m if nrep > 1 else m % per_block if m % per_block else per_block if m > per_block else 0)
    elif nrep > 1:
        call_mask(ctx, mask, True)


_create_vec_index_count, _create_vec_index_level0 = two_forms("create_vec_index", _create_vec_index_count,
                                                              _create_vec_index_level0)


def _create_vec_index(ctx, dst, first, count, repeat_times=None, dst_block_stride=1, dst_repeat_stride=8):
    if repeat_times is None:
        _create_vec_index_count(ctx, dst, first, count_of(count))
    else:
        _create_vec_index_level0(ctx, dst, first, count, repeat_times, dst_block_stride, dst_repeat_stride)


create_vec_index = declared(_create_vec_index, PRIMITIVES["create_vec_index"], __name__)
