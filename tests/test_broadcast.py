"""Brcb, Gatherb and Transpose (issue #52) against their references: Brcb's kernel over 2- and
4-byte tiles, hypothesis over repeats and strides, compiled and interpreted alike; Transpose's forms
against NumPy; checked mode names a source read past its buffer, a destination over the source, an
offset off a block and a TransposeType a tile type does not take; the mask register is left with
every lane set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.host.references.broadcast import brcb as reference
from ascend_numba.host.references.broadcast import gatherb as gatherb_reference
from ascend_numba.host.references.broadcast import transpose_nchw
from ascend_numba.kernels import (MASK_PLACEHOLDER, BinaryRepeatParams, BrcbRepeatParams, GatherRepeatParams,
                                  KernelCheckError, TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC, TRANSPOSE_NHWC2NCHW,
                                  TransposeParamsExt, add, alloc_buffer, brcb, data_copy, gatherb, set_vector_mask,
                                  transpose)

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


@an.kernel
def transpose_kernel(ctx, out16, x16, out8, x8, out32, x32, n, c, h, w, kind):
    a = alloc_buffer(ctx, 2048, np.uint16)
    b = alloc_buffer(ctx, 2048, np.uint16)
    a8 = alloc_buffer(ctx, 2048, np.int8)
    b8 = alloc_buffer(ctx, 2048, np.int8)
    a32 = alloc_buffer(ctx, 2048, np.float32)
    b32 = alloc_buffer(ctx, 2048, np.float32)
    t = alloc_buffer(ctx, 8192, np.uint8)
    data_copy(ctx, a, 0, x16, 0, 2048)
    data_copy(ctx, a8, 0, x8, 0, 2048)
    data_copy(ctx, a32, 0, x32, 0, 2048)
    data_copy(ctx, b, 0, out16, 0, 2048)  # every byte written: the transposes write only their elements
    data_copy(ctx, b8, 0, out8, 0, 2048)
    data_copy(ctx, b32, 0, out32, 0, 2048)
    if kind == 0:
        transpose(ctx, b, a)
    elif kind == TRANSPOSE_ND2ND_B16:  # uint16 only
        transpose(ctx, b, a, t, TransposeParamsExt(n, c, h, w, kind))
    else:
        transpose(ctx, b, a, t, TransposeParamsExt(n, c, h, w, kind))
        transpose(ctx, b8, a8, t, TransposeParamsExt(n, c, h, w, kind))
        transpose(ctx, b32, a32, t, TransposeParamsExt(n, c, h, w, kind))
    data_copy(ctx, out16, 0, b, 0, 2048)
    data_copy(ctx, out8, 0, b8, 0, 2048)
    data_copy(ctx, out32, 0, b32, 0, 2048)


@pytest.mark.parametrize("kind, n, c, h, w", [(0, 0, 0, 16, 16), (TRANSPOSE_ND2ND_B16, 0, 0, 16, 16),
                                              (TRANSPOSE_NCHW2NHWC, 2, 5, 4, 8), (TRANSPOSE_NHWC2NCHW, 3, 3, 2, 16)])
@pytest.mark.parametrize("mode", [{}, {"interpret": True}, {"checked": True}])
def test_transpose_is_numpys(kind, n, c, h, w, mode):
    rng = np.random.default_rng(kind)
    x16 = rng.integers(0, 1 << 16, 2048, dtype=np.uint16)
    x8 = rng.integers(-128, 128, 2048, dtype=np.int8)
    x32 = rng.standard_normal(2048).astype(np.float32)
    outs = [np.zeros(2048, np.uint16), np.zeros(2048, np.int8), np.zeros(2048, np.float32)]
    transpose_kernel.launch(outs[0], x16, outs[1], x8, outs[2], x32, n, c, h, w, kind, block_dim=1, **mode)
    if kind in (0, TRANSPOSE_ND2ND_B16):
        assert np.array_equal(outs[0][:256], x16[:256].reshape(16, 16).T.reshape(-1))
        return
    for out, x in zip(outs, (x16, x8, x32)):
        m = n * c * h * w
        assert np.array_equal(out[:m], transpose_nchw(x, n, c, h, w, kind == TRANSPOSE_NCHW2NHWC))


def test_transpose_checked_mode_names_a_type_it_does_not_take():
    x = np.zeros(2048, np.uint16)
    with pytest.raises(KernelCheckError, match=r"Transpose: \[mode-out-of-range\] src: TransposeType 11"):
        transpose_kernel.launch(np.zeros(2048, np.uint16), x, np.zeros(2048, np.int8), x.view(np.int8)[:2048],
                                np.zeros(2048, np.float32), np.zeros(2048, np.float32), 1, 1, 3, 3, 11,
                                block_dim=1, checked=True)  # h * w * 2 bytes: not on 32
