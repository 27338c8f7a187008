"""Compiled kernel primitives: the lane context, UB buffers, data movement, vector ops (SPEC §3).

Every primitive takes the lane context ``ctx`` first, the way an Ascend C
kernel always has its core at hand.  Tensors are 1-D NumPy views: a GM tensor
is the caller's array (flat); a local tensor is a typed view of the lane's UB
bytes returned by :func:`alloc_buffer` at Init and kept for the whole kernel.
Offsets are explicit, in elements of the tensor they index, so
``data_copy(ctx, dst, d, src, s, n)`` reads as Ascend C's
``DataCopy(dst[d], src[s], n)``.

Safety without cost: every copy is clamped to the bytes its two tensors
really have, so a bad offset can never write outside an array (GM padding is
virtual: reads past a tensor's end leave the destination bytes as they were,
writes past it are dropped).

Tracing and checking dispatch on the type of ``ctx``: with a :class:`TracedLane`
the copy primitives also count calls and bytes per direction and log events;
with a :class:`CheckedLane` every primitive is verified first (:mod:`.check`);
with a plain :class:`Lane` the hooks compile to nothing.

Half types: uint16 tiles are fp16 in vector arithmetic (each op computed in
fp32 and rounded to fp16, which is exact IEEE fp16 for + - * / sqrt); bf16 has
no vector arithmetic here, as on the device: cast it to fp32 first.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import carray, types
from numba.core import cgutils
from numba.extending import intrinsic, overload
from numba.np.numpy_support import as_dtype

# The trace row layout and event codes live with their host-side reader.
from ..host.trace import (
    DIR_IN, DIR_LOCAL, DIR_OUT, EVENT_DATA_COPY, EVENT_DATA_COPY_PAD, EVENT_GATHER, TRACE_BYTES_IN,
    TRACE_CALLS_IN, TRACE_COUNTERS, TRACE_EVENT_COUNT, TRACE_EVENTS, TRACE_WORK,
)
from ..host.check import (
    PRIM_ADD, PRIM_ADDS, PRIM_CAST, PRIM_DATA_COPY, PRIM_DATA_COPY_PAD, PRIM_DIV, PRIM_DUPLICATE, PRIM_MAX,
    PRIM_MUL, PRIM_MULS, PRIM_SQRT, PRIM_SUB,
)
from ._jit import OVERLOAD_OPTIONS, jit
from .check import (
    NO_OPERAND, check_alloc_failed, check_gather, check_set_value, check_transfer, check_vector,
)
from .half import bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16
from .lane import (
    ERR_TMP_TOO_SMALL, ERR_UB_CAPACITY, LANE_STATE_SLOTS, PRELOAD_REGIONS, STATE_ERROR, STATE_ERROR_DETAIL,
    STATE_PRELOAD, STATE_PRELOAD_PENDING, STATE_STREAM, STATE_TTRANS_SCALAR, STATE_TTRANS_VECTOR, STATE_UB_TOP,
    CheckedLane, Lane, TracedLane, _address, _load_i64, _store_i64, _voidptr,
)

__all__ = [
    "Lane", "TracedLane", "CheckedLane", "set_value", "trace_work", "TRACE_COUNTERS", "TRACE_EVENT_COUNT", "TRACE_EVENTS", "LANE_STATE_SLOTS",
    "STATE_UB_TOP", "STATE_ERROR", "STATE_ERROR_DETAIL", "STATE_TTRANS_VECTOR",
    "STATE_TTRANS_SCALAR", "ERR_UB_CAPACITY", "ERR_TMP_TOO_SMALL", "lane_error", "count_event",
    "contiguous_lane_range", "big_small_lane_range",
    "alloc_buffer", "reinterpret", "in_ub",
    "data_copy", "data_copy_pad", "gather", "preload",
    "duplicate", "adds", "muls", "add", "sub", "mul", "div", "vmax", "vsqrt",
    "cast_f16_to_f32", "cast_f32_to_f16", "cast_bf16_to_f32", "cast_f32_to_bf16",
]

def _byte_pointers(context, builder, signature, args):
    """Codegen: the byte addresses ``dst + dst_byte`` and ``src + src_byte`` of an intrinsic
    whose first four arguments are (dst array, dst_byte, src array, src_byte)."""
    byte_ptr = ir.IntType(8).as_pointer()
    d_arr = context.make_array(signature.args[0])(context, builder, args[0])
    s_arr = context.make_array(signature.args[2])(context, builder, args[2])
    return (builder.gep(builder.bitcast(d_arr.data, byte_ptr), [args[1]]),
            builder.gep(builder.bitcast(s_arr.data, byte_ptr), [args[3]]))


@intrinsic
def _memmove(typingctx, dst, dst_byte, src, src_byte, nbytes):
    """llvm.memmove of ``nbytes`` between two arrays at byte offsets (libc speed, cacheable)."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)):
        return None
    sig = types.void(dst, types.intp, src, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        d_ptr, s_ptr = _byte_pointers(context, builder, signature, args)
        cgutils.raw_memmove(builder, d_ptr, s_ptr, args[4], 1)
        return context.get_dummy_value()

    return sig, codegen


_SMALL_COPY = 32


@intrinsic
def _copy_short(typingctx, dst, dst_byte, src, src_byte, nbytes):
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


@intrinsic
def _copy_fixed(typingctx, dst, dst_byte, src, src_byte, width):
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


@jit(inline="always")
def _copy_rows_fixed(dst, d, dst_pitch, src, s, src_pitch, block_count, width):
    # Inlined at its four call sites so ``width`` stays a literal: each move is a single one.
    for _ in range(block_count):
        _copy_fixed(dst, d, src, s, width)
        s += src_pitch
        d += dst_pitch


@jit(always_inline=True)
def _copy_blocks_inside(dst, d, dst_pitch, src, s, src_pitch, block_count, block_len):
    """Strided block copies known to lie inside both arrays; word-sized blocks take one move each."""
    if block_len == 4:
        _copy_rows_fixed(dst, d, dst_pitch, src, s, src_pitch, block_count, 4)
    elif block_len == 8:
        _copy_rows_fixed(dst, d, dst_pitch, src, s, src_pitch, block_count, 8)
    elif block_len == 2:
        _copy_rows_fixed(dst, d, dst_pitch, src, s, src_pitch, block_count, 2)
    elif block_len == 1:
        _copy_rows_fixed(dst, d, dst_pitch, src, s, src_pitch, block_count, 1)
    elif block_len < _SMALL_COPY:
        for _ in range(block_count):
            _copy_short(dst, d, src, s, block_len)
            s += src_pitch
            d += dst_pitch
    elif block_len % 32 == 0 and block_len <= 1024 and _disjoint(dst, src):
        # Rows of whole 32-byte words between two buffers: inline moves beat a libc call each.
        for _ in range(block_count):
            for w in range(0, block_len, 32):
                _copy_fixed(dst, d + w, src, s + w, 32)
            s += src_pitch
            d += dst_pitch
    else:
        for _ in range(block_count):
            _memmove(dst, d, src, s, block_len)
            s += src_pitch
            d += dst_pitch


@intrinsic
def _stream_word(typingctx, dst, dst_byte, src, src_byte):
    """Copy 32 bytes with a non-temporal store (the destination byte address must be 32-aligned):
    the line goes to memory without being read into the cache first."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)):
        return None
    sig = types.void(dst, types.intp, src, types.intp)

    def codegen(context, builder, signature, args):
        d_ptr, s_ptr = _byte_pointers(context, builder, signature, args)
        word = ir.VectorType(ir.IntType(64), 4)
        value = builder.load(builder.bitcast(s_ptr, word.as_pointer()), align=1)
        store = builder.store(value, builder.bitcast(d_ptr, word.as_pointer()), align=32)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _store_fence(typingctx):
    """A full fence: the lane's non-temporal stores are globally visible before anything after it."""
    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


_STREAM_MIN = 256  # bytes per row below which streaming stores do not pay


@jit(always_inline=True)
def _stream_bytes(dst, d, src, s, n):
    """``n`` bytes, inside both arrays: whole 64-byte cache lines with streaming stores, the
    partial lines at either end with plain ones (a line must not get both kinds)."""
    head = min(n, (64 - (_address(dst) + d) % 64) % 64)
    if head > 0:
        _copy_bytes(dst, d, src, s, head)
    k = head
    while k + 64 <= n:
        _stream_word(dst, d + k, src, s + k)
        _stream_word(dst, d + k + 32, src, s + k + 32)
        k += 64
    if k < n:
        _copy_bytes(dst, d + k, src, s + k, n - k)


@jit(always_inline=True)
def _streaming(ctx, dst, src):
    # UB -> GM in a launch the host marked (big GM tensors): the device's MTE3 writes GM without
    # going through a core's cache either.
    return _load_i64(ctx.state_addr, STATE_STREAM) != 0 and in_ub(ctx, src) and not in_ub(ctx, dst)


@jit(always_inline=True)
def _disjoint(a, b):
    pa, pb = _address(a), _address(b)
    return pa + a.nbytes <= pb or pb + b.nbytes <= pa


@jit(always_inline=True)
def _copy_bytes(dst, dst_byte, src, src_byte, nbytes):
    """Copy bytes, clamped to both arrays; out-of-range parts are dropped."""
    if dst_byte < 0 or src_byte < 0 or nbytes <= 0:
        return
    n = min(nbytes, dst.nbytes - dst_byte, src.nbytes - src_byte)
    if n >= _SMALL_COPY:
        _memmove(dst, dst_byte, src, src_byte, n)
    elif n > 0:
        _copy_short(dst, dst_byte, src, src_byte, n)


@jit(always_inline=True)
def in_ub(ctx, tensor):
    """True when ``tensor`` is a view of this lane's UB (a local tensor), False for GM."""
    p = _address(tensor)
    return ctx.ub_addr <= p and p < ctx.ub_addr + ctx.ub_size


def _trace_copy(ctx, kind, direction, nbytes):
    raise NotImplementedError  # compiled only


def trace_work(ctx, items):
    """Count ``items`` units of work (rows, tiles, elements) for the lane; free unless tracing."""
    raise NotImplementedError  # compiled only


def _is_traced(ctx_type) -> bool:
    return isinstance(ctx_type, types.NamedTuple) and ctx_type.instance_class in (TracedLane, CheckedLane)


# Hooks take scalars only: an array argument would cost reference counting on every call.
@overload(_trace_copy, jit_options=OVERLOAD_OPTIONS)
def _ov_trace_copy(ctx, kind, direction, nbytes):
    if not _is_traced(ctx):
        return lambda ctx, kind, direction, nbytes: None

    def record(ctx, kind, direction, nbytes):
        base = ctx.trace_addr
        _store_i64(base, kind, _load_i64(base, kind) + 1)
        _store_i64(base, TRACE_CALLS_IN + direction, _load_i64(base, TRACE_CALLS_IN + direction) + 1)
        _store_i64(base, TRACE_BYTES_IN + direction, _load_i64(base, TRACE_BYTES_IN + direction) + nbytes)
        n = _load_i64(base, TRACE_EVENT_COUNT)
        if n < ctx.trace_capacity:
            at = TRACE_EVENTS + 3 * n
            _store_i64(base, at, kind)
            _store_i64(base, at + 1, direction)
            _store_i64(base, at + 2, nbytes)
        _store_i64(base, TRACE_EVENT_COUNT, n + 1)
    return record


@overload(trace_work, jit_options=OVERLOAD_OPTIONS)
def _ov_trace_work(ctx, items):
    if not _is_traced(ctx):
        return lambda ctx, items: None

    def record(ctx, items):
        _store_i64(ctx.trace_addr, TRACE_WORK, _load_i64(ctx.trace_addr, TRACE_WORK) + items)
    return record


@jit(always_inline=True)
def _direction(ctx, dst, src):
    src_local = in_ub(ctx, src)
    if src_local and in_ub(ctx, dst):
        return DIR_LOCAL
    return DIR_OUT if src_local else DIR_IN


@jit(always_inline=True)
def contiguous_lane_range(ctx, total):
    """This lane's tasks ``[start, end)``: ``per = ceil(total / block_num)``; lanes past the end get none."""
    per = (total + ctx.block_num - 1) // ctx.block_num
    start = min(ctx.block_idx * per, total)
    return start, min(start + per, total)


@jit(always_inline=True)
def big_small_lane_range(ctx, big_cores, small_blocks, block_elems, total):
    """This lane's elements ``[start, end)`` when the first ``big_cores`` lanes take one block more."""
    i = ctx.block_idx
    blocks = small_blocks + (1 if i < big_cores else 0)
    start = (i * small_blocks + min(i, big_cores)) * block_elems
    return start, min(start + blocks * block_elems, total)


@jit
def lane_error(ctx, code, detail):
    """Record the lane's first error; the launch raises KernelError with it afterwards."""
    if _load_i64(ctx.state_addr, STATE_ERROR) == 0:
        _store_i64(ctx.state_addr, STATE_ERROR, code)
        _store_i64(ctx.state_addr, STATE_ERROR_DETAIL, detail)


@jit(always_inline=True)
def count_event(ctx, slot):
    """Add one to a counter of the lane's state row."""
    _store_i64(ctx.state_addr, slot, _load_i64(ctx.state_addr, slot) + 1)


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
    top = _load_i64(ctx.state_addr, STATE_UB_TOP)
    end = top + (nbytes + ctx.block_bytes - 1) // ctx.block_bytes * ctx.block_bytes
    if count < 0 or end > ctx.ub_size:
        check_alloc_failed(ctx, end)
        lane_error(ctx, ERR_UB_CAPACITY, end)
        return carray(_voidptr(ctx.ub_addr), 0, dtype)
    _store_i64(ctx.state_addr, STATE_UB_TOP, end)
    return carray(_voidptr(ctx.ub_addr + top), count, dtype)


@jit(_nrt=True)  # returns an array view
def reinterpret(tensor, dtype):
    """TRESHAPE: the same bytes, another element type (total bytes must divide evenly)."""
    return tensor.view(dtype)


@jit(always_inline=True)
def data_copy(ctx, dst, dst_off, src, src_off, count):
    """DataCopy(dst[dst_off], src[src_off], count): GM<->UB or UB<->UB, ``count`` source elements.

    The device requires ``count * sizeof`` to be a multiple of the 32-byte block
    (checked mode verifies it).
    """
    n = count * src.itemsize
    if not check_transfer(ctx, PRIM_DATA_COPY, _address(dst), dst.nbytes, dst_off * dst.itemsize, _address(src),
                          src.nbytes, src_off * src.itemsize, 1, n, n, n):
        return
    _trace_copy(ctx, EVENT_DATA_COPY, _direction(ctx, dst, src), n)
    _copy_bytes(dst, dst_off * dst.itemsize, src, src_off * src.itemsize, count * src.itemsize)


@jit(always_inline=True)
def _pitch(is_local, block_len, stride, block_bytes):
    # A local (UB) side keeps every block 32-byte aligned and strides in blocks; GM strides in bytes.
    if is_local:
        return (block_len + block_bytes - 1) // block_bytes * block_bytes + stride * block_bytes
    return block_len + stride


@jit(always_inline=True)
def data_copy_pad(ctx, dst, dst_off, src, src_off, block_count, block_len, src_stride, dst_stride):
    """DataCopyPad with DataCopyExtParams{blockCount, blockLen (bytes), srcStride, dstStride}.

    Copies exactly ``block_len`` bytes per block.  Strides are gaps between
    blocks: in bytes on the GM side, in 32-byte blocks on the UB side, where each
    block starts on a block boundary.
    """
    bb = ctx.block_bytes
    src_pitch = _pitch(in_ub(ctx, src), block_len, src_stride, bb)
    dst_pitch = _pitch(in_ub(ctx, dst), block_len, dst_stride, bb)
    s = src_off * src.itemsize
    d = dst_off * dst.itemsize
    if not check_transfer(ctx, PRIM_DATA_COPY_PAD, _address(dst), dst.nbytes, d, _address(src), src.nbytes, s,
                          block_count, block_len, src_pitch, dst_pitch):
        return
    _trace_copy(ctx, EVENT_DATA_COPY_PAD, _direction(ctx, dst, src), block_count * block_len)
    if block_len <= 0 or block_count <= 0:
        return
    inside = s >= 0 and d >= 0 and src_pitch >= 0 and dst_pitch >= 0 \
        and s + (block_count - 1) * src_pitch + block_len <= src.nbytes \
        and d + (block_count - 1) * dst_pitch + block_len <= dst.nbytes
    if inside and block_len >= _STREAM_MIN and dst_pitch != block_len and _streaming(ctx, dst, src):
        # Rows scattered over GM: each line is written whole and not read back by this lane.
        for _ in range(block_count):
            _stream_bytes(dst, d, src, s, block_len)
            s += src_pitch
            d += dst_pitch
        _store_fence()
        return
    if src_pitch == block_len and dst_pitch == block_len:  # gapless on both sides: one copy
        _copy_bytes(dst, d, src, s, block_count * block_len)
        return
    if inside:
        _copy_blocks_inside(dst, d, dst_pitch, src, s, src_pitch, block_count, block_len)
        return
    for _ in range(block_count):  # partly outside (GM padding): clamp each block
        _copy_bytes(dst, d, src, s, block_len)
        s += src_pitch
        d += dst_pitch


@jit
def gather(ctx, dst, src, offsets_bytes, base, count):
    """Gather: ``dst[i] = src[base + offsets_bytes[i] / sizeof]`` for ``i < count`` (UB to UB).

    Indices outside ``src`` are skipped.  The range is checked once over the
    whole offset table, so the element loop is a plain indexed copy.
    """
    itemsize = src.itemsize
    if not check_gather(ctx, _address(dst), dst.nbytes, _address(src), src.nbytes, _address(offsets_bytes),
                        offsets_bytes.nbytes, itemsize, base, count):
        return
    n = min(count, dst.size, offsets_bytes.size)
    if n <= 0:
        return
    _trace_copy(ctx, EVENT_GATHER, DIR_LOCAL, n * itemsize)
    shift = 0
    while (1 << shift) < itemsize:
        shift += 1
    lo = offsets_bytes[0]
    hi = offsets_bytes[0]
    for i in range(n):
        lo = min(lo, offsets_bytes[i])
        hi = max(hi, offsets_bytes[i])
    if (1 << shift) == itemsize and lo >= 0 and base >= 0 and base + (hi >> shift) < src.size:
        b = np.uint64(base)
        sh = np.uint64(shift)
        for i in range(n):
            # Unsigned indices: no negative-index wraparound test, so the loop stays tight.
            dst[np.uint64(i)] = src[b + (np.uint64(offsets_bytes[i]) >> sh)]
    else:
        for i in range(n):
            j = base + offsets_bytes[i] // itemsize
            if j >= 0 and j < src.size:
                dst[i] = src[j]


# MTE2 running ahead.  On the device a double-buffered kernel's CopyIn of the next tile runs
# while the vector unit computes this one; a lane runs its stages one after another, so it
# announces the next tile (preload) and its vector ops fetch it into the CPU cache a share at a
# time, overlapping the fetch with the compute as the device overlaps the two pipes.


@intrinsic
def _prefetch(typingctx, addr):
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


@jit(always_inline=True)
def preload(ctx, src, src_off, count, spread):
    """Announce that the lane will soon ``DataCopy`` ``count`` elements of GM tensor ``src`` from
    ``src_off`` (the next tile of a double-buffered CopyIn).  Each of the lane's next ``spread``
    vector ops then brings a ``1/spread`` share of those bytes into the CPU cache while it
    computes.  Changes no value; the part outside ``src`` is ignored, and with PRELOAD_REGIONS
    regions still being fetched the hint is dropped."""
    if src_off < 0 or count <= 0 or src_off >= src.size:
        return
    base = ctx.state_addr
    nbytes = min(count, src.size - src_off) * src.itemsize
    for r in range(PRELOAD_REGIONS):
        at = STATE_PRELOAD + 3 * r
        if _load_i64(base, at + 1) <= 0:
            _store_i64(base, at, np.int64(_address(src)) + src_off * src.itemsize)
            _store_i64(base, at + 1, nbytes)
            _store_i64(base, at + 2, max(nbytes // max(spread, 1), 64))
            _store_i64(base, STATE_PRELOAD_PENDING, _load_i64(base, STATE_PRELOAD_PENDING) + 1)
            return


@jit
def _fetch_preloaded(base):
    """Prefetch one share of every region still being fetched."""
    for r in range(PRELOAD_REGIONS):
        at = STATE_PRELOAD + 3 * r
        left = _load_i64(base, at + 1)
        if left <= 0:
            continue
        addr = _load_i64(base, at)
        take = min(left, _load_i64(base, at + 2))
        for line in range(addr - addr % 64, addr + take, 64):
            _prefetch(line)
        _store_i64(base, at, addr + take)
        _store_i64(base, at + 1, left - take)
        if take == left:
            _store_i64(base, STATE_PRELOAD_PENDING, _load_i64(base, STATE_PRELOAD_PENDING) - 1)


@jit(always_inline=True)
def _advance_preload(ctx):
    # One load and a branch when nothing is announced: every vector op calls this.
    if _load_i64(ctx.state_addr, STATE_PRELOAD_PENDING) > 0:
        _fetch_preloaded(ctx.state_addr)


# Vector arithmetic: load/store/scalar go through fp32 for fp16 (uint16) tiles.

def _vload(tensor, i):
    raise NotImplementedError  # compiled only


def _vstore(tensor, i, value):
    raise NotImplementedError  # compiled only


def _vscalar(tensor, value):
    raise NotImplementedError  # compiled only


@overload(_vload, jit_options=OVERLOAD_OPTIONS)
def _ov_vload(tensor, i):
    if tensor.dtype == types.uint16:
        return lambda tensor, i: f16_to_f32(tensor[i])
    return lambda tensor, i: tensor[i]


@overload(_vstore, jit_options=OVERLOAD_OPTIONS)
def _ov_vstore(tensor, i, value):
    if tensor.dtype == types.uint16:
        def store_f16(tensor, i, value):
            tensor[i] = f32_to_f16(value)
        return store_f16

    def store(tensor, i, value):
        tensor[i] = value
    return store


@overload(_vscalar, jit_options=OVERLOAD_OPTIONS)
def _ov_vscalar(tensor, value):
    if tensor.dtype == types.uint16:
        # A scalar entering an fp16 vector op is an fp16 value.
        return lambda tensor, value: f16_to_f32(f32_to_f16(np.float32(value)))
    dtype = tensor.dtype
    return lambda tensor, value: dtype(value)


@jit(always_inline=True)
def _check_unary(ctx, prim, dst, src, count):
    return check_vector(ctx, prim, _address(dst), dst.nbytes, count * dst.itemsize, _address(src), src.nbytes,
                 count * src.itemsize, 0, 0, NO_OPERAND)


@jit(always_inline=True)
def _check_binary(ctx, prim, dst, a, b, count):
    return check_vector(ctx, prim, _address(dst), dst.nbytes, count * dst.itemsize, _address(a), a.nbytes,
                 count * a.itemsize, _address(b), b.nbytes, count * b.itemsize)


@jit
def set_value(ctx, tensor, index, value):
    """SetValue: ``tensor[index] = value`` on a UB tensor, from the scalar unit."""
    if check_set_value(ctx, _address(tensor), tensor.nbytes, index, tensor.itemsize) and 0 <= index < tensor.size:
        tensor[index] = value


@jit
def duplicate(ctx, dst, value, count):
    """Duplicate: fill ``dst[:count]`` with a scalar."""
    if not check_vector(ctx, PRIM_DUPLICATE, _address(dst), dst.nbytes, count * dst.itemsize, 0, 0, NO_OPERAND, 0,
                        0, NO_OPERAND):
        return
    _advance_preload(ctx)
    v = _vscalar(dst, value)
    for i in range(min(count, dst.size)):
        _vstore(dst, i, v)


# Elementwise loops.  A vector op may write in place (dst is src); LLVM's overlap test then
# fails and it falls back to scalar code, so the same-address cases get loops over one array.
# Inlined into each op (one call site each) so ``op`` is a function, not a value: a dispatcher
# passed as a value is a dynamic global and makes the caller uncacheable.

@jit(inline="always")
def _unary(dst, src, scalar, count, op):
    n = min(count, dst.size, src.size)
    if _address(dst) == _address(src):
        for i in range(n):
            _vstore(dst, i, op(_vload(dst, i), scalar))
    else:
        for i in range(n):
            _vstore(dst, i, op(_vload(src, i), scalar))


@jit(inline="always")
def _binary(dst, a, b, count, op):
    n = min(count, dst.size, a.size, b.size)
    dst_is_a = _address(dst) == _address(a)
    dst_is_b = _address(dst) == _address(b)
    if dst_is_a and dst_is_b:
        for i in range(n):
            _vstore(dst, i, op(_vload(dst, i), _vload(dst, i)))
    elif dst_is_a:
        for i in range(n):
            _vstore(dst, i, op(_vload(dst, i), _vload(b, i)))
    elif dst_is_b:
        for i in range(n):
            _vstore(dst, i, op(_vload(a, i), _vload(dst, i)))
    else:
        for i in range(n):
            _vstore(dst, i, op(_vload(a, i), _vload(b, i)))


@jit(always_inline=True)
def _add(x, y):
    return x + y


@jit(always_inline=True)
def _sub(x, y):
    return x - y


@jit(always_inline=True)
def _mul(x, y):
    return x * y


@jit(always_inline=True)
def _div(x, y):
    return x / y


@jit(always_inline=True)
def _max(x, y):
    return x if (x >= y or x != x) else y  # NaN-propagating, like numpy.maximum


@jit(always_inline=True)
def _sqrt(x, _unused):
    return np.sqrt(x)


@jit
def adds(ctx, dst, src, scalar, count):
    """Adds: ``dst = src + scalar``."""
    if not _check_unary(ctx, PRIM_ADDS, dst, src, count):
        return
    _advance_preload(ctx)
    _unary(dst, src, _vscalar(dst, scalar), count, _add)


@jit
def muls(ctx, dst, src, scalar, count):
    """Muls: ``dst = src * scalar``."""
    if not _check_unary(ctx, PRIM_MULS, dst, src, count):
        return
    _advance_preload(ctx)
    _unary(dst, src, _vscalar(dst, scalar), count, _mul)


@jit
def add(ctx, dst, a, b, count):
    """Add: ``dst = a + b``."""
    if not _check_binary(ctx, PRIM_ADD, dst, a, b, count):
        return
    _advance_preload(ctx)
    _binary(dst, a, b, count, _add)


@jit
def sub(ctx, dst, a, b, count):
    """Sub: ``dst = a - b``."""
    if not _check_binary(ctx, PRIM_SUB, dst, a, b, count):
        return
    _advance_preload(ctx)
    _binary(dst, a, b, count, _sub)


@jit
def mul(ctx, dst, a, b, count):
    """Mul: ``dst = a * b``."""
    if not _check_binary(ctx, PRIM_MUL, dst, a, b, count):
        return
    _advance_preload(ctx)
    _binary(dst, a, b, count, _mul)


@jit
def div(ctx, dst, a, b, count):
    """Div: ``dst = a / b`` (IEEE division, no fast reciprocal)."""
    if not _check_binary(ctx, PRIM_DIV, dst, a, b, count):
        return
    _advance_preload(ctx)
    _binary(dst, a, b, count, _div)


@jit
def vmax(ctx, dst, a, b, count):
    """Max: ``dst = max(a, b)``, NaN-propagating like ``numpy.maximum``."""
    if not _check_binary(ctx, PRIM_MAX, dst, a, b, count):
        return
    _advance_preload(ctx)
    _binary(dst, a, b, count, _max)


@jit
def vsqrt(ctx, dst, src, count):
    """Sqrt: ``dst = sqrt(src)`` (correctly rounded)."""
    if not _check_unary(ctx, PRIM_SQRT, dst, src, count):
        return
    _advance_preload(ctx)
    _unary(dst, src, 0, count, _sqrt)


@jit
def cast_f16_to_f32(ctx, dst, src, count):
    """Cast fp16 (uint16 bits) to fp32, exact."""
    if not _check_unary(ctx, PRIM_CAST, dst, src, count):
        return
    _advance_preload(ctx)
    for i in range(min(count, dst.size, src.size)):
        dst[i] = f16_to_f32(src[i])


@jit
def cast_f32_to_f16(ctx, dst, src, count):
    """Cast fp32 to fp16 bits with round-to-nearest-even (CAST_RINT)."""
    if not _check_unary(ctx, PRIM_CAST, dst, src, count):
        return
    _advance_preload(ctx)
    for i in range(min(count, dst.size, src.size)):
        dst[i] = f32_to_f16(src[i])


@jit
def cast_bf16_to_f32(ctx, dst, src, count):
    """Cast bf16 (uint16 bits) to fp32, exact."""
    if not _check_unary(ctx, PRIM_CAST, dst, src, count):
        return
    _advance_preload(ctx)
    for i in range(min(count, dst.size, src.size)):
        dst[i] = bf16_to_f32(src[i])


@jit
def cast_f32_to_bf16(ctx, dst, src, count):
    """Cast fp32 to bf16 bits with round-to-nearest-even (CAST_RINT)."""
    if not _check_unary(ctx, PRIM_CAST, dst, src, count):
        return
    _advance_preload(ctx)
    for i in range(min(count, dst.size, src.size)):
        dst[i] = f32_to_bf16(src[i])
