"""UB buffers: binding them at Init (TPipe::InitBuffer) and viewing their bytes as another type.

Checked-mode rule beside the primitive: an allocation past ``ub_size`` is ``ub-over-capacity``.
"""

from __future__ import annotations

from numba import carray

from ...checked import report
from ...checked.auto import tile_rebound
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, PRIMITIVE
from ..._numba_compat.extending import as_dtype, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import ERR_UB_CAPACITY, STATE_UB_TOP, _load_i64, _store_i64, _voidptr
from .context import lane_error

__all__ = ["alloc_buffer", "reinterpret", "take_ub"]

PRIM_ALLOC_BUFFER = PRIMITIVE["alloc_buffer"]


@checked_rule
@jit
def check_alloc(ctx, end):
    """alloc_buffer in an AUTO-mode kernel: not after the lane's first data movement (3.3)."""
    return tile_rebound(ctx, PRIM_ALLOC_BUFFER, end)


@checked_rule
@jit
def check_alloc_failed(ctx, end):
    """alloc_buffer went past ub_size."""
    report.ub_over_capacity(ctx, PRIM_ALLOC_BUFFER, OPERAND_DST, requested_end=end, ub_size=ctx.ub_size)
    return False


def _itemsize(dtype):
    raise NotImplementedError  # compiled only


@overload(_itemsize, jit_options=OVERLOAD_OPTIONS)
def _ov_itemsize(dtype):
    # A compile-time constant: no throwaway array per buffer (each was a heap allocation).
    size = as_dtype(dtype.dtype).itemsize
    return lambda dtype: size


@jit(_nrt=True)  # returns an array view (an array value needs the runtime)
def alloc_buffer(ctx, count, dtype):
    """Bind ``count`` elements of ``dtype`` at the next block-aligned UB offset (TPipe::InitBuffer).

    Call at Init and keep the view for the kernel's life.  Past ``ub_size``
    the lane records ERR_UB_CAPACITY (the launch then raises) and gets an empty
    view, so nothing it does afterwards can touch memory.  The view has no
    reference count of its own: the UB outlives the launch.
    """
    nbytes = count * _itemsize(dtype)
    check_alloc(ctx, _ub_end(ctx, nbytes))  # the binding goes ahead: the violation fails the launch at its end
    at = take_ub(ctx, nbytes)
    if at < 0:
        return carray(_voidptr(ctx.ub_addr), 0, dtype)
    return carray(_voidptr(ctx.ub_addr + at), count, dtype)


@jit(always_inline=True)
def _ub_end(ctx, nbytes):
    return _load_i64(ctx.state_addr, STATE_UB_TOP) + (nbytes + ctx.block_bytes - 1) // ctx.block_bytes * ctx.block_bytes


@jit
def take_ub(ctx, nbytes):
    """``nbytes`` of the lane's UB, rounded up to whole blocks, at its top (alloc_buffer's and
    InitBuffer's): their UB offset, or -1 for a negative count or past ``ub_size``
    (ub-over-capacity; the lane records ERR_UB_CAPACITY)."""
    top = _load_i64(ctx.state_addr, STATE_UB_TOP)
    end = _ub_end(ctx, nbytes)
    if nbytes < 0 or end > ctx.ub_size:
        check_alloc_failed(ctx, end)
        lane_error(ctx, ERR_UB_CAPACITY, end)
        return -1
    _store_i64(ctx.state_addr, STATE_UB_TOP, end)
    return top


@jit(_nrt=True)  # returns an array view
def reinterpret(tensor, dtype):
    """TRESHAPE: the same bytes, another element type (total bytes must divide evenly)."""
    return tensor.view(dtype)
