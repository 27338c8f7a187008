"""Masks and repeats: the vector unit's mask register (SetMaskNorm, SetMaskCount, SetVectorMask,
ResetMask) and the lanes a level-0 (repeat) call of a vector op computes.

A level-0 call runs ``repeat_times`` repeats of 256 bytes: 8 blocks of 32 bytes per operand,
``N = 256 / element size`` lanes.  Lane ``k`` of repeat ``r`` is element ``e = k % (32 / size)``
of block ``b = k // (32 / size)``, at element index ``(r * rep_stride + b * blk_stride) * (32 /
size) + e`` of each operand, strides in 32-byte blocks (the device's BinaryRepeatParams /
UnaryRepeatParams).  The mask register picks the lanes: in normal mode bit ``k`` of the 128-bit
mask (low word: lanes 0..63, high word: lanes 64..127; a 32-bit type reads the low word only);
in counter mode the low word is a count of elements over all repeats, which then number
``ceil(count / N)`` and ignore ``repeat_times``.  A lane not computed keeps ``dst``'s element.

The mask argument of a call: an integer ``n`` sets the first ``n`` lanes (the device's
continuous form, ``AscendCUtils::SetMask(len)``: above ``N`` means all), a pair ``(mask[0],
mask[1])`` the bits (low word first, as ``uint64_t mask[2]``).  With ``is_set_mask=False`` (the
device's ``isSetMask`` template parameter) the call leaves the register as it is and the mask
argument (``MASK_PLACEHOLDER``) is not read.  A count-form call leaves normal mode and all lanes
set, as the device's level-2 calls do (they run in counter mode and reset).  A lane starts in
normal mode with all lanes set.

Semantics: the asc-devkit pages of the masks and of high-dimensional slicing, and the c220
implementation of ``SetMask`` (cannmirror/asc-devkit at 0da921b: ``docs/zh/api/SIMD-API/基础API/
Memory矢量计算/SIMD计算说明/``, ``掩码操作/``, ``impl/basic_api/kernel_utils_base.h``).  The lane
rule of counter mode with strides is inferred: the pages show it, no text states it.

Plain Lane: an element an operand's tensor does not hold is skipped (no write outside a tensor);
checked mode reports it first.  Checked-mode rule beside them: :func:`check_repeat`.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, REPEAT_PARAMS
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, set_garbage, ub_aligned, ub_range_ok,
                                  ub_read_ok)
from ..._numba_compat.extending import TypingError, overload, python_twin
from ...host.primitives import MASK_PLACEHOLDER, BinaryRepeatParams, UnaryRepeatParams
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import (STATE_CMPMASK_HIGH, STATE_CMPMASK_LOW, STATE_MASK_COUNTER, STATE_MASK_HIGH, STATE_MASK_LOW,
                    _load_i64, _store_i64)

__all__ = ["set_mask_norm", "set_mask_count", "set_vector_mask", "reset_mask", "MASK_PLACEHOLDER", "BinaryRepeatParams",
           "UnaryRepeatParams"]

REPEAT_BYTES, BLOCK_BYTES, BLOCKS = 256, 32, 8
FULL_MASK = -1  # a word of the register as the int64 of its bits: every bit set
MAX_REPEAT = 255  # repeatTimes is a uint8_t
MAX_COUNTER = 0xFFFF_FFFF  # a counter-mode count the device takes (its debug check's range)
NO_OPERAND = -1  # the element size passed for an absent operand
(_REPEAT_TIMES, _DST_BLK, _SRC0_BLK, _SRC1_BLK, _DST_REP, _SRC0_REP, _SRC1_REP, _MASK,
 _COUNTER) = range(REPEAT_PARAMS.index("counter-mode count") + 1)


# ---- the register: three int64 slots of the lane's state row (a word's bits) -------------------------

@jit(always_inline=True)
def word(value):
    """A uint64 mask word as the int64 of its bits."""
    return np.int64(value)


@python_twin(word)
def _word_py(value):
    return np.int64(((int(value) + 2**63) % 2**64) - 2**63)


@jit(always_inline=True)
def _write_mask(ctx, high, low):
    _store_i64(ctx.state_addr, STATE_MASK_HIGH, high)
    _store_i64(ctx.state_addr, STATE_MASK_LOW, low)


@jit
def set_mask_norm(ctx):
    """SetMaskNorm: the mask register is a bit per lane (normal mode, the default)."""
    _store_i64(ctx.state_addr, STATE_MASK_COUNTER, 0)


@jit
def set_mask_count(ctx):
    """SetMaskCount: the mask register's low word is a count of elements (counter mode)."""
    _store_i64(ctx.state_addr, STATE_MASK_COUNTER, 1)


@jit
def reset_mask(ctx):
    """ResetMask: every bit of the mask register set (the mode stays)."""
    _write_mask(ctx, FULL_MASK, FULL_MASK)


def set_vector_mask(ctx, mask_high, mask_low=None):
    """SetVectorMask: ``set_vector_mask(ctx, mask_high, mask_low)`` writes the two words, high
    first as the device's ``SetVectorMask<T, mode>(maskHigh, maskLow)``; ``set_vector_mask(ctx,
    n)`` is ``SetVectorMask<T, MaskMode::NORMAL>(len)``, the first ``n`` lanes.  The device's
    ``SetVectorMask<T, MaskMode::COUNTER>(len)`` is ``set_vector_mask(ctx, 0, len)``."""
    raise NotImplementedError  # compiled only; interpret mode runs the overload's body


def _set_vector_mask(ctx, mask_high, mask_low=None):
    if mask_low is None:
        high, low = lanes_of_length(mask_high)
        _write_mask(ctx, high, low)
    else:
        _write_mask(ctx, word(mask_high), word(mask_low))


@overload(set_vector_mask, jit_options=OVERLOAD_OPTIONS)
def _ov_set_vector_mask(ctx, mask_high, mask_low=None):
    return _set_vector_mask


@jit(always_inline=True)
def lanes_of_length(n):
    """The device's continuous mask of ``n`` lanes as (high, low) words (``SetMask(int32 len)``):
    64 and up to 128 fill the low word first; 128 and more, every lane; 0 or less, none."""
    n = np.int64(n)
    if n <= 0:
        return np.int64(0), np.int64(0)
    if n >= 128:
        return np.int64(FULL_MASK), np.int64(FULL_MASK)
    if n >= 64:  # ~(-1 << k): the low k bits, without an overflow at k = 63
        return ~(np.int64(-1) << (n - 64)), np.int64(FULL_MASK)
    return np.int64(0), ~(np.int64(-1) << n)


def mask_words(mask):
    """A call's mask argument as (high, low) words: an integer is a continuous mask of that many
    lanes, a pair or an array ``(mask[0], mask[1])`` the bits, low word first."""
    raise NotImplementedError  # compiled only


@python_twin(mask_words)
def _mask_words_py(mask):
    if isinstance(mask, (int, np.integer)):
        # The device's SetMask takes an int32 length: the low 32 bits, as compiled code converts.
        return lanes_of_length.py_func(((int(mask) + 2**31) % 2**32) - 2**31)  # a twin runs as Python
    return _word_py(mask[1]) if len(mask) > 1 else np.int64(0), _word_py(mask[0])


@overload(mask_words, jit_options=OVERLOAD_OPTIONS)
def _ov_mask_words(mask):
    if isinstance(mask, types.Integer):
        return lambda mask: lanes_of_length(np.int32(mask))
    if isinstance(mask, types.Array):  # one word (a 32-bit type's mask[1] is unused) or two
        return lambda mask: (word(mask[1]) if mask.size > 1 else np.int64(0), word(mask[0]) if mask.size else
                             np.int64(0))
    if isinstance(mask, types.BaseTuple) and len(mask) in (1, 2):
        if len(mask) == 1:
            return lambda mask: (np.int64(0), word(mask[0]))
        return lambda mask: (word(mask[1]), word(mask[0]))
    raise TypingError(f"a vector op's mask is an integer (a count of lanes) or the pair (mask[0], mask[1]); "
                      f"got {mask}")


def _params_check(fields: int, name: str):
    """A stub refusing, when the kernel compiles, repeat parameters that are not a tuple of at least
    ``fields`` values (``name``, or a plain tuple in its order): an array would be read past its end."""
    def check(params):
        raise NotImplementedError  # compiled only

    def refuse(got):
        return f"repeat parameters are a {name} (or a tuple of its {fields} strides); got {got}"

    @python_twin(check)
    def _check_py(params):
        if not isinstance(params, tuple) or len(params) < fields:
            raise TypeError(refuse(repr(params)))

    @overload(check, jit_options=OVERLOAD_OPTIONS)
    def _ov_check(params):
        if not isinstance(params, types.BaseTuple) or len(params) < fields:
            raise TypingError(refuse(params))
        return lambda params: None

    return check


binary_params = _params_check(6, "BinaryRepeatParams")
unary_params = _params_check(4, "UnaryRepeatParams")


def mask_length(mask):
    """A continuous mask's lane count as the device takes it (an int32: checked mode's range rule);
    0 for mask words."""
    raise NotImplementedError  # compiled only


@python_twin(mask_length)
def _mask_length_py(mask):
    return np.int64(((int(mask) + 2**31) % 2**32) - 2**31) if isinstance(mask, (int, np.integer)) else np.int64(0)


@overload(mask_length, jit_options=OVERLOAD_OPTIONS)
def _ov_mask_length(mask):
    if isinstance(mask, types.Integer):
        return lambda mask: np.int64(np.int32(mask))
    return lambda mask: np.int64(0)


@jit(always_inline=True)
def call_mask(ctx, mask, is_set_mask):
    """The register a level-0 call computes under: written from ``mask`` first when
    ``is_set_mask`` (the device's default); returns (counter mode, high, low)."""
    if is_set_mask:
        high, low = mask_words(mask)
        _write_mask(ctx, high, low)
    return (_load_i64(ctx.state_addr, STATE_MASK_COUNTER) != 0, _load_i64(ctx.state_addr, STATE_MASK_HIGH),
            _load_i64(ctx.state_addr, STATE_MASK_LOW))


@jit(always_inline=True)
def read_cmpmask(ctx):
    """The compare-mask register (CMPMASK) as its (low, high) words."""
    return _load_i64(ctx.state_addr, STATE_CMPMASK_LOW), _load_i64(ctx.state_addr, STATE_CMPMASK_HIGH)


@jit(always_inline=True)
def write_cmpmask(ctx, low, high):
    _store_i64(ctx.state_addr, STATE_CMPMASK_LOW, low)
    _store_i64(ctx.state_addr, STATE_CMPMASK_HIGH, high)


@jit(always_inline=True)
def count_form_done(ctx):
    """After a count-form call: normal mode, every lane set (the device's level-2 calls reset so)."""
    _store_i64(ctx.state_addr, STATE_MASK_COUNTER, 0)
    _write_mask(ctx, FULL_MASK, FULL_MASK)


# ---- the lanes of a level-0 call ---------------------------------------------------------------------

@jit(always_inline=True)
def counter_total(low):
    """Counter mode's count: the low word, unsigned, as far as the device's 32-bit range reaches."""
    return np.int64(MAX_COUNTER) if low < 0 or low > MAX_COUNTER else low


@jit(always_inline=True)
def repeats_of(counter, low, repeat_times, lanes):
    """How many repeats a call runs: ``repeat_times`` (a uint8) in normal mode; in counter mode
    ``ceil(count / lanes)``."""
    if counter:
        return (counter_total(low) + lanes - 1) // lanes
    return np.int64(repeat_times) & MAX_REPEAT


@jit(always_inline=True)
def lane_on(counter, high, low, lanes, r, k):
    """Whether lane ``k`` of repeat ``r`` computes."""
    if counter:
        return r * lanes + k < counter_total(low)
    if k < 64:
        return (low >> k) & 1 != 0
    return lanes > 64 and (high >> (k - 64)) & 1 != 0


@jit(always_inline=True)
def _ones(w):
    """The length m of a word that is m ones from bit 0 (0 for 0), else -1."""
    if w == -1:
        return np.int64(64)
    if w & (w + 1) != 0:
        return np.int64(-1)
    m = np.int64(0)
    while w != 0:
        w >>= 1
        m += 1
    return m


@jit(always_inline=True)
def run_lanes(counter, high, low, lanes, r):
    """The lanes of repeat ``r`` when they are its first m (counter mode; normal mode with a
    continuous mask), as m; else -1."""
    if counter:
        return min(max(counter_total(low) - r * lanes, 0), lanes)
    m = _ones(low if lanes >= 64 else low & ~(np.int64(-1) << lanes))
    if lanes <= 64 or 0 <= m < 64:
        return m if lanes <= 64 or high == 0 else np.int64(-1)
    if m < 0:
        return m
    h = _ones(high)
    return 64 + h if h >= 0 else np.int64(-1)


@jit(always_inline=True)
def block_lanes(counter, high, low, lanes, r, first, per_block):
    """The lanes ``first .. first + per_block - 1`` of repeat ``r`` (one block) as bits, lane
    ``first`` at bit 0 (a block never straddles the mask's two words)."""
    if counter:
        on = min(max(counter_total(low) - (r * lanes + first), 0), per_block)
        return ~(np.int64(-1) << on)
    if first >= 64 and lanes <= 64:
        return np.int64(0)
    word = low if first < 64 else high
    return (word >> (first % 64)) & ~(np.int64(-1) << per_block)


@jit(always_inline=True)
def all_lanes(counter, high, low, lanes):
    """Normal mode with every lane of a repeat set."""
    if counter:
        return False
    if lanes > 64:
        return high == FULL_MASK and low == FULL_MASK
    if lanes == 64:
        return low == FULL_MASK
    want = (np.int64(1) << lanes) - 1
    return low & want == want


@jit(always_inline=True)
def contiguous_count(counter, high, low, nrep, lanes, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep):
    """The elements of a call that computes a contiguous run from each operand's start (every lane
    of each repeat, or counter mode, with blocks and repeats back to back), else -1."""
    if not (d_blk == 1 and a_blk == 1 and b_blk == 1 and d_rep == BLOCKS and a_rep == BLOCKS and b_rep == BLOCKS):
        return np.int64(-1)
    if counter:
        return counter_total(low)
    return nrep * lanes if all_lanes(counter, high, low, lanes) else np.int64(-1)


@jit(always_inline=True)
def stride_u8(value):
    return np.int64(value) & 0xFF  # a uint8_t field, as the C++ conversion leaves it


@jit(always_inline=True)
def stride_u16(value):
    return np.int64(value) & 0xFFFF


# ---- checked-mode rule: True when the call may run ---------------------------------------------------

@jit
def _param_ok(ctx, prim, which, value, low, high):
    if low <= value <= high:
        return True
    report.repeat_params_out_of_range(ctx, prim, OPERAND_DST, param=which, value=value, low=low, high=high)
    return False


@jit(always_inline=True)
def lane_index(r, k, blk, rep, per_block):
    """Element index of lane ``k`` of repeat ``r`` in an operand of ``per_block`` elements a block."""
    return (r * rep + (k // per_block) * blk) * per_block + k % per_block


def _alias(dst, a):
    """``dst`` where it has ``a``'s type (the in-place loop reads it through the pointer it writes),
    else ``a`` (a conversion is never in place: the loop that would read ``dst`` as ``a`` must not
    be typed with it)."""
    raise NotImplementedError  # compiled only


@overload(_alias, jit_options=OVERLOAD_OPTIONS)
def _ov_alias(dst, a):
    if dst == a:
        return lambda dst, a: dst
    return lambda dst, a: a


def lanes_fit(dst, a, b):
    """A compile-time check of a level-0 call's operand types: a repeat is 256 bytes of the widest,
    so 1-byte operands alone would make 256 lanes, more than the mask register's 128 bits (the
    device has no such level-0 instruction)."""
    raise NotImplementedError  # compiled only


@overload(lanes_fit, jit_options=OVERLOAD_OPTIONS)
def _ov_lanes_fit(dst, a, b):
    if max(t.dtype.bitwidth for t in (dst, a, b)) == 8:
        raise TypingError(f"a level-0 vector call on 1-byte tiles only ({dst.dtype}): 256 lanes a repeat, more than "
                          f"the mask's 128 bits; the device takes 2- and 4-byte tiles here")
    return lambda dst, a, b: None


@jit
def _run_ok(ctx, prim, operand, addr, nbytes, size, start, stop, write):
    """Elements [start, stop) of one operand lie in its tensor; a source's bytes were written."""
    if not ub_range_ok(ctx, prim, operand, addr, nbytes, start * size, (stop - start) * size):
        return False
    return write or ub_read_ok(ctx, prim, operand, addr, start * size, (stop - start) * size)


@jit
def _runs_ok(ctx, prim, operand, addr, nbytes, size, blk, rep, nrep, counter, high, low, lanes, write):
    """Every run of consecutive elements the call's lanes touch in one operand lies in its tensor,
    and a source's bytes were written; returns the byte extent touched [lo, hi) relative to the
    UB, or lo = -1 (reported)."""
    per_block = BLOCK_BYTES // size
    base = np.int64(addr) - np.int64(ctx.ub_addr)
    lo, hi = np.int64(1) << 62, np.int64(-1)
    start, stop, i = np.int64(0), np.int64(0), np.int64(0)  # the run being grown: elements [start, stop)
    for r in range(nrep + 1):
        for k in range(lanes):
            last = r == nrep  # one pass past the end flushes the last run
            if not last:
                if not lane_on(counter, high, low, lanes, r, k):
                    continue
                i = lane_index(r, k, blk, rep, per_block)
                if i == stop and stop > start:
                    stop += 1
                    if stop * size <= nbytes:  # a run leaving its tensor is reported now (a huge counter)
                        continue
            if stop > start:
                if not _run_ok(ctx, prim, operand, addr, nbytes, size, start, stop, write):
                    return np.int64(-1), hi
                lo, hi = min(lo, base + start * size), max(hi, base + stop * size)
            if last:
                return lo, hi
            start, stop = i, i + 1
    return lo, hi


@jit
def _overlap_ok(ctx, prim, operand, dst_addr, dst_size, dst_blk, dst_rep, dst_lo, dst_hi, addr, size, blk, rep, lo,
                hi, exempt, nrep, counter, high, low, lanes):
    """The device's overlap rule for a source and the destination (asc-devkit at 0da921b,
    docs/zh/api/SIMD-API/C-API/通用说明和约束.md, 通用地址重叠约束): within a repeat a source lane
    lies wholly on its own destination lane or off every destination lane of that repeat; no repeat
    reads bytes an earlier repeat wrote (``exempt``: the device allows that of src1 at a repeat
    stride 0).  Each source lane inside the destination's extent is matched against the
    destination lanes of its 32-byte block.  A packed comparison result shares no lane with a
    source, so any overlap with one is reported."""
    if lo < 0 or hi <= dst_lo or dst_hi <= lo:
        return True
    if dst_size == 0:
        report.vector_partial_overlap(ctx, prim, operand, src_start=lo, src_end=hi, repeat=0, written_in=0)
        return False
    ub = np.int64(ctx.ub_addr)
    d_block0, s_base = (np.int64(dst_addr) - ub) // BLOCK_BYTES, np.int64(addr) - ub
    d_per_block, s_per_block = BLOCK_BYTES // dst_size, BLOCK_BYTES // size
    for r in range(nrep):
        for k in range(lanes):
            if not lane_on(counter, high, low, lanes, r, k):
                continue
            s = s_base + lane_index(r, k, blk, rep, s_per_block) * size
            if s + size <= dst_lo or dst_hi <= s:
                continue
            at = s % BLOCK_BYTES
            for j in range(lanes // d_per_block):  # destination block j of a repeat: in s's block?
                t = s // BLOCK_BYTES - d_block0 - j * dst_blk
                if dst_rep == 0 and t != 0 or dst_rep != 0 and (t < 0 or t % dst_rep != 0 or t // dst_rep > r):
                    continue
                for r2 in range(0 if dst_rep == 0 else t // dst_rep, r + 1 if dst_rep == 0 else t // dst_rep + 1):
                    for e in range(at // dst_size, min((at + size - 1) // dst_size + 1, d_per_block)):
                        k2 = j * d_per_block + e
                        if not lane_on(counter, high, low, lanes, r2, k2):
                            continue
                        own = k2 == k and size == dst_size and at == e * dst_size
                        if (r2 < r and not exempt) or (r2 == r and not own):
                            report.vector_partial_overlap(ctx, prim, operand, src_start=s, src_end=s + size,
                                                          repeat=r, written_in=r2)
                            return False
    return True


@jit
def _mark(ctx, dst_addr, dst_size, dst_blk, dst_rep, a_addr, a_size, a_blk, a_rep, b_addr, b_size, b_blk, b_rep,
          nrep, counter, high, low, lanes):
    """The computed lanes of ``dst`` written, garbage where a source lane's bytes are."""
    ub = np.int64(ctx.ub_addr)
    for r in range(nrep):
        for k in range(lanes):
            if not lane_on(counter, high, low, lanes, r, k):
                continue
            g = False
            if a_size != NO_OPERAND:
                i = lane_index(r, k, a_blk, a_rep, BLOCK_BYTES // a_size)
                g = first_garbage(ctx, np.int64(a_addr) - ub + i * a_size, a_size) >= 0
            if b_size != NO_OPERAND and not g:
                i = lane_index(r, k, b_blk, b_rep, BLOCK_BYTES // b_size)
                g = first_garbage(ctx, np.int64(b_addr) - ub + i * b_size, b_size) >= 0
            d = np.int64(dst_addr) - ub + lane_index(r, k, dst_blk, dst_rep, BLOCK_BYTES // dst_size) * dst_size
            set_garbage(ctx, d, dst_size, 1 if g else 0)
            mark_epoch(ctx, d, dst_size)


@jit
def _mark_bits(ctx, d_lo, a_addr, a_size, a_blk, a_rep, b_addr, b_size, b_blk, b_rep, nrep, lanes):
    """A comparison's packed result bytes written, a repeat's garbage where a source lane of it is."""
    ub = np.int64(ctx.ub_addr)
    per_repeat = lanes // 8
    for r in range(nrep):
        g = False
        for k in range(lanes):
            if a_size != NO_OPERAND and not g:
                i = lane_index(r, k, a_blk, a_rep, BLOCK_BYTES // a_size)
                g = first_garbage(ctx, np.int64(a_addr) - ub + i * a_size, a_size) >= 0
            if b_size != NO_OPERAND and not g:
                i = lane_index(r, k, b_blk, b_rep, BLOCK_BYTES // b_size)
                g = first_garbage(ctx, np.int64(b_addr) - ub + i * b_size, b_size) >= 0
        set_garbage(ctx, d_lo + r * per_repeat, per_repeat, 1 if g else 0)
        mark_epoch(ctx, d_lo + r * per_repeat, per_repeat)


@checked_rule
@jit
def check_repeat(ctx, prim, repeat_times, counter, high, low, mask_lanes, blk_limit, dst_addr, dst_nbytes, dst_size,
                 dst_blk, dst_rep, a_addr, a_nbytes, a_size, a_blk, a_rep, b_addr, b_nbytes, b_size, b_blk, b_rep,
                 b_exempt):
    """A level-0 call: ``repeat_times`` repeats (or counter mode's count) under the mask words;
    ``mask_lanes``: the continuous mask's lane count when the call set one (else 0); block strides
    up to ``blk_limit`` (a uint8 or uint16 field), repeat strides up to 255; operands as
    (address, bytes, element size, block stride, repeat stride), a source absent with size
    NO_OPERAND; ``b_exempt``: the device lets ``dst`` overlap ``b`` when a repeat stride is 0.
    A ``dst`` of element size 0 is a comparison's result: one bit a lane, the repeats' bits packed
    one after another from its start (its strides do not place them)."""
    enter(ctx, prim)
    if not (_param_ok(ctx, prim, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
            and _param_ok(ctx, prim, _MASK, mask_lanes, 0, 1 << 62)
            and _param_ok(ctx, prim, _DST_BLK, dst_blk, 1, blk_limit)
            and _param_ok(ctx, prim, _DST_REP, dst_rep, 0, 255)
            and (a_size == NO_OPERAND or (_param_ok(ctx, prim, _SRC0_BLK, a_blk, 0, blk_limit)
                                          and _param_ok(ctx, prim, _SRC0_REP, a_rep, 0, 255)))
            and (b_size == NO_OPERAND or (_param_ok(ctx, prim, _SRC1_BLK, b_blk, 0, blk_limit)
                                          and _param_ok(ctx, prim, _SRC1_REP, b_rep, 0, 255)))
            and (not counter or _param_ok(ctx, prim, _COUNTER, low, 0, MAX_COUNTER))):
        return False
    lanes = REPEAT_BYTES // max(dst_size, a_size, b_size)  # a repeat is 256 bytes of the widest operand
    nrep = repeats_of(counter, low, repeat_times, lanes)
    if nrep == 0:
        return True
    if not (is_local_operand(ctx, prim, OPERAND_DST, dst_addr) and ub_aligned(ctx, prim, OPERAND_DST, dst_addr, 0)):
        return False
    if a_size != NO_OPERAND and not (is_local_operand(ctx, prim, OPERAND_SRC, a_addr)
                                     and ub_aligned(ctx, prim, OPERAND_SRC, a_addr, 0)):
        return False
    if b_size != NO_OPERAND and not (is_local_operand(ctx, prim, OPERAND_SRC1, b_addr)
                                     and ub_aligned(ctx, prim, OPERAND_SRC1, b_addr, 0)):
        return False
    a_lo, a_hi = np.int64(-1), np.int64(-1)
    b_lo, b_hi = np.int64(-1), np.int64(-1)
    if a_size != NO_OPERAND:
        a_lo, a_hi = _runs_ok(ctx, prim, OPERAND_SRC, a_addr, a_nbytes, a_size, a_blk, a_rep, nrep, counter, high,
                              low, lanes, False)
        if a_lo < 0:
            return False
    if b_size != NO_OPERAND:
        b_lo, b_hi = _runs_ok(ctx, prim, OPERAND_SRC1, b_addr, b_nbytes, b_size, b_blk, b_rep, nrep, counter, high,
                              low, lanes, False)
        if b_lo < 0:
            return False
    packed = dst_size == 0
    if packed:
        d_lo = np.int64(dst_addr) - np.int64(ctx.ub_addr)
        d_hi = d_lo + nrep * lanes // 8
        if not _run_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, 1, 0, nrep * lanes // 8, True):
            return False
    else:
        d_lo, d_hi = _runs_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, dst_size, dst_blk, dst_rep, nrep, counter,
                              high, low, lanes, True)
        if d_lo < 0:
            return False
    d_size = np.int64(0) if packed else np.int64(dst_size)
    if not (_overlap_ok(ctx, prim, OPERAND_SRC, dst_addr, d_size, dst_blk, dst_rep, d_lo, d_hi, a_addr, a_size, a_blk,
                        a_rep, a_lo, a_hi, False, nrep, counter, high, low, lanes)
            and _overlap_ok(ctx, prim, OPERAND_SRC1, dst_addr, d_size, dst_blk, dst_rep, d_lo, d_hi, b_addr, b_size,
                            b_blk, b_rep, b_lo, b_hi, b_exempt and (b_rep == 0 or dst_rep == 0), nrep, counter, high,
                            low, lanes)):
        return False
    if packed:
        _mark_bits(ctx, d_lo, a_addr, a_size, a_blk, a_rep, b_addr, b_size, b_blk, b_rep, nrep, lanes)
    else:
        _mark(ctx, dst_addr, dst_size, dst_blk, dst_rep, a_addr, a_size, a_blk, a_rep, b_addr, b_size, b_blk, b_rep,
              nrep, counter, high, low, lanes)
    return True
