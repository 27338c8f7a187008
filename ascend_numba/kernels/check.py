"""Checked mode, compiled side: the verification hooks every primitive calls (SPEC §8).

Each hook dispatches on the lane context type.  With a plain :class:`Lane` or a
:class:`TracedLane` it compiles to ``True`` and nothing else, so unchecked
kernels pay nothing; with a :class:`CheckedLane` it verifies the primitive's
accesses before the primitive runs, records the lane's first violation in its
check row (the layout and rules are in :mod:`ascend_numba.host.check`) and
returns whether the primitive may run.  Hooks take scalars
(addresses and sizes), never arrays: see :mod:`.lane`.

What is tracked: the UB shadow holds one byte per UB byte, set to the lane's
epoch when a primitive writes it (each lane has a new epoch, so nothing needs
clearing between lanes); each GM argument has an owner map, one byte per byte
(uint16 past 254 lanes) holding ``lane + 1`` of its writer, and a backup that
receives each byte's old value before its first write, so a failed launch can
put the caller's arrays back as they were.  Checked launches run lanes one
after another, so the owner test needs no atomics and the first violation
found is always the same one.
"""

from __future__ import annotations

import numpy as np
from numba import carray, types
from numba.extending import overload

from ..host.check import (
    CHECK_DETAIL, CHECK_OPERAND, CHECK_PRIMITIVE, CHECK_RULE, OPERAND_DST, OPERAND_SRC, OPERAND_SRC1,
    OPERAND_TMP, PRIM_ALLOC_BUFFER, PRIM_DATA_COPY, PRIM_GATHER, PRIM_SET_VALUE, PRIM_TTRANS, RULE_COPY_COUNT_ALIGN,
    RULE_GM_BOUNDS, RULE_GM_WRITE_RACE, RULE_UB_ADDRESS_ALIGN, RULE_UB_CAPACITY, RULE_UB_OUTSIDE_BUFFER,
    RULE_UB_OUTSIDE_UB, RULE_UB_UNINITIALIZED,
)
from ._jit import OVERLOAD_OPTIONS, jit
from .lane import CheckedLane, _load_i64, _store_i64, _voidptr

__all__ = ["check_transfer", "check_vector", "check_gather", "check_ttrans", "check_set_value",
           "check_alloc_failed", "REGION_COLS", "NO_OPERAND"]

REGION_ADDR, REGION_BYTES, REGION_OWNER, REGION_PADDED, REGION_OWNER_WIDTH, REGION_BACKUP = range(6)
REGION_COLS = 6
NO_OPERAND = -1  # the byte count passed for an absent vector operand


def _is_checked(ctx_type) -> bool:
    return isinstance(ctx_type, types.NamedTuple) and ctx_type.instance_class is CheckedLane


# ---- the lane's record -------------------------------------------------------------------------

@jit
def _violation(ctx, rule, prim, operand, d0, d1, d2, d3, d4):
    """Record the lane's first violation (later ones are ignored)."""
    base = ctx.check_addr
    if _load_i64(base, CHECK_RULE) != 0:
        return
    _store_i64(base, CHECK_RULE, rule)
    _store_i64(base, CHECK_PRIMITIVE, prim)
    _store_i64(base, CHECK_OPERAND, operand)
    _store_i64(base, CHECK_DETAIL, d0)
    _store_i64(base, CHECK_DETAIL + 1, d1)
    _store_i64(base, CHECK_DETAIL + 2, d2)
    _store_i64(base, CHECK_DETAIL + 3, d3)
    _store_i64(base, CHECK_DETAIL + 4, d4)


@jit(always_inline=True)
def _failed(ctx):
    return _load_i64(ctx.check_addr, CHECK_RULE) != 0


@jit(always_inline=True)
def _is_ub(ctx, addr):
    return ctx.ub_addr <= addr and addr < ctx.ub_addr + ctx.ub_size


# ---- UB: bounds, alignment, written-since-Init shadow -------------------------------------------

@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _first_unwritten(ctx, start, n):
    """The first UB offset in ``[start, start + n)`` no primitive wrote since Init, or -1."""
    # A view of exactly the range, indexed from 0: the loop vectorizes.
    shadow = carray(_voidptr(ctx.shadow_addr + start), n, np.uint8)
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
def _mark_written(ctx, start, n):
    shadow = carray(_voidptr(ctx.shadow_addr + start), n, np.uint8)
    epoch = np.uint8(ctx.epoch)
    for i in range(n):
        shadow[i] = epoch


@jit
def _ub_range_ok(ctx, prim, operand, addr, nbytes, start, ext):
    """Bytes ``[start, start + ext)`` of the UB tensor at ``addr`` lie in the UB and in the tensor."""
    t0 = addr - ctx.ub_addr
    a0, a1 = t0 + start, t0 + start + ext
    if a0 < 0 or a1 > ctx.ub_size:
        _violation(ctx, RULE_UB_OUTSIDE_UB, prim, operand, a0, a1, 0, 0, 0)
        return False
    if start < 0 or start + ext > nbytes:
        _violation(ctx, RULE_UB_OUTSIDE_BUFFER, prim, operand, t0, t0 + nbytes, a0, a1, 0)
        return False
    return True


@jit
def _ub_aligned(ctx, prim, operand, addr, start):
    off = addr - ctx.ub_addr + start
    if off % ctx.block_bytes != 0:
        _violation(ctx, RULE_UB_ADDRESS_ALIGN, prim, operand, off, ctx.block_bytes, 0, 0, 0)
        return False
    return True


@jit
def _ub_read_ok(ctx, prim, operand, addr, start, n):
    """The UB bytes read were written since Init."""
    a0 = addr - ctx.ub_addr + start
    first = _first_unwritten(ctx, a0, n)
    if first >= 0:
        _violation(ctx, RULE_UB_UNINITIALIZED, prim, operand, first, a0, a0 + n, 0, 0)
        return False
    return True


@jit
def _is_local_operand(ctx, prim, operand, addr):
    if not _is_ub(ctx, addr):
        _violation(ctx, RULE_UB_OUTSIDE_UB, prim, operand, -1, 0, 0, 0, 0)
        return False
    return True


# ---- GM: bounds with padding, one writer per byte ------------------------------------------------

@jit(always_inline=True)
def _region_field(ctx, r, col):
    return _load_i64(ctx.regions_addr, r * REGION_COLS + col)


@jit
def _region_of(ctx, addr):
    """The GM argument whose bytes hold ``addr`` (an empty view may sit at its end), or -1."""
    for r in range(ctx.n_regions):
        base = _region_field(ctx, r, REGION_ADDR)
        if base <= addr and addr <= base + _region_field(ctx, r, REGION_BYTES):
            return r
    return -1


@jit
def _gm_range(ctx, prim, operand, addr, start, ext):
    """The GM argument holding the access and its byte offset, or (-1, 0) after a violation."""
    r = _region_of(ctx, addr)
    if r < 0:
        _violation(ctx, RULE_GM_BOUNDS, prim, operand, -1, addr, 0, 0, 0)
        return -1, 0
    off = addr - _region_field(ctx, r, REGION_ADDR) + start
    padded = _region_field(ctx, r, REGION_PADDED)
    if off < 0 or off + ext > padded:
        _violation(ctx, RULE_GM_BOUNDS, prim, operand, r, off, off + ext, padded, _region_field(ctx, r, REGION_BYTES))
        return -1, 0
    return r, off


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _claim(ctx, prim, r, lo, n):
    """Lane ``block_idx`` writes GM bytes ``[lo, lo + n)`` of argument ``r``: no other lane may have."""
    nbytes = _region_field(ctx, r, REGION_BYTES)
    hi = min(lo + n, nbytes)  # bytes in the padding have no owner
    if hi <= lo:
        return True
    width = _region_field(ctx, r, REGION_OWNER_WIDTH)
    address = _voidptr(_region_field(ctx, r, REGION_OWNER) + lo * width)
    # Views of exactly the range, indexed from 0: the loops vectorize.
    if width == 1:
        return _claim_bytes(ctx, prim, r, carray(address, hi - lo, np.uint8), np.uint8(ctx.block_idx + 1), lo)
    return _claim_bytes(ctx, prim, r, carray(address, hi - lo, np.uint16), np.uint16(ctx.block_idx + 1), lo)


@jit(always_inline=True, _nrt=True)  # builds carray views
def _claim_bytes(ctx, prim, r, owner, me, lo):
    taken = False
    for i in range(owner.size):
        o = owner[i]
        taken |= (o != 0) & (o != me)
    if taken:
        for i in range(owner.size):
            if owner[i] != 0 and owner[i] != me:
                _violation(ctx, RULE_GM_WRITE_RACE, prim, OPERAND_DST, r, lo + i, owner[i] - 1, 0, 0)
                return False
    backup_addr = _region_field(ctx, r, REGION_BACKUP)
    if backup_addr != 0:
        data = carray(_voidptr(_region_field(ctx, r, REGION_ADDR) + lo), owner.size, np.uint8)
        backup = carray(_voidptr(backup_addr + lo), owner.size, np.uint8)
        for i in range(owner.size):
            backup[i] = data[i] if owner[i] == 0 else backup[i]
    for i in range(owner.size):
        owner[i] = me
    return True


# ---- one check per primitive: True when the primitive may run -----------------------------------
# After a lane's first violation every primitive is skipped, so nothing it does goes unchecked.

@jit
def _check_transfer(ctx, prim, dst_addr, dst_nbytes, dst_byte, src_addr, src_nbytes, src_byte, block_count,
                    block_len, src_pitch, dst_pitch):
    if _failed(ctx):
        return False
    if block_count <= 0 or block_len <= 0:
        return True
    if prim == PRIM_DATA_COPY and block_len % ctx.block_bytes != 0:
        _violation(ctx, RULE_COPY_COUNT_ALIGN, prim, OPERAND_SRC, block_len, ctx.block_bytes, 0, 0, 0)
        return False
    src_ext = (block_count - 1) * src_pitch + block_len
    dst_ext = (block_count - 1) * dst_pitch + block_len
    if _is_ub(ctx, src_addr):
        if not (_ub_aligned(ctx, prim, OPERAND_SRC, src_addr, src_byte)
                and _ub_range_ok(ctx, prim, OPERAND_SRC, src_addr, src_nbytes, src_byte, src_ext)):
            return False
        for k in range(block_count):
            if not _ub_read_ok(ctx, prim, OPERAND_SRC, src_addr, src_byte + k * src_pitch, block_len):
                return False
    elif _gm_range(ctx, prim, OPERAND_SRC, src_addr, src_byte, src_ext)[0] < 0:
        return False
    if _is_ub(ctx, dst_addr):
        if not (_ub_aligned(ctx, prim, OPERAND_DST, dst_addr, dst_byte)
                and _ub_range_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, dst_byte, dst_ext)):
            return False
        for k in range(block_count):
            _mark_written(ctx, dst_addr - ctx.ub_addr + dst_byte + k * dst_pitch, block_len)
        return True
    r, off = _gm_range(ctx, prim, OPERAND_DST, dst_addr, dst_byte, dst_ext)
    if r < 0:
        return False
    for k in range(block_count):
        if not _claim(ctx, prim, r, off + k * dst_pitch, block_len):
            return False
    return True


@jit
def _vector_source_ok(ctx, prim, operand, addr, nbytes, n):
    return (_is_local_operand(ctx, prim, operand, addr) and _ub_aligned(ctx, prim, operand, addr, 0)
            and _ub_range_ok(ctx, prim, operand, addr, nbytes, 0, n) and _ub_read_ok(ctx, prim, operand, addr, 0, n))


@jit
def _check_vector(ctx, prim, dst_addr, dst_nbytes, dst_n, a_addr, a_nbytes, a_n, b_addr, b_nbytes, b_n):
    if _failed(ctx):
        return False
    if dst_n <= 0:
        return True
    if a_n != NO_OPERAND and not _vector_source_ok(ctx, prim, OPERAND_SRC, a_addr, a_nbytes, a_n):
        return False
    if b_n != NO_OPERAND and not _vector_source_ok(ctx, prim, OPERAND_SRC1, b_addr, b_nbytes, b_n):
        return False
    if not (_is_local_operand(ctx, prim, OPERAND_DST, dst_addr) and _ub_aligned(ctx, prim, OPERAND_DST, dst_addr, 0)
            and _ub_range_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, 0, dst_n)):
        return False
    _mark_written(ctx, dst_addr - ctx.ub_addr, dst_n)
    return True


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _check_gather(ctx, dst_addr, dst_nbytes, src_addr, src_nbytes, table_addr, table_nbytes, itemsize, base, count):
    if _failed(ctx):
        return False
    if count <= 0:
        return True
    p = PRIM_GATHER
    for operand, addr in ((OPERAND_DST, dst_addr), (OPERAND_SRC, src_addr), (OPERAND_SRC1, table_addr)):
        if not _is_local_operand(ctx, p, operand, addr):
            return False
    if not (_ub_range_ok(ctx, p, OPERAND_SRC1, table_addr, table_nbytes, 0, count * 4)
            and _ub_read_ok(ctx, p, OPERAND_SRC1, table_addr, 0, count * 4)
            and _ub_range_ok(ctx, p, OPERAND_DST, dst_addr, dst_nbytes, 0, count * itemsize)):
        return False
    table = carray(_voidptr(table_addr), count, np.uint32)
    lo, hi = table[0], table[0]
    for i in range(count):
        lo = min(lo, table[i])
        hi = max(hi, table[i])
    first = (base + np.int64(lo) // itemsize) * itemsize
    span = (np.int64(hi) // itemsize - np.int64(lo) // itemsize + 1) * itemsize
    t0 = src_addr - ctx.ub_addr
    inside = 0 <= first and first + span <= src_nbytes and 0 <= t0 + first and t0 + first + span <= ctx.ub_size
    if not (inside and _first_unwritten(ctx, t0 + first, span) < 0):
        # Something in the span of the offsets is off: find the first element that is.
        for i in range(count):
            start = (base + np.int64(table[i]) // itemsize) * itemsize
            if not (_ub_range_ok(ctx, p, OPERAND_SRC, src_addr, src_nbytes, start, itemsize)
                    and _ub_read_ok(ctx, p, OPERAND_SRC, src_addr, start, itemsize)):
                return False
    _mark_written(ctx, dst_addr - ctx.ub_addr, count * itemsize)
    return True


@jit
def _check_ttrans(ctx, dst_addr, dst_nbytes, dst_stride, src_addr, src_nbytes, src_stride, tmp_addr, itemsize,
                  rows, cols):
    if _failed(ctx):
        return False
    if rows <= 0 or cols <= 0:
        return True
    p = PRIM_TTRANS
    for operand, addr in ((OPERAND_DST, dst_addr), (OPERAND_SRC, src_addr), (OPERAND_TMP, tmp_addr)):
        if not (_is_local_operand(ctx, p, operand, addr) and _ub_aligned(ctx, p, operand, addr, 0)):
            return False
    if not _ub_range_ok(ctx, p, OPERAND_SRC, src_addr, src_nbytes, 0, ((rows - 1) * src_stride + cols) * itemsize):
        return False
    for i in range(rows):
        if not _ub_read_ok(ctx, p, OPERAND_SRC, src_addr, i * src_stride * itemsize, cols * itemsize):
            return False
    if not _ub_range_ok(ctx, p, OPERAND_DST, dst_addr, dst_nbytes, 0, ((cols - 1) * dst_stride + rows) * itemsize):
        return False
    for j in range(cols):
        _mark_written(ctx, dst_addr - ctx.ub_addr + j * dst_stride * itemsize, rows * itemsize)
    return True


@jit
def _check_set_value(ctx, addr, nbytes, index, itemsize):
    if _failed(ctx):
        return False
    if not (_is_local_operand(ctx, PRIM_SET_VALUE, OPERAND_DST, addr)
            and _ub_range_ok(ctx, PRIM_SET_VALUE, OPERAND_DST, addr, nbytes, index * itemsize, itemsize)):
        return False
    _mark_written(ctx, addr - ctx.ub_addr + index * itemsize, itemsize)
    return True


@jit
def _check_alloc_failed(ctx, end):
    _violation(ctx, RULE_UB_CAPACITY, PRIM_ALLOC_BUFFER, OPERAND_DST, end, ctx.ub_size, 0, 0, 0)
    return False


# ---- the hooks: True (and nothing else) unless the lane is checked ---------------------------------

def check_transfer(ctx, prim, dst_addr, dst_nbytes, dst_byte, src_addr, src_nbytes, src_byte, block_count,
                   block_len, src_pitch, dst_pitch):
    """DataCopy / DataCopyPad: bounds (GM with padding, UB and the tile's buffer), UB alignment,
    DataCopy block multiple, UB bytes read written since Init, one GM writer per byte."""
    raise NotImplementedError  # compiled only


def check_vector(ctx, prim, dst_addr, dst_nbytes, dst_n, a_addr, a_nbytes, a_n, b_addr, b_nbytes, b_n):
    """A vector op on ``dst_n`` destination bytes reading ``a_n`` / ``b_n`` bytes (NO_OPERAND: absent)."""
    raise NotImplementedError  # compiled only


def check_gather(ctx, dst_addr, dst_nbytes, src_addr, src_nbytes, table_addr, table_nbytes, itemsize, base, count):
    """Gather: every offset inside the source tile, every byte read written since Init."""
    raise NotImplementedError  # compiled only


def check_ttrans(ctx, dst_addr, dst_nbytes, dst_stride, src_addr, src_nbytes, src_stride, tmp_addr, itemsize,
                 rows, cols):
    """TTRANS: three aligned UB tiles, the source rows read and the destination rows written in bounds."""
    raise NotImplementedError  # compiled only


def check_set_value(ctx, addr, nbytes, index, itemsize):
    """SetValue on a UB tensor."""
    raise NotImplementedError  # compiled only


def check_alloc_failed(ctx, end):
    """alloc_buffer went past ub_size."""
    raise NotImplementedError  # compiled only


# Each overload returns a no-op unless the context is a CheckedLane.

@overload(check_transfer, jit_options=OVERLOAD_OPTIONS)
def _ov_check_transfer(ctx, prim, dst_addr, dst_nbytes, dst_byte, src_addr, src_nbytes, src_byte, block_count,
                       block_len, src_pitch, dst_pitch):
    if not _is_checked(ctx):
        return lambda ctx, prim, dst_addr, dst_nbytes, dst_byte, src_addr, src_nbytes, src_byte, block_count, \
            block_len, src_pitch, dst_pitch: True
    return lambda ctx, prim, dst_addr, dst_nbytes, dst_byte, src_addr, src_nbytes, src_byte, block_count, \
        block_len, src_pitch, dst_pitch: _check_transfer(ctx, prim, dst_addr, dst_nbytes, dst_byte, src_addr,
                                                         src_nbytes, src_byte, block_count, block_len, src_pitch,
                                                         dst_pitch)


@overload(check_vector, jit_options=OVERLOAD_OPTIONS)
def _ov_check_vector(ctx, prim, dst_addr, dst_nbytes, dst_n, a_addr, a_nbytes, a_n, b_addr, b_nbytes, b_n):
    if not _is_checked(ctx):
        return lambda ctx, prim, dst_addr, dst_nbytes, dst_n, a_addr, a_nbytes, a_n, b_addr, b_nbytes, b_n: True
    return lambda ctx, prim, dst_addr, dst_nbytes, dst_n, a_addr, a_nbytes, a_n, b_addr, b_nbytes, b_n: \
        _check_vector(ctx, prim, dst_addr, dst_nbytes, dst_n, a_addr, a_nbytes, a_n, b_addr, b_nbytes, b_n)


@overload(check_gather, jit_options=OVERLOAD_OPTIONS)
def _ov_check_gather(ctx, dst_addr, dst_nbytes, src_addr, src_nbytes, table_addr, table_nbytes, itemsize, base,
                     count):
    if not _is_checked(ctx):
        return lambda ctx, dst_addr, dst_nbytes, src_addr, src_nbytes, table_addr, table_nbytes, itemsize, base, \
            count: True
    return lambda ctx, dst_addr, dst_nbytes, src_addr, src_nbytes, table_addr, table_nbytes, itemsize, base, \
        count: _check_gather(ctx, dst_addr, dst_nbytes, src_addr, src_nbytes, table_addr, table_nbytes, itemsize,
                             base, count)


@overload(check_ttrans, jit_options=OVERLOAD_OPTIONS)
def _ov_check_ttrans(ctx, dst_addr, dst_nbytes, dst_stride, src_addr, src_nbytes, src_stride, tmp_addr, itemsize,
                     rows, cols):
    if not _is_checked(ctx):
        return lambda ctx, dst_addr, dst_nbytes, dst_stride, src_addr, src_nbytes, src_stride, tmp_addr, \
            itemsize, rows, cols: True
    return lambda ctx, dst_addr, dst_nbytes, dst_stride, src_addr, src_nbytes, src_stride, tmp_addr, itemsize, \
        rows, cols: _check_ttrans(ctx, dst_addr, dst_nbytes, dst_stride, src_addr, src_nbytes, src_stride,
                                  tmp_addr, itemsize, rows, cols)


@overload(check_set_value, jit_options=OVERLOAD_OPTIONS)
def _ov_check_set_value(ctx, addr, nbytes, index, itemsize):
    if not _is_checked(ctx):
        return lambda ctx, addr, nbytes, index, itemsize: True
    return lambda ctx, addr, nbytes, index, itemsize: _check_set_value(ctx, addr, nbytes, index, itemsize)


@overload(check_alloc_failed, jit_options=OVERLOAD_OPTIONS)
def _ov_check_alloc_failed(ctx, end):
    if not _is_checked(ctx):
        return lambda ctx, end: True
    return lambda ctx, end: _check_alloc_failed(ctx, end)
