"""ReduceSum, ReduceMax and ReduceMin over a tensor, count and level-0 forms (family ``reduce``;
the module doc of :mod:`.reduce` says what they compute, its trees and checked rule are theirs)."""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.rules import PRIMITIVE
from ...host.primitives import PRIMITIVES
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import u32_as_f32
from ..lane import STATE_ACC_VAL, STATE_MAX_MIN_CNT, _address, _load_i64, _store_i64
from .element_bits import bits_of
from .elements import canonical_nan
from .masks import BLOCK_BYTES, MAX_COUNTER, REPEAT_BYTES, call_mask, count_form_done, lane_index, stride_u16
from .preload import advance_preload
from .reduce import (MAX, MIN, SUM, _beats, _combine, _full, _group, _put, _reduce_tile, _rounded, _trace,
                     _value_bits, check_reduce, max_min_register)
from .vector import count_of, declared

__all__ = ["reduce_sum", "reduce_max", "reduce_min", "get_reduce_repeat_sum_spr", "get_reduce_repeat_max_min_spr"]


@jit(_nrt=True)
def _reduce_tensor(dst, src, nrep, counter, high, low, s_rep, kind, accumulate, cal_index):
    """ReduceSum / Max / Min: the repeats' trees, then their sums in order (``accumulate``) or by
    trees of a repeat's lanes; a max / min's first extreme and its index over the input.  Returns
    the special register the call sets (a max / min's MAX_MIN_CNT, the count form's ACC_VAL), -1
    for none."""
    size = src.itemsize
    lanes, per_block = REPEAT_BYTES // size, BLOCK_BYTES // size
    sums, sums_on = np.empty(max(nrep, 1), np.float32), np.empty(max(nrep, 1), np.bool_)
    best, best_at, best_lane, found = np.float32(0), np.int64(0), np.int64(0), False
    for r in range(nrep):
        full = _full(src, r, counter, high, low, 1, s_rep)
        some, value, lane = _group(src, kind, r, 0, lanes, counter, high, low, 1, s_rep, full)
        sums[r], sums_on[r] = value, some
        if kind != SUM and some and (not found or _beats(kind, best, value)):
            best_at = lane_index(r, lane, 1, s_rep, per_block)  # the index: the element offset (c220 GetIndex)
            best, best_lane = value, best_at
            found = True
    if kind != SUM:
        if found:
            _put(dst, 0, bits_of(src, best_at), size)
            if cal_index:
                _put(dst, size, np.uint32(best_lane), size)
            return max_min_register(bits_of(src, best_at), best_lane)
        return np.int64(-1)
    total, any_on = np.float32(0), False
    if accumulate:
        for r in range(nrep):
            if sums_on[r]:
                total = _rounded(src, total + sums[r]) if any_on else sums[r]
                any_on = True
    else:
        val, idx, on = np.empty(lanes, np.float32), np.empty(lanes, np.int64), np.empty(lanes, np.bool_)
        count = nrep
        while count > 1:  # a pass of whole-repeat trees over the sums so far, packed to the front
            for c in range((count + lanes - 1) // lanes):
                for k in range(lanes):
                    j = c * lanes + k
                    on[k] = j < count and sums_on[j]
                    val[k] = sums[j] if j < count else np.float32(0)
                width = lanes
                while width > 1:
                    for i in range(width // 2):
                        _combine(src, kind, val, idx, on, i, 2 * i, 2 * i + 1)
                    width //= 2
                sums[c], sums_on[c] = val[0], on[0]
            count = (count + lanes - 1) // lanes
        total, any_on = sums[0], nrep > 0 and sums_on[0]
    if not any_on:
        return np.int64(-1)
    bits = _value_bits(src, canonical_nan(total))
    _put(dst, 0, bits, size)
    return np.int64(bits) if accumulate else np.int64(-1)


# ---- ReduceSum, ReduceMax, ReduceMin over a tensor --------------------------------------------------------

@jit(always_inline=True)
def _tmp_need(size, kind, nrep, cal_index):
    """The scratch bytes the pages size (the first round's results, 32-byte aligned; with the
    index, a second round's too); ReduceSum's count form uses none."""
    per_block, lanes = BLOCK_BYTES // size, REPEAT_BYTES // size
    first = nrep if kind == SUM else 2 * nrep
    need = (first + per_block - 1) // per_block * per_block
    if kind != SUM and cal_index and nrep > 1:
        second = 2 * ((first + lanes - 1) // lanes)
        need += (second + per_block - 1) // per_block * per_block
    return need * size


def _tensor_reduction(name: str, kind: int):
    """ReduceSum / ReduceMax / ReduceMin: the count form and the level-0 form (mask, repeat_times,
    src_rep_stride; repeat_times up to int32)."""
    prim, code = PRIMITIVE[PRIMITIVES[name].device], EVENT[name]

    def run(ctx, dst, src, tmp, mask, repeat_times, src_rep_stride, cal_index, count_form):
        _reduce_tile(dst, src)
        size = src.itemsize
        lanes = REPEAT_BYTES // size
        if count_form:  # counter mode over ``mask`` elements, set and reset by the call
            n = max(np.int64(count_of(mask)), 0)
            counter, high, low, nrep, s_rep = True, np.int64(0), n, (n + lanes - 1) // lanes, np.int64(8)
            reps = n
        else:
            counter, high, low = call_mask(ctx, mask, True)
            nrep, s_rep = max(np.int64(repeat_times), 0), stride_u16(src_rep_stride)
            reps = np.int64(repeat_times)
        out = size if kind == SUM or not cal_index else 2 * size
        need = 0 if kind == SUM and count_form else _tmp_need(size, kind, nrep, cal_index)
        if not check_reduce(ctx, prim, 1 if count_form else reps, MAX_COUNTER if count_form else 0x7FFF_FFFF,
                            counter, high, low, _address(dst), dst.nbytes, 4 if out == 2 * size else size, out, 1, 0,
                            _address(src), src.nbytes, size, np.int64(1), np.int64(src_rep_stride) if not count_form
                            else s_rep, _address(tmp), tmp.nbytes, need):
            return
        _trace(ctx, code, nrep, dst, out, src, 1, s_rep)
        advance_preload(ctx)
        register = _reduce_tensor(dst, src, nrep, counter, high, low, s_rep, kind, count_form, cal_index)
        if register >= 0:
            _store_i64(ctx.state_addr, STATE_ACC_VAL if kind == SUM else STATE_MAX_MIN_CNT, register)
        if count_form:
            count_form_done(ctx)

    return jit(run)


_sum_tensor = _tensor_reduction("reduce_sum", SUM)
_max_tensor = _tensor_reduction("reduce_max", MAX)
_min_tensor = _tensor_reduction("reduce_min", MIN)


def _is_flag(value):
    """Whether a reduction's sixth argument is ``calIndex`` (a bool: the count form) rather than
    ``repeatTime``."""
    raise NotImplementedError  # compiled only


@overload(_is_flag, jit_options=OVERLOAD_OPTIONS)
def _ov_is_flag(value):
    answer = isinstance(value, types.Boolean)
    return lambda value: answer


def _reduce_sum(ctx, dst, src, tmp, count, repeat_times=None, src_rep_stride=8):
    if repeat_times is None:
        _sum_tensor(ctx, dst, src, tmp, count, 0, 8, False, True)
    else:
        _sum_tensor(ctx, dst, src, tmp, count, repeat_times, src_rep_stride, False, False)


def _extreme(tensor):
    """ReduceMax / ReduceMin's forms over ``tensor`` (its compiled run): a bool sixth argument is
    ``calIndex`` (the count form), an integer ``repeatTime`` (the level-0 form)."""
    def reduce_extreme(ctx, dst, src, tmp, count, repeat_times=None, src_rep_stride=8, cal_index=False):
        if repeat_times is None:
            tensor(ctx, dst, src, tmp, count, 0, 8, cal_index, True)
        elif _is_flag(repeat_times):
            tensor(ctx, dst, src, tmp, count, 0, 8, repeat_times, True)
        else:
            tensor(ctx, dst, src, tmp, count, repeat_times, src_rep_stride, cal_index, False)
    return reduce_extreme


reduce_sum = declared(_reduce_sum, PRIMITIVES["reduce_sum"], __name__)
reduce_max = declared(_extreme(_max_tensor), PRIMITIVES["reduce_max"], __name__)
reduce_min = declared(_extreme(_min_tensor), PRIMITIVES["reduce_min"], __name__)


# ---- the special registers ------------------------------------------------------------------------------

def _register_value(bits, dtype):
    """A register's low bits as ``dtype`` (fp32: reinterpreted; fp16 / uint16: the uint16 bits)."""
    raise NotImplementedError  # compiled only


@overload(_register_value, jit_options=OVERLOAD_OPTIONS)
def _ov_register_value(bits, dtype):
    name = str(dtype.instance_type) if isinstance(dtype, types.NumberClass) else ""
    if name == "float32":
        return lambda bits, dtype: u32_as_f32(np.uint32(bits & 0xFFFF_FFFF))
    if name in ("float16", "uint16"):
        return lambda bits, dtype: np.uint16(bits & 0xFFFF)
    if name == "uint32":
        return lambda bits, dtype: np.uint32(bits & 0xFFFF_FFFF)
    raise TypingError("a reduction register's type: np.float32, np.float16 (its uint16 bits) or np.uint32; "
                      f"got {dtype}")


def _get_reduce_repeat_sum_spr(ctx, dtype=None):
    if dtype is None:
        return _load_i64(ctx.state_addr, STATE_ACC_VAL)
    return _register_value(_load_i64(ctx.state_addr, STATE_ACC_VAL), dtype)


def _get_reduce_repeat_max_min_spr(ctx, dtype):
    register = _load_i64(ctx.state_addr, STATE_MAX_MIN_CNT)
    return _register_value(register, dtype), np.uint32((register >> 32) & 0xFFFF_FFFF)


get_reduce_repeat_sum_spr = declared(_get_reduce_repeat_sum_spr, PRIMITIVES["get_reduce_repeat_sum_spr"], __name__)
get_reduce_repeat_max_min_spr = declared(_get_reduce_repeat_max_min_spr, PRIMITIVES["get_reduce_repeat_max_min_spr"],
                                         __name__)
