"""SetDeqScale, CastDequant and AddDeqRelu (issue #51) against ``host/references/dequant.py``: the
three forms of the register, int16 -> int8 / uint8 in both halves of a block, per tensor and per
element, int32 -> fp16 saturated, AddDeqRelu's chain; count and level-0 forms, compiled,
interpreted and checked (AddDeqRelu's overwritten sources reported when they reach GM).  One
kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.host.references.dequant import add_deq_relu as add_deq_relu_reference
from ascend_numba.host.references.dequant import cast_dequant_b8, cast_dequant_f16, deq_config
from ascend_numba.kernels import (BinaryRepeatParams, UnaryRepeatParams, add_deq_relu, alloc_buffer, cast_dequant,
                                  data_copy, set_deq_scale)

N = 512  # source elements


@an.kernel
def dequant_kernel(ctx, x16, x32, y8, yu8, yh, scales, offsets, signs, which, count, scale, offset, sign,
                   half_block, level0, repeat, d_blk, d_rep, a_blk, a_rep):
    a16 = alloc_buffer(ctx, N, np.int16)
    a32 = alloc_buffer(ctx, N, np.int32)
    b8 = alloc_buffer(ctx, 2 * N, np.int8)
    bu8 = alloc_buffer(ctx, 2 * N, np.uint8)
    bh = alloc_buffer(ctx, N, np.uint16)
    ts = alloc_buffer(ctx, 16, np.float32)
    to = alloc_buffer(ctx, 16, np.int16)
    tg = alloc_buffer(ctx, 32, np.uint8)
    vdeq = alloc_buffer(ctx, 16, np.uint64)
    data_copy(ctx, a16, 0, x16, 0, N)
    data_copy(ctx, a32, 0, x32, 0, N)
    data_copy(ctx, b8, 0, y8, 0, 2 * N)
    data_copy(ctx, bu8, 0, yu8, 0, 2 * N)
    data_copy(ctx, bh, 0, yh, 0, N)
    data_copy(ctx, ts, 0, scales, 0, 16)
    data_copy(ctx, to, 0, offsets, 0, 16)
    data_copy(ctx, tg, 0, signs, 0, 32)
    params = UnaryRepeatParams(d_blk, a_blk, d_rep, a_rep)
    if which == 3:  # AddDeqRelu of the int32 source and its reverse, under SetDeqScale(half)
        b32 = alloc_buffer(ctx, N, np.int32)
        data_copy(ctx, b32, 0, x32, 0, N)
        set_deq_scale(ctx, scale)
        if level0:
            add_deq_relu(ctx, bh, a32, b32, count, repeat, BinaryRepeatParams(d_blk, a_blk, a_blk, d_rep, a_rep, a_rep))
        else:
            add_deq_relu(ctx, bh, a32, b32, count)
        if half_block:  # a source the device computed in, copied out: checked mode reports it
            data_copy(ctx, x32, 0, a32, 0, N)
    elif which == 0:  # int32 -> fp16 under SetDeqScale(half)
        set_deq_scale(ctx, scale)
        if level0:
            cast_dequant(ctx, bh, a32, count, repeat, params)
        else:
            cast_dequant(ctx, bh, a32, count)
    else:
        if which == 1:  # one word for every element
            set_deq_scale(ctx, scale, offset, sign)
        else:  # a word per element of a block
            set_deq_scale(ctx, vdeq, ts, to, tg)
        if level0:
            cast_dequant(ctx, b8, a16, count, repeat, params, True, which == 2, half_block)
            cast_dequant(ctx, bu8, a16, count, repeat, params, True, which == 2, half_block)
        else:
            cast_dequant(ctx, b8, a16, count, is_vec_deq=which == 2, half_block=half_block)
            cast_dequant(ctx, bu8, a16, count, is_vec_deq=which == 2, half_block=half_block)
    data_copy(ctx, y8, 0, b8, 0, 2 * N)
    data_copy(ctx, yu8, 0, bu8, 0, 2 * N)
    data_copy(ctx, yh, 0, bh, 0, N)


def _inputs(seed):
    rng = np.random.default_rng(seed)
    x16 = rng.integers(-2**15, 2**15, N).astype(np.int16)
    x16[:6] = [0, 1, -1, 32767, -32768, 3]
    x32 = rng.integers(-2**31, 2**31, N).astype(np.int32) >> rng.integers(0, 31, N).astype(np.int32)
    scales = (rng.standard_normal(16) * 2.0 ** rng.integers(-12, 2, 16)).astype(np.float32)
    offsets = rng.integers(-256, 256, 16).astype(np.int16)
    signs = np.zeros(32, np.uint8)
    signs[:16] = rng.integers(0, 2, 16)
    return x16, x32, scales, offsets, signs


def _run(case, **mode):
    x16, x32, scales, offsets, signs = _inputs(case["seed"])
    if case["which"] == 3:
        case = {**case, "half_block": False}  # (half_block there: copy a source out)
    y8, yu8 = np.full(2 * N, 7, np.int8), np.full(2 * N, 7, np.uint8)
    yh = np.full(N, 0x1234, np.uint16)
    geometry = case.get("geometry", (0, 1, 8, 1, 8))
    dequant_kernel.launch(x16, x32, y8, yu8, yh, scales, offsets, signs, case["which"], case["count"],
                          case["scale"], case["offset"], case["sign"], case["half_block"], "geometry" in case,
                          *geometry, block_dim=1, **mode)
    return y8, yu8, yh


def _want(case):
    x16, x32, scales, offsets, signs = _inputs(case["seed"])
    y8, yu8 = np.full(2 * N, 7, np.int8), np.full(2 * N, 7, np.uint8)
    yh = np.full(N, 0x1234, np.uint16)
    repeat, d_blk, d_rep, a_blk, a_rep = case.get("geometry", (0, 1, 8, 1, 8))
    level0 = "geometry" in case
    if case["which"] in (0, 3):  # int32 sources, an fp16 destination: (source, destination) index of each lane
        lanes = ([(r * a_rep * 8 + k // 8 * a_blk * 8 + k % 8, (r * d_rep + k // 16 * d_blk) * 16 + k % 16)
                  for r in range(repeat) for k in range(min(case["count"], 64))] if level0 else
                 [(i, i) for i in range(case["count"])])
        scale = np.float16(case["scale"])
        for i, j in lanes:
            if i < N and j < N:
                x = x32[i:i + 1]
                yh[j] = (cast_dequant_f16(x, scale) if case["which"] == 0 else
                         add_deq_relu_reference(x, x, scale)).view(np.uint16)[0]
        return y8, yu8, yh
    if case["which"] == 1:
        words = deq_config(case["scale"], case["offset"], case["sign"])
    else:
        words = [deq_config(s, o, g) for s, o, g in zip(scales, offsets, signs[:16])]
    # (source index, destination block) of each lane; a lane's 16-element block index is k // 16.
    lanes = ([(r * a_rep * 16 + k // 16 * a_blk * 16 + k % 16, r * d_rep + k // 16 * d_blk)
              for r in range(repeat) for k in range(min(case["count"], 128))] if level0 else
             [(i, i // 16) for i in range(case["count"])])
    lanes = [(i, b) for i, b in lanes if i < N and b * 32 + 32 <= 2 * N]
    return (cast_dequant_b8(y8, x16, words, case["half_block"], lanes),
            cast_dequant_b8(yu8, x16, words, case["half_block"], lanes), yh)


_CASES = st.fixed_dictionaries({
    "which": st.integers(0, 3), "count": st.integers(0, N), "seed": st.integers(0, 2**16),
    "scale": st.sampled_from([1.0, 0.5, 0.1, 3.7, -0.013, 1e-3, 250.0, float("inf")]),
    "offset": st.integers(-256, 255), "sign": st.booleans(), "half_block": st.booleans()})


@settings(max_examples=25, deadline=None)
@given(case=_CASES)
def test_count_form_is_the_reference(case):
    for got, want in zip(_run(case), _want(case)):
        assert got.tobytes() == want.tobytes(), case


@settings(max_examples=25, deadline=None)
@given(case=_CASES, geometry=st.tuples(st.integers(0, 3), st.integers(1, 2), st.integers(0, 10), st.integers(1, 2),
                                       st.integers(0, 10)))
def test_level0_form_is_the_reference(case, geometry):
    case = {**case, "geometry": geometry, "count": min(case["count"], 128)}
    for got, want in zip(_run(case), _want(case)):
        assert got.tobytes() == want.tobytes(), case


def test_fp16_saturates_and_the_scale_rounds_to_fp16():
    got = cast_dequant_f16(np.array([70000, -70000, 3], np.int32), np.float16(1.0))
    assert got.tolist() == [65504.0, -65504.0, 3.0]


@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_compiled_interpreted_and_checked_agree(which):
    case = {"which": which, "count": 300, "seed": 3, "scale": 0.37, "offset": -5, "sign": True, "half_block": False}
    compiled = _run(case)
    for mode in ({"interpret": True}, {"checked": True, "interpret": True}):
        assert all(c.tobytes() == o.tobytes() for c, o in zip(compiled, _run(case, **mode))), mode


def test_a_count_past_the_destination_is_reported():
    case = {"which": 0, "count": N + 16, "seed": 0, "scale": 1.0, "offset": 0, "sign": True, "half_block": True}
    with pytest.raises(an.KernelCheckError, match="ub-outside-buffer"):
        _run(case, checked=True, interpret=True)


def test_add_deq_relu_reference_by_hand():
    a = np.array([100, -100, 2**31 - 1, 7], np.int32)
    got = add_deq_relu_reference(a, np.array([28, 0, 1, 0], np.int32), np.float16(0.5))
    assert got.tolist() == [64.0, 0.0, 0.0, 3.5]  # 2**31 - 1 + 1 wraps to -2**31: Relu gives 0
    assert not np.signbit(got[1])


def test_a_source_add_deq_relu_computed_in_is_reported_when_copied_out():
    case = {"which": 3, "count": 64, "seed": 0, "scale": 1.0, "offset": 0, "sign": True, "half_block": True}
    x16, x32, scales, offsets, signs = _inputs(0)
    y8, yu8, yh = np.zeros(2 * N, np.int8), np.zeros(2 * N, np.uint8), np.zeros(N, np.uint16)
    with pytest.raises(an.KernelCheckError, match="gm-write-garbage"):
        dequant_kernel.launch(x16, x32, y8, yu8, yh, scales, offsets, signs, 3, 64, 1.0, 0, True, True, False,
                              0, 1, 8, 1, 8, block_dim=1, checked=True, interpret=True)


def test_b8_rounds_the_product_then_clamps_before_the_offset():
    """The 950 model's steps: rint(src * scale) to [-256, 255], then the offset, then the sign mode."""
    src = np.array([300, 1, -400], np.int16)
    dst = np.zeros(32, np.int8)
    out = cast_dequant_b8(dst, src, deq_config(1.0, -200, True), False, [(0, 0), (2, 0)])
    assert out[[0, 2]].tolist() == [55, -128]  # 300 -> 255 - 200; -400 -> -256 - 200, saturated
    tie = cast_dequant_b8(dst, src, deq_config(0.5, 1, True), False, [(1, 0)])
    assert tie[1] == 1  # rint(0.5) = 0, then + 1 (not rint(1.5) = 2)
