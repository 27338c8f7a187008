"""Reductions (family ``reduce`` of :mod:`ascend_numba.host.primitives`): per 256-byte repeat
(WholeReduceSum / Max / Min, RepeatReduceSum), per 32-byte block (BlockReduceSum / Max / Min), per
pair of lanes (PairReduceSum), and over a whole tensor (ReduceSum / Max / Min, count and level-0).

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/归约计算/``
(ReduceRepeat, ReduceDataBlock, ReducePairElem, ReduceSum, ReduceMax, ReduceMin: the CANN 9.1
names of these instructions) and ``impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h``.
fp16 (uint16) and fp32 tiles, one type for ``dst`` and ``src``.

* The lanes of a repeat are the level-0 form's (:mod:`.masks`: the mask, ``src_blk_stride`` and
  ``src_rep_stride`` in 32-byte blocks, counter mode).  A group of lanes (a repeat, a block, a
  pair) with no lane set writes nothing (the A2/A3 pages).
* Sums: a binary tree over the group's lanes in order (lane 2i with 2i+1, then the pairs' sums...,
  the pages' "二叉树"), each addition rounded to the tile's type; a lane the mask leaves out is
  absent (its partner passes up unchanged).  An arithmetic result: a NaN is the default NaN.
* Max and Min: the largest (smallest) value and its index, the smallest index among equal values
  (the pages); the twin's choices where they are silent: -0.0 and +0.0 are equal, a NaN counts as
  the extreme (the first NaN wins, its bits kept, as Max / Min pass a NaN).
* Where results go: WholeReduce* writes one result a repeat at ``dst_rep_stride`` units, a unit as
  the pages' table: the element (a sum, ORDER_ONLY_VALUE), two elements (value and index, either
  order) or 4 bytes (ORDER_ONLY_INDEX, a uint32 index); the index is the lane in its repeat,
  stored as the tile's bits (uint16 in an fp16 tile, uint32 in an fp32 one).  BlockReduce* writes
  8 results a repeat (``dst_rep_stride`` in units of 8 elements), PairReduceSum 128 / size / 2
  (units of 128 bytes).
* ReduceSum's count form sums each repeat's tree and accumulates the repeats' sums in order (A2/A3's
  counter-mode accumulation, 方式一); its level-0 form sums the repeats' sums by further trees of a
  repeat's lanes (方式二, the c220 steps).  ReduceMax / ReduceMin write the value, then with
  ``cal_index`` the index (the element's offset in ``src``, as c220 rebuilds it) as the tile's bits.  The
  scratch tensor must hold what the pages size it at (checked mode), and its bytes hold no value
  after the call (checked mode marks them garbage).
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_TMP, PRIMITIVE
from ...checked.ub_shadow import first_garbage, is_local_operand, mark_epoch, set_garbage, ub_aligned, ub_range_ok
from ...host.primitives import PRIMITIVES, ReduceOrder, ReduceType
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f32_as_u32, f32_round_f16, f32_to_f16
from ..lane import STATE_MAX_MIN_CNT, _address, _store_i64
from .context import address, trace_event, tracing
from .element_bits import bits_of, put_bits
from .elements import canonical_nan
from .masks import (_COUNTER, _DST_REP, _REPEAT_TIMES, _SRC0_BLK, _SRC0_REP, BLOCK_BYTES, MAX_COUNTER, MAX_REPEAT,
                    REPEAT_BYTES, _param_ok, _runs_ok, all_lanes, call_mask, lane_index, lane_on, repeats_of, run_lanes,
                    stride_u16)
from .preload import advance_preload
from .vector import _vload, declared

__all__ = ["whole_reduce_sum", "whole_reduce_max", "whole_reduce_min", "repeat_reduce_sum", "block_reduce_sum",
           "block_reduce_max", "block_reduce_min", "pair_reduce_sum", "ReduceOrder", "ReduceType", "reduce_repeat",
           "reduce_data_block", "reduce_pair_elem"]

SUM, MAX, MIN = 0, 1, 2
VALUE_INDEX, INDEX_VALUE, ONLY_VALUE, ONLY_INDEX = (int(o) for o in ReduceOrder)
WHOLE, BLOCK, PAIR = 0, 1, 2  # the group a result reduces: a repeat's lanes, a block's, two lanes


def _reduce_tile(dst, src):
    """A compile-time check: fp16 (uint16) or fp32 tiles, one type."""
    raise NotImplementedError  # compiled only


@overload(_reduce_tile, jit_options=OVERLOAD_OPTIONS)
def _ov_reduce_tile(dst, src):
    if dst.dtype != src.dtype or dst.dtype not in (types.uint16, types.float32):
        raise TypingError(f"the reductions take fp16 (uint16) or fp32 tiles, dst of src's type; got {dst.dtype} from "
                          f"{src.dtype}")
    return lambda dst, src: None


def _rounded(src, x):
    """``x`` as the tile's type holds it (an fp16 tile: the nearest fp16, as fp32)."""
    raise NotImplementedError  # compiled only


@overload(_rounded, jit_options=OVERLOAD_OPTIONS)
def _ov_rounded(src, x):
    if src.dtype == types.uint16:
        return lambda src, x: f32_round_f16(x)
    return lambda src, x: x


def _value_bits(src, x):
    """A sum's bits in the tile's type (an fp16 tile rounds it)."""
    raise NotImplementedError  # compiled only


@overload(_value_bits, jit_options=OVERLOAD_OPTIONS)
def _ov_value_bits(src, x):
    if src.dtype == types.uint16:
        return lambda src, x: np.uint32(f32_to_f16(x))
    return lambda src, x: np.uint32(f32_as_u32(x))


@jit(always_inline=True)
def _put(dst, byte, bits, nbytes):
    """Store ``nbytes`` (the element size, or 4 in an fp16 tile: two elements, low first) of
    ``bits`` at ``byte`` of ``dst`` (a multiple of its element size), if inside."""
    e = byte // dst.itemsize
    for j in range(nbytes // dst.itemsize):
        if 0 <= e + j < dst.size:
            put_bits(dst, e + j, bits >> (16 * j) if dst.itemsize == 2 else bits)


@jit(always_inline=True)
def _beats(kind, x, y):
    """Whether ``y`` (the later lane) replaces ``x`` as the max / min: a NaN wins, the first one first."""
    if x != x:
        return False
    if y != y:
        return True
    return y > x if kind == MAX else y < x


# ---- every lane of a group set, its elements back to back: trees of scalars --------------------------

@jit(always_inline=True)
def _add(src, a, b):
    return _rounded(src, a + b)


@jit(always_inline=True)
def _sum8v(src, v0, v1, v2, v3, v4, v5, v6, v7):
    return _add(src, _add(src, _add(src, v0, v1), _add(src, v2, v3)), _add(src, _add(src, v4, v5), _add(src, v6, v7)))


@jit(always_inline=True)
def _sum8(src, i):
    return _sum8v(src, _vload(src, i), _vload(src, i + 1), _vload(src, i + 2), _vload(src, i + 3), _vload(src, i + 4),
                  _vload(src, i + 5), _vload(src, i + 6), _vload(src, i + 7))


@jit(always_inline=True)
def _sum64(src, i):
    return _sum8v(src, _sum8(src, i), _sum8(src, i + 8), _sum8(src, i + 16), _sum8(src, i + 24), _sum8(src, i + 32),
                  _sum8(src, i + 40), _sum8(src, i + 48), _sum8(src, i + 56))


@jit(always_inline=True)
def _sum_run(src, i, n):
    """The binary tree of ``src[i:i + n]`` (n: 2, 8, 16, 64 or 128)."""
    if n == 2:
        return _add(src, _vload(src, i), _vload(src, i + 1))
    if n == 8:
        return _sum8(src, i)
    if n == 16:
        return _add(src, _sum8(src, i), _sum8(src, i + 8))
    if n == 64:
        return _sum64(src, i)
    return _add(src, _sum64(src, i), _sum64(src, i + 64))


@jit(always_inline=True)
def _pick(kind, x, ix, y, iy):
    return (y, iy) if _beats(kind, x, y) else (x, ix)


@jit(always_inline=True)
def _pick2(kind, a, b):
    return _pick(kind, a[0], a[1], b[0], b[1])


@jit(always_inline=True)
def _best8v(kind, a0, a1, a2, a3, a4, a5, a6, a7):
    return _pick2(kind, _pick2(kind, _pick2(kind, a0, a1), _pick2(kind, a2, a3)),
                  _pick2(kind, _pick2(kind, a4, a5), _pick2(kind, a6, a7)))


@jit(always_inline=True)
def _at(src, i):
    return _vload(src, i), np.int64(i)


@jit(always_inline=True)
def _best8(src, kind, i):
    return _best8v(kind, _at(src, i), _at(src, i + 1), _at(src, i + 2), _at(src, i + 3), _at(src, i + 4),
                   _at(src, i + 5), _at(src, i + 6), _at(src, i + 7))


@jit(always_inline=True)
def _best64(src, kind, i):
    return _best8v(kind, _best8(src, kind, i), _best8(src, kind, i + 8), _best8(src, kind, i + 16),
                   _best8(src, kind, i + 24), _best8(src, kind, i + 32), _best8(src, kind, i + 40),
                   _best8(src, kind, i + 48), _best8(src, kind, i + 56))


@jit(always_inline=True)
def _best_run(src, kind, i, n):
    """The max / min of ``src[i:i + n]`` by the tree, and its element index."""
    if n == 2:
        return _pick2(kind, _at(src, i), _at(src, i + 1))
    if n == 8:
        return _best8(src, kind, i)
    if n == 16:
        return _pick2(kind, _best8(src, kind, i), _best8(src, kind, i + 8))
    if n == 64:
        return _best64(src, kind, i)
    return _pick2(kind, _best64(src, kind, i), _best64(src, kind, i + 64))


# ---- a group with lanes left out: the tree over lane slots ------------------------------------------------

@jit(always_inline=True)
def _combine(src, kind, val, idx, on, i, a, b):
    """Entry ``i`` of a tree level from entries ``a`` and ``b`` (a lane left out is absent)."""
    if on[a] and on[b]:
        if kind == SUM:
            val[i], idx[i] = _rounded(src, val[a] + val[b]), idx[a]
        elif _beats(kind, val[a], val[b]):
            val[i], idx[i] = val[b], idx[b]
        else:
            val[i], idx[i] = val[a], idx[a]
        on[i] = True
    elif on[b]:
        val[i], idx[i], on[i] = val[b], idx[b], True
    else:
        val[i], idx[i], on[i] = val[a], idx[a], on[a]


@jit(_nrt=True)
def _masked_group(src, kind, r, first, n, counter, high, low, s_blk, s_rep):
    """The tree of lanes ``first .. first + n - 1`` of repeat ``r`` under the mask: (some lane set,
    value, the lane of a max / min)."""
    lanes, per_block = REPEAT_BYTES // src.itemsize, BLOCK_BYTES // src.itemsize
    val, idx, on = np.empty(n, np.float32), np.empty(n, np.int64), np.empty(n, np.bool_)
    for k in range(n):
        i = lane_index(r, first + k, s_blk, s_rep, per_block)
        on[k] = lane_on(counter, high, low, lanes, r, first + k) and i < src.size
        val[k] = _vload(src, i) if on[k] else np.float32(0)
        idx[k] = first + k
    width = n
    while width > 1:
        for i in range(width // 2):
            _combine(src, kind, val, idx, on, i, 2 * i, 2 * i + 1)
        width //= 2
    return on[0], val[0], idx[0]


@jit(always_inline=True)
def _group(src, kind, r, first, n, counter, high, low, s_blk, s_rep, full):
    """A group's (some lane set, value, the lane of a max / min); ``full``: the repeat's lanes all
    set and back to back in ``src``."""
    if full:
        i = lane_index(r, first, s_blk, s_rep, BLOCK_BYTES // src.itemsize)
        if kind == SUM:
            return True, _sum_run(src, i, n), np.int64(first)
        value, at = _best_run(src, kind, i, n)
        return True, value, first + (at - i)
    return _masked_group(src, kind, r, first, n, counter, high, low, s_blk, s_rep)


@jit(always_inline=True)
def _full(src, r, counter, high, low, s_blk, s_rep):
    """Every lane of repeat ``r`` set and its blocks back to back inside ``src``."""
    lanes = REPEAT_BYTES // src.itemsize
    base = lane_index(r, 0, s_blk, s_rep, BLOCK_BYTES // src.itemsize)
    return (s_blk == 1 and 0 <= base and base + lanes <= src.size
            and (all_lanes(counter, high, low, lanes) or counter and run_lanes(counter, high, low, lanes, r) == lanes))


@jit(always_inline=True)
def _store_result(dst, src, kind, order, at, value, element, lane):
    """One result at byte ``at``: a sum's value, or a max / min's element bits and lane by ``order``."""
    size = src.itemsize
    if kind == SUM:
        _put(dst, at, _value_bits(src, canonical_nan(value)), size)
        return
    bits = bits_of(src, element)
    if order == VALUE_INDEX:
        _put(dst, at, bits, size)
        _put(dst, at + size, np.uint32(lane), size)
    elif order == INDEX_VALUE:
        _put(dst, at, np.uint32(lane), size)
        _put(dst, at + size, bits, size)
    elif order == ONLY_VALUE:
        _put(dst, at, bits, size)
    else:
        _put(dst, at, np.uint32(lane), 4)


@jit
def _reduce_repeats(dst, src, nrep, counter, high, low, s_blk, s_rep, group, kind, rep_bytes, order):
    """The level-0 reductions: in each repeat, each ``group`` (WHOLE, BLOCK, PAIR) with a lane set
    writes its result at ``r * rep_bytes`` plus the group's place (see the module doc).  Returns the
    MAX_MIN_CNT register a WholeReduceMax / Min leaves (-1: none, the register kept)."""
    size = src.itemsize
    lanes, per_block = REPEAT_BYTES // size, BLOCK_BYTES // size
    n = lanes if group == WHOLE else per_block if group == BLOCK else 2
    best, register = np.float32(0), np.int64(-1)
    if (kind == SUM and group == WHOLE and s_blk == 1 and all_lanes(counter, high, low, lanes) and nrep > 0
            and (nrep - 1) * s_rep * per_block + lanes <= src.size):
        # Every repeat a full row inside src: the trees back to back (the row-sum case).
        for r in range(nrep):
            _put(dst, r * rep_bytes, _value_bits(src, canonical_nan(_sum_run(src, r * s_rep * per_block, lanes))),
                 size)
        return register
    for r in range(nrep):
        full = _full(src, r, counter, high, low, s_blk, s_rep)
        for g in range(lanes // n):
            some, value, lane = _group(src, kind, r, g * n, n, counter, high, low, s_blk, s_rep, full)
            if some:
                element = lane_index(r, lane, s_blk, s_rep, per_block)
                _store_result(dst, src, kind, order, r * rep_bytes + g * size, value, element, lane)
                if group == WHOLE and kind != SUM and (register < 0 or _beats(kind, best, value)):
                    best, register = value, max_min_register(bits_of(src, element), r * lanes + lane)
    return register


@jit(always_inline=True)
def max_min_register(bits, index):
    """MAX_MIN_CNT: a max / min's value bits, its index in bits 32..63."""
    return np.int64(bits) | (np.int64(index) << 32)


# ---- checked-mode rule: True when the call may run ------------------------------------------------

@checked_rule
@jit
def check_reduce(ctx, prim, repeat_times, rep_limit, counter, high, low, dst_addr, dst_nbytes, dst_align, out_bytes,
                 groups, rep_bytes, src_addr, src_nbytes, size, s_blk, s_rep, tmp_addr, tmp_nbytes, tmp_need):
    """A reduction: its parameters in their fields' ranges; ``src`` in UB on a block, each run of
    lanes it reads inside ``src`` and written before; each result (``out_bytes`` at ``r *
    rep_bytes + g * out_bytes`` for the groups with a lane set) inside ``dst``, aligned to
    ``dst_align``, and on no source bytes a later repeat reads; ``tmp_need`` bytes of the scratch
    (none when 0) inside it, left garbage."""
    enter(ctx, prim)
    if not (_param_ok(ctx, prim, _REPEAT_TIMES, repeat_times, 0, rep_limit)
            and _param_ok(ctx, prim, _DST_REP, rep_bytes // max(out_bytes * groups, 1), 0, 0xFFFF)
            and _param_ok(ctx, prim, _SRC0_BLK, s_blk, 0, 0xFFFF)
            and _param_ok(ctx, prim, _SRC0_REP, s_rep, 0, 0xFFFF)
            and (not counter or _param_ok(ctx, prim, _COUNTER, low, 0, MAX_COUNTER))):
        return False
    lanes = REPEAT_BYTES // size
    nrep = repeats_of(counter, low, repeat_times, lanes) if repeat_times <= MAX_REPEAT or counter else repeat_times
    if nrep == 0:
        return True
    if not (is_local_operand(ctx, prim, OPERAND_SRC, src_addr) and ub_aligned(ctx, prim, OPERAND_SRC, src_addr, 0)
            and is_local_operand(ctx, prim, OPERAND_DST, dst_addr)):
        return False
    ub = np.int64(ctx.ub_addr)
    if (np.int64(dst_addr) - ub) % dst_align != 0:
        report.ub_address_unaligned(ctx, prim, OPERAND_DST, ub_offset=np.int64(dst_addr) - ub, block_bytes=dst_align)
        return False
    lo, hi = _runs_ok(ctx, prim, OPERAND_SRC, src_addr, src_nbytes, size, s_blk, s_rep, nrep, counter, high, low,
                      lanes, False)
    if lo < 0:
        return False
    if tmp_need > 0:
        if not (is_local_operand(ctx, prim, OPERAND_TMP, tmp_addr) and ub_aligned(ctx, prim, OPERAND_TMP, tmp_addr, 0)
                and ub_range_ok(ctx, prim, OPERAND_TMP, tmp_addr, tmp_nbytes, 0, tmp_need)):
            return False
        set_garbage(ctx, np.int64(tmp_addr) - ub, tmp_need, 1)
        mark_epoch(ctx, np.int64(tmp_addr) - ub, tmp_need)
    per_block, per_group = BLOCK_BYTES // size, lanes // groups
    d0, s0 = np.int64(dst_addr) - ub, np.int64(src_addr) - ub
    for r in range(nrep):
        for g in range(groups):
            g_on, garbage = False, False
            for k in range(g * per_group, (g + 1) * per_group):
                if lane_on(counter, high, low, lanes, r, k):
                    g_on = True
                    s = s0 + lane_index(r, k, s_blk, s_rep, per_block) * size
                    garbage = garbage or first_garbage(ctx, s, size) >= 0
            if not g_on:
                continue
            at = r * rep_bytes + g * out_bytes
            if not ub_range_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, at, out_bytes):
                return False
            if d0 + at < hi and lo < d0 + at + out_bytes:  # over the sources: read by a later repeat?
                for r2 in range(r + 1, nrep):
                    for k in range(lanes):
                        s = s0 + lane_index(r2, k, s_blk, s_rep, per_block) * size
                        if lane_on(counter, high, low, lanes, r2, k) and s < d0 + at + out_bytes and d0 + at < s + size:
                            report.vector_partial_overlap(ctx, prim, OPERAND_SRC, src_start=s, src_end=s + size,
                                                          repeat=r2, written_in=r)
                            return False
            set_garbage(ctx, d0 + at, out_bytes, 1 if garbage else 0)
            mark_epoch(ctx, d0 + at, out_bytes)
    return True


# ---- the primitives ------------------------------------------------------------------------------------

@jit(always_inline=True)
def _trace(ctx, code, nrep, dst, dst_bytes, src, s_blk, s_rep):
    if tracing(ctx):
        lanes = REPEAT_BYTES // src.itemsize
        d, s = address(dst), address(src)
        span = 0 if nrep <= 0 else ((nrep - 1) * s_rep + 7 * s_blk + 1) * BLOCK_BYTES
        trace_event(ctx, code, DIR_VECTOR, nrep * REPEAT_BYTES, nrep * lanes, d, d + dst_bytes, s, s + span, s, s)


@jit(always_inline=True)
def _order_unit(size, kind, order):
    """WholeReduce's result bytes (the unit of its ``dst_rep_stride``)."""
    if kind == SUM or order == ONLY_VALUE:
        return size
    return 4 if order == ONLY_INDEX else 2 * size


def _repeat_reduction(name: str, kind: int, group: int):
    """A level-0 reduction of groups of a repeat's lanes (WholeReduce*, BlockReduce*, PairReduceSum)."""
    prim, code = PRIMITIVE[PRIMITIVES[name].device], EVENT[name]

    def run(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, order, is_set_mask):
        _reduce_tile(dst, src)
        size = src.itemsize
        counter, high, low = call_mask(ctx, mask, is_set_mask)
        groups = 1 if group == WHOLE else 8 if group == BLOCK else REPEAT_BYTES // size // 2
        out = _order_unit(size, kind, order) if group == WHOLE else size
        d_rep, s_blk, s_rep = stride_u16(dst_rep_stride), stride_u16(src_blk_stride), stride_u16(src_rep_stride)
        unit = out if group == WHOLE else 8 * size if group == BLOCK else 128
        align = out if group == WHOLE else 16 if group == BLOCK and size == 2 else BLOCK_BYTES
        if not check_reduce(ctx, prim, np.int64(repeat_times), MAX_REPEAT, counter, high, low, _address(dst),
                            dst.nbytes, align, out, groups, np.int64(dst_rep_stride) * unit, _address(src), src.nbytes,
                            size, np.int64(src_blk_stride), np.int64(src_rep_stride), 0, 0, 0):
            return
        nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // size)
        _trace(ctx, code, nrep, dst, nrep * groups * out, src, s_blk, s_rep)
        advance_preload(ctx)
        register = _reduce_repeats(dst, src, nrep, counter, high, low, s_blk, s_rep, group, kind, d_rep * unit, order)
        if register >= 0:
            _store_i64(ctx.state_addr, STATE_MAX_MIN_CNT, register)

    return run


_whole_sum = jit(_repeat_reduction("whole_reduce_sum", SUM, WHOLE))
_whole_max = jit(_repeat_reduction("whole_reduce_max", MAX, WHOLE))
_whole_min = jit(_repeat_reduction("whole_reduce_min", MIN, WHOLE))
_block_sum = jit(_repeat_reduction("block_reduce_sum", SUM, BLOCK))
_block_max = jit(_repeat_reduction("block_reduce_max", MAX, BLOCK))
_block_min = jit(_repeat_reduction("block_reduce_min", MIN, BLOCK))
_pair_sum = jit(_repeat_reduction("pair_reduce_sum", SUM, PAIR))


def _whole_reduce_sum(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride,
                      is_set_mask=True):
    _whole_sum(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
               is_set_mask)


def _whole_reduce_max(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride,
                      order=VALUE_INDEX, is_set_mask=True):
    _whole_max(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, np.int64(order),
               is_set_mask)


def _whole_reduce_min(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride,
                      order=VALUE_INDEX, is_set_mask=True):
    _whole_min(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, np.int64(order),
               is_set_mask)


def _repeat_reduce_sum(ctx, dst, src, repeat_times, elems_in_one_repeat, dst_blk_stride, src_blk_stride,
                       dst_rep_stride, src_rep_stride):
    # c220: WholeReduceSum's instruction under a continuous mask of elems_in_one_repeat lanes
    # (dst_blk_stride is not passed to it).
    _whole_sum(ctx, dst, src, elems_in_one_repeat, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride,
               ONLY_VALUE, True)


def _block_reduce_sum(ctx, dst, src, repeat_times, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
                      is_set_mask=True):
    _block_sum(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
               is_set_mask)


def _block_reduce_max(ctx, dst, src, repeat_times, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
                      is_set_mask=True):
    _block_max(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
               is_set_mask)


def _block_reduce_min(ctx, dst, src, repeat_times, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
                      is_set_mask=True):
    _block_min(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
               is_set_mask)


def _pair_reduce_sum(ctx, dst, src, repeat_times, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
                     is_set_mask=True):
    _pair_sum(ctx, dst, src, mask, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
              is_set_mask)


whole_reduce_sum = declared(_whole_reduce_sum, PRIMITIVES["whole_reduce_sum"], __name__)
whole_reduce_max = declared(_whole_reduce_max, PRIMITIVES["whole_reduce_max"], __name__)
whole_reduce_min = declared(_whole_reduce_min, PRIMITIVES["whole_reduce_min"], __name__)
repeat_reduce_sum = declared(_repeat_reduce_sum, PRIMITIVES["repeat_reduce_sum"], __name__)
block_reduce_sum = declared(_block_reduce_sum, PRIMITIVES["block_reduce_sum"], __name__)
block_reduce_max = declared(_block_reduce_max, PRIMITIVES["block_reduce_max"], __name__)
block_reduce_min = declared(_block_reduce_min, PRIMITIVES["block_reduce_min"], __name__)
pair_reduce_sum = declared(_pair_reduce_sum, PRIMITIVES["pair_reduce_sum"], __name__)


# ---- CANN 9.1's spellings: the reduction a ReduceType argument (the template's) names ------------------

@jit
def reduce_repeat(ctx, reduce_type, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride,
                  order=VALUE_INDEX, is_set_mask=True):
    """ReduceRepeat<reduceType>: WholeReduceSum / WholeReduceMax / WholeReduceMin."""
    kind = np.int64(reduce_type)
    if kind == SUM:
        _whole_sum(ctx, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
                   is_set_mask)
    elif kind == MAX:
        _whole_max(ctx, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, np.int64(order),
                   is_set_mask)
    elif kind != MIN:
        raise ValueError("ReduceRepeat takes ReduceType.SUM, MAX or MIN")
    else:
        _whole_min(ctx, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, np.int64(order),
                   is_set_mask)


@jit
def reduce_data_block(ctx, reduce_type, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride,
                      is_set_mask=True):
    """ReduceDataBlock<reduceType>: BlockReduceSum / Max / Min (the mask before the repeats, as 9.1 orders them)."""
    kind = np.int64(reduce_type)
    if kind == SUM:
        _block_sum(ctx, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
                   is_set_mask)
    elif kind == MAX:
        _block_max(ctx, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
                   is_set_mask)
    elif kind != MIN:
        raise ValueError("ReduceDataBlock takes ReduceType.SUM, MAX or MIN")
    else:
        _block_min(ctx, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
                   is_set_mask)


@jit
def reduce_pair_elem(ctx, reduce_type, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride,
                     is_set_mask=True):
    """ReducePairElem<ReduceType::SUM>: PairReduceSum (the only type the page allows)."""
    if np.int64(reduce_type) != SUM:
        raise ValueError("ReducePairElem takes ReduceType.SUM only")
    _pair_sum(ctx, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, ONLY_VALUE,
              is_set_mask)
