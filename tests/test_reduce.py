"""The reductions (issue #52) against their references: one kernel for the level-0 family (every
WholeReduce*, BlockReduce* and PairReduceSum on fp16 and fp32 tiles; hypothesis over masks,
repeats, strides and ReduceOrder), one for ReduceSum / Max / Min; special values (NaN, -0.0,
overflow, ties); compiled and interpreted alike; checked mode on seeded bugs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba._numba_compat.jit import jit
from ascend_numba.host.references.reduce import ORDERS, repeat_reduce, reduce_tensor
from ascend_numba.kernels import (KernelCheckError, alloc_buffer, block_reduce_max, block_reduce_min, block_reduce_sum,
                                  data_copy, pair_reduce_sum, reduce_max, reduce_min, reduce_sum, repeat_reduce_sum,
                                  whole_reduce_max, whole_reduce_min, whole_reduce_sum, set_value,
                                  get_reduce_repeat_sum_spr, get_reduce_repeat_max_min_spr, ReduceOrder, ReduceType,
                                  reduce_data_block, reduce_pair_elem, reduce_repeat)

from helpers import signed_word

SRC_BYTES, DST_BYTES = 4096, 4096
FAMILY = [("sum", "whole"), ("max", "whole"), ("min", "whole"), ("sum", "block"), ("max", "block"), ("min", "block"),
          ("sum", "pair")]


@jit
def _level0(ctx, b, a, which, mask, repeat, dst_rep, blk, rep, order):
    if which == 0:
        whole_reduce_sum(ctx, b, a, mask, repeat, dst_rep, blk, rep)
    elif which == 1:
        whole_reduce_max(ctx, b, a, mask, repeat, dst_rep, blk, rep, order)
    elif which == 2:
        whole_reduce_min(ctx, b, a, mask, repeat, dst_rep, blk, rep, order)
    elif which == 3:
        block_reduce_sum(ctx, b, a, repeat, mask, dst_rep, blk, rep)
    elif which == 4:
        block_reduce_max(ctx, b, a, repeat, mask, dst_rep, blk, rep)
    elif which == 5:
        block_reduce_min(ctx, b, a, repeat, mask, dst_rep, blk, rep)
    else:
        pair_reduce_sum(ctx, b, a, repeat, mask, dst_rep, blk, rep)


@an.kernel
def repeat_kernel(ctx, d16, s16, d32, s32, which, low, high, repeat, dst_rep, blk, rep, order):
    a16 = alloc_buffer(ctx, SRC_BYTES // 2, np.uint16)
    b16 = alloc_buffer(ctx, DST_BYTES // 2, np.uint16)
    a32 = alloc_buffer(ctx, SRC_BYTES // 4, np.float32)
    b32 = alloc_buffer(ctx, DST_BYTES // 4, np.float32)
    data_copy(ctx, a16, 0, s16, 0, SRC_BYTES // 2)
    data_copy(ctx, b16, 0, d16, 0, DST_BYTES // 2)
    data_copy(ctx, a32, 0, s32, 0, SRC_BYTES // 4)
    data_copy(ctx, b32, 0, d32, 0, DST_BYTES // 4)
    mask = (low, high)
    _level0(ctx, b16, a16, which, mask, repeat, dst_rep, blk, rep, order)
    _level0(ctx, b32, a32, which, mask, repeat, dst_rep, blk, rep, order)
    data_copy(ctx, d16, 0, b16, 0, DST_BYTES // 2)
    data_copy(ctx, d32, 0, b32, 0, DST_BYTES // 4)


SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, -65504.0, np.inf, -np.inf, np.nan, 3.0, 3.0, 1e-4], np.float32)


def _sources(seed, specials):
    rng = np.random.default_rng(seed)
    s32 = (rng.standard_normal(SRC_BYTES // 4) * 100).astype(np.float32)
    s16 = (rng.standard_normal(SRC_BYTES // 2) * 100).astype(np.float16)
    if specials:
        s32[rng.integers(0, s32.size, 40)] = rng.choice(SPECIALS, 40)
        s16[rng.integers(0, s16.size, 80)] = rng.choice(SPECIALS, 80).astype(np.float16)
    return s16, s32


def _lane_on(low, high):
    return lambda r, k: bool((low >> k) & 1) if k < 64 else bool((high >> (k - 64)) & 1)


def _run_repeat(which, s16, s32, low, high, repeat, dst_rep, blk, rep, order, **mode):
    d16, d32 = np.full(DST_BYTES // 2, 7, np.float16), np.full(DST_BYTES // 4, 7, np.float32)
    repeat_kernel.launch(d16.view(np.uint16), s16.view(np.uint16), d32, s32, which, signed_word(low), signed_word(high),
                         repeat, dst_rep, blk, rep, order, block_dim=1, **mode)
    return d16, d32


words = st.one_of(st.just((1 << 64) - 1), st.just(0), st.integers(0, (1 << 64) - 1),
                  st.integers(1, 64).map(lambda m: (1 << m) - 1))


@settings(max_examples=40, deadline=None)
@given(which=st.integers(0, 6), low=words, high=words, repeat=st.integers(0, 5), dst_rep=st.integers(0, 4),
       blk=st.integers(0, 2), rep=st.integers(0, 16), order=st.integers(0, 3), seed=st.integers(0, 999),
       specials=st.booleans())
def test_repeat_reductions_are_the_reference(which, low, high, repeat, dst_rep, blk, rep, order, seed, specials):
    kind, group = FAMILY[which]
    s16, s32 = _sources(seed, specials)
    got16, got32 = _run_repeat(which, s16, s32, low, high, repeat, dst_rep, blk, rep, order)
    for got, src in ((got16, s16), (got32, s32)):
        want = repeat_reduce(np.full_like(got, 7), src, kind, group, _lane_on(low, high), repeat, dst_rep, blk, rep,
                             ORDERS[order])
        differ = np.nonzero(got.view(np.uint8) != want.view(np.uint8))[0][:8]
        assert got.tobytes() == want.tobytes(), (src.dtype, differ)


def test_sums_are_the_devices_tree_not_a_sequential_sum():
    # fp16: 2048 + 1 + 1 + ... : a sequential fp16 sum never leaves 2048, the tree adds the ones pairwise first.
    s16 = np.ones(SRC_BYTES // 2, np.float16)
    s16[0] = 2048
    s32 = np.ones(SRC_BYTES // 4, np.float32)
    got16, _ = _run_repeat(0, s16, s32, (1 << 64) - 1, (1 << 64) - 1, 1, 1, 1, 8, 0)
    assert got16[0] == np.float16(2048 + 126)  # 127 ones: pairs of ones sum exactly; only the last add rounds


def test_max_ties_index_and_layouts():
    s32 = np.zeros(SRC_BYTES // 4, np.float32)
    s32[[5, 9]] = 4.0
    s32[20] = -0.0
    s16 = np.zeros(SRC_BYTES // 2, np.float16)
    _, got = _run_repeat(1, s16, s32, (1 << 64) - 1, 0, 1, 1, 1, 8, 0)  # VALUE_INDEX
    assert got[0] == 4.0 and got[1:2].view(np.uint32)[0] == 5
    _, got = _run_repeat(2, s16, s32, (1 << 64) - 1, 0, 1, 1, 1, 8, 3)  # ONLY_INDEX of the min: the first zero
    assert got[:1].view(np.uint32)[0] == 0


def test_compiled_and_interpreted_agree():
    s16, s32 = _sources(3, True)
    for which in range(7):
        args = (which, s16, s32, 0xFFFF_0000_FFFF_FFFF, 0x00FF_FF00_FFFF_FFFF, 3, 2, 1, 9, which % 4)
        compiled, interpreted = _run_repeat(*args), _run_repeat(*args, interpret=True)
        assert all(c.tobytes() == i.tobytes() for c, i in zip(compiled, interpreted)), which


# ---- ReduceSum, ReduceMax, ReduceMin and RepeatReduceSum ---------------------------------------------------

N = 4096


@jit
def _tensor(ctx, b, a, t, which, count, repeat, rep, cal_index):
    if which == 0:
        reduce_sum(ctx, b, a, t, count)
    elif which == 1:
        reduce_max(ctx, b, a, t, count, cal_index)
    elif which == 2:
        reduce_min(ctx, b, a, t, count, cal_index)
    elif which == 3:
        reduce_sum(ctx, b, a, t, count, repeat, rep)
    elif which == 4:
        reduce_max(ctx, b, a, t, count, repeat, rep, cal_index)
    elif which == 5:
        reduce_min(ctx, b, a, t, count, repeat, rep, cal_index)
    else:
        repeat_reduce_sum(ctx, b, a, repeat, count, 1, 1, 1, rep)


@an.kernel
def tensor_kernel(ctx, d16, s16, d32, s32, which, count, repeat, rep, cal_index):
    a16 = alloc_buffer(ctx, N, np.uint16)
    t16 = alloc_buffer(ctx, N, np.uint16)
    b16 = alloc_buffer(ctx, 64, np.uint16)
    a32 = alloc_buffer(ctx, N, np.float32)
    t32 = alloc_buffer(ctx, N, np.float32)
    b32 = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a16, 0, s16, 0, N)
    data_copy(ctx, b16, 0, d16, 0, 64)
    data_copy(ctx, a32, 0, s32, 0, N)
    data_copy(ctx, b32, 0, d32, 0, 64)
    _tensor(ctx, b16, a16, t16, which, count, repeat, rep, cal_index)
    _tensor(ctx, b32, a32, t32, which, count, repeat, rep, cal_index)
    data_copy(ctx, d16, 0, b16, 0, 64)
    data_copy(ctx, d32, 0, b32, 0, 64)


def _run_tensor(which, s16, s32, count, repeat, rep, cal_index, **mode):
    d16, d32 = np.full(64, 7, np.float16), np.full(64, 7, np.float32)
    tensor_kernel.launch(d16.view(np.uint16), s16.view(np.uint16), d32, s32, which, count, repeat, rep, cal_index,
                         block_dim=1, **mode)
    return d16, d32


@settings(max_examples=30, deadline=None)
@given(which=st.integers(0, 6), count=st.integers(0, 128), repeat=st.integers(0, 24), rep=st.integers(0, 8),
       cal_index=st.booleans(), seed=st.integers(0, 999), specials=st.booleans(), large=st.booleans())
def test_tensor_reductions_are_the_reference(which, count, repeat, rep, cal_index, seed, specials, large):
    rng = np.random.default_rng(seed)
    s16, s32 = _sources(seed, specials)
    s16, s32 = np.resize(s16, N), np.resize(s32, N)
    if which < 3 and large:
        count = int(rng.integers(0, N + 1))
    got16, got32 = _run_tensor(which, s16, s32, count, repeat, rep, cal_index)
    for got, src in ((got16, s16), (got32, s32)):
        lanes = 256 // src.itemsize
        kind = ("sum", "max", "min")[which % 3]
        if which < 3:
            want = reduce_tensor(np.full_like(got, 7), src, kind, lambda r, k: r * lanes + k < count,
                                 -(-count // lanes), 8, True, cal_index)
        elif which < 6:
            on = _lane_on(*[(1 << min(count, 64)) - 1, (1 << max(count - 64, 0)) - 1])
            want = reduce_tensor(np.full_like(got, 7), src, kind, lambda r, k: count > 0 and on(r, k), repeat, rep,
                                 False, cal_index)
        else:
            on = lambda r, k: k < count  # noqa: E731
            want = repeat_reduce(np.full_like(got, 7), src, "sum", "whole", on, repeat, 1, 1, rep)
        assert got.tobytes() == want.tobytes(), (which, src.dtype, got[:4], want[:4])


def test_reduce_sum_accumulates_repeats_in_order():
    s32 = np.zeros(N, np.float32)
    s32[0], s32[64], s32[128] = 1.0, 2.0 ** 24, -(2.0 ** 24)  # in order: (1 + 2**24) - 2**24 = 0
    got = _run_tensor(0, np.zeros(N, np.float16), s32, 192, 0, 8, False)[1]
    assert got[0] == 0.0
    got = _run_tensor(0, np.zeros(N, np.float16), s32, 192, 0, 8, False, interpret=True)[1]
    assert got[0] == 0.0


# ---- checked mode ---------------------------------------------------------------------------------------

@an.kernel
def misuse_kernel(ctx, out, x, which):
    a = alloc_buffer(ctx, 256, np.float32)
    t = alloc_buffer(ctx, 8, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 256)
    data_copy(ctx, b, 0, x, 0, 64)
    if which == 0:  # 5 repeats of 64 lanes: a holds 4
        whole_reduce_sum(ctx, b, a, 64, 5, 1, 1, 8)
    elif which == 1:  # a max of 200 repeats needs 400 elements of scratch
        reduce_max(ctx, b, a, t, 64, 200, 0, True)
    else:  # every repeat reads the same block: repeat 0's result is on a later repeat's source
        whole_reduce_sum(ctx, a, a, 64, 4, 1, 1, 0)
    data_copy(ctx, out, 0, b, 0, 64)


@pytest.mark.parametrize("which, message", [
    (0, r"WholeReduceSum: \[ub-outside-buffer\] src UB bytes \[0, 1028\) outside its buffer \[0, 1024\)"),
    (1, r"ReduceMax: \[ub-outside-buffer\] tmp"),
    (2, r"WholeReduceSum: \[vector-partial-overlap\] src: repeat 1 .* that its repeat 0 writes")])
def test_checked_mode_names_the_bug(which, message):
    x = np.arange(256, dtype=np.float32)
    with pytest.raises(KernelCheckError, match=message):
        misuse_kernel.launch(np.zeros(64, np.float32), x, which, block_dim=1, checked=True)


# ---- the special registers: GetReduceRepeatSumSpr, GetReduceRepeatMaxMinSpr ---------------------------------

@an.kernel
def register_kernel(ctx, regs, vals, s16, s32, count, repeat, rep):
    a16 = alloc_buffer(ctx, N, np.uint16)
    a32 = alloc_buffer(ctx, N, np.float32)
    b16 = alloc_buffer(ctx, 64, np.uint16)
    b32 = alloc_buffer(ctx, 64, np.float32)
    c = alloc_buffer(ctx, 8, np.int64)
    f = alloc_buffer(ctx, 8, np.float32)
    data_copy(ctx, a16, 0, s16, 0, N)
    data_copy(ctx, a32, 0, s32, 0, N)
    reduce_sum(ctx, b32, a32, b32, count)
    set_value(ctx, c, 0, get_reduce_repeat_sum_spr(ctx))
    set_value(ctx, f, 0, get_reduce_repeat_sum_spr(ctx, np.float32))
    whole_reduce_max(ctx, b16, a16, 128, repeat, 1, 1, 8)
    value16, index16 = get_reduce_repeat_max_min_spr(ctx, np.float16)
    set_value(ctx, c, 1, value16)
    set_value(ctx, c, 2, index16)
    whole_reduce_min(ctx, b32, a32, 64, repeat, 1, 1, rep)
    value32, index32 = get_reduce_repeat_max_min_spr(ctx, np.float32)
    set_value(ctx, f, 1, value32)
    set_value(ctx, c, 3, index32)
    data_copy(ctx, regs, 0, c, 0, 8)
    data_copy(ctx, vals, 0, f, 0, 8)


@pytest.mark.parametrize("interpret, rep", [(False, 8), (True, 8), (False, 16)])
def test_special_registers_hold_the_last_reductions(interpret, rep):
    rng = np.random.default_rng(5)
    s16 = rng.standard_normal(N).astype(np.float16)
    s32 = rng.standard_normal(N).astype(np.float32)
    s16[[300, 700]] = 9.0  # a tie across repeats: the first index
    regs, vals = np.zeros(8, np.int64), np.zeros(8, np.float32)
    register_kernel.launch(regs, vals, s16.view(np.uint16), s32, 1000, 7, rep, block_dim=1, interpret=interpret)
    want_sum = reduce_tensor(np.zeros(1, np.float32), s32, "sum", lambda r, k: r * 64 + k < 1000, 16, 8, True, False)
    assert regs[0] == want_sum.view(np.uint32)[0] and vals[0] == want_sum[0]  # ACC_VAL: the count form's sum
    assert regs[1] == np.float16(9.0).view(np.uint16) and regs[2] == 300  # max over 7 repeats: value, first index
    lanes = np.stack([s32[r * rep * 8:r * rep * 8 + 64] for r in range(7)])  # each repeat's 64 lanes
    assert vals[1] == lanes.min() and regs[3] == np.argmin(lanes)  # the index: repeat * 64 + lane


@an.kernel
def spelling_kernel(ctx, d32, s32, which):
    a = alloc_buffer(ctx, N, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, s32, 0, N)
    data_copy(ctx, b, 0, d32, 0, 64)
    if which == 0:
        reduce_repeat(ctx, ReduceType.MAX, b, a, 64, 3, 1, 1, 8, ReduceOrder.ORDER_INDEX_VALUE)
    elif which == 1:
        reduce_data_block(ctx, ReduceType.MIN, b, a, 64, 3, 1, 1, 8)
    else:
        reduce_pair_elem(ctx, ReduceType.SUM, b, a, 64, 3, 1, 1, 8)
    data_copy(ctx, d32, 0, b, 0, 64)


@pytest.mark.parametrize("which, kind, group, order", [(0, "max", "whole", 1), (1, "min", "block", 0),
                                                       (2, "sum", "pair", 0)])
def test_cann_9_1_spellings_are_the_same_instructions(which, kind, group, order):
    s32 = np.random.default_rng(which).standard_normal(N).astype(np.float32)
    got = np.full(64, 7, np.float32)
    spelling_kernel.launch(got, s32, which, block_dim=1)
    want = repeat_reduce(np.full(64, 7, np.float32), s32, kind, group, lambda r, k: True, 3, 1, 1, 8, ORDERS[order])
    assert got.tobytes() == want.tobytes()
