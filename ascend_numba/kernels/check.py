"""Checked mode, compiled side: the shadow state every primitive's rule reads and writes (SPEC §8).

Each primitive's rule lives beside the primitive (``primitives/dma.py``, ``vector.py``, ...),
wrapped by :func:`checked_rule`: with a plain :class:`Lane` or a :class:`TracedLane` the hook
compiles to ``True`` and nothing else, so unchecked kernels pay nothing; with a
:class:`CheckedLane` it runs the rule, which verifies the primitive's accesses before the
primitive runs, records the lane's first violation in its check row (the layout and rules are
in :mod:`ascend_numba.host.check`) and returns whether the primitive may run.  Rules take
scalars (addresses and sizes), never arrays: see :mod:`.lane`.

What is tracked: the UB shadow holds one byte per UB byte, set to the lane's
epoch when a primitive writes it (each lane has a new epoch, so nothing needs
clearing between lanes), and behind it one garbage mark per UB byte (the lane's
epoch where the bytes came from GM padding or were computed from such bytes,
so marks of earlier lanes never count; a lane that never marked one skips the
garbage steps: ``STATE_GARBAGE``); each
GM argument has an owner map, one byte per byte (uint16 past 254 lanes) holding
``lane + 1`` of its writer, and a backup that
receives each byte's old value before its first write, so a failed launch can
put the caller's arrays back as they were.  Checked launches run lanes one
after another, so the owner test needs no atomics and the first violation
found is always the same one.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import carray, types
from numba.extending import overload

from ..host.check import (
    CHECK_DETAIL, CHECK_OPERAND, CHECK_PRIMITIVE, CHECK_RULE, OPERAND_DST, RULE,
)
from ._jit import OVERLOAD_OPTIONS, jit
from .lane import STATE_GARBAGE, CheckedLane, _load_i64, _store_i64, _voidptr

__all__ = ["checked_rule", "REGION_COLS", "violation", "failed", "count_ok", "mark_epoch", "set_garbage",
           "first_garbage", "move_garbage", "propagate_garbage", "COUNT", "BLOCK_COUNT", "BLOCK_LEN",
           "ROWS", "COLS", "ELEMENTS", "region_bytes", "carry_garbage", "is_ub", "first_unwritten", "mark_written",
           "ub_range_ok", "ub_aligned", "ub_read_ok", "is_local_operand", "gm_range", "claim"]

# A GM argument's row: address, bytes, owner map, bytes a read may reach (with GM padding), owner
# width, backup, bytes a write may reach (the padding only where the view ends its allocation),
# garbage map (per byte: the primitive that left garbage there, 0 if clean), whether any has.
(REGION_ADDR, REGION_BYTES, REGION_OWNER, REGION_PADDED, REGION_OWNER_WIDTH, REGION_BACKUP,
 REGION_WRITABLE, REGION_GARBAGE, REGION_DIRTY) = range(9)
REGION_COLS = 9
RULE_GM_BOUNDS, RULE_UB_OUTSIDE_UB, RULE_UB_OUTSIDE_BUFFER, RULE_UB_ADDRESS_ALIGN, RULE_UB_UNINITIALIZED, \
    RULE_GM_WRITE_RACE, RULE_COUNT = (RULE[n] for n in (
        "gm-out-of-bounds", "ub-outside-ub", "ub-outside-buffer", "ub-address-unaligned", "ub-uninitialized-read",
        "gm-write-race", "count-out-of-range"))
COUNT, BLOCK_COUNT, BLOCK_LEN, ROWS, COLS, ELEMENTS = range(6)  # host.check.COUNTS


def _is_checked(ctx_type) -> bool:
    return isinstance(ctx_type, types.NamedTuple) and ctx_type.instance_class is CheckedLane


def checked_rule(rule):
    """The hook a primitive calls before it runs, made from ``rule(ctx, ...)`` (compiled, returns
    whether the primitive may run).  In a CheckedLane the hook is False once the lane has a
    violation (every later primitive is skipped, so nothing it does goes unchecked), else the
    rule's answer; in any other lane it is True and compiles to nothing."""
    def hook(ctx, *args):
        raise NotImplementedError  # compiled only

    @overload(hook, jit_options=OVERLOAD_OPTIONS)
    def _ov_hook(ctx, *args):
        if not _is_checked(ctx):
            return lambda ctx, *args: True
        return lambda ctx, *args: not failed(ctx) and rule(ctx, *args)

    functools.update_wrapper(hook, rule.py_func)
    return hook


# ---- the lane's record -------------------------------------------------------------------------

@jit
def violation(ctx, rule, prim, operand, d0, d1, d2, d3, d4):
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
def failed(ctx):
    return _load_i64(ctx.check_addr, CHECK_RULE) != 0


@jit(always_inline=True)
def is_ub(ctx, addr):
    return ctx.ub_addr <= addr and addr < ctx.ub_addr + ctx.ub_size


@jit(always_inline=True)
def count_ok(ctx, prim, operand, value, which, least):
    """A count the device takes unsigned is at least ``least`` (0, or 1 where the API forbids 0)."""
    if value < least:
        violation(ctx, RULE_COUNT, prim, operand, value, which, 0, 0, 0)
        return False
    return True


# ---- UB: bounds, alignment, written-since-Init shadow -------------------------------------------

@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def first_unwritten(ctx, start, n):
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
def mark_epoch(ctx, start, n):
    """UB bytes ``[start, start + n)`` written since Init (their garbage marks left as they are)."""
    shadow = carray(_voidptr(ctx.shadow_addr + start), n, np.uint8)
    epoch = np.uint8(ctx.epoch)
    for i in range(n):
        shadow[i] = epoch


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def set_garbage(ctx, start, n, value):
    """Mark UB bytes garbage (``value`` 1) or clean (0).  A mark is garbage only when it holds
    the lane's epoch, so nothing needs clearing between lanes, and a lane that never marked a
    byte garbage (most do not) skips every garbage step."""
    marks = carray(_voidptr(ctx.shadow_addr + ctx.ub_size + start), n, np.uint8)
    if value:
        _store_i64(ctx.state_addr, STATE_GARBAGE, 1)
        v = np.uint8(ctx.epoch)
    else:
        v = np.uint8(0)
    for i in range(n):
        marks[i] = v


@jit(always_inline=True)
def _has_garbage(ctx):
    return _load_i64(ctx.state_addr, STATE_GARBAGE) != 0


@jit(always_inline=True)
def mark_written(ctx, start, n):
    """UB bytes written since Init with clean data."""
    mark_epoch(ctx, start, n)
    if _has_garbage(ctx):
        set_garbage(ctx, start, n, 0)


@jit(always_inline=True)
def first_garbage(ctx, start, n):
    """The first UB offset in ``[start, start + n)`` marked garbage, or -1."""
    if not _has_garbage(ctx):
        return -1
    return _first_garbage(ctx, start, n)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _first_garbage(ctx, start, n):
    marks = carray(_voidptr(ctx.shadow_addr + ctx.ub_size + start), n, np.uint8)
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
    if _has_garbage(ctx):
        _move_garbage(ctx, dst, src, n)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _move_garbage(ctx, dst, src, n):
    base = ctx.shadow_addr + ctx.ub_size
    d = carray(_voidptr(base + dst), n, np.uint8)
    s = carray(_voidptr(base + src), n, np.uint8)
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


@jit
def ub_range_ok(ctx, prim, operand, addr, nbytes, start, ext):
    """Bytes ``[start, start + ext)`` of the UB tensor at ``addr`` lie in the UB and in the tensor."""
    t0 = addr - ctx.ub_addr
    a0, a1 = t0 + start, t0 + start + ext
    if a0 < 0 or a1 > ctx.ub_size:
        violation(ctx, RULE_UB_OUTSIDE_UB, prim, operand, a0, a1, 0, 0, 0)
        return False
    if start < 0 or start + ext > nbytes:
        violation(ctx, RULE_UB_OUTSIDE_BUFFER, prim, operand, t0, t0 + nbytes, a0, a1, 0)
        return False
    return True


@jit
def ub_aligned(ctx, prim, operand, addr, start):
    off = addr - ctx.ub_addr + start
    if off % ctx.block_bytes != 0:
        violation(ctx, RULE_UB_ADDRESS_ALIGN, prim, operand, off, ctx.block_bytes, 0, 0, 0)
        return False
    return True


@jit
def ub_read_ok(ctx, prim, operand, addr, start, n):
    """The UB bytes read were written since Init."""
    a0 = addr - ctx.ub_addr + start
    first = first_unwritten(ctx, a0, n)
    if first >= 0:
        violation(ctx, RULE_UB_UNINITIALIZED, prim, operand, first, a0, a0 + n, 0, 0)
        return False
    return True


@jit
def is_local_operand(ctx, prim, operand, addr):
    if not is_ub(ctx, addr):
        violation(ctx, RULE_UB_OUTSIDE_UB, prim, operand, -1, 0, 0, 0, 0)
        return False
    return True


# ---- GM: bounds with padding, one writer per byte ------------------------------------------------

@jit(always_inline=True)
def _region_field(ctx, r, col):
    return _load_i64(ctx.regions_addr, r * REGION_COLS + col)


@jit
def _region_of(ctx, addr):
    """The GM argument whose bytes hold ``addr``, else one that ends at ``addr`` (an empty view
    may sit at its end), else -1.  Adjacent views of one array (``out[:n]``, ``out[n:]``) meet at
    an address that is the second's."""
    for r in range(ctx.n_regions):
        base = _region_field(ctx, r, REGION_ADDR)
        if base <= addr and addr < base + _region_field(ctx, r, REGION_BYTES):
            return r
    for r in range(ctx.n_regions):
        if addr == _region_field(ctx, r, REGION_ADDR) + _region_field(ctx, r, REGION_BYTES):
            return r
    return -1


@jit(always_inline=True)
def region_bytes(ctx, r):
    return _region_field(ctx, r, REGION_BYTES)


@jit(always_inline=True)
def carry_garbage(ctx, prim, r, off, ub_start, n):
    """A UB -> GM block of ``n`` bytes from UB offset ``ub_start`` to byte ``off`` of GM argument
    ``r`` (see :func:`_carry_garbage`); nothing to do, most of the time."""
    if _has_garbage(ctx) or _region_field(ctx, r, REGION_DIRTY) != 0:
        _carry_garbage(ctx, prim, r, off, ub_start, n)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _carry_garbage(ctx, prim, r, off, ub_start, n):
    """A UB -> GM block of ``n`` bytes from UB offset ``ub_start`` to byte ``off`` of GM argument
    ``r``: its bytes inside the tensor take the block's garbage marks (the primitive's code where
    garbage lands, 0 where clean).  What is left at the end of the launch is the violation: a
    kernel may write a whole block and overwrite the garbage part later, as Tile's first aligned
    write of a row does."""
    inside = min(n, _region_field(ctx, r, REGION_BYTES) - off)
    if inside <= 0:
        return
    dirty = first_garbage(ctx, ub_start, inside) >= 0
    if not dirty and _region_field(ctx, r, REGION_DIRTY) == 0:
        return  # nothing garbage was ever written to this tensor
    _store_i64(ctx.regions_addr, r * REGION_COLS + REGION_DIRTY, 1)
    gm = carray(_voidptr(_region_field(ctx, r, REGION_GARBAGE) + off), inside, np.uint8)
    if not dirty:
        for i in range(inside):
            gm[i] = 0
        return
    marks = carray(_voidptr(ctx.shadow_addr + ctx.ub_size + ub_start), inside, np.uint8)
    code, epoch = np.uint8(prim), np.uint8(ctx.epoch)
    for i in range(inside):
        gm[i] = code if marks[i] == epoch else np.uint8(0)


@jit
def gm_range(ctx, prim, operand, addr, start, ext, write):
    """The GM argument holding the access and its byte offset, or (-1, 0) after a violation.  A
    read may reach into GM padding; a write only where the view ends its allocation."""
    r = _region_of(ctx, addr)
    if r < 0:
        violation(ctx, RULE_GM_BOUNDS, prim, operand, -1, addr, 0, 0, 0)
        return -1, 0
    off = addr - _region_field(ctx, r, REGION_ADDR) + start
    limit = _region_field(ctx, r, REGION_WRITABLE if write else REGION_PADDED)
    if off < 0 or off + ext > limit:
        violation(ctx, RULE_GM_BOUNDS, prim, operand, r, off, off + ext, limit, _region_field(ctx, r, REGION_BYTES))
        return -1, 0
    return r, off


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def claim(ctx, prim, r, lo, n):
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
                violation(ctx, RULE_GM_WRITE_RACE, prim, OPERAND_DST, r, lo + i, owner[i] - 1, 0, 0)
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
