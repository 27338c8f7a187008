"""Brcb and Gatherb (issue #52) against their references: one kernel over the four tile widths' types, hypothesis
over repeats and strides, compiled and interpreted alike; checked mode names a source read past its
buffer and a destination over the source; the mask register is left with every lane set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.host.references.broadcast import brcb as reference
from ascend_numba.host.references.broadcast import gatherb as gatherb_reference
from ascend_numba.kernels import (MASK_PLACEHOLDER, BinaryRepeatParams, BrcbRepeatParams, GatherRepeatParams,
                                  KernelCheckError, add, alloc_buffer, brcb, data_copy, gatherb, set_vector_mask)

SRC, DST = 256, 4096


@an.kernel
def brcb_kernel(ctx, d16, s16, d32, s32, repeat_times, blk, rep):
    a16 = alloc_buffer(ctx, SRC, np.uint16)
    b16 = alloc_buffer(ctx, DST, np.uint16)
    a32 = alloc_buffer(ctx, SRC, np.float32)
    b32 = alloc_buffer(ctx, DST, np.float32)
    data_copy(ctx, a16, 0, s16, 0, SRC)
    data_copy(ctx, b16, 0, d16, 0, DST)
    data_copy(ctx, a32, 0, s32, 0, SRC)
    data_copy(ctx, b32, 0, d32, 0, DST)
    brcb(ctx, b16, a16, repeat_times, BrcbRepeatParams(blk, rep))
    brcb(ctx, b32, a32, repeat_times, BrcbRepeatParams(blk, rep))
    data_copy(ctx, d16, 0, b16, 0, DST)
    data_copy(ctx, d32, 0, b32, 0, DST)


def _inputs(seed):
    rng = np.random.default_rng(seed)
    s16 = rng.integers(0, 1 << 16, SRC, dtype=np.uint16)
    s32 = rng.integers(0, 1 << 32, SRC, dtype=np.uint32).view(np.float32)  # NaN payloads among them
    return s16, s32, np.full(DST, 0xABCD, np.uint16), np.full(DST, -3.0, np.float32)


@settings(max_examples=20, deadline=None)
@given(repeat_times=st.integers(0, 8), blk=st.integers(0, 3), rep=st.integers(0, 24), seed=st.integers(0, 99))
def test_brcb_is_the_reference(repeat_times, blk, rep, seed):
    s16, s32, d16, d32 = _inputs(seed)
    want16 = reference(d16, s16, repeat_times, blk, rep)
    want32 = reference(d32.view(np.uint32), s32.view(np.uint32), repeat_times, blk, rep)
    brcb_kernel.launch(d16, s16, d32, s32, repeat_times, blk, rep, block_dim=1, checked=rep >= 8 * max(blk, 1))
    assert d16.tobytes() == want16.tobytes()
    assert d32.tobytes() == want32.tobytes()


def test_compiled_and_interpreted_agree():
    outs = []
    for interpret in (False, True):
        s16, s32, d16, d32 = _inputs(7)
        brcb_kernel.launch(d16, s16, d32, s32, 5, 2, 17, block_dim=1, interpret=interpret)
        outs.append(d16.tobytes() + d32.tobytes())
    assert outs[0] == outs[1]


@an.kernel
def brcb_misuse(ctx, out, x, which):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 512, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    data_copy(ctx, b, 0, x, 0, 64)
    if which == 0:
        brcb(ctx, b, a, 9, BrcbRepeatParams(1, 8))  # 72 sources: a holds 64
    elif which == 1:
        brcb(ctx, b, b, 1, BrcbRepeatParams(1, 8))  # over its own source
    else:  # a level-0 Add after Brcb, with the mask Brcb left: every lane
        set_vector_mask(ctx, 0, 3)
        brcb(ctx, b, a, 1, BrcbRepeatParams(1, 8))
        add(ctx, b, b, b, MASK_PLACEHOLDER, 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8), is_set_mask=False)
    data_copy(ctx, out, 0, b, 0, 512)


@pytest.mark.parametrize("which, message", [(0, "src UB bytes [0, 288) outside its buffer [0, 256)"),
                                            (1, "repeat 0 of a level-0 vector call reads")])
def test_checked_mode_names_the_misuse(which, message):
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(KernelCheckError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        brcb_misuse.launch(np.zeros(512, np.float32), x, which, block_dim=1, checked=True)


def test_brcb_leaves_every_lane_set():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(512, np.float32)
    brcb_misuse.launch(out, x, 2, block_dim=1)
    assert np.array_equal(out[:64], 2 * np.repeat(x[:8], 8))


@an.kernel
def gatherb_kernel(ctx, d16, s16, offsets, repeat_times, blk, rep):
    a = alloc_buffer(ctx, SRC * 8, np.uint16)
    b = alloc_buffer(ctx, DST, np.uint16)
    o = alloc_buffer(ctx, 64, np.uint32)
    data_copy(ctx, a, 0, s16, 0, SRC * 8)
    data_copy(ctx, b, 0, d16, 0, DST)
    data_copy(ctx, o, 0, offsets, 0, 64)
    gatherb(ctx, b, a, o, repeat_times, GatherRepeatParams(blk, rep))
    data_copy(ctx, d16, 0, b, 0, DST)


@settings(max_examples=15, deadline=None)
@given(repeat_times=st.integers(0, 8), blk=st.integers(0, 3), rep=st.integers(0, 24), seed=st.integers(0, 99))
def test_gatherb_is_the_reference(repeat_times, blk, rep, seed):
    rng = np.random.default_rng(seed)
    s16 = rng.integers(0, 1 << 16, SRC * 8, dtype=np.uint16)
    offsets = (rng.integers(0, SRC * 8 * 2 // 32, 64) * 32).astype(np.uint32)
    d16 = np.full(DST, 0x1234, np.uint16)
    want = gatherb_reference(d16, s16, offsets, repeat_times, blk, rep)
    gatherb_kernel.launch(d16, s16, offsets, repeat_times, blk, rep, block_dim=1, checked=True)
    assert d16.tobytes() == want.tobytes()
    interpreted = np.full(DST, 0x1234, np.uint16)
    gatherb_kernel.launch(interpreted, s16, offsets, repeat_times, blk, rep, block_dim=1, interpret=True)
    assert interpreted.tobytes() == want.tobytes()


def test_gatherb_checked_mode_names_an_unaligned_offset():
    offsets = np.zeros(64, np.uint32)
    offsets[3] = 40
    with pytest.raises(KernelCheckError, match=r"Gatherb: \[ub-address-unaligned\] src"):
        gatherb_kernel.launch(np.zeros(DST, np.uint16), np.zeros(SRC * 8, np.uint16), offsets, 1, 1, 8,
                              block_dim=1, checked=True)
