"""Gather's level-0 form (issue #52) against its reference: hypothesis over 2- and 4-byte tiles,
masks (words, counter mode), repeats, the destination repeat stride and the base; compiled and
interpreted alike; checked mode names an offset past the source."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba._numba_compat.jit import jit
from ascend_numba.host.references.broadcast import gather_repeats
from ascend_numba.kernels import KernelCheckError, alloc_buffer, data_copy, gather, set_mask_count, set_mask_norm

from helpers import MASK_WORDS, signed_word

SRC, DST, OFFSETS = 4096, 8192, 512  # bytes, bytes, uint32 offsets


@jit
def _gather(ctx, b, a, t, base, counter, low, high, repeat, d_rep):
    if counter:
        set_mask_count(ctx)
        gather(ctx, b, a, t, base, (low, 0), repeat, d_rep)  # the call writes the register: its low word, a count
        set_mask_norm(ctx)
    else:
        gather(ctx, b, a, t, base, (low, high), repeat, d_rep)


@an.kernel
def gather_kernel(ctx, d16, s16, d32, s32, offsets, base, counter, low, high, repeat, d_rep):
    a16 = alloc_buffer(ctx, SRC // 2, np.uint16)
    b16 = alloc_buffer(ctx, DST // 2, np.uint16)
    a32 = alloc_buffer(ctx, SRC // 4, np.float32)
    b32 = alloc_buffer(ctx, DST // 4, np.float32)
    t = alloc_buffer(ctx, OFFSETS, np.uint32)
    data_copy(ctx, a16, 0, s16, 0, SRC // 2)
    data_copy(ctx, b16, 0, d16, 0, DST // 2)
    data_copy(ctx, a32, 0, s32, 0, SRC // 4)
    data_copy(ctx, b32, 0, d32, 0, DST // 4)
    data_copy(ctx, t, 0, offsets, 0, OFFSETS)
    _gather(ctx, b16, a16, t, base, counter, low, high, repeat, d_rep)
    _gather(ctx, b32, a32, t, base, counter, low, high, repeat, d_rep)
    data_copy(ctx, d16, 0, b16, 0, DST // 2)
    data_copy(ctx, d32, 0, b32, 0, DST // 4)


def _run(seed, base, counter, low, high, repeat, d_rep, **mode):
    rng = np.random.default_rng(seed)
    s16 = rng.integers(0, 1 << 16, SRC // 2, dtype=np.uint16)
    s32 = rng.integers(0, 1 << 32, SRC // 4, dtype=np.uint32).view(np.float32)
    offsets = (rng.integers(0, SRC // 4 - 64, OFFSETS) * 4).astype(np.uint32)  # 4-byte multiples: both widths
    d16, d32 = np.full(DST // 2, 0xEEEE, np.uint16), np.full(DST // 4, -3.0, np.float32)
    got16, got32 = d16.copy(), d32.copy()
    gather_kernel.launch(got16, s16, got32, s32, offsets, base, counter, signed_word(low), signed_word(high), repeat, d_rep,
                         block_dim=1, **mode)
    wants = []
    for dst, src in ((d16, s16), (d32, s32)):
        lanes = 256 // dst.itemsize
        if counter:
            on, nrep = (lambda r, k: r * lanes + k < low), -(-low // lanes)
        else:
            on, nrep = (lambda r, k: bool((low >> k) & 1) if k < 64 else bool((high >> (k - 64)) & 1)), repeat
        wants.append(gather_repeats(dst, src, offsets, base, on, nrep, d_rep))
    return (got16, got32), wants


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 99), base=st.integers(0, 16), counter=st.booleans(), low=MASK_WORDS, high=MASK_WORDS,
       count=st.integers(0, 256), repeat=st.integers(0, 3), d_rep=st.integers(0, 16))
def test_gather_level0_is_the_reference(seed, base, counter, low, high, count, repeat, d_rep):
    got, want = _run(seed, base, counter, count if counter else low, high, repeat, d_rep)
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()


def test_compiled_and_interpreted_agree():
    args = (3, 5, False, 0xFFFF_0000_FFFF_00F1, (1 << 64) - 1, 3, 9)
    compiled, want = _run(*args)
    interpreted, _ = _run(*args, interpret=True)
    for c, i, w in zip(compiled, interpreted, want):
        assert c.tobytes() == w.tobytes() == i.tobytes()


def test_checked_mode_names_an_offset_past_the_source():
    with pytest.raises(KernelCheckError, match=r"Gather: \[ub-outside-buffer\] src"):
        _run(0, SRC // 2, False, 1, 0, 1, 8, checked=True)  # the fp16 tile's 2048 elements, then its offset
