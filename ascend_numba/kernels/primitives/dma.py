"""Data movement: DataCopy, DataCopyPad and Gather, with the byte copies under them.

Every copy is clamped to the bytes its two tensors really have, so a bad offset can never write
outside an array (GM padding is virtual: reads past a tensor's end leave the destination bytes
as they were, writes past it are dropped).  Offsets are in elements of the tensor they index, so
``data_copy(ctx, dst, d, src, s, n)`` reads as Ascend C's ``DataCopy(dst[d], src[s], n)``.

Checked-mode rules beside the primitives: :func:`check_transfer` (DataCopy, DataCopyPad) and
:func:`check_gather`.
"""

from __future__ import annotations

import numpy as np
from numba import carray, types

from ...config import SMALL_COPY, STREAM_MIN_GAPLESS_BYTES, STREAM_MIN_ROW_BYTES
from ...checked import report
from ...checked.auto import auto_read, enter, mark_loaded, moved_data
from ...checked.dispatch import BLOCK_COUNT, BLOCK_LEN, COUNT, DST_STRIDE, SRC_STRIDE, checked_rule, count_ok, is_ub
from ...checked.gm_ownership import claim, note_read
from ...checked.gm_regions import carries_garbage, carry_garbage, gm_range, region_bytes
from ...checked.pipeline import set_pipe
from ...checked.rules import GM, OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE, UB
from ...checked.ub_shadow import (
    first_garbage, first_unwritten, is_local_operand, mark_blocks_written, mark_epoch, mark_written, move_garbage,
    set_garbage, ub_aligned, ub_blocks_read_ok, ub_range_ok, ub_read_ok,
)
from ...host.primitives import DataCopyPadExtParams, DataCopyParams
from ...host.trace import DIR_LOCAL, EVENT_DATA_COPY, EVENT_DATA_COPY_PAD, EVENT_GATHER
from ..._numba_compat.extending import TypingError, as_dtype, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..arguments import copy_types_agree
from ..half import f32_as_u32, f32_to_f16, u32_as_f32
from ..lane import (
    STATE_PAD_F32, STATE_PAD_INT, STATE_PAD_SET, STATE_STREAM, STATE_STREAMED, _address, _load_i64, _store_i64,
    _voidptr,
)
from ..pipe_table import PIPE_MTE2, PIPE_MTE3, PIPE_V
from .context import address, copy_direction, count_event, in_ub, rows_inside, trace_event, tracing
from .atomic import atomic_bytes, atomic_on
from .element_bits import stored_scalar
from .gather_repeat import gather_repeats
from .llvm import copy_fixed, copy_short, memmove_bytes, store_fence, stream_store
from .tile_types import check_contiguous

__all__ = ["data_copy", "DataCopyParams", "data_copy_pad", "set_pad_value", "DataCopyPadExtParams", "gather",
           "copy_bytes", "check_copy_types", "check_contiguous"]

PRIM_DATA_COPY = PRIMITIVE["DataCopy"]
PRIM_DATA_COPY_PAD = PRIMITIVE["DataCopyPad"]
PRIM_GATHER = PRIMITIVE["Gather"]


# ---- the byte copies ----------------------------------------------------------------------------


@jit(always_inline=True)
def copy_bytes(dst, dst_byte, src, src_byte, nbytes):
    """Copy bytes, clamped to both arrays; out-of-range parts are dropped."""
    if dst_byte < 0 or src_byte < 0 or nbytes <= 0:
        return
    n = min(nbytes, dst.nbytes - dst_byte, src.nbytes - src_byte)
    if n >= SMALL_COPY:
        memmove_bytes(dst, dst_byte, src, src_byte, n)
    elif n > 0:
        copy_short(dst, dst_byte, src, src_byte, n)


@jit(inline="always")
def _copy_rows_fixed(dst, d, dst_pitch, src, s, src_pitch, block_count, width):
    # Inlined at its four call sites so ``width`` stays a literal: each move is a single one.
    for _ in range(block_count):
        copy_fixed(dst, d, src, s, width)
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
    elif block_len < SMALL_COPY:
        for _ in range(block_count):
            copy_short(dst, d, src, s, block_len)
            s += src_pitch
            d += dst_pitch
    elif block_len % 32 == 0 and block_len <= 1024 and _disjoint(dst, src):
        # Rows of whole 32-byte words between two buffers: inline moves beat a libc call each.
        for _ in range(block_count):
            for w in range(0, block_len, 32):
                copy_fixed(dst, d + w, src, s + w, 32)
            s += src_pitch
            d += dst_pitch
    else:
        for _ in range(block_count):
            memmove_bytes(dst, d, src, s, block_len)
            s += src_pitch
            d += dst_pitch


@jit(always_inline=True)
def _disjoint(a, b):
    pa, pb = _address(a), _address(b)
    return pa + a.nbytes <= pb or pb + b.nbytes <= pa


@jit(always_inline=True)
def _stream_bytes(dst, d, src, s, n):
    """``n`` bytes, inside both arrays, with streaming stores: whole 64-byte cache lines two 32-byte
    words each, the partial lines at either end as :func:`_stream_part` writes them."""
    k = min(n, (64 - (_address(dst) + d) % 64) % 64)
    _stream_part(dst, d, src, s, k)
    while k + 64 <= n:
        stream_store(dst, d + k, src, s + k, 32)
        stream_store(dst, d + k + 32, src, s + k + 32, 32)
        k += 64
    _stream_part(dst, d + k, src, s + k, n - k)


@jit(always_inline=True)
def _stream_part(dst, d, src, s, n):
    """Part of one line (the rest is another row's, written by the same rule, or a gap): 4- and 16-byte
    streaming stores when it starts and ends on 4 bytes, else plain ones.  Plain partial lines
    between streamed ones made a misaligned ``out=`` cost 2x (4096^2 fp32 transpose2d 9.7 ms,
    7.2 with these; 5.3 aligned)."""
    if n <= 0:
        return
    if (_address(dst) + d) % 4 != 0 or n % 4 != 0:
        copy_bytes(dst, d, src, s, n)
        return
    k = 0
    while k < n and (_address(dst) + d + k) % 16 != 0:
        stream_store(dst, d + k, src, s + k, 4)
        k += 4
    while k + 16 <= n:
        stream_store(dst, d + k, src, s + k, 16)
        k += 16
    while k < n:
        stream_store(dst, d + k, src, s + k, 4)
        k += 4


@jit(never_inline=True)
def _stream_rows(ctx, dst, d, dst_pitch, src, s, src_pitch, block_count, block_len):
    """Rows inside both arrays written with streaming stores, then the fence; the lane counts the copy."""
    for _ in range(block_count):
        _stream_bytes(dst, d, src, s, block_len)
        s += src_pitch
        d += dst_pitch
    store_fence()
    count_event(ctx, STATE_STREAMED)


@jit(always_inline=True)
def _streaming(ctx, dst, src):
    # UB -> GM in a launch the host marked (big GM tensors): the device's MTE3 writes GM without
    # going through a core's cache either.
    return _load_i64(ctx.state_addr, STATE_STREAM) != 0 and in_ub(ctx, src) and not in_ub(ctx, dst)


# ---- checked-mode rules: True when the primitive may run ------------------------------------------

@checked_rule
@jit
def check_transfer(ctx, prim, dst_addr, dst_nbytes, dst_byte, src_addr, src_nbytes, src_byte, block_count,
                   block_len, src_pitch, dst_pitch, dst_lead):
    """DataCopy / DataCopyPad: counts and strides, bounds (GM with padding, UB and the tile's
    buffer), UB alignment, DataCopy block multiple, UB bytes read written since Init, and per GM
    byte since the last SyncAll: one writer, no lane reading what another wrote or writing what
    another read.  ``dst_lead``: a padded DataCopyPad's left pad, the bytes of each UB block
    before its data (the block, not the data, starts on 32 bytes)."""
    enter(ctx, prim)
    moved_data(ctx)
    if prim == PRIM_DATA_COPY:
        if not count_ok(ctx, prim, OPERAND_SRC, block_len, COUNT, 0):
            return False
    elif not (count_ok(ctx, prim, OPERAND_SRC, block_count, BLOCK_COUNT, 1)
              and count_ok(ctx, prim, OPERAND_SRC, block_len, BLOCK_LEN, 1)):
        return False
    if block_len == 0:
        return True
    src_local = is_ub(ctx, src_addr)
    dst_local = is_ub(ctx, dst_addr)
    # GM -> UB is MTE2's, UB -> GM MTE3's, UB -> UB the vector unit's (checked mode's pipe order).
    set_pipe(ctx, PIPE_MTE2 if not src_local else PIPE_MTE3 if not dst_local else PIPE_V)
    if prim == PRIM_DATA_COPY and block_len % ctx.block_bytes != 0:
        # Where each side starts: a UB byte offset, or a byte offset in the GM tensor passed.
        s = src_addr - ctx.ub_addr + src_byte if src_local else src_byte
        d = dst_addr - ctx.ub_addr + dst_byte if dst_local else dst_byte
        report.data_copy_count_unaligned(ctx, prim, OPERAND_SRC, bytes=block_len, block_bytes=ctx.block_bytes,
                                         src=UB if src_local else GM, src_byte=s, dst=UB if dst_local else GM,
                                         dst_byte=d)
        return False
    if block_count == 1:  # one block: the strides play no part
        src_pitch = dst_pitch = block_len
    else:  # the strides are unsigned on the device: a pitch below a block's is a negative one
        if not (count_ok(ctx, prim, OPERAND_SRC, src_pitch - _min_pitch(ctx, src_local, block_len), SRC_STRIDE, 0)
                and count_ok(ctx, prim, OPERAND_DST, dst_pitch - _min_pitch(ctx, dst_local, block_len),
                             DST_STRIDE, 0)):
            return False
    src_ext = (block_count - 1) * src_pitch + block_len
    dst_ext = (block_count - 1) * dst_pitch + block_len
    s0 = src_addr - ctx.ub_addr + src_byte  # UB offset of the first source block (a local source)
    if src_local:
        if not (ub_aligned(ctx, prim, OPERAND_SRC, src_addr, src_byte)
                and ub_range_ok(ctx, prim, OPERAND_SRC, src_addr, src_nbytes, src_byte, src_ext)
                and ub_blocks_read_ok(ctx, prim, OPERAND_SRC, s0, src_pitch, block_len, block_count)):
            return False
        src_r, src_off = -1, 0
    else:
        src_r, src_off = gm_range(ctx, prim, OPERAND_SRC, src_addr, src_byte, src_ext, False)
        if src_r < 0 or not note_read(ctx, prim, src_r, src_off, src_pitch, block_len, block_count):
            return False
    if dst_local:
        if not (ub_aligned(ctx, prim, OPERAND_DST, dst_addr, dst_byte - dst_lead)
                and ub_range_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, dst_byte, dst_ext)):
            return False
        d0 = dst_addr - ctx.ub_addr + dst_byte
        if src_local:  # garbage moves with the bytes
            for k in range(block_count):
                mark_epoch(ctx, d0 + k * dst_pitch, block_len)
                move_garbage(ctx, d0 + k * dst_pitch, s0 + k * src_pitch, block_len)
            return True
        mark_blocks_written(ctx, d0, dst_pitch, block_len, block_count)
        for k in range(block_count):
            mark_loaded(ctx, d0 + k * dst_pitch, block_len)
        # Bytes past the source tensor's end are GM padding: garbage.
        for k in range(max(0, (region_bytes(ctx, src_r) - src_off) // src_pitch), block_count):
            real = max(0, region_bytes(ctx, src_r) - (src_off + k * src_pitch))
            if real < block_len:
                set_garbage(ctx, d0 + k * dst_pitch + real, block_len - real, 1)
        return True
    r, off = gm_range(ctx, prim, OPERAND_DST, dst_addr, dst_byte, dst_ext, True)
    if r < 0 or not claim(ctx, prim, r, off, dst_pitch, block_len, block_count, atomic_on(ctx) != 0):
        return False
    if src_local and carries_garbage(ctx, r):
        for k in range(block_count):
            carry_garbage(ctx, prim, r, off + k * dst_pitch, s0 + k * src_pitch, block_len)
    return True


@jit(always_inline=True)
def _min_pitch(ctx, local, block_len):
    # Blocks on the UB side start on block boundaries.
    return (block_len + ctx.block_bytes - 1) // ctx.block_bytes * ctx.block_bytes if local else block_len


@checked_rule
@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def check_gather(ctx, dst_addr, dst_nbytes, src_addr, src_nbytes, table_addr, table_nbytes, itemsize, base, count):
    """Gather: every offset inside the source tile, every byte read written since Init."""
    enter(ctx, PRIM_GATHER)
    moved_data(ctx)
    if not count_ok(ctx, PRIM_GATHER, OPERAND_DST, count, COUNT, 0):
        return False
    if count == 0:
        return True
    p = PRIM_GATHER
    for operand, addr in ((OPERAND_DST, dst_addr), (OPERAND_SRC, src_addr), (OPERAND_SRC1, table_addr)):
        if not is_local_operand(ctx, p, operand, addr):
            return False
    if not (ub_range_ok(ctx, p, OPERAND_SRC1, table_addr, table_nbytes, 0, count * 4)
            and ub_read_ok(ctx, p, OPERAND_SRC1, table_addr, 0, count * 4)
            and ub_range_ok(ctx, p, OPERAND_DST, dst_addr, dst_nbytes, 0, count * itemsize)):
        return False
    table = carray(_voidptr(table_addr), count, np.uint32)
    lo, hi = table[0], table[0]
    for i in range(count):
        lo = min(lo, table[i])
        hi = max(hi, table[i])
    first = (base + np.int64(lo) // itemsize) * itemsize
    span = (np.int64(hi) // itemsize - np.int64(lo) // itemsize + 1) * itemsize
    t0 = np.int64(src_addr) - np.int64(ctx.ub_addr)
    inside = 0 <= first and first + span <= src_nbytes and 0 <= t0 + first and t0 + first + span <= ctx.ub_size
    if not (inside and first_unwritten(ctx, t0 + first, span) < 0):
        # Something in the span of the offsets is off: find the first element that is.
        for i in range(count):
            start = (base + np.int64(table[i]) // itemsize) * itemsize
            if not (ub_range_ok(ctx, p, OPERAND_SRC, src_addr, src_nbytes, start, itemsize)
                    and ub_read_ok(ctx, p, OPERAND_SRC, src_addr, start, itemsize)):
                return False
    auto_read(ctx, t0 + first, span)
    d0 = np.int64(dst_addr) - np.int64(ctx.ub_addr)
    if inside and first_garbage(ctx, t0 + first, span) < 0:
        mark_written(ctx, d0, count * itemsize)
        return True
    for i in range(count):  # garbage moves element by element
        start = (base + np.int64(table[i]) // itemsize) * itemsize
        set_garbage(ctx, d0 + i * itemsize, itemsize, 1 if first_garbage(ctx, t0 + start, itemsize) >= 0 else 0)
    mark_epoch(ctx, d0, count * itemsize)
    return True


# ---- the primitives ------------------------------------------------------------------------------

ELEMENT_TYPE_MISMATCH = "moves elements of one type"  # in the typing error below (launch.py names the argument)


def check_copy_types(dst_dtype, src_dtype):
    """Raise TypingError when a copy between these element types (Numba's) would move the wrong
    bytes: the device's copies take one T on both sides, and a count of elements of one width
    read through a tensor of another moves other bytes, silently."""
    a, b = as_dtype(dst_dtype), as_dtype(src_dtype)
    if not copy_types_agree(a, b):
        raise TypingError(f"a DataCopy {ELEMENT_TYPE_MISMATCH} (or an unsigned view of the other's width), "
                          f"got dst {a} and src {b}")


def _one_element_type(dst, src):
    raise NotImplementedError  # compiled only


@overload(_one_element_type, jit_options=OVERLOAD_OPTIONS)
def _ov_one_element_type(dst, src):
    # Checked when the kernel compiles (and per call in interpret mode), so no launch runs it.
    check_copy_types(dst.dtype, src.dtype)
    check_contiguous(dst, src)
    return lambda dst, src: None


@jit(always_inline=True)
def data_copy(ctx, dst, dst_off, src, src_off, count):
    """DataCopy(dst[dst_off], src[src_off], count): GM<->UB or UB<->UB, ``count`` source elements;
    or with DataCopyParams(block_count, block_len, src_stride, dst_stride) for ``count``:
    ``block_count`` blocks of ``block_len`` 32-byte blocks, each side's blocks ``stride`` 32-byte
    blocks apart from the end of the last (on GM as on UB); or Nd2NzParams / Nz2NdParamsFull (see
    :mod:`.data_copy_nz`).

    The device requires ``count * sizeof`` to be a multiple of the 32-byte block
    (checked mode verifies it); ``dst`` and ``src`` have one element type (see
    :func:`~ascend_numba.kernels.arguments.copy_types_agree`), else the kernel does not compile.
    """
    _one_element_type(dst, src)
    _copy_form(ctx, dst, dst_off, src, src_off, count)


def _copy_form(ctx, dst, dst_off, src, src_off, count):
    raise NotImplementedError  # compiled only


@overload(_copy_form, jit_options=OVERLOAD_OPTIONS)
def _ov_copy_form(ctx, dst, dst_off, src, src_off, count):
    if isinstance(count, types.BaseTuple):
        from .data_copy_nz import nd2nz, nz2nd  # they copy through data_copy_pad: imported once it exists
        form = getattr(getattr(count, "instance_class", None), "__name__", "")
        if form == "Nd2NzParams":
            return lambda ctx, dst, dst_off, src, src_off, count: nd2nz(ctx, data_copy_pad, dst, dst_off, src,
                                                                        src_off, count)
        if form == "Nz2NdParamsFull":
            return lambda ctx, dst, dst_off, src, src_off, count: nz2nd(ctx, data_copy_pad, dst, dst_off, src,
                                                                        src_off, count)
        if len(count) != 4:
            raise TypingError("DataCopy's params: DataCopyParams(block_count, block_len, src_stride, dst_stride), "
                              "Nd2NzParams or Nz2NdParamsFull")
        return lambda ctx, dst, dst_off, src, src_off, count: _data_copy_blocks(ctx, dst, dst_off, src, src_off, count)
    return lambda ctx, dst, dst_off, src, src_off, count: _data_copy_count(ctx, dst, dst_off, src, src_off, count)


@jit(always_inline=True)
def _data_copy_blocks(ctx, dst, dst_off, src, src_off, params):
    bb = ctx.block_bytes
    block_count, block_len = np.int64(params[0]) & 0xFFFF, (np.int64(params[1]) & 0xFFFF) * bb
    src_pitch = block_len + (np.int64(params[2]) & 0xFFFF) * bb
    dst_pitch = block_len + (np.int64(params[3]) & 0xFFFF) * bb
    _strided_copy(ctx, PRIM_DATA_COPY, EVENT_DATA_COPY, dst, dst_off * dst.itemsize, src, src_off * src.itemsize,
                  block_count, block_len, src_pitch, dst_pitch)


@jit(always_inline=True)
def _data_copy_count(ctx, dst, dst_off, src, src_off, count):
    n = count * src.itemsize
    if not check_transfer(ctx, PRIM_DATA_COPY, _address(dst), dst.nbytes, dst_off * dst.itemsize, _address(src),
                          src.nbytes, src_off * src.itemsize, 1, n, n, n, 0):
        return
    if tracing(ctx):
        d = address(dst) + dst_off * dst.itemsize
        s = address(src) + src_off * src.itemsize
        trace_event(ctx, EVENT_DATA_COPY, copy_direction(ctx, dst, src), n, 1, d, d + n, s, s + n, 0, 0)
    if atomic_on(ctx) != 0 and not in_ub(ctx, dst):
        atomic_bytes(ctx, dst, dst_off * dst.itemsize, src, src_off * src.itemsize, count * src.itemsize)
        return
    _gapless_copy(ctx, dst, dst_off * dst.itemsize, src, src_off * src.itemsize, n)


@jit(never_inline=True)
def _gapless_copy(ctx, dst, d, src, s, n):
    """``n`` contiguous bytes, clamped as :func:`copy_bytes` clamps; streamed when a streaming launch
    writes whole GM lines from UB (STREAM_MIN_GAPLESS_BYTES or more, inside both arrays)."""
    if n >= STREAM_MIN_GAPLESS_BYTES and n % 64 == 0 and rows_inside(d, 1, 0, n, dst.nbytes) \
            and rows_inside(s, 1, 0, n, src.nbytes) and (_address(dst) + d) % 64 == 0 and _streaming(ctx, dst, src):
        _stream_rows(ctx, dst, d, n, src, s, n, 1, n)
        return
    copy_bytes(dst, d, src, s, n)


@jit(always_inline=True)
def _pitch(is_local, block_len, stride, block_bytes):
    # A local (UB) side keeps every block 32-byte aligned and strides in blocks; GM strides in bytes.
    if is_local:
        return (block_len + block_bytes - 1) // block_bytes * block_bytes + stride * block_bytes
    return block_len + stride


@jit(always_inline=True)
def data_copy_pad(ctx, dst, dst_off, src, src_off, block_count, block_len, src_stride, dst_stride, pad=None):
    """DataCopyPad with DataCopyExtParams{blockCount, blockLen (bytes), srcStride, dstStride}.

    Copies exactly ``block_len`` bytes per block.  Strides are gaps between
    blocks: in bytes on the GM side, in 32-byte blocks on the UB side, where each
    block starts on a block boundary.  One element type on both sides, as for DataCopy.

    ``pad`` (GM -> UB): DataCopyPadExtParams(is_pad, left_padding, right_padding, padding_value):
    each UB block is ``left_padding`` elements, the data, ``right_padding`` elements and the
    bytes up to the next 32-byte boundary, the pads (and those bytes) filled with
    ``padding_value`` when ``is_pad``, else with SetPadValue's value when one was set, else, with
    no padding asked for, the block's first element (the pages' "dummy"); otherwise they are
    left (undefined on the device: checked mode reports a read of them).
    """
    _one_element_type(dst, src)
    bb = ctx.block_bytes
    s = src_off * src.itemsize
    d = dst_off * dst.itemsize
    if pad is not None and in_ub(ctx, dst) and not in_ub(ctx, src):
        _data_copy_pad_padded(ctx, dst, d, src, s, block_count, block_len, src_stride, dst_stride, pad)
        return
    src_pitch = _pitch(in_ub(ctx, src), block_len, src_stride, bb)
    dst_pitch = _pitch(in_ub(ctx, dst), block_len, dst_stride, bb)
    _strided_copy(ctx, PRIM_DATA_COPY_PAD, EVENT_DATA_COPY_PAD, dst, d, src, s, block_count, block_len, src_pitch,
                  dst_pitch)


# Inline, so the checks and the in-array block loop (FRACTAL_Z's small blocks) stay in the kernel; its
# streamed, gapless and clamped paths are out of line, compiled once per kernel rather than optimized
# again at every DataCopyPad (0.3-0.5 CPU s of a TTRANS kernel's first compile).
@jit(always_inline=True)
def _strided_copy(ctx, prim, event, dst, d, src, s, block_count, block_len, src_pitch, dst_pitch):
    """``block_count`` blocks of ``block_len`` bytes from byte ``s`` of ``src`` to byte ``d`` of
    ``dst``, ``src_pitch`` and ``dst_pitch`` bytes apart (DataCopyPad, DataCopy's DataCopyParams)."""
    if not check_transfer(ctx, prim, _address(dst), dst.nbytes, d, _address(src), src.nbytes, s,
                          block_count, block_len, src_pitch, dst_pitch, 0):
        return
    if tracing(ctx):
        da = address(dst) + d
        sa = address(src) + s
        empty = block_count <= 0 or block_len <= 0
        trace_event(ctx, event, copy_direction(ctx, dst, src), block_count * block_len,
                    block_count, da, da if empty else da + (block_count - 1) * dst_pitch + block_len,
                    sa, sa if empty else sa + (block_count - 1) * src_pitch + block_len, 0, 0)
    if block_len <= 0 or block_count <= 0:
        return
    if atomic_on(ctx) != 0 and not in_ub(ctx, dst):
        for _ in range(block_count):
            atomic_bytes(ctx, dst, d, src, s, block_len)
            s += src_pitch
            d += dst_pitch
        return
    inside = rows_inside(s, block_count, src_pitch, block_len, src.nbytes) \
        and rows_inside(d, block_count, dst_pitch, block_len, dst.nbytes)
    if inside and block_len >= STREAM_MIN_ROW_BYTES and dst_pitch != block_len and _streaming(ctx, dst, src):
        # Rows scattered over GM: each line is written whole and not read back by this lane.
        _stream_rows(ctx, dst, d, dst_pitch, src, s, src_pitch, block_count, block_len)
        return
    if src_pitch == block_len and dst_pitch == block_len:  # gapless on both sides: one copy
        _gapless_copy(ctx, dst, d, src, s, block_count * block_len)
        return
    if inside:
        _copy_blocks_inside(dst, d, dst_pitch, src, s, src_pitch, block_count, block_len)
        return
    _copy_blocks_clamped(dst, d, dst_pitch, src, s, src_pitch, block_count, block_len)


@jit(never_inline=True)
def _copy_blocks_clamped(dst, d, dst_pitch, src, s, src_pitch, block_count, block_len):
    """Strided block copies partly outside an array (GM padding): each block clamped."""
    for _ in range(block_count):
        copy_bytes(dst, d, src, s, block_len)
        s += src_pitch
        d += dst_pitch


@jit(always_inline=True)
def _data_copy_pad_padded(ctx, dst, d, src, s, block_count, block_len, src_stride, dst_stride, pad):
    size = dst.itemsize
    left, right = (np.int64(pad[1]) & 0xFF) * size, (np.int64(pad[2]) & 0xFF) * size
    bb = ctx.block_bytes
    padded = (left + block_len + right + bb - 1) // bb * bb
    dst_pitch = padded + dst_stride * bb
    src_pitch = block_len + src_stride
    if not check_transfer(ctx, PRIM_DATA_COPY_PAD, _address(dst), dst.nbytes, d + left, _address(src), src.nbytes, s,
                          block_count, block_len, src_pitch, dst_pitch, left):
        return
    if tracing(ctx):
        da, sa = address(dst) + d, address(src) + s
        trace_event(ctx, EVENT_DATA_COPY_PAD, copy_direction(ctx, dst, src), block_count * block_len, block_count,
                    da, da + max(block_count - 1, 0) * dst_pitch + padded, sa,
                    sa + max(block_count - 1, 0) * src_pitch + block_len, 0, 0)
    defined = pad[0] or _load_i64(ctx.state_addr, STATE_PAD_SET) != 0 or (left == 0 and right == 0)
    if not check_pad_bytes(ctx, _address(dst), dst.nbytes, d, dst_pitch, left, block_len, padded, block_count,
                           defined):
        return
    for k in range(max(block_count, 0)):
        at = d + k * dst_pitch
        copy_bytes(dst, at + left, src, s + k * src_pitch, block_len)
        if not defined:
            continue
        if pad[0]:
            value = stored_scalar(dst, pad[3])
        elif _load_i64(ctx.state_addr, STATE_PAD_SET) != 0:
            value = _pad_register(ctx, dst)
        else:
            value = dst[min(max((at + left) // size, 0), dst.size - 1)]  # the dummy: the block's first element
        for e in range(at // size, (at + left) // size):
            if 0 <= e < dst.size:
                dst[e] = value
        for e in range((at + left + block_len + size - 1) // size, (at + padded) // size):
            if 0 <= e < dst.size:
                dst[e] = value


@checked_rule
@jit
def check_pad_bytes(ctx, dst_addr, dst_nbytes, d, pitch, left, block_len, padded, block_count, defined):
    """A padded DataCopyPad: each UB block with its pads inside the buffer; the pads written
    when their value is defined (else left unwritten: a read of them is reported)."""
    for k in range(block_count):
        at = d + k * pitch
        if not ub_range_ok(ctx, PRIM_DATA_COPY_PAD, OPERAND_DST, dst_addr, dst_nbytes, at, padded):
            return False
        if defined:
            u = np.int64(dst_addr) - np.int64(ctx.ub_addr) + at
            mark_written(ctx, u, left)
            mark_written(ctx, u + left + block_len, padded - left - block_len)
    return True


def _pad_register(ctx, tensor):
    """SetPadValue's value as the tile's element."""
    raise NotImplementedError  # compiled only


@overload(_pad_register, jit_options=OVERLOAD_OPTIONS)
def _ov_pad_register(ctx, tensor):
    if tensor.dtype == types.uint16:
        return lambda ctx, tensor: f32_to_f16(u32_as_f32(np.uint32(_load_i64(ctx.state_addr, STATE_PAD_F32))))
    if isinstance(tensor.dtype, types.Float):
        dtype = tensor.dtype
        return lambda ctx, tensor: dtype(u32_as_f32(np.uint32(_load_i64(ctx.state_addr, STATE_PAD_F32))))
    dtype = tensor.dtype
    return lambda ctx, tensor: dtype(_load_i64(ctx.state_addr, STATE_PAD_INT))


@jit
def set_pad_value(ctx, value):
    """SetPadValue: the value a padded DataCopyPad with ``is_pad`` False fills its pads with."""
    _store_i64(ctx.state_addr, STATE_PAD_SET, 1)
    _store_i64(ctx.state_addr, STATE_PAD_F32, np.int64(f32_as_u32(np.float32(value))))
    _store_i64(ctx.state_addr, STATE_PAD_INT, np.int64(value))


def _byte_offset_table(table):
    raise NotImplementedError  # compiled only


@overload(_byte_offset_table, jit_options=OVERLOAD_OPTIONS)
def _ov_byte_offset_table(table):
    # The device's Gather reads uint32 byte offsets; a table of another type would be read with
    # other offsets than the check saw.
    if not (isinstance(table, types.Array) and table.dtype == types.uint32):
        raise TypingError(f"gather: offsets_bytes must be a uint32 UB tensor of byte offsets (the device's Gather "
                          f"takes exactly that), got {table}; reinterpret(table, np.uint32) views one as that")
    return lambda table: None


@jit
def gather(ctx, dst, src, offsets_bytes, base, count, repeat_times=None, dst_rep_stride=8):
    """Gather: ``dst[i] = src[base + offsets_bytes[i] / sizeof]`` for ``i < count`` (UB to UB);
    ``offsets_bytes`` is a uint32 UB tensor (the device's Gather takes byte offsets as uint32).
    ``base`` counts elements (the device's ``srcBaseAddr`` counts bytes: pass it divided by the
    element size).  With ``repeat_times``, the level-0 form: ``count`` is the mask (see
    :mod:`.gather_repeat`).

    Indices outside ``src`` are skipped.  The range is checked once over the
    whole offset table, so the element loop is a plain indexed copy.
    """
    _byte_offset_table(offsets_bytes)
    _gather_form(ctx, dst, src, offsets_bytes, base, count, repeat_times, dst_rep_stride)


def _gather_form(ctx, dst, src, offsets_bytes, base, count, repeat_times, dst_rep_stride):
    raise NotImplementedError  # compiled only


@overload(_gather_form, jit_options=OVERLOAD_OPTIONS)
def _ov_gather_form(ctx, dst, src, offsets_bytes, base, count, repeat_times, dst_rep_stride):
    if isinstance(repeat_times, (types.NoneType, types.Omitted)):
        return lambda ctx, dst, src, offsets_bytes, base, count, repeat_times, dst_rep_stride: _gather_count(
            ctx, dst, src, offsets_bytes, base, count)
    return lambda ctx, dst, src, offsets_bytes, base, count, repeat_times, dst_rep_stride: gather_repeats(
        ctx, dst, src, offsets_bytes, base, count, repeat_times, dst_rep_stride)


@jit(always_inline=True)
def _gather_count(ctx, dst, src, offsets_bytes, base, count):
    itemsize = src.itemsize
    if not check_gather(ctx, _address(dst), dst.nbytes, _address(src), src.nbytes, _address(offsets_bytes),
                        offsets_bytes.nbytes, itemsize, base, count):
        return
    n = min(count, dst.size, offsets_bytes.size)
    if n <= 0:
        return
    if tracing(ctx):
        d, s, t = address(dst), address(src), address(offsets_bytes)
        trace_event(ctx, EVENT_GATHER, DIR_LOCAL, n * itemsize, n, d, d + n * itemsize, s, s + src.nbytes, t,
                    t + 4 * n)
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
