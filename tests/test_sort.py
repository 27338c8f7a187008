"""Sort32, MrgSort and GetMrgSortResult (issue #52) against their references: hypothesis over fp32
and fp16 scores with ties and special values (NaN of both signs, infinities, signed zeros), the
queues a MrgSort merges, their lengths, suspension and repeats; compiled and interpreted alike;
checked mode on seeded bugs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba._numba_compat.jit import jit
from ascend_numba.host.references.sort import mrg_sort as mrg_reference
from ascend_numba.host.references.sort import sort32 as sort_reference
from ascend_numba.kernels import (KernelCheckError, MrgSort4Info, MrgSortSrcList, alloc_buffer, data_copy,
                                  get_mrg_sort_result, mrg_sort, set_value, sort32)

N = 256  # scores: 8 runs of 32
SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0, -2.5], np.float32)


@jit
def _sort_and_merge(ctx, m, runs, a, idx, repeat, step, lengths, valid, exhausted, mrg_repeat):
    sort32(ctx, runs, a, idx, repeat)
    per = runs.size // N  # tile elements a record
    queues = MrgSortSrcList(runs, runs[step * per:], runs[2 * step * per:], runs[3 * step * per:])
    mrg_sort(ctx, m, queues, MrgSort4Info(lengths, exhausted, valid, mrg_repeat))


@an.kernel
def sort_kernel(ctx, out32, runs32, s32, out16, runs16, s16, index, counts, repeat, step, l0, l1, l2, l3, valid,
                exhausted, mrg_repeat):
    a32 = alloc_buffer(ctx, N, np.float32)
    a16 = alloc_buffer(ctx, N, np.uint16)
    idx = alloc_buffer(ctx, N, np.uint32)
    r32 = alloc_buffer(ctx, 2 * N, np.float32)
    m32 = alloc_buffer(ctx, 2 * N, np.float32)
    r16 = alloc_buffer(ctx, 4 * N, np.uint16)
    m16 = alloc_buffer(ctx, 4 * N, np.uint16)
    c = alloc_buffer(ctx, 8, np.int64)
    data_copy(ctx, a32, 0, s32, 0, N)
    data_copy(ctx, a16, 0, s16, 0, N)
    data_copy(ctx, idx, 0, index, 0, N)
    data_copy(ctx, r32, 0, runs32, 0, 2 * N)
    data_copy(ctx, m32, 0, out32, 0, 2 * N)
    data_copy(ctx, r16, 0, runs16, 0, 4 * N)
    data_copy(ctx, m16, 0, out16, 0, 4 * N)
    lengths = (l0, l1, l2, l3)
    _sort_and_merge(ctx, m32, r32, a32, idx, repeat, step, lengths, valid, exhausted == 1, mrg_repeat)
    taken = get_mrg_sort_result(ctx)
    for q in range(4):
        set_value(ctx, c, q, taken[q])
    _sort_and_merge(ctx, m16, r16, a16, idx, repeat, step, lengths, valid, exhausted == 1, mrg_repeat)
    taken = get_mrg_sort_result(ctx)
    for q in range(4):
        set_value(ctx, c, 4 + q, taken[q])
    data_copy(ctx, runs32, 0, r32, 0, 2 * N)
    data_copy(ctx, out32, 0, m32, 0, 2 * N)
    data_copy(ctx, runs16, 0, r16, 0, 4 * N)
    data_copy(ctx, out16, 0, m16, 0, 4 * N)
    data_copy(ctx, counts, 0, c, 0, 8)


def _run(seed, repeat, step, lengths, valid, exhausted, mrg_repeat, ties=True, **mode):
    rng = np.random.default_rng(seed)
    s32 = rng.integers(-4, 5, N).astype(np.float32) if ties else rng.standard_normal(N).astype(np.float32)
    s32[rng.integers(0, N, 24)] = rng.choice(SPECIALS, 24)
    s32[rng.integers(0, N, 4)] = np.array([0xFFC00001, 0x7FC00002, 0x80000000, 0], np.uint32).view(np.float32)
    s16 = s32.astype(np.float16).view(np.uint16)
    index = rng.integers(0, 1 << 32, N, dtype=np.uint32)
    runs32, out32 = np.full(2 * N, -9.0, np.float32), np.full(2 * N, -7.0, np.float32)
    runs16, out16 = np.full(4 * N, 0xAAAA, np.uint16), np.full(4 * N, 0xBBBB, np.uint16)
    want = []
    for runs, out, src in ((runs32, out32, s32), (runs16, out16, s16)) if not mode.get("checked") else ():
        sorted_runs = sort_reference(runs, src, index, repeat)
        per = sorted_runs.size // N
        queues = [sorted_runs[q * step * per:] for q in range(4)]
        want.append((sorted_runs, *mrg_reference(out, queues, lengths, valid, bool(exhausted), mrg_repeat)))
    counts = np.zeros(8, np.int64)
    sort_kernel.launch(out32, runs32, s32, out16, runs16, s16, index, counts, repeat, step, *lengths, valid,
                       exhausted, mrg_repeat, block_dim=1, **mode)
    return [(runs32, out32, list(counts[:4])), (runs16, out16, list(counts[4:]))], want


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 999), repeat=st.integers(0, 8), valid=st.sampled_from([3, 7, 15]),
       lengths=st.lists(st.integers(0, 32), min_size=4, max_size=4), exhausted=st.integers(0, 1),
       ties=st.booleans())
def test_sort_and_merge_are_the_reference(seed, repeat, valid, lengths, exhausted, ties):
    got, want = _run(seed, max(repeat, 4), 32, lengths, valid, exhausted, 1, ties)
    for (runs, out, taken), (want_runs, want_out, want_taken) in zip(got, want):
        assert runs.tobytes() == want_runs.tobytes()
        assert out.tobytes() == want_out.tobytes()
        assert taken == want_taken


@pytest.mark.parametrize("length", [4, 16])
def test_repeats_merge_four_equal_queues_back_to_back(length):
    got, want = _run(3, 8, length, [length] * 4, 15, 0, 2)
    for (runs, out, taken), (want_runs, want_out, want_taken) in zip(got, want):
        assert out.tobytes() == want_out.tobytes() and taken == want_taken


def test_the_order_is_descending_total_order_with_ties_in_input_order():
    got, _ = _run(0, 1, 32, [0, 0, 0, 0], 3, 0, 0)
    records = got[0][0][:64].view(np.uint32).reshape(32, 2)
    scores = records[:, 0].view(np.float32)
    assert np.isnan(scores[0]) and not np.signbit(scores[0]) and np.isnan(scores[-1]) and np.signbit(scores[-1])
    finite = scores[~np.isnan(scores)]
    assert np.all(finite[:-1] >= finite[1:])


def test_compiled_and_interpreted_agree():
    args = (11, 8, 32, [20, 32, 7, 30], 15, 1, 1)
    compiled, want = _run(*args)
    interpreted, _ = _run(*args, interpret=True)
    for c, i, w in zip(compiled, interpreted, want):
        assert c[0].tobytes() == i[0].tobytes() == w[0].tobytes()
        assert c[1].tobytes() == i[1].tobytes() == w[1].tobytes() and c[2] == i[2] == w[2]


@pytest.mark.parametrize("args, message", [
    ((4, 32, [8, 8, 8, 8], 5, 0, 1), r"MrgSort: \[mode-out-of-range\] src: validBit 5"),
    ((8, 32, [16, 16, 16, 16], 15, 0, 2), r"MrgSort: \[repeat-params-out-of-range\] src: repeatTimes 2 is outside "
                                          r"0..1"),  # queues of 16 records, 32 apart: not back to back
    ((4, 32, [8, 8, 8, 4096], 15, 0, 1), r"MrgSort: \[repeat-params-out-of-range\] dst: elementLengths 4096 is "
                                         r"outside 0..4095")])
def test_checked_mode_names_the_bug(args, message):
    with pytest.raises(KernelCheckError, match=message):
        _run(0, *args, checked=True)


@an.kernel
def mixed_kernel(ctx, out, x, index):
    a = alloc_buffer(ctx, 32, np.float32)
    i = alloc_buffer(ctx, 32, np.int64)  # not the uint32 indices Sort32 takes
    r = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 32)
    data_copy(ctx, i, 0, index, 0, 32)
    sort32(ctx, r, a, i, 1)
    data_copy(ctx, out, 0, r, 0, 64)


def test_a_sort_refuses_tiles_of_other_types():
    with pytest.raises(Exception, match="Sort32's indices are a uint32 tile"):
        mixed_kernel.launch(np.zeros(64, np.float32), np.zeros(32, np.float32), np.zeros(32, np.int64),
                            block_dim=1, interpret=True)
