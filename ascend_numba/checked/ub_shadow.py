"""The UB shadow of a checked lane and the UB rules it answers (SPEC §8).

The shadow has four parts of one byte per UB byte, at ``ctx.shadow_addr``:

* **written** (part 0): the lane's epoch where a primitive wrote the byte since Init.  Each lane
  has a new epoch, so nothing needs clearing between lanes (``ub-uninitialized-read``).
* **garbage** (part 1): the lane's epoch where the byte came from GM padding or was computed
  from such bytes (so marks of earlier lanes never count).  A lane that never marked a byte
  garbage (``STATE_GARBAGE`` unset: most) skips every garbage step.  The marks travel to GM
  with UB -> GM copies (:mod:`.gm_regions`): ``gm-write-garbage``.
* **loaded** (part 2): AUTO-mode kernels' loads not yet read (:mod:`.auto`).
* **pipe** (part 3): per 32-byte block, the pipe that last wrote it and when (:mod:`.pipeline`).

The UB rules: ``ub-outside-ub``, ``ub-outside-buffer``, ``ub-address-unaligned``,
``ub-uninitialized-read``.
"""

from __future__ import annotations

import numpy as np
from numba import carray

from .._numba_compat.jit import jit
from ..kernels.lane import STATE_GARBAGE, _load_i64, _load_word, _store_i64, _voidptr
from . import report
from .auto import auto_mode, auto_overwrite, auto_read
from .dispatch import is_ub
from .pipeline import pipe_read, pipe_write
from .words import SMALL_BLOCK, low_bytes, put_word, repeat_byte

__all__ = ["SHADOW_PARTS", "shadow_bytes", "first_unwritten", "mark_epoch", "mark_written", "mark_blocks_written",
           "set_garbage", "has_garbage", "first_garbage", "move_garbage", "propagate_garbage", "ub_range_ok",
           "ub_aligned", "ub_read_ok", "ub_blocks_read_ok", "is_local_operand", "GARBAGE_PART"]

SHADOW_PARTS = 4  # written, garbage, loaded (.auto), pipe (.pipeline)
WRITTEN_PART, GARBAGE_PART = 0, 1  # (views of a part are built in place: a helper returning one costs a compile)


def shadow_bytes(ub_size: int) -> int:
    """A lane's UB shadow: its parts, and slack for word-sized accesses."""
    return SHADOW_PARTS * ub_size + 64


# ---- written since Init -------------------------------------------------------------------------

@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def first_unwritten(ctx, start, n):
    """The first UB offset in ``[start, start + n)`` no primitive wrote since Init, or -1."""
    shadow = carray(_voidptr(ctx.shadow_addr + WRITTEN_PART * ctx.ub_size + start), n, np.uint8)
    epoch = np.uint8(ctx.epoch)
    stale = False
    for i in range(n):
        stale |= shadow[i] != epoch
    if not stale:
        return -1
    for i in range(n):
        if shadow[i] != epoch:
            return start + i
    return -1


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def mark_epoch(ctx, start, n):
    """UB bytes ``[start, start + n)`` written since Init (their garbage marks left as they are)."""
    auto_overwrite(ctx, start, n)
    pipe_write(ctx, start, n)
    shadow = carray(_voidptr(ctx.shadow_addr + WRITTEN_PART * ctx.ub_size + start), n, np.uint8)
    epoch = np.uint8(ctx.epoch)
    for i in range(n):
        shadow[i] = epoch


# ---- garbage marks ------------------------------------------------------------------------------

@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def set_garbage(ctx, start, n, value):
    """Mark UB bytes garbage (``value`` 1) or clean (0)."""
    marks = carray(_voidptr(ctx.shadow_addr + GARBAGE_PART * ctx.ub_size + start), n, np.uint8)
    if value:
        _store_i64(ctx.state_addr, STATE_GARBAGE, 1)
        v = np.uint8(ctx.epoch)
    else:
        v = np.uint8(0)
    for i in range(n):
        marks[i] = v


@jit(always_inline=True)
def has_garbage(ctx):
    """Whether the lane has marked any UB byte garbage."""
    return _load_i64(ctx.state_addr, STATE_GARBAGE) != 0


@jit(always_inline=True)
def mark_written(ctx, start, n):
    """UB bytes written since Init with clean data."""
    mark_epoch(ctx, start, n)
    if has_garbage(ctx):
        set_garbage(ctx, start, n, 0)


@jit(always_inline=True)
def first_garbage(ctx, start, n):
    """The first UB offset in ``[start, start + n)`` marked garbage, or -1."""
    if not has_garbage(ctx):
        return -1
    return _first_garbage(ctx, start, n)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _first_garbage(ctx, start, n):
    marks = carray(_voidptr(ctx.shadow_addr + GARBAGE_PART * ctx.ub_size + start), n, np.uint8)
    epoch = np.uint8(ctx.epoch)
    found = False
    for i in range(n):
        found |= marks[i] == epoch
    if not found:
        return -1
    for i in range(n):
        if marks[i] == epoch:
            return start + i
    return -1


@jit(always_inline=True)
def move_garbage(ctx, dst, src, n):
    """A UB -> UB copy's marks: the destination bytes are as garbage as their sources."""
    if has_garbage(ctx):
        _move_garbage(ctx, dst, src, n)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _move_garbage(ctx, dst, src, n):
    d = carray(_voidptr(ctx.shadow_addr + GARBAGE_PART * ctx.ub_size + dst), n, np.uint8)
    s = carray(_voidptr(ctx.shadow_addr + GARBAGE_PART * ctx.ub_size + src), n, np.uint8)
    if dst <= src:
        for i in range(n):
            d[i] = s[i]
    else:
        for i in range(n - 1, -1, -1):
            d[i] = s[i]


@jit
def propagate_garbage(ctx, dst, dst_size, count, a, a_size, b, b_size):
    """A vector op's marks, element by element: a result is garbage where a source element is
    (``a`` / ``b`` < 0: no such operand).  Marks the destination written."""
    dirty = (a >= 0 and first_garbage(ctx, a, count * a_size) >= 0) or \
        (b >= 0 and first_garbage(ctx, b, count * b_size) >= 0)
    if not dirty:
        mark_written(ctx, dst, count * dst_size)
        return
    for i in range(count):
        g = (a >= 0 and first_garbage(ctx, a + i * a_size, a_size) >= 0) or \
            (b >= 0 and first_garbage(ctx, b + i * b_size, b_size) >= 0)
        set_garbage(ctx, dst + i * dst_size, dst_size, 1 if g else 0)
    mark_epoch(ctx, dst, count * dst_size)


# ---- the UB rules -------------------------------------------------------------------------------

@jit
def is_local_operand(ctx, prim, operand, addr):
    """The operand at ``addr`` is a UB tensor (ub-outside-ub)."""
    if not is_ub(ctx, addr):
        report.ub_not_local(ctx, prim, operand)
        return False
    return True


@jit
def ub_range_ok(ctx, prim, operand, addr, nbytes, start, ext):
    """Bytes ``[start, start + ext)`` of the UB tensor at ``addr`` lie in the UB (ub-outside-ub)
    and in the tensor (ub-outside-buffer)."""
    t0 = addr - ctx.ub_addr
    a0, a1 = t0 + start, t0 + start + ext
    if a0 < 0 or a1 > ctx.ub_size:
        report.ub_outside_ub(ctx, prim, operand, start=a0, end=a1, ub_size=ctx.ub_size)
        return False
    if start < 0 or start + ext > nbytes:
        report.ub_outside_buffer(ctx, prim, operand, buffer_start=t0, buffer_end=t0 + nbytes, start=a0, end=a1)
        return False
    return True


@jit
def ub_aligned(ctx, prim, operand, addr, start):
    """The UB address is on a block (ub-address-unaligned)."""
    off = addr - ctx.ub_addr + start
    if off % ctx.block_bytes != 0:
        report.ub_address_unaligned(ctx, prim, operand, ub_offset=off, block_bytes=ctx.block_bytes)
        return False
    return True


@jit
def ub_read_ok(ctx, prim, operand, addr, start, n):
    """The UB bytes read were written since Init (ub-uninitialized-read)."""
    a0 = addr - ctx.ub_addr + start
    first = first_unwritten(ctx, a0, n)
    if first >= 0:
        report.ub_uninitialized_read(ctx, prim, operand, first_byte=first, start=a0, end=a0 + n)
        return False
    auto_read(ctx, a0, n)
    return pipe_read(ctx, prim, operand, a0, n)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def ub_blocks_read_ok(ctx, prim, operand, a0, pitch, block_len, block_count):
    """:func:`ub_read_ok` for ``block_count`` blocks of ``block_len`` bytes, ``pitch`` apart,
    from UB offset ``a0``: one pass, not a call per block."""
    stale = False
    if block_len <= SMALL_BLOCK:
        mask = low_bytes(block_len)
        want = repeat_byte(ctx.epoch, mask)
        base = ctx.shadow_addr + a0
        for k in range(block_count):
            stale |= (_load_word(base + k * pitch) & mask) != want
    else:
        ext = (block_count - 1) * pitch + block_len
        shadow = carray(_voidptr(ctx.shadow_addr + WRITTEN_PART * ctx.ub_size + a0), ext, np.uint8)
        epoch = np.uint8(ctx.epoch)
        for b0 in range(0, shadow.size, pitch):
            block = shadow[b0:b0 + block_len]
            for i in range(block.size):
                stale |= block[i] != epoch
    if stale:
        for k in range(block_count):
            first = first_unwritten(ctx, a0 + k * pitch, block_len)
            if first >= 0:
                report.ub_uninitialized_read(ctx, prim, operand, first_byte=first, start=a0 + k * pitch,
                                             end=a0 + k * pitch + block_len)
                return False
    if auto_mode(ctx):
        for k in range(block_count):
            auto_read(ctx, a0 + k * pitch, block_len)
    return pipe_read(ctx, prim, operand, a0, (block_count - 1) * pitch + block_len)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def mark_blocks_written(ctx, a0, pitch, block_len, block_count):
    """:func:`mark_written` for blocks (as :func:`ub_blocks_read_ok`)."""
    if auto_mode(ctx):
        for k in range(block_count):
            auto_overwrite(ctx, a0 + k * pitch, block_len)
    pipe_write(ctx, a0, (block_count - 1) * pitch + block_len)
    if block_len <= SMALL_BLOCK:
        mask = low_bytes(block_len)
        epoch = repeat_byte(ctx.epoch, mask)
        for k in range(block_count):
            put_word(ctx.shadow_addr + a0 + k * pitch, epoch, mask)
        if has_garbage(ctx):
            for k in range(block_count):
                put_word(ctx.shadow_addr + GARBAGE_PART * ctx.ub_size + a0 + k * pitch, np.uint64(0), mask)
        return
    ext = (block_count - 1) * pitch + block_len
    shadow = carray(_voidptr(ctx.shadow_addr + WRITTEN_PART * ctx.ub_size + a0), ext, np.uint8)
    epoch = np.uint8(ctx.epoch)
    for b0 in range(0, ext, pitch):
        block = shadow[b0:b0 + block_len]
        for i in range(block.size):
            block[i] = epoch
    if has_garbage(ctx):
        marks = carray(_voidptr(ctx.shadow_addr + GARBAGE_PART * ctx.ub_size + a0), ext, np.uint8)
        for b0 in range(0, ext, pitch):
            block = marks[b0:b0 + block_len]
            for i in range(block.size):
                block[i] = 0
