"""Who wrote and who read each GM byte in a checked launch, and the rules that follow (SPEC §8):
``gm-write-race``, ``gm-cross-core-read``, ``gm-write-after-read`` and ``gm-read-unwritten-output``.

Each GM argument has an owner map and a reader map (see :mod:`.regions`), each summarized per
:data:`GRANULE` bytes.  A copy that covers whole granules checks and updates their summaries
alone (a 16 MB output written in rows touches 64 K summaries, not 32 MB of maps); a part
granule, or strided blocks, go byte by byte after their granules are made MIXED (each filled
from its summary first).  Violations are found in address order either way, so the first one
is the same.  Checked launches run lanes one after another (or one at a time, from barrier to
barrier), so nothing here needs atomics.

A SyncAll (:func:`end_phase`) orders what every lane did before it with what any lane does
after: owners become the "before a SyncAll" mark (the map's top value) and readers are forgotten.
Owner marks: ``lane + 1`` for a lane's plain writes, ``block_num + lane + 1`` for its DMA atomic
ones, top - 1 for atomic writes of several lanes, top for "before a SyncAll".  Atomic copies may
meet each other; a plain copy or read meeting another lane's write of either kind (before the
next SyncAll) is reported; a lane's own writes of both kinds are ordered.  An atomic copy over a
lane's own plain bytes keeps them plain (another lane's atomic copy meeting them is a race).
"""

from __future__ import annotations

import numpy as np
from numba import carray

from .._numba_compat.jit import jit
from ..kernels.lane import _load_i32, _load_word, _voidptr
from . import report
from .gm_regions import region
from .regions import GRANULE, MIXED, TOUCHED_OWNER, TOUCHED_READER
from .rules import OPERAND_DST, OPERAND_SRC
from .words import SMALL_BLOCK, low_bytes, put_word, repeat_byte

__all__ = ["claim", "note_read", "end_phase"]

OWNER, READER = 0, 1  # which map


@jit(always_inline=True, _nrt=True)  # returns an array view (an array value needs the runtime)
def _summaries(ctx, r, which):
    row = region(ctx, r)
    n = (row["nbytes"] + GRANULE - 1) // GRANULE
    return carray(_voidptr(row["owner_sums"] if which == OWNER else row["reader_sums"]), n, np.int32)


@jit(always_inline=True)
def _top_mark(ctx, r):
    return 0xFF if region(ctx, r)["owner_width"] == 1 else 0xFFFF


@jit(always_inline=True)
def _granule_end(ctx, r, g):
    return min((g + 1) * GRANULE, region(ctx, r)["nbytes"])


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
def _materialize(ctx, r, which, lo, ext):
    """The granules holding ``[lo, lo + ext)`` of the owner or reader map made MIXED: each
    granule's summary mark written into its bytes first."""
    sums = _summaries(ctx, r, which)
    row = region(ctx, r)
    width = row["owner_width"]
    base = row["owner_map"] if which == OWNER else row["reader_map"]
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


@jit(always_inline=True)
def _mixed(ctx, r, which, lo, ext):
    """Whether the granules at both ends of ``[lo, lo + ext)`` are MIXED (a range with no whole
    granule has no other)."""
    row = region(ctx, r)
    sums = row["owner_sums"] if which == OWNER else row["reader_sums"]
    return _load_i32(sums, lo // GRANULE) == MIXED and _load_i32(sums, (lo + ext - 1) // GRANULE) == MIXED


@jit(always_inline=True)
def _not_mine(mark, me, top, lanes):
    # An owner mark that is another lane's write of this phase, plain or atomic (not nobody, not
    # this lane's plain or atomic write, not "before a SyncAll").
    return (mark != 0) & (mark != me) & (mark != me + lanes) & (mark != top)


@jit(always_inline=True)
def _meets(mark, me, top, lanes, atomic):
    """Whether a write meets another lane's of this phase: a plain write meets any; an atomic one
    meets plain ones only (atomic writes may meet each other)."""
    hazard = _not_mine(mark, me, top, lanes)
    if atomic:
        hazard &= (mark <= lanes)
    return hazard


@jit(always_inline=True)
def _writer_of(mark, top, lanes):
    # The writer a report names: its lane, -2 - lane for a lane's atomic write, -1 for several lanes'.
    if mark == top - 1:
        return np.int64(-1)
    return np.int64(mark) - 1 if mark <= lanes else -2 - (np.int64(mark) - lanes - 1)


@jit(always_inline=True)
def _written_mark(mark, me, top, lanes, atomic):
    """A byte's owner after this lane's write over ``mark`` (a write that meets nothing)."""
    if not atomic or mark == me:
        return me if not atomic else mark
    if mark == 0 or mark == top or mark == me + lanes:
        return me + lanes
    return top - 1


@jit(always_inline=True, _nrt=True)  # builds carray views
def _others_own(owner, pitch, block_len, me, top, lanes, atomic):
    """Whether a write meets another of this phase on a byte of the blocks (a view of each block
    indexed from 0: an offset index keeps the loop from vectorizing)."""
    hazard = False
    for b0 in range(0, owner.size, pitch):
        o = owner[b0:b0 + block_len]
        for i in range(o.size):
            hazard |= _meets(o[i], me, top, lanes, atomic)
    return hazard


@jit(_nrt=True)  # builds carray views
def _save_bytes(ctx, r, start, end):
    """Bytes ``[start, end)`` of argument ``r`` into its backup, as they are."""
    row = region(ctx, r)
    data = carray(_voidptr(row["addr"] + start), end - start, np.uint8)
    backup = carray(_voidptr(row["backup"] + start), end - start, np.uint8)
    for i in range(data.size):
        backup[i] = data[i]


@jit(always_inline=True)
def _touch(ctx, r, bit):
    row = region(ctx, r)
    row["touched"] = row["touched"] | bit


# ---- writes ---------------------------------------------------------------------------------------

@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def claim(ctx, prim, r, lo, pitch, block_len, block_count, atomic):
    """Lane ``block_idx`` writes ``block_count`` blocks of ``block_len`` GM bytes, ``pitch``
    apart, from byte ``lo`` of argument ``r``: since the last SyncAll no other lane may have
    written them (gm-write-race) or read them (gm-write-after-read).  An ``atomic`` write (a DMA
    atomic) may meet other atomic writes; a plain one may not meet it (see the module doc)."""
    ext = min((block_count - 1) * pitch + block_len, region(ctx, r)["nbytes"] - lo)  # inside the tensor
    if ext <= 0:
        return True  # bytes in the padding have no owner
    row = region(ctx, r)
    row["written"] = 1
    _touch(ctx, r, TOUCHED_OWNER)
    read = row["read"] != 0
    if pitch != block_len and block_count > 1:  # strided blocks: byte by byte
        _materialize(ctx, r, OWNER, lo, ext)
        if read:
            _materialize(ctx, r, READER, lo, ext)
        return _claim_bytes(ctx, prim, r, lo, pitch, block_len, block_count, read, atomic)
    head, w0, w1, tail = _granules(ctx, r, lo, ext)
    # In address order, so the first violation is the first byte that breaks a rule.
    if head > lo and not _claim_part(ctx, prim, r, lo, head - lo, read, atomic):
        return False
    osum = _summaries(ctx, r, OWNER)
    rsum = _summaries(ctx, r, READER)
    me = ctx.block_idx + 1
    top = _top_mark(ctx, r)
    lanes = ctx.block_num
    backup = row["backup"]
    for g in range(w0, w1):
        o = osum[g]
        q = rsum[g] if read else 0
        if o == MIXED or q == MIXED:
            if not _claim_part(ctx, prim, r, g * GRANULE, _granule_end(ctx, r, g) - g * GRANULE, read, atomic):
                return False
            if not atomic:  # an atomic write leaves marks that depend on each byte's: the granule stays MIXED
                osum[g] = me
            continue
        if _meets(o, me, top, lanes, atomic):
            report.gm_write_race(ctx, prim, OPERAND_DST, tensor=r, byte=g * GRANULE,
                                 other_lane=_writer_of(o, top, lanes))
            return False
        if q != 0 and q != me:
            report.gm_write_after_read(ctx, prim, OPERAND_DST, tensor=r, byte=g * GRANULE,
                                       other_lane=-1 if q == top else q - 1)
            return False
        if backup != 0 and o == 0:  # the first write of the granule: its old bytes
            _save_bytes(ctx, r, g * GRANULE, _granule_end(ctx, r, g))
        osum[g] = _written_mark(o, me, top, lanes, atomic)
    if w1 > w0 and tail < lo + ext:
        return _claim_part(ctx, prim, r, tail, lo + ext - tail, read, atomic)
    return True


@jit(always_inline=True)
def _claim_part(ctx, prim, r, lo, ext, read, atomic):
    """One gapless range with no whole granule (or one MIXED granule) claimed byte by byte, its
    granules made MIXED first."""
    if not _mixed(ctx, r, OWNER, lo, ext):
        _materialize(ctx, r, OWNER, lo, ext)
    if read and not _mixed(ctx, r, READER, lo, ext):
        _materialize(ctx, r, READER, lo, ext)
    return _claim_bytes(ctx, prim, r, lo, ext, ext, 1, read, atomic)


@jit(always_inline=True, _nrt=True)  # builds carray views (an array value needs the runtime)
def _claim_bytes(ctx, prim, r, lo, pitch, block_len, block_count, read, atomic):
    """:func:`claim` on the byte maps (their granules MIXED)."""
    ext = min((block_count - 1) * pitch + block_len, region(ctx, r)["nbytes"] - lo)  # inside the tensor
    if pitch == block_len:  # gapless: one block
        pitch = block_len = ext
    width = region(ctx, r)["owner_width"]
    owner = _voidptr(region(ctx, r)["owner_map"] + lo * width)
    reader = _voidptr(region(ctx, r)["reader_map"] + lo * width)
    # Views of exactly the range, indexed from 0: the loops vectorize.
    if width == 1:
        if block_len <= SMALL_BLOCK and (ext - block_len) % pitch == 0 and not atomic \
                and _claim_small(ctx, r, lo, pitch, block_len, (ext - block_len) // pitch + 1, read):
            return True
        return _claim_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint8), carray(reader, ext, np.uint8),
                             pitch, block_len, np.uint8(ctx.block_idx + 1), np.uint8(0xFF), read, atomic)
    return _claim_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint16), carray(reader, ext, np.uint16),
                         pitch, block_len, np.uint16(ctx.block_idx + 1), np.uint16(0xFFFF), read, atomic)


@jit
def _claim_small(ctx, r, lo, pitch, block_len, block_count, read):
    """:func:`claim` of whole blocks of up to 8 bytes with a byte owner map, word by word, when
    each block's owners are all nobody, all this lane or all "before a SyncAll" and no other
    lane read them; False (nothing changed) for anything else, which the byte path decides."""
    mask = low_bytes(block_len)
    me = repeat_byte(ctx.block_idx + 1, mask)
    past = mask  # every byte 0xFF
    row = region(ctx, r)
    owner = row["owner_map"] + lo
    odd = False
    owned = False
    for k in range(block_count):
        w = _load_word(owner + k * pitch) & mask
        odd |= (w != 0) & (w != me) & (w != past)
        owned |= w != 0
    if read:
        reader = row["reader_map"] + lo
        for k in range(block_count):
            w = _load_word(reader + k * pitch) & mask
            odd |= (w != 0) & (w != me)
    if odd:
        return False
    backup = row["backup"]
    if backup != 0 and lo + (block_count - 1) * pitch + SMALL_BLOCK > row["nbytes"]:
        return False  # a word would read past the caller's array: the byte path
    if backup != 0:
        data = row["addr"] + lo
        for k in range(block_count):
            at = k * pitch
            if not owned or (_load_word(owner + at) & mask) == 0:
                put_word(backup + lo + at, _load_word(data + at) & mask, mask)
    for k in range(block_count):
        put_word(owner + k * pitch, me, mask)
    return True


@jit(_nrt=True)  # builds carray views (one copy per map width, not inlined: compile time)
def _claim_blocks(ctx, prim, r, lo, owner, reader, pitch, block_len, me, top, read, atomic):
    # Loops over a view of each block indexed from 0 (an offset index keeps them from vectorizing);
    # the reader map only where some lane read the tensor since the last SyncAll.
    ext = owner.size
    lanes = ctx.block_num
    hazard = _others_own(owner, pitch, block_len, me, top, lanes, atomic)
    if read:
        for b0 in range(0, ext, pitch):
            q = reader[b0:b0 + block_len]
            for i in range(q.size):
                hazard |= (q[i] != 0) & (q[i] != me)
    if hazard:
        for b0 in range(0, ext, pitch):
            o, q = owner[b0:b0 + block_len], reader[b0:b0 + block_len]
            for i in range(o.size):
                if _meets(o[i], me, top, lanes, atomic):
                    report.gm_write_race(ctx, prim, OPERAND_DST, tensor=r, byte=lo + b0 + i,
                                         other_lane=_writer_of(o[i], top, lanes))
                    return False
                if q[i] != 0 and q[i] != me:
                    other = -1 if q[i] == top else np.int64(q[i]) - 1
                    report.gm_write_after_read(ctx, prim, OPERAND_DST, tensor=r, byte=lo + b0 + i, other_lane=other)
                    return False
    backup_addr = region(ctx, r)["backup"]
    if backup_addr != 0:
        owned = False  # any byte written before (by this lane, or before a SyncAll)
        for b0 in range(0, ext, pitch):
            o = owner[b0:b0 + block_len]
            for i in range(o.size):
                owned |= o[i] != 0
        data = carray(_voidptr(region(ctx, r)["addr"] + lo), ext, np.uint8)
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
            o[i] = _written_mark(o[i], me, top, lanes, atomic)
    return True


# ---- reads ----------------------------------------------------------------------------------------

@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def note_read(ctx, prim, r, lo, pitch, block_len, block_count):
    """Lane ``block_idx`` reads blocks of GM argument ``r`` (as :func:`claim`): no other lane may
    have written them since the last SyncAll (gm-cross-core-read), and in a fresh output some
    lane of the launch must have (gm-read-unwritten-output); the lane is recorded as their
    reader (a byte several lanes read is marked so)."""
    ext = min((block_count - 1) * pitch + block_len, region(ctx, r)["nbytes"] - lo)  # inside the tensor
    if ext <= 0:
        return True  # GM padding: nobody writes it
    row = region(ctx, r)
    written = row["written"] != 0
    fresh = row["fresh"] != 0
    row["read"] = 1
    _touch(ctx, r, TOUCHED_READER)
    if pitch != block_len and block_count > 1:  # strided blocks: byte by byte
        return _note_part(ctx, prim, r, lo, pitch, block_len, block_count, ext, written, fresh)
    head, w0, w1, tail = _granules(ctx, r, lo, ext)
    if head > lo and not _note_part(ctx, prim, r, lo, head - lo, head - lo, 1, head - lo, written, fresh):
        return False
    osum = _summaries(ctx, r, OWNER)
    rsum = _summaries(ctx, r, READER)
    me = ctx.block_idx + 1
    top = _top_mark(ctx, r)
    for g in range(w0, w1):
        o = osum[g] if written or fresh else 0
        if o == MIXED or rsum[g] == MIXED:
            n = _granule_end(ctx, r, g) - g * GRANULE
            if not _note_part(ctx, prim, r, g * GRANULE, n, n, 1, n, written, fresh):
                return False
            continue
        if fresh and o == 0:
            report.gm_read_unwritten_output(ctx, prim, OPERAND_SRC, tensor=r, byte=g * GRANULE)
            return False
        if written and _not_mine(o, me, top, ctx.block_num):
            report.gm_cross_core_read(ctx, prim, OPERAND_SRC, tensor=r, byte=g * GRANULE,
                                      other_lane=_writer_of(o, top, ctx.block_num))
            return False
        q = rsum[g]
        rsum[g] = me if q == 0 or q == me else top
    if w1 > w0 and tail < lo + ext:
        n = lo + ext - tail
        return _note_part(ctx, prim, r, tail, n, n, 1, n, written, fresh)
    return True


@jit(always_inline=True, _nrt=True)  # builds carray views (an array value needs the runtime)
def _note_part(ctx, prim, r, lo, pitch, block_len, block_count, ext, written, fresh):
    """:func:`note_read` byte by byte over the ``ext`` bytes from ``lo``, their granules made MIXED."""
    if (written or fresh) and (block_count > 1 or not _mixed(ctx, r, OWNER, lo, ext)):
        _materialize(ctx, r, OWNER, lo, ext)
    if block_count > 1 or not _mixed(ctx, r, READER, lo, ext):
        _materialize(ctx, r, READER, lo, ext)
    if pitch == block_len:  # gapless: one block
        pitch = block_len = ext
    width = region(ctx, r)["owner_width"]
    owner = _voidptr(region(ctx, r)["owner_map"] + lo * width)
    reader = _voidptr(region(ctx, r)["reader_map"] + lo * width)
    if width == 1:
        return _note_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint8), carray(reader, ext, np.uint8),
                            pitch, block_len, np.uint8(ctx.block_idx + 1), np.uint8(0xFF), written, fresh)
    return _note_blocks(ctx, prim, r, lo, carray(owner, ext, np.uint16), carray(reader, ext, np.uint16),
                        pitch, block_len, np.uint16(ctx.block_idx + 1), np.uint16(0xFFFF), written, fresh)


@jit(_nrt=True)  # builds carray views (one copy per map width, not inlined: compile time)
def _note_blocks(ctx, prim, r, lo, owner, reader, pitch, block_len, me, top, written, fresh):
    ext = owner.size
    # Some lane wrote this tensor since the last SyncAll (were these bytes among them?), or the
    # caller never initialized it (were they all written?): one pass over the owners for both.
    if written or fresh:
        hazard = False
        for b0 in range(0, ext, pitch):
            o = owner[b0:b0 + block_len]
            for i in range(o.size):
                hazard |= (written & _not_mine(o[i], me, top, ctx.block_num)) | (fresh & (o[i] == 0))
        if hazard:
            for b0 in range(0, ext, pitch):
                o = owner[b0:b0 + block_len]
                for i in range(o.size):
                    if fresh and o[i] == 0:
                        report.gm_read_unwritten_output(ctx, prim, OPERAND_SRC, tensor=r, byte=lo + b0 + i)
                        return False
                    if written and _not_mine(o[i], me, top, ctx.block_num):
                        report.gm_cross_core_read(ctx, prim, OPERAND_SRC, tensor=r, byte=lo + b0 + i,
                                                  other_lane=_writer_of(o[i], top, ctx.block_num))
                        return False
    for b0 in range(0, ext, pitch):
        q = reader[b0:b0 + block_len]
        for i in range(q.size):
            v = q[i]
            q[i] = me if (v == 0) | (v == me) else top
    return True


# ---- SyncAll --------------------------------------------------------------------------------------

@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def end_phase(ctx):
    """SyncAll: every lane has reached it, so what they wrote and read before it is ordered with
    what any lane does after it: owners become the "before a SyncAll" mark, readers are forgotten."""
    for r in range(ctx.n_regions):
        row = region(ctx, r)
        written = row["written"] != 0
        row["written"] = 0
        row["read"] = 0
        rsum = _summaries(ctx, r, READER)
        for g in range(rsum.size):
            rsum[g] = 0  # a MIXED granule's bytes stay as they are: a byte map is read only under MIXED
        if not written:
            continue
        osum = _summaries(ctx, r, OWNER)
        top = _top_mark(ctx, r)
        width = row["owner_width"]
        for g in range(osum.size):
            if osum[g] == MIXED:
                start, end = g * GRANULE, _granule_end(ctx, r, g)
                owner = _voidptr(row["owner_map"] + start * width)
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
