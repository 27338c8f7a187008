"""Copy, the masked UB -> UB copy (issue #52), against its reference: hypothesis over 2- and 4-byte
tiles, masks (words, a count, counter mode), repeats, block strides and repeat sizes; compiled and
interpreted alike; checked mode on a seeded bug."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba._numba_compat.jit import jit
from ascend_numba.host.references.layout import copy as copy_reference
from ascend_numba.kernels import (CopyRepeatParams, KernelCheckError, alloc_buffer, copy, data_copy, set_mask_count,
                                  set_mask_norm, set_vector_mask)

from helpers import MASK_WORDS, signed_word

BYTES = 8192


@jit
def _copy(ctx, b, a, counter, high, low, repeat, params):
    if counter:
        set_mask_count(ctx)
        set_vector_mask(ctx, 0, low)
        copy(ctx, b, a, 0, repeat, params, False)
        set_mask_norm(ctx)
    else:
        copy(ctx, b, a, (low, high), repeat, params)


@an.kernel
def copy_kernel(ctx, d16, s16, d32, s32, counter, high, low, repeat, dst_stride, src_stride, dst_rep, src_rep):
    a16 = alloc_buffer(ctx, BYTES // 2, np.uint16)
    b16 = alloc_buffer(ctx, BYTES // 2, np.uint16)
    a32 = alloc_buffer(ctx, BYTES // 4, np.float32)
    b32 = alloc_buffer(ctx, BYTES // 4, np.float32)
    data_copy(ctx, a16, 0, s16, 0, BYTES // 2)
    data_copy(ctx, b16, 0, d16, 0, BYTES // 2)
    data_copy(ctx, a32, 0, s32, 0, BYTES // 4)
    data_copy(ctx, b32, 0, d32, 0, BYTES // 4)
    params = CopyRepeatParams(dst_stride, src_stride, dst_rep, src_rep)
    _copy(ctx, b16, a16, counter, high, low, repeat, params)
    _copy(ctx, b32, a32, counter, high, low, repeat, params)
    data_copy(ctx, d16, 0, b16, 0, BYTES // 2)
    data_copy(ctx, d32, 0, b32, 0, BYTES // 4)


def _run(seed, counter, high, low, repeat, dst_stride, src_stride, dst_rep, src_rep, **mode):
    rng = np.random.default_rng(seed)
    s16 = rng.integers(0, 1 << 16, BYTES // 2, dtype=np.uint16)
    s32 = rng.integers(0, 1 << 32, BYTES // 4, dtype=np.uint32).view(np.float32)  # NaN payloads among them
    d16, d32 = np.full(BYTES // 2, 0xEEEE, np.uint16), np.full(BYTES // 4, -3.0, np.float32)
    got16, got32 = d16.copy(), d32.copy()
    copy_kernel.launch(got16, s16, got32, s32, counter, signed_word(high), signed_word(low), repeat, dst_stride, src_stride,
                       dst_rep, src_rep, block_dim=1, **mode)
    wants = []
    for dst, src in ((d16, s16), (d32, s32)):
        lanes = 256 // dst.itemsize
        if counter:
            on, n = (lambda k: True), low
        else:
            on, n = (lambda k: bool((low >> k) & 1) if k < 64 else bool((high >> (k - 64)) & 1)), lanes
        wants.append(copy_reference(dst, src, on, n, repeat, dst_stride, src_stride, dst_rep, src_rep))
    return (got16, got32), wants


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 99), counter=st.booleans(), high=MASK_WORDS, low=MASK_WORDS, count=st.integers(0, 200),
       repeat=st.integers(0, 3), dst_stride=st.integers(0, 2), src_stride=st.integers(0, 2), dst_rep=st.integers(0, 24),
       src_rep=st.integers(0, 24))
def test_copy_is_the_reference(seed, counter, high, low, count, repeat, dst_stride, src_stride, dst_rep, src_rep):
    got, want = _run(seed, counter, high, count if counter else low, repeat, dst_stride, src_stride, dst_rep, src_rep)
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()


def test_compiled_and_interpreted_agree():
    args = (4, False, 0xF0F0_0000_FFFF_0001, (1 << 64) - 1, 3, 1, 2, 9, 17)
    compiled, want = _run(*args)
    interpreted, _ = _run(*args, interpret=True)
    for c, i, w in zip(compiled, interpreted, want):
        assert c.tobytes() == w.tobytes() == i.tobytes()


def test_checked_mode_names_a_lane_past_the_source():
    with pytest.raises(KernelCheckError, match=r"Copy: \[ub-outside-buffer\] src"):
        _run(0, False, 0, 1, 2, 1, 1, 8, 4095, checked=True)  # repeat 1 reads block 4095 of a 256-block tile


@an.kernel
def overlap_kernel(ctx, out, x, mask):
    a = alloc_buffer(ctx, 256, np.float32)
    data_copy(ctx, a, 0, x, 0, 256)
    copy(ctx, a[16:], a, mask, 1, CopyRepeatParams(1, 1, 8, 8))  # a repeat reads its lanes before it writes
    data_copy(ctx, out, 0, a, 0, 256)


def test_an_overlapping_copy_reads_its_repeat_first_whatever_the_mask():
    x = np.arange(256, dtype=np.float32)
    outs = []
    for mask in (64, 63):
        out = np.zeros(256, np.float32)
        overlap_kernel.launch(out, x, mask, block_dim=1)
        outs.append(out)
    assert np.array_equal(outs[0][16:80], x[:64]) and np.array_equal(outs[1][16:79], x[:63])
