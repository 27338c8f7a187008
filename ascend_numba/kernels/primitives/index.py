"""CreateVecIndex in the count form (family ``index`` of :mod:`ascend_numba.host.primitives`).

``dst[i] = first + i`` computed the way the A2/A3 implementation does
(``impl/basic_api/dav_c220/kernel_operator_vec_createvecindex_impl.h``, cannmirror/asc-devkit at
0da921b): the scalar unit writes the first 32-byte block (``first`` as the tile's type, plus ``i``
in fp32 for a float tile or int64 for an integer one, converted back); each later block of the
first repeat is the block before it plus the block's length, and each later repeat the repeat
before it plus the repeat's length, by vector Adds in the tile's type.  Integers wrap; fp32 is
exact below 2**24; fp16 (uint16 tiles) rounds each Adds, so where its spacing passes 16 (from
16384) the values are the chain's, not ``first + i`` rounded once.  Tiles of fp16, int16, fp32
and int32, as on the device.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.rules import PRIMITIVE
from ...host.primitives import PRIMITIVES
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, as_dtype, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS
from ..lane import _address
from .masks import BLOCK_BYTES, REPEAT_BYTES, count_form_done
from .preload import advance_preload
from .vector import NO_OPERAND, _trace_vector, _vload, _vscalar, _vstore, check_vector, declared

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


def _create_vec_index(ctx, dst, first, count):
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
    count_form_done(ctx)


create_vec_index = declared(_create_vec_index, PRIMITIVES["create_vec_index"], __name__)
