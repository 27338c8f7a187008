"""The lane context and raw memory access for compiled code (no arrays in the context).

A lane's context is a namedtuple of scalars: passing it to a primitive costs
nothing, where a context holding arrays would make every call bump their shared
reference counts, atomically, from every thread.  Its state, trace and check
rows and the UB are reached through addresses.  The context types select what
the primitives compile to: :class:`Lane` (plain, full speed), :class:`AtomicLane`
(plain, with DMA atomics), :class:`TracedLane` (trace=True) and
:class:`CheckedLane` (checked=True).
"""

from __future__ import annotations

import collections
import ctypes

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._numba_compat.extending import python_twin

__all__ = ["Lane", "AtomicLane", "TracedLane", "CheckedLane", "is_plain_lane", "LANE_STATE_SLOTS", "STATE_UB_TOP",
           "STATE_ERROR", "STATE_ERROR_DETAIL", "STATE_TTRANS_VECTOR", "STATE_TTRANS_SCALAR", "STATE_STREAM",
           "STATE_STREAMED", "STATE_PRELOAD_PENDING", "STATE_PRELOAD", "STATE_GARBAGE", "STATE_BARRIER", "STATE_AUTO",
           "STATE_MOVED", "STATE_PRIMITIVE",
           "STATE_EXCEPTION", "STATE_PRINT", "STATE_MASK_COUNTER", "STATE_MASK_HIGH", "STATE_MASK_LOW", "MASK_START",
           "STATE_CMPMASK_LOW", "STATE_CMPMASK_HIGH", "STATE_DEQSCALE", "STATE_RSVD_CNT", "STATE_ATOMIC",
           "STATE_PAD_SET", "STATE_PAD_INT", "STATE_PAD_F32", "STATE_ACC_VAL", "STATE_MAX_MIN_CNT",
           "STATE_VMS4_SR", "STATE_PIPE", "ERR_PIPE", "ERR_IB_WAIT", "PIPE_TABLE_BYTES",
           "PRELOAD_REGIONS", "ERR_UB_CAPACITY", "ERR_TMP_TOO_SMALL", "ERR_LANE_RAISED", "ERR_SYNC_NOT_RESIDENT",
           "ERR_SYNC_ABANDONED", "LANE_TYPES"]

Lane = collections.namedtuple("Lane", ["block_idx", "block_num", "ub_addr", "ub_size", "block_bytes", "state_addr"])
Lane.__doc__ = """One simulated core: its index, the core count, the address and size of its UB bytes,
the DMA block size, and the address of its state row (UB allocation top and the first error,
read by the host after the launch)."""

AtomicLane = collections.namedtuple("AtomicLane", Lane._fields)
AtomicLane.__doc__ = """A Lane whose copies into GM can combine under a DMA atomic (SetAtomicAdd, Max, Min).
A plain body is compiled for it only when it sets an atomic, so every other kernel leaves the
read-modify-write out of its code; its fields and their passing are a Lane's, so one launcher
calls either body."""

TracedLane = collections.namedtuple("TracedLane", Lane._fields + ("trace_addr", "trace_capacity"))
TracedLane.__doc__ = """A Lane whose primitives also record counters and events in its trace row (trace=True)."""

CheckedLane = collections.namedtuple("CheckedLane", TracedLane._fields + ("check_addr", "shadow_addr", "epoch",
                                                                           "regions_addr", "n_regions", "rules_addr"))
CheckedLane.__doc__ = """A TracedLane whose primitives also verify every access (checked=True): the addresses of
its check row (first violation), of the UB shadow (one byte per UB byte, equal to the lane's
``epoch`` where written since Init), of the GM region table (see ``checked.regions``) and of the table of
the compiled rule functions (see ``checked.dispatch.rule_table``)."""

STATE_UB_TOP, STATE_ERROR, STATE_ERROR_DETAIL = 0, 1, 2
STATE_TTRANS_VECTOR, STATE_TTRANS_SCALAR = 3, 4  # tiles each TTRANS path transposed
STATE_STREAM = 5  # set by the host: UB -> GM copies of this launch bypass the CPU caches
STATE_PRELOAD_PENDING = 6  # GM regions announced by preload() and not yet fetched in full
STATE_GARBAGE = 7  # checked mode: the lane has marked UB bytes garbage (see checked.ub_shadow)
STATE_PRELOAD = 8  # then (address, bytes left, bytes per vector op) of each of PRELOAD_REGIONS regions
PRELOAD_REGIONS = 8
STATE_BARRIER = STATE_PRELOAD + 3 * PRELOAD_REGIONS  # the launch's SyncAll barrier (its address), 0 if none
# Checked mode, AUTO-mode kernels (set by the host): the AUTO rules apply; then whether the lane has
# moved data yet, and the primitive being checked (for a rule found while marking its writes).
STATE_AUTO, STATE_MOVED, STATE_PRIMITIVE = STATE_BARRIER + 1, STATE_BARRIER + 2, STATE_BARRIER + 3
STATE_EXCEPTION = STATE_PRIMITIVE + 1  # the address of the exception record of a lane that raised
STATE_PRINT = STATE_EXCEPTION + 1  # the address of the lane's print row (kprint, dump_tensor), 0 if none
# The vector unit's mask register (kernels.primitives.masks): counter mode (1) or normal (0), then its
# high and low words (the int64 of their bits; a lane starts with every bit set, MASK_START).
STATE_MASK_COUNTER, STATE_MASK_HIGH, STATE_MASK_LOW = STATE_PRINT + 1, STATE_PRINT + 2, STATE_PRINT + 3
MASK_START = -1
# The 128-bit compare-mask register (CMPMASK; kernels.primitives.cmpmask): its low and high words.
STATE_CMPMASK_LOW, STATE_CMPMASK_HIGH = STATE_MASK_LOW + 1, STATE_MASK_LOW + 2
STATE_DEQSCALE = STATE_CMPMASK_HIGH + 1  # the DEQSCALE register (SetDeqScale's 64 bits)
STATE_RSVD_CNT = STATE_DEQSCALE + 1  # the elements the last GatherMask kept (GetGatherMaskRemainCount)
STATE_ATOMIC = STATE_RSVD_CNT + 1  # the DMA atomic of copies into GM: op | AtomicDtype << 8 (0: none)
# SetPadValue's register: set (1) or not, the value as an integer and as fp32 bits.
STATE_PAD_SET, STATE_PAD_INT, STATE_PAD_F32 = STATE_ATOMIC + 1, STATE_ATOMIC + 2, STATE_ATOMIC + 3
# The reductions' special registers: ACC_VAL (a count-form ReduceSum's sum) and MAX_MIN_CNT (the last
# max / min reduction's value bits, its index << 32).
STATE_ACC_VAL, STATE_MAX_MIN_CNT = STATE_PAD_F32 + 1, STATE_PAD_F32 + 2
STATE_VMS4_SR = STATE_MAX_MIN_CNT + 1  # the records the last MrgSort took per queue, 16 bits each
STATE_PIPE = STATE_VMS4_SR + 1  # 1 once the lane built a TPipe: its pipe table (past the UB) is live
STATE_STREAMED = STATE_PIPE + 1  # UB -> GM copies the lane wrote with streaming stores (see STATE_STREAM)
LANE_STATE_SLOTS = STATE_STREAMED + 1
ERR_UB_CAPACITY, ERR_TMP_TOO_SMALL, ERR_LANE_RAISED, ERR_SYNC_NOT_RESIDENT, ERR_SYNC_ABANDONED = 1, 2, 3, 4, 5
ERR_PIPE = 6  # a TPipe / TQue call the device would hang on or reject (detail: the status and the queue)
ERR_IB_WAIT = 7  # an IBWait no lane can end, or an IBSet / IBWait flag past its workspace (detail: core << 16 | event)
# Each lane's UB row is followed by its pipe table (kernels/pipe_table.py): the TPipe's queues and
# buffers, the state the device keeps in its TPipe object.  Not UB: ctx.ub_size stops before it.
PIPE_TABLE_BYTES = 8192

# The Numba type of each context, field by field: a kernel body is compiled for exactly this
# type and called through its address (see launch.py), so the launcher must build the same.
_I64, _U64 = types.int64, types.uint64
LANE_TYPES = {
    "plain": types.NamedTuple((_I64, _I64, _U64, _I64, _I64, _U64), Lane),
    "atomic": types.NamedTuple((_I64, _I64, _U64, _I64, _I64, _U64), AtomicLane),  # a plain body with atomics
    "traced": types.NamedTuple((_I64, _I64, _U64, _I64, _I64, _U64, _U64, _I64), TracedLane),
    "checked": types.NamedTuple((_I64, _I64, _U64, _I64, _I64, _U64, _U64, _I64, _U64, _U64, _I64, _U64, _I64,
                                 _U64), CheckedLane),
}


def is_plain_lane(ctx_type) -> bool:
    """Whether a lane context's Numba type is a plain :class:`Lane`: no trace, no checks, and GM
    copies that never combine under a DMA atomic (an :class:`AtomicLane`'s do)."""
    return isinstance(ctx_type, types.NamedTuple) and ctx_type.instance_class is Lane


@intrinsic
def _voidptr(typingctx, addr):
    """An integer address as a ``void*`` (for ``numba.carray`` views of UB bytes)."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.IntType(8).as_pointer())

    return types.voidptr(addr), codegen


@python_twin(_voidptr)
def _voidptr_py(addr):
    return int(addr)  # interpret mode's numba.carray twin takes the integer address


@intrinsic
def _load_i64(typingctx, addr, index):
    """``((int64*)addr)[index]``: the lane's state row."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.load(builder.gep(ptr, [args[1]]))

    return types.int64(addr, index), codegen


@python_twin(_load_i64)
def _load_i64_py(addr, index):
    return ctypes.c_int64.from_address(int(addr) + 8 * int(index)).value


@intrinsic
def _load_i32(typingctx, addr, index):
    """``((int32*)addr)[index]``, widened to int64: checked mode's granule summaries."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.IntType(32).as_pointer())
        return builder.sext(builder.load(builder.gep(ptr, [args[1]])), ir.IntType(64))

    return types.int64(addr, index), codegen


@python_twin(_load_i32)
def _load_i32_py(addr, index):
    return ctypes.c_int32.from_address(int(addr) + 4 * int(index)).value


@intrinsic
def _store_i64(typingctx, addr, index, value):
    """``((int64*)addr)[index] = value``."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        builder.store(value, builder.gep(ptr, [args[1]]))
        return context.get_dummy_value()

    return types.void(addr, index, value), codegen


@python_twin(_store_i64)
def _store_i64_py(addr, index, value):
    ctypes.c_int64.from_address(int(addr) + 8 * int(index)).value = int(value)


@intrinsic
def _address(typingctx, arr):
    """The address of an array's first element (``arr.ctypes.data`` without building a ctypes object)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, ir.IntType(64))

    return types.uint64(arr), codegen


@python_twin(_address)
def _address_py(arr):
    # An int64, not a Python int: NumPy's weak promotion would narrow a Python int to the type of
    # an int32 offset it is added to and overflow, where the compiled sum widens.  Addresses are
    # below 2^63, so the value is the compiled uint64's.
    return np.int64(arr.__array_interface__["data"][0])


@intrinsic
def _load_word(typingctx, addr):
    """The 8 bytes at any address as a uint64 (checked mode's small-block fast paths)."""
    def codegen(context, builder, signature, args):
        return builder.load(builder.inttoptr(args[0], ir.IntType(64).as_pointer()), align=1)

    return types.uint64(addr), codegen


@python_twin(_load_word)
def _load_word_py(addr):
    return ctypes.c_uint64.from_address(int(addr)).value


@intrinsic
def _store_word(typingctx, addr, value):
    """Store a uint64 as 8 bytes at any address."""
    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[1], signature.args[1], types.uint64)
        builder.store(value, builder.inttoptr(args[0], ir.IntType(64).as_pointer()), align=1)
        return context.get_dummy_value()

    return types.void(addr, value), codegen


@python_twin(_store_word)
def _store_word_py(addr, value):
    ctypes.c_uint64.from_address(int(addr)).value = int(value)

