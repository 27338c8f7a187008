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
import inspect

import numpy as np
from numba import carray, types
from numba.extending import intrinsic

from ..host.check import (
    CHECK_DETAIL, CHECK_OPERAND, CHECK_PRIMITIVE, CHECK_RULE, OPERAND_DST, OPERAND_SRC, RULE,
)
from .._numba_compat.call import call_by_address
from .._numba_compat.extending import cgutils, overload, python_twin
from .._numba_compat.jit import OVERLOAD_OPTIONS, function_address, jit, make_addressable
from .interpret import python_function
from .lane import (
    LANE_TYPES, STATE_AUTO, STATE_GARBAGE, STATE_MOVED, STATE_PRIMITIVE, CheckedLane, _load_i32, _load_i64, _load_word,
    _store_i64, _store_word, _voidptr,
)

__all__ = ["checked_rule", "rule_table", "violation", "failed", "count_ok", "is_ub", "region_bytes", "owner_marks",
           "REGION_COLS", "REGION_DIRTY", "REGION_TOUCHED", "TOUCHED_OWNER", "TOUCHED_READER",
           "COUNT", "BLOCK_COUNT", "BLOCK_LEN", "ROWS", "COLS", "ELEMENTS", "SRC_STRIDE", "DST_STRIDE",
           "enter", "moved_data", "mark_loaded", "auto_read", "auto_overwrite",
           "first_unwritten", "mark_epoch", "mark_written", "mark_blocks_written", "ub_range_ok", "ub_aligned",
           "ub_read_ok", "ub_blocks_read_ok", "is_local_operand",
           "set_garbage", "first_garbage", "move_garbage", "propagate_garbage", "carries_garbage", "carry_garbage",
           "gm_range", "claim", "note_read", "end_phase", "GRANULE", "MIXED", "REGION_OWNER_SUM",
           "REGION_READER_SUM"]

# A GM argument's row: address, bytes, owner map, bytes a read may reach (with GM padding), owner
# width, backup, bytes a write may reach (the padding only where the view ends its allocation),
# garbage map (per byte: the primitive that left garbage there, 0 if clean), whether any has,
# reader map (like the owner map, for reads), whether a lane wrote it and whether one read it since
# the last SyncAll (when not, the other map need not be scanned), which maps the launch wrote, and
# the owner and reader summaries (one int32 per GRANULE bytes, see below).
(REGION_ADDR, REGION_BYTES, REGION_OWNER, REGION_PADDED, REGION_OWNER_WIDTH, REGION_BACKUP,
 REGION_WRITABLE, REGION_GARBAGE, REGION_DIRTY, REGION_READER, REGION_WRITTEN, REGION_READ,
 REGION_TOUCHED, REGION_OWNER_SUM, REGION_READER_SUM) = range(15)
REGION_COLS = 15
# The owner and reader maps are summarized per granule of GRANULE bytes: a summary holds the one
# mark every byte of its granule has (0: nobody), or MIXED: the granule's bytes in the byte map say.
# A copy that covers whole granules updates their summaries alone (a 16 MB output written in rows
# touches 64 K summaries, not 32 MB of maps), and a launch clears only the summaries: a byte map
# is read only for MIXED granules, and a granule becomes MIXED by filling its bytes first.
GRANULE = 256
MIXED = -1
TOUCHED_OWNER, TOUCHED_READER = 1, 2  # REGION_TOUCHED bits: the maps a launch wrote (cleared after it)
RULE_GM_BOUNDS, RULE_UB_OUTSIDE_UB, RULE_UB_OUTSIDE_BUFFER, RULE_UB_ADDRESS_ALIGN, RULE_UB_UNINITIALIZED, \
    RULE_GM_WRITE_RACE, RULE_COUNT, RULE_GM_CROSS_CORE_READ, RULE_GM_WRITE_AFTER_READ, RULE_REDUNDANT_LOAD = (
        RULE[n] for n in ("gm-out-of-bounds", "ub-outside-ub", "ub-outside-buffer", "ub-address-unaligned",
                          "ub-uninitialized-read", "gm-write-race", "count-out-of-range", "gm-cross-core-read",
                          "gm-write-after-read", "redundant-load"))
COUNT, BLOCK_COUNT, BLOCK_LEN, ROWS, COLS, ELEMENTS, SRC_STRIDE, DST_STRIDE = range(8)  # host.check.COUNTS


def _is_checked(ctx_type) -> bool:
    return isinstance(ctx_type, types.NamedTuple) and ctx_type.instance_class is CheckedLane


# Every rule, in the order the primitives' modules register them: a rule's index is its slot in
# the rule table a checked lane carries (addresses of the rules compiled on their own).
_RULES: list = []
_RULE_TABLES: dict = {}  # rule count -> the table of their addresses


def _rule_arg_types(rule) -> tuple:
    # Rules take scalars: a parameter named ``*addr`` is an address (uint64), any other an int64.
    names = list(inspect.signature(rule.py_func).parameters)[1:]
    return tuple(types.uint64 if n.endswith("addr") else types.int64 for n in names)


def checked_rule(rule):
    """The hook a primitive calls before it runs, made from ``rule(ctx, ...)`` (compiled, returns
    whether the primitive may run).  In a CheckedLane the hook is False once the lane has a
    violation (every later primitive is skipped, so nothing it does goes unchecked), else the
    rule's answer; in any other lane it is True and compiles to nothing.

    A checked kernel calls the rule through the lane's rule table (see :func:`rule_table`),
    not by linking it in: the rules are compiled once for every kernel, where a linked-in
    rule is optimized again inside each kernel's module (it doubled a checked Tile
    kernel's cold compile)."""
    make_addressable(rule)
    slot = len(_RULES)
    argtys = _rule_arg_types(rule)
    _RULES.append((rule, argtys))
    call = _rule_caller(argtys)

    def hook(ctx, *args):
        raise NotImplementedError  # compiled only

    @overload(hook, jit_options=OVERLOAD_OPTIONS)
    def _ov_hook(ctx, *args):
        if not _is_checked(ctx):
            return lambda ctx, *args: True
        return lambda ctx, *args: not failed(ctx) and call(ctx.rules_addr, slot, ctx, args)

    functools.update_wrapper(hook, rule.py_func)
    return hook


def _rule_caller(argtys: tuple):
    """An intrinsic calling the rule at ``table[slot]`` compiled for ``(ctx, *argtys)``, each
    argument converted to its declared type; returns the rule's bool."""
    @intrinsic
    def call_rule(typingctx, table, slot, ctx, args):
        if not isinstance(args, types.BaseTuple) or len(args) != len(argtys):
            return None
        sig_args = (ctx, *argtys)

        def codegen(context, builder, signature, llargs):
            table_ptr = builder.inttoptr(llargs[0], cgutils.intp_t.as_pointer())
            address = builder.load(builder.gep(table_ptr, [llargs[1]]))
            values = [llargs[2]] + [context.cast(builder, v, t, want) for v, t, want in
                                    zip(cgutils.unpack_tuple(builder, llargs[3]), args.types, argtys)]
            _, result = call_by_address(context, builder, address, types.boolean, sig_args, values)
            return result

        return types.boolean(table, slot, ctx, args), codegen

    @python_twin(call_rule)
    def call_rule_py(table, slot, ctx, args):
        # Interpret mode: the rule itself, on Python integers (exact where int64 and uint64 mix).
        return bool(python_function(_RULES[slot][0].py_func)(ctx, *(int(v) for v in args)))

    return call_rule


def rule_table() -> np.ndarray:
    """The addresses of every rule compiled for a checked lane (compiled, or loaded from the
    on-disk cache, on the first checked launch of the process)."""
    table = _RULE_TABLES.get(len(_RULES))
    if table is None:
        addresses = []
        for rule, argtys in _RULES:
            sig = (LANE_TYPES["checked"], *argtys)
            rule.compile(types.boolean(*sig))  # the type the callers read the answer as
            cres = rule.overloads[sig]
            addresses.append(function_address(cres))
        table = _RULE_TABLES[len(_RULES)] = np.array(addresses, np.uint64)
    return table


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
    auto_overwrite(ctx, start, n)
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


# ---- AUTO-mode kernels: loads no primitive read (the UB shadow's third part) ----------------------

@jit(always_inline=True)
def _auto(ctx):
    return _load_i64(ctx.state_addr, STATE_AUTO) != 0


@jit(always_inline=True)
def enter(ctx, prim):
    """A rule starts: the lane moves data with ``prim`` (for tile-rebound) and it is the primitive a
    redundant-load found while marking its writes is reported against."""
    if _auto(ctx):
        _store_i64(ctx.state_addr, STATE_PRIMITIVE, prim)


@jit(always_inline=True)
def moved_data(ctx):
    _store_i64(ctx.state_addr, STATE_MOVED, 1)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def mark_loaded(ctx, start, n):
    """UB bytes a GM -> UB copy brought in, not yet read by any primitive (AUTO kernels)."""
    if _auto(ctx):
        marks = carray(_voidptr(ctx.shadow_addr + 2 * ctx.ub_size + start), n, np.uint8)
        epoch = np.uint8(ctx.epoch)
        for i in range(n):
            marks[i] = epoch


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def auto_read(ctx, start, n):
    """A primitive reads UB bytes: the loads of the 32-byte blocks holding them were used."""
    if not _auto(ctx) or n <= 0:
        return
    bb = ctx.block_bytes
    lo = start // bb * bb
    hi = min((start + n + bb - 1) // bb * bb, ctx.ub_size)
    marks = carray(_voidptr(ctx.shadow_addr + 2 * ctx.ub_size + lo), hi - lo, np.uint8)
    for i in range(marks.size):
        marks[i] = 0


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def auto_overwrite(ctx, start, n):
    """A primitive writes UB bytes: a byte loaded from GM and never read is a redundant load."""
    if not _auto(ctx) or n <= 0:
        return
    marks = carray(_voidptr(ctx.shadow_addr + 2 * ctx.ub_size + start), n, np.uint8)
    epoch = np.uint8(ctx.epoch)
    hit = False
    for i in range(n):
        hit |= marks[i] == epoch
    if hit:
        for i in range(n):
            if marks[i] == epoch:
                violation(ctx, RULE_REDUNDANT_LOAD, _load_i64(ctx.state_addr, STATE_PRIMITIVE), OPERAND_DST,
                          start + i, start, start + n, 0, 0)
                return


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
    auto_read(ctx, a0, n)
    return True


# Small blocks (Tile copies rows of a few bytes, thousands per call): a block of up to 8 bytes of a
# byte map is one word, loaded and stored whole.  The maps have 8 bytes of slack past their end.
SMALL_BLOCK = 8


@jit(always_inline=True)
def _low_bytes(n):
    """The mask of a word's low ``n`` bytes (1 <= n <= 8)."""
    return np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * n)


@jit(always_inline=True)
def _repeat(byte, mask):
    return (np.uint64(byte) * np.uint64(0x0101010101010101)) & mask


@jit(always_inline=True)
def _put_word(addr, value, mask):
    _store_word(addr, (_load_word(addr) & ~mask) | value)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def ub_blocks_read_ok(ctx, prim, operand, a0, pitch, block_len, block_count):
    """:func:`ub_read_ok` for ``block_count`` blocks of ``block_len`` bytes, ``pitch`` apart,
    from UB offset ``a0``: one pass, not a call per block."""
    stale = False
    if block_len <= SMALL_BLOCK:
        mask = _low_bytes(block_len)
        want = _repeat(ctx.epoch, mask)
        base = ctx.shadow_addr + a0
        for k in range(block_count):
            stale |= (_load_word(base + k * pitch) & mask) != want
    else:
        shadow = carray(_voidptr(ctx.shadow_addr + a0), (block_count - 1) * pitch + block_len, np.uint8)
        epoch = np.uint8(ctx.epoch)
        for b0 in range(0, shadow.size, pitch):
            block = shadow[b0:b0 + block_len]
            for i in range(block.size):
                stale |= block[i] != epoch
    if stale:
        for k in range(block_count):
            first = first_unwritten(ctx, a0 + k * pitch, block_len)
            if first >= 0:
                violation(ctx, RULE_UB_UNINITIALIZED, prim, operand, first, a0 + k * pitch,
                          a0 + k * pitch + block_len, 0, 0)
                return False
    if _auto(ctx):
        for k in range(block_count):
            auto_read(ctx, a0 + k * pitch, block_len)
    return True


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def mark_blocks_written(ctx, a0, pitch, block_len, block_count):
    """:func:`mark_written` for blocks (as :func:`ub_blocks_read_ok`)."""
    if _auto(ctx):
        for k in range(block_count):
            auto_overwrite(ctx, a0 + k * pitch, block_len)
    if block_len <= SMALL_BLOCK:
        mask = _low_bytes(block_len)
        epoch = _repeat(ctx.epoch, mask)
        for k in range(block_count):
            _put_word(ctx.shadow_addr + a0 + k * pitch, epoch, mask)
        if _has_garbage(ctx):
            for k in range(block_count):
                _put_word(ctx.shadow_addr + ctx.ub_size + a0 + k * pitch, np.uint64(0), mask)
        return
    ext = (block_count - 1) * pitch + block_len
    shadow = carray(_voidptr(ctx.shadow_addr + a0), ext, np.uint8)
    epoch = np.uint8(ctx.epoch)
    for b0 in range(0, ext, pitch):
        block = shadow[b0:b0 + block_len]
        for i in range(block.size):
            block[i] = epoch
    if _has_garbage(ctx):
        marks = carray(_voidptr(ctx.shadow_addr + ctx.ub_size + a0), ext, np.uint8)
        for b0 in range(0, ext, pitch):
            block = marks[b0:b0 + block_len]
            for i in range(block.size):
                block[i] = 0


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
def carries_garbage(ctx, r):
    """Whether a UB -> GM copy into argument ``r`` has garbage marks to move: not unless the lane
    marked some UB bytes garbage or garbage was written to ``r`` before (most launches: never)."""
    return _has_garbage(ctx) or _region_field(ctx, r, REGION_DIRTY) != 0


@jit(always_inline=True)
def carry_garbage(ctx, prim, r, off, ub_start, n):
    """A UB -> GM block of ``n`` bytes from UB offset ``ub_start`` to byte ``off`` of GM argument
    ``r`` (see :func:`_carry_garbage`)."""
    if carries_garbage(ctx, r):
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


def owner_marks(block_dim):
    """The owner/reader map element type for ``block_dim`` lanes and its top value, kept free
    for the markers: an owner written before the last SyncAll (ordered with everything after it)
    and a byte several lanes read."""
    dtype = np.uint8 if block_dim <= 254 else np.uint16  # checked launches take up to 65534 lanes
    return dtype, np.iinfo(dtype).max


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def claim(ctx, prim, r, lo, pitch, block_len, block_count):
    """Lane ``block_idx`` writes ``block_count`` blocks of ``block_len`` GM bytes, ``pitch``
    apart, from byte ``lo`` of argument ``r``: since the last SyncAll no other lane may have
    written them (gm-write-race) or read them (gm-write-after-read)."""
    ext = min((block_count - 1) * pitch + block_len, _region_field(ctx, r, REGION_BYTES) - lo)
    if ext <= 0:
        return True  # bytes in the padding have no owner
    _store_i64(ctx.regions_addr, r * REGION_COLS + REGION_WRITTEN, 1)
    _touch(ctx, r, TOUCHED_OWNER)
    read = _region_field(ctx, r, REGION_READ) != 0
    if pitch != block_len and block_count > 1:  # strided blocks: byte by byte
        _materialize(ctx, r, REGION_OWNER_SUM, lo, ext)
        if read:
            _materialize(ctx, r, REGION_READER_SUM, lo, ext)
        return _claim_bytes(ctx, prim, r, lo, pitch, block_len, block_count, read)
    head, w0, w1, tail = _granules(ctx, r, lo, ext)
    # In address order, so the first violation is the first byte that breaks a rule.
    if head > lo and not _claim_part(ctx, prim, r, lo, head - lo, read):
        return False
    osum = _summaries(ctx, r, REGION_OWNER_SUM)
    rsum = _summaries(ctx, r, REGION_READER_SUM)
    me = ctx.block_idx + 1
    top = _top_mark(ctx, r)
    backup = _region_field(ctx, r, REGION_BACKUP)
    for g in range(w0, w1):
        o = osum[g]
        q = rsum[g] if read else 0
        if o == MIXED or q == MIXED:
            if not _claim_part(ctx, prim, r, g * GRANULE, _granule_end(ctx, r, g) - g * GRANULE, read):
                return False
            osum[g] = me
            continue
        if o != 0 and o != me and o != top:
            violation(ctx, RULE_GM_WRITE_RACE, prim, OPERAND_DST, r, g * GRANULE, o - 1, 0, 0)
            return False
        if q != 0 and q != me:
            violation(ctx, RULE_GM_WRITE_AFTER_READ, prim, OPERAND_DST, r, g * GRANULE, -1 if q == top else q - 1,
                      0, 0)
            return False
        if backup != 0 and o == 0:  # the first write of the granule: its old bytes
            _save_bytes(ctx, r, g * GRANULE, _granule_end(ctx, r, g))
        osum[g] = me
    if w1 > w0 and tail < lo + ext:
        return _claim_part(ctx, prim, r, tail, lo + ext - tail, read)
    return True


@jit(always_inline=True, _nrt=True)  # returns an array view (an array value needs the runtime)
def _summaries(ctx, r, col):
    n = (_region_field(ctx, r, REGION_BYTES) + GRANULE - 1) // GRANULE
    return carray(_voidptr(_region_field(ctx, r, col)), n, np.int32)


@jit(always_inline=True)
def _top_mark(ctx, r):
    return 0xFF if _region_field(ctx, r, REGION_OWNER_WIDTH) == 1 else 0xFFFF


@jit(always_inline=True)
def _granule_end(ctx, r, g):
    return min((g + 1) * GRANULE, _region_field(ctx, r, REGION_BYTES))


@jit(always_inline=True)
def _granules(ctx, r, lo, ext):
    """The range ``[lo, lo + ext)`` as (end of the part before the first whole granule, whole
    granules [w0, w1), start of the part after them); without a whole granule the first part
    is the whole range."""
    hi = lo + ext
    w0 = (lo + GRANULE - 1) // GRANULE
    last = (hi - 1) // GRANULE
    w1 = last + 1 if _granule_end(ctx, r, last) <= hi else last
    if w0 >= w1:
        return hi, 0, 0, hi
    return min(w0 * GRANULE, hi), w0, w1, max(w1 * GRANULE, lo)


@jit(_nrt=True)  # builds carray views
def _materialize(ctx, r, col, lo, ext):
    """The granules holding ``[lo, lo + ext)`` of the owner (``col`` REGION_OWNER_SUM) or reader
    map made MIXED: each granule's summary mark written into its bytes first."""
    sums = _summaries(ctx, r, col)
    width = _region_field(ctx, r, REGION_OWNER_WIDTH)
    base = _region_field(ctx, r, REGION_OWNER if col == REGION_OWNER_SUM else REGION_READER)
    for g in range(lo // GRANULE, (lo + ext - 1) // GRANULE + 1):
        mark = sums[g]
        if mark == MIXED:
            continue
        start, end = g * GRANULE, _granule_end(ctx, r, g)
        if width == 1:
            m8 = carray(_voidptr(base + start), end - start, np.uint8)
            v8 = np.uint8(mark)
            for i in range(m8.size):
                m8[i] = v8
        else:
            m16 = carray(_voidptr(base + 2 * start), end - start, np.uint16)
            v16 = np.uint16(mark)
            for i in range(m16.size):
                m16[i] = v16
        sums[g] = MIXED


@jit(_nrt=True)  # builds carray views
def _save_bytes(ctx, r, start, end):
    """Bytes ``[start, end)`` of argument ``r`` into its backup, as they are."""
    data = carray(_voidptr(_region_field(ctx, r, REGION_ADDR) + start), end - start, np.uint8)
    backup = carray(_voidptr(_region_field(ctx, r, REGION_BACKUP) + start), end - start, np.uint8)
    for i in range(data.size):
        backup[i] = data[i]


@jit(always_inline=True)
def _mixed(ctx, r, col, lo, ext):
    """Whether the granules at both ends of ``[lo, lo + ext)`` are MIXED (a range with no whole
    granule has no other)."""
    sums = _region_field(ctx, r, col)
    return _load_i32(sums, lo // GRANULE) == MIXED and _load_i32(sums, (lo + ext - 1) // GRANULE) == MIXED


@jit(always_inline=True)
def _claim_part(ctx, prim, r, lo, ext, read):
    """One gapless range with no whole granule (or one MIXED granule) claimed byte by byte, its
    granules made MIXED first."""
    if not _mixed(ctx, r, REGION_OWNER_SUM, lo, ext):
        _materialize(ctx, r, REGION_OWNER_SUM, lo, ext)
    if read and not _mixed(ctx, r, REGION_READER_SUM, lo, ext):
        _materialize(ctx, r, REGION_READER_SUM, lo, ext)
    return _claim_bytes(ctx, prim, r, lo, ext, ext, 1, read)


@jit(always_inline=True, _nrt=True)  # builds carray views (an array value needs the runtime)
def _claim_bytes(ctx, prim, r, lo, pitch, block_len, block_count, read):
    """:func:`claim` on the byte maps (their granules MIXED)."""
    ext = min((block_count - 1) * pitch + block_len, _region_field(ctx, r, REGION_BYTES) - lo)
    if pitch == block_len:  # gapless: one block
        pitch = block_len = ext
    width = _region_field(ctx, r, REGION_OWNER_WIDTH)
    owner = _voidptr(_region_field(ctx, r, REGION_OWNER) + lo * width)
    reader = _voidptr(_region_field(ctx, r, REGION_READER) + lo * width)
    # Views of exactly the range, indexed from 0: the loops vectorize.
    if width == 1:
        if block_len <= SMALL_BLOCK and (ext - block_len) % pitch == 0 \
                and _claim_small(ctx, r, lo, pitch, block_len, (ext - block_len) // pitch + 1, read):
            return True
        return _claim_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint8), carray(reader, ext, np.uint8),
                             pitch, block_len, np.uint8(ctx.block_idx + 1), np.uint8(0xFF), read)
    return _claim_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint16), carray(reader, ext, np.uint16),
                         pitch, block_len, np.uint16(ctx.block_idx + 1), np.uint16(0xFFFF), read)


@jit
def _claim_small(ctx, r, lo, pitch, block_len, block_count, read):
    """:func:`claim` of whole blocks of up to 8 bytes with a byte owner map, word by word, when
    each block's owners are all nobody, all this lane or all "before a SyncAll" and no other
    lane read them; False (nothing changed) for anything else, which the byte path decides."""
    mask = _low_bytes(block_len)
    me = _repeat(ctx.block_idx + 1, mask)
    past = mask  # every byte 0xFF
    owner = _region_field(ctx, r, REGION_OWNER) + lo
    odd = False
    owned = False
    for k in range(block_count):
        w = _load_word(owner + k * pitch) & mask
        odd |= (w != 0) & (w != me) & (w != past)
        owned |= w != 0
    if read:
        reader = _region_field(ctx, r, REGION_READER) + lo
        for k in range(block_count):
            w = _load_word(reader + k * pitch) & mask
            odd |= (w != 0) & (w != me)
    if odd:
        return False
    backup = _region_field(ctx, r, REGION_BACKUP)
    if backup != 0 and lo + (block_count - 1) * pitch + SMALL_BLOCK > _region_field(ctx, r, REGION_BYTES):
        return False  # a word would read past the caller's array: the byte path
    if backup != 0:
        data = _region_field(ctx, r, REGION_ADDR) + lo
        for k in range(block_count):
            at = k * pitch
            if not owned or (_load_word(owner + at) & mask) == 0:
                _put_word(backup + lo + at, _load_word(data + at) & mask, mask)
    for k in range(block_count):
        _put_word(owner + k * pitch, me, mask)
    return True


@jit(always_inline=True)
def _touch(ctx, r, bit):
    at = r * REGION_COLS + REGION_TOUCHED
    _store_i64(ctx.regions_addr, at, _load_i64(ctx.regions_addr, at) | bit)


@jit(always_inline=True)
def _other_lane(mark, me, top):
    # An owner or reader that is another lane of this phase (not nobody, not this lane, not a marker).
    return (mark != 0) & (mark != me) & (mark != top)


@jit(always_inline=True, _nrt=True)  # builds carray views
def _others_own(owner, pitch, block_len, me, top):
    """Whether another lane of this phase owns a byte of the blocks (a view of each block indexed
    from 0: an offset index keeps the loop from vectorizing)."""
    hazard = False
    for b0 in range(0, owner.size, pitch):
        o = owner[b0:b0 + block_len]
        for i in range(o.size):
            hazard |= _other_lane(o[i], me, top)
    return hazard


@jit(_nrt=True)  # builds carray views (one copy per map width, not inlined: compile time)
def _claim_blocks(ctx, prim, r, lo, owner, reader, pitch, block_len, me, top, read):
    # Loops over a view of each block indexed from 0 (an offset index keeps them from vectorizing);
    # the reader map only where some lane read the tensor since the last SyncAll.
    ext = owner.size
    hazard = _others_own(owner, pitch, block_len, me, top)
    if read:
        for b0 in range(0, ext, pitch):
            q = reader[b0:b0 + block_len]
            for i in range(q.size):
                hazard |= (q[i] != 0) & (q[i] != me)
    if hazard:
        for b0 in range(0, ext, pitch):
            o, q = owner[b0:b0 + block_len], reader[b0:b0 + block_len]
            for i in range(o.size):
                if _other_lane(o[i], me, top):
                    violation(ctx, RULE_GM_WRITE_RACE, prim, OPERAND_DST, r, lo + b0 + i, o[i] - 1, 0, 0)
                    return False
                if q[i] != 0 and q[i] != me:
                    other = -1 if q[i] == top else np.int64(q[i]) - 1
                    violation(ctx, RULE_GM_WRITE_AFTER_READ, prim, OPERAND_DST, r, lo + b0 + i, other, 0, 0)
                    return False
    backup_addr = _region_field(ctx, r, REGION_BACKUP)
    if backup_addr != 0:
        owned = False  # any byte written before (by this lane, or before a SyncAll)
        for b0 in range(0, ext, pitch):
            o = owner[b0:b0 + block_len]
            for i in range(o.size):
                owned |= o[i] != 0
        data = carray(_voidptr(_region_field(ctx, r, REGION_ADDR) + lo), ext, np.uint8)
        backup = carray(_voidptr(backup_addr + lo), ext, np.uint8)
        for b0 in range(0, ext, pitch):
            o, d, k = owner[b0:b0 + block_len], data[b0:b0 + block_len], backup[b0:b0 + block_len]
            if not owned:  # the first write of every byte: the old values, as they are
                for i in range(o.size):
                    k[i] = d[i]
                continue
            for i in range(o.size):
                if o[i] == 0:
                    k[i] = d[i]
    for b0 in range(0, ext, pitch):
        o = owner[b0:b0 + block_len]
        for i in range(o.size):
            o[i] = me
    return True


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def note_read(ctx, prim, r, lo, pitch, block_len, block_count):
    """Lane ``block_idx`` reads blocks of GM argument ``r`` (as :func:`claim`): no other lane may
    have written them since the last SyncAll (gm-cross-core-read); the lane is recorded as their
    reader (a byte several lanes read is marked so)."""
    ext = min((block_count - 1) * pitch + block_len, _region_field(ctx, r, REGION_BYTES) - lo)
    if ext <= 0:
        return True  # GM padding: nobody writes it
    written = _region_field(ctx, r, REGION_WRITTEN) != 0
    _store_i64(ctx.regions_addr, r * REGION_COLS + REGION_READ, 1)
    _touch(ctx, r, TOUCHED_READER)
    if pitch != block_len and block_count > 1:  # strided blocks: byte by byte
        return _note_part(ctx, prim, r, lo, pitch, block_len, block_count, ext, written)
    head, w0, w1, tail = _granules(ctx, r, lo, ext)
    if head > lo and not _note_part(ctx, prim, r, lo, head - lo, head - lo, 1, head - lo, written):
        return False
    osum = _summaries(ctx, r, REGION_OWNER_SUM)
    rsum = _summaries(ctx, r, REGION_READER_SUM)
    me = ctx.block_idx + 1
    top = _top_mark(ctx, r)
    for g in range(w0, w1):
        o = osum[g] if written else 0
        if o == MIXED or rsum[g] == MIXED:
            n = _granule_end(ctx, r, g) - g * GRANULE
            if not _note_part(ctx, prim, r, g * GRANULE, n, n, 1, n, written):
                return False
            continue
        if o != 0 and o != me and o != top:
            violation(ctx, RULE_GM_CROSS_CORE_READ, prim, OPERAND_SRC, r, g * GRANULE, o - 1, 0, 0)
            return False
        q = rsum[g]
        rsum[g] = me if q == 0 or q == me else top
    if w1 > w0 and tail < lo + ext:
        n = lo + ext - tail
        return _note_part(ctx, prim, r, tail, n, n, 1, n, written)
    return True


@jit(always_inline=True, _nrt=True)  # builds carray views (an array value needs the runtime)
def _note_part(ctx, prim, r, lo, pitch, block_len, block_count, ext, written):
    """:func:`note_read` byte by byte over the ``ext`` bytes from ``lo``, their granules made MIXED."""
    if written and (block_count > 1 or not _mixed(ctx, r, REGION_OWNER_SUM, lo, ext)):
        _materialize(ctx, r, REGION_OWNER_SUM, lo, ext)
    if block_count > 1 or not _mixed(ctx, r, REGION_READER_SUM, lo, ext):
        _materialize(ctx, r, REGION_READER_SUM, lo, ext)
    if pitch == block_len:  # gapless: one block
        pitch = block_len = ext
    width = _region_field(ctx, r, REGION_OWNER_WIDTH)
    owner = _voidptr(_region_field(ctx, r, REGION_OWNER) + lo * width)
    reader = _voidptr(_region_field(ctx, r, REGION_READER) + lo * width)
    if width == 1:
        return _note_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint8), carray(reader, ext, np.uint8),
                            pitch, block_len, np.uint8(ctx.block_idx + 1), np.uint8(0xFF), written)
    return _note_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint16), carray(reader, ext, np.uint16),
                        pitch, block_len, np.uint16(ctx.block_idx + 1), np.uint16(0xFFFF), written)


@jit(_nrt=True)  # builds carray views (one copy per map width, not inlined: compile time)
def _note_blocks(ctx, prim, r, lo, owner, reader, pitch, block_len, me, top, written):
    ext = owner.size
    if written:  # some lane wrote this tensor since the last SyncAll: were these bytes among them?
        if _others_own(owner, pitch, block_len, me, top):
            for b0 in range(0, ext, pitch):
                o = owner[b0:b0 + block_len]
                for i in range(o.size):
                    if _other_lane(o[i], me, top):
                        violation(ctx, RULE_GM_CROSS_CORE_READ, prim, OPERAND_SRC, r, lo + b0 + i, o[i] - 1, 0, 0)
                        return False
    for b0 in range(0, ext, pitch):
        q = reader[b0:b0 + block_len]
        for i in range(q.size):
            v = q[i]
            q[i] = me if (v == 0) | (v == me) else top
    return True


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def end_phase(ctx):
    """SyncAll: every lane has reached it, so what they wrote and read before it is ordered with
    what any lane does after it: owners become the "before a SyncAll" marker, readers are forgotten."""
    for r in range(ctx.n_regions):
        written = _region_field(ctx, r, REGION_WRITTEN) != 0
        _store_i64(ctx.regions_addr, r * REGION_COLS + REGION_WRITTEN, 0)
        _store_i64(ctx.regions_addr, r * REGION_COLS + REGION_READ, 0)
        rsum = _summaries(ctx, r, REGION_READER_SUM)
        for g in range(rsum.size):
            rsum[g] = 0  # a MIXED granule's bytes stay as they are: a byte map is read only under MIXED
        if not written:
            continue
        osum = _summaries(ctx, r, REGION_OWNER_SUM)
        top = _top_mark(ctx, r)
        width = _region_field(ctx, r, REGION_OWNER_WIDTH)
        for g in range(osum.size):
            if osum[g] == MIXED:
                start, end = g * GRANULE, _granule_end(ctx, r, g)
                owner = _voidptr(_region_field(ctx, r, REGION_OWNER) + start * width)
                if width == 1:
                    _forget(carray(owner, end - start, np.uint8), np.uint8(0xFF))
                else:
                    _forget(carray(owner, end - start, np.uint16), np.uint16(0xFFFF))
            elif osum[g] != 0:
                osum[g] = top


@jit(always_inline=True, _nrt=True)  # builds carray views
def _forget(owner, top):
    for i in range(owner.size):
        owner[i] = top if owner[i] != 0 else owner[i]
