"""GlobalTensor and the core: SetGlobalBuffer, GET_TILING_DATA, GetBlockIdx, GetBlockNum, GetSubBlockIdx.

The GM side of Ascend C's programming model (the UB side, TPipe and its queues, is
``tpipe.py``): a GlobalTensor is a typed view of a GM argument, as every primitive takes.
"""

from __future__ import annotations

import numpy as np
from numba import carray, types

from ...host.tpipe import ST_SETUP
from ..._numba_compat.extending import TypingError, overload, python_twin
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import _address, _voidptr
from .memory import _itemsize
from .tpipe import PRIM_GM, SETUP_GM, _fail

__all__ = ["set_global_buffer", "get_tiling_data", "get_block_idx", "get_block_num", "get_sub_block_idx"]


@jit(_nrt=True)  # returns an array view
def set_global_buffer(ctx, gm, dtype, offset, count):
    """SetGlobalBuffer((__gm__ T*)gm + offset, count): ``count`` elements of GM from element ``offset``,
    typed ``T`` (a GM argument of another type is refused at the launch).  The view may reach into
    the allocator's padding (the tensor's bytes rounded up to 32, plus 32: ``an.host.gm_alloc``'s),
    as a tail read as whole blocks does (checked mode reports an access past the tensor's end:
    gm-past-end); starting outside the tensor or ending past the padding is pipe-setup, and the
    view is then empty."""
    itemsize = _itemsize(dtype)
    start, end = offset * itemsize, (offset + count) * itemsize
    if offset < 0 or count < 0 or start > gm.nbytes or end > (gm.nbytes + 31) // 32 * 32 + 32:
        _fail(ctx, PRIM_GM, ST_SETUP, -1, offset, SETUP_GM)
        return carray(_voidptr(_address(gm)), 0, dtype)
    return carray(_voidptr(_address(gm) + start), count, dtype)


def get_tiling_data(tiling, struct):
    """GET_TILING_DATA: the tiling struct read from the GM bytes ``tiling`` (uint8) the host wrote, as
    the record dtype ``struct`` (``an.host.numpy_dtype(TilingData)``: its fields in order, C layout)."""
    raise NotImplementedError  # compiled only (interpret mode: the twin below)


@overload(get_tiling_data, jit_options=OVERLOAD_OPTIONS)
def _ov_get_tiling_data(tiling, struct):
    if not (isinstance(tiling, types.Array) and tiling.dtype == types.uint8 and isinstance(struct, types.DType)
            and isinstance(struct.dtype, types.Record)):
        raise TypingError(f"GET_TILING_DATA reads a uint8 GM tensor as a record dtype, got {tiling} and {struct}")
    size = struct.dtype.size
    return lambda tiling, struct: tiling[:size].view(struct)[0]


@python_twin(get_tiling_data)
def _get_tiling_data_py(tiling, struct):
    return tiling[:struct.itemsize].view(struct).view(np.recarray)[0]  # fields as attributes, as compiled


@jit(always_inline=True)
def get_block_idx(ctx):
    """GetBlockIdx: this core's index, 0..GetBlockNum() - 1."""
    return ctx.block_idx


@jit(always_inline=True)
def get_block_num(ctx):
    """GetBlockNum: the launch's block_dim."""
    return ctx.block_num


@jit(always_inline=True)
def get_sub_block_idx(ctx):
    """GetSubBlockIdx: the vector core's index within its AI core; a vector-only launch's cores are 0."""
    return 0
