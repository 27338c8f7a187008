"""LLVM-level building blocks of the copy primitives: byte moves, streaming stores, prefetch.

Each is an intrinsic that emits a few instructions where a Python-level loop would cost more
than the bytes it moves.  They take arrays and byte offsets and check nothing: the primitives
in :mod:`.dma` clamp every range before calling them.
"""

from __future__ import annotations

import ctypes
import threading
import time

import numpy as np

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..._numba_compat.extending import cgutils, python_twin

__all__ = ["memmove_bytes", "copy_short", "copy_fixed", "stream_store", "store_fence", "prefetch_line",
           "atomic_add_i64", "atomic_load_i64", "atomic_store_i64", "atomic_swap_i64", "compare_exchange",
           "yield_thread", "scalar_loop"]


def _at(array, byte) -> int:
    """Interpret mode: the address of ``array``'s byte ``byte``."""
    return array.__array_interface__["data"][0] + int(byte)


def _byte_pointers(context, builder, signature, args):
    """Codegen: the byte addresses ``dst + dst_byte`` and ``src + src_byte`` of an intrinsic
    whose first four arguments are (dst array, dst_byte, src array, src_byte)."""
    byte_ptr = ir.IntType(8).as_pointer()
    d_arr = context.make_array(signature.args[0])(context, builder, args[0])
    s_arr = context.make_array(signature.args[2])(context, builder, args[2])
    return (builder.gep(builder.bitcast(d_arr.data, byte_ptr), [args[1]]),
            builder.gep(builder.bitcast(s_arr.data, byte_ptr), [args[3]]))


@intrinsic
def memmove_bytes(typingctx, dst, dst_byte, src, src_byte, nbytes):
    """llvm.memmove of ``nbytes`` between two arrays at byte offsets (libc speed, cacheable)."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)):
        return None
    sig = types.void(dst, types.intp, src, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        d_ptr, s_ptr = _byte_pointers(context, builder, signature, args)
        cgutils.raw_memmove(builder, d_ptr, s_ptr, args[4], 1)
        return context.get_dummy_value()

    return sig, codegen


@python_twin(memmove_bytes)
def _memmove_bytes_py(dst, dst_byte, src, src_byte, nbytes):
    if nbytes > 0:
        ctypes.memmove(_at(dst, dst_byte), _at(src, src_byte), int(nbytes))


@intrinsic
def copy_short(typingctx, dst, dst_byte, src, src_byte, nbytes):
    """A forward byte loop for short copies, where a libc call costs more than the bytes."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)):
        return None
    sig = types.void(dst, types.intp, src, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        d_base, s_base = _byte_pointers(context, builder, signature, args)
        with cgutils.for_range(builder, args[4]) as loop:
            value = builder.load(builder.gep(s_base, [loop.index]))
            builder.store(value, builder.gep(d_base, [loop.index]))
        return context.get_dummy_value()

    return sig, codegen


@python_twin(copy_short)
def _copy_short_py(dst, dst_byte, src, src_byte, nbytes):
    # A forward loop: a destination starting inside the source repeats bytes, as the compiled
    # loop does; any other pair is a plain move.
    d, s, n = _at(dst, dst_byte), _at(src, src_byte), int(nbytes)
    if d <= s or d >= s + n:
        if n > 0:
            ctypes.memmove(d, s, n)
        return
    for k in range(n):
        ctypes.c_uint8.from_address(d + k).value = ctypes.c_uint8.from_address(s + k).value


@intrinsic
def copy_fixed(typingctx, dst, dst_byte, src, src_byte, width):
    """Copy a compile-time constant number of bytes: one unaligned load and store."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and isinstance(width, types.IntegerLiteral)):
        return None
    nbytes = width.literal_value
    sig = types.void(dst, types.intp, src, types.intp, width)

    def codegen(context, builder, signature, args):
        d_ptr, s_ptr = _byte_pointers(context, builder, signature, args)
        cgutils.raw_memmove(builder, d_ptr, s_ptr, ir.Constant(ir.IntType(64), nbytes), 1)
        return context.get_dummy_value()

    return sig, codegen


@python_twin(copy_fixed)
def _copy_fixed_py(dst, dst_byte, src, src_byte, width):
    ctypes.memmove(_at(dst, dst_byte), _at(src, src_byte), int(width))


@intrinsic
def stream_store(typingctx, dst, dst_byte, src, src_byte, width):
    """Copy ``width`` (a literal 4, 8, 16 or 32) bytes with a non-temporal store; the destination
    byte address must be a multiple of ``width``.  The bytes go to memory without their line being
    read into the cache first; pieces of a line are combined on the way."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and isinstance(width, types.IntegerLiteral) and width.literal_value in (4, 8, 16, 32)):
        return None
    nbytes = width.literal_value
    sig = types.void(dst, types.intp, src, types.intp, width)

    def codegen(context, builder, signature, args):
        d_ptr, s_ptr = _byte_pointers(context, builder, signature, args)
        word = ir.VectorType(ir.IntType(32), nbytes // 4) if nbytes >= 16 else ir.IntType(8 * nbytes)
        value = builder.load(builder.bitcast(s_ptr, word.as_pointer()), align=1)
        store = builder.store(value, builder.bitcast(d_ptr, word.as_pointer()), align=nbytes)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        return context.get_dummy_value()

    return sig, codegen


@python_twin(stream_store)
def _stream_store_py(dst, dst_byte, src, src_byte, width):
    ctypes.memmove(_at(dst, dst_byte), _at(src, src_byte), int(width))


@intrinsic
def store_fence(typingctx):
    """A full fence: the lane's non-temporal stores are globally visible before anything after it."""
    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


python_twin(store_fence)(lambda: None)


@intrinsic
def scalar_loop(typingctx):
    """Nothing, which the compiler cannot see through (an empty inline assembly block): a loop
    holding it is neither vectorized nor unrolled, for a loop that runs rarely and would only
    cost compile time so transformed."""
    def codegen(context, builder, signature, args):
        builder.call(ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), "", "", side_effect=True), [])
        return context.get_dummy_value()

    return types.void(), codegen


python_twin(scalar_loop)(lambda: None)


@intrinsic
def prefetch_line(typingctx, addr):
    """Prefetch the cache line holding an integer address: a hint, it never faults or changes a value."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic("llvm.prefetch", fnty=ir.FunctionType(ir.VoidType(),
                                                                                      [byte_ptr, i32, i32, i32]))
        # read, keep in all cache levels, data cache
        builder.call(fn, [builder.inttoptr(args[0], byte_ptr), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(addr), codegen


python_twin(prefetch_line)(lambda addr: None)


# ---- atomics for SyncAll's barrier (int64 slots of a shared array, by address) -------------------

_ATOMIC = threading.Lock()  # interpret mode: lanes on threads take it for each atomic


def _slot_py(addr, index):
    return ctypes.c_int64.from_address(int(addr) + 8 * int(index))


def _slot(builder, addr, index):
    return builder.gep(builder.inttoptr(addr, ir.IntType(64).as_pointer()), [index])


@intrinsic
def atomic_add_i64(typingctx, addr, index, value):
    """``((int64*)addr)[index] += value`` atomically; returns the old value."""
    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", _slot(builder, args[0], args[1]), value, "seq_cst")

    return types.int64(addr, index, value), codegen


@python_twin(atomic_add_i64)
def _atomic_add_i64_py(addr, index, value):
    with _ATOMIC:
        slot = _slot_py(addr, index)
        old = slot.value
        slot.value = old + int(value)
    return old


@intrinsic
def atomic_load_i64(typingctx, addr, index):
    """``((int64*)addr)[index]``, sequentially consistent with the other lanes' atomics."""
    def codegen(context, builder, signature, args):
        return builder.load_atomic(_slot(builder, args[0], args[1]), "seq_cst", 8)

    return types.int64(addr, index), codegen


@python_twin(atomic_load_i64)
def _atomic_load_i64_py(addr, index):
    with _ATOMIC:
        return _slot_py(addr, index).value


@intrinsic
def atomic_store_i64(typingctx, addr, index, value):
    """``((int64*)addr)[index] = value``, sequentially consistent with the other lanes' atomics."""
    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        builder.store_atomic(value, _slot(builder, args[0], args[1]), "seq_cst", 8)
        return context.get_dummy_value()

    return types.void(addr, index, value), codegen


@python_twin(atomic_store_i64)
def _atomic_store_i64_py(addr, index, value):
    with _ATOMIC:
        _slot_py(addr, index).value = int(value)


@intrinsic
def atomic_swap_i64(typingctx, addr, index, value):
    """Store ``value`` in ``((int64*)addr)[index]`` atomically; returns the old value (a spin lock's take)."""
    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("xchg", _slot(builder, args[0], args[1]), value, "seq_cst")

    return types.int64(addr, index, value), codegen


@python_twin(atomic_swap_i64)
def _atomic_swap_i64_py(addr, index, value):
    with _ATOMIC:
        slot = _slot_py(addr, index)
        old = slot.value
        slot.value = int(value)
    return old


@intrinsic
def compare_exchange(typingctx, array, byte, expected, desired):
    """Where ``array``'s bytes from ``byte`` hold ``expected`` (an unsigned 8, 16 or 32-bit
    integer: that many bytes), store ``desired``, atomically; returns the value found (a DMA
    atomic's read-modify-write, retried until no other lane came between)."""
    if not (isinstance(array, types.Array) and isinstance(expected, types.Integer) and expected == desired
            and expected.bitwidth in (8, 16, 32) and not expected.signed):
        return None

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        at = builder.gep(builder.bitcast(arr.data, ir.IntType(8).as_pointer()), [args[1]])
        ptr = builder.bitcast(at, ir.IntType(expected.bitwidth).as_pointer())
        pair = builder.cmpxchg(ptr, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return expected(array, byte, expected, desired), codegen


@python_twin(compare_exchange)
def _compare_exchange_py(array, byte, expected, desired):
    width = {8: ctypes.c_uint8, 16: ctypes.c_uint16, 32: ctypes.c_uint32}[np.dtype(type(expected)).itemsize * 8]
    with _ATOMIC:
        slot = width.from_address(_at(array, byte))
        found = slot.value
        if found == int(expected):
            slot.value = int(desired)
    return type(expected)(found)


@intrinsic
def yield_thread(typingctx):
    """``sched_yield()``: let another host thread run (a lane waiting at a barrier, on fewer
    host cores than lanes, must not hold its core)."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
        builder.call(fn, [])
        return context.get_dummy_value()

    return types.void(), codegen


python_twin(yield_thread)(lambda: time.sleep(0))
