"""The vector ops' level-0 form (masks, repeats, strides; issue #51) against the plain reference
``host.references.repeat``: compiled, interpreted and checked, the mask register's modes, and
checked mode's rules for the form.

One kernel serves every case (a binary, a tensor-scalar and a unary op, Duplicate, the register
read with is_set_mask=False, on fp32 and fp16 tiles): its parameters are run-time arguments, so it
compiles once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import ascend_numba as an
from ascend_numba.host.references.repeat import level0, mask_of_length
from ascend_numba.host.references.vector import reference
from ascend_numba.kernels import (
    MASK_PLACEHOLDER, BinaryRepeatParams, KernelCheckError, UnaryRepeatParams, add, alloc_buffer, data_copy,
    axpy, duplicate, muls, reinterpret, relu, set_mask_count, set_mask_norm, set_vector_mask,
)
from ascend_numba.kernels.primitives.masks import lanes_of_length

TILE = 4096  # elements per tile: the strides below stay inside
OPS = ("add", "muls", "relu", "duplicate", "add_register", "count_then_register")
SCALAR = 3.0


@njit
def _one_call(ctx, d, a, b, op, counter, use_len, mask_len, lo, hi, repeat, d_blk, a_blk, b_blk, d_rep, a_rep, b_rep):
    binary = BinaryRepeatParams(d_blk, a_blk, b_blk, d_rep, a_rep, b_rep)
    unary = UnaryRepeatParams(d_blk, a_blk, d_rep, a_rep)
    if counter:
        set_mask_count(ctx)
    if op == 0:
        if use_len:
            add(ctx, d, a, b, mask_len, repeat, binary)
        else:
            add(ctx, d, a, b, (lo, hi), repeat, binary)
    elif op == 1:
        if use_len:
            muls(ctx, d, a, SCALAR, mask_len, repeat, unary)
        else:
            muls(ctx, d, a, SCALAR, (lo, hi), repeat, unary)
    elif op == 2:
        relu(ctx, d, a, (lo, hi), repeat, unary)
    elif op == 3:
        duplicate(ctx, d, SCALAR, (lo, hi), repeat, d_blk, d_rep)
    elif op == 4:  # the register as set before the call
        set_vector_mask(ctx, hi, lo)
        add(ctx, d, a, b, MASK_PLACEHOLDER, repeat, binary, is_set_mask=False)
    else:  # a count-form call leaves normal mode and every lane set
        set_vector_mask(ctx, hi, lo)
        add(ctx, b, a, a, TILE)
        add(ctx, d, a, b, MASK_PLACEHOLDER, repeat, binary, is_set_mask=False)
    set_mask_norm(ctx)


@an.kernel
def level0_kernel(ctx, x32, y32, o32, x16, y16, o16, op, wide, counter, use_len, mask_len, lo, hi, repeat, d_blk,
                  a_blk, b_blk, d_rep, a_rep, b_rep):
    a32, b32, d32 = alloc_buffer(ctx, TILE, np.float32), alloc_buffer(ctx, TILE, np.float32), \
        alloc_buffer(ctx, TILE, np.float32)
    a16, b16, d16 = alloc_buffer(ctx, TILE, np.uint16), alloc_buffer(ctx, TILE, np.uint16), \
        alloc_buffer(ctx, TILE, np.uint16)
    data_copy(ctx, a32, 0, x32, 0, TILE)
    data_copy(ctx, b32, 0, y32, 0, TILE)
    data_copy(ctx, d32, 0, o32, 0, TILE)
    data_copy(ctx, a16, 0, x16, 0, TILE)
    data_copy(ctx, b16, 0, y16, 0, TILE)
    data_copy(ctx, d16, 0, o16, 0, TILE)
    if wide:
        _one_call(ctx, d32, a32, b32, op, counter, use_len, mask_len, lo, hi, repeat, d_blk, a_blk, b_blk, d_rep,
                  a_rep, b_rep)
        data_copy(ctx, o32, 0, d32, 0, TILE)
    else:
        _one_call(ctx, d16, a16, b16, op, counter, use_len, mask_len, lo, hi, repeat, d_blk, a_blk, b_blk, d_rep,
                  a_rep, b_rep)
        data_copy(ctx, o16, 0, d16, 0, TILE)


def _tiles(seed, dtype):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(TILE).astype(dtype)
    y = rng.standard_normal(TILE).astype(dtype)
    o = np.full(TILE, -7, dtype)  # lanes not computed keep it
    return x, y, o


def _run(case, seed=0, **mode):
    op, wide, counter, use_len, mask_len, lo, hi, repeat, strides = case
    dtype = np.float32 if wide else np.float16
    tiles = {w: _tiles(seed, np.float32 if w == 32 else np.float16) for w in (32, 16)}
    args = [*tiles[32], *(t.view(np.uint16) for t in tiles[16])]
    level0_kernel.launch(*args, OPS.index(op), wide, counter, use_len, mask_len, np.uint64(lo), np.uint64(hi), repeat,
                         *strides, block_dim=1, **mode)
    return (args[2] if wide else args[5].view(np.float16)), tiles[32 if wide else 16], dtype


def _expected(case, tiles, dtype):
    op, wide, counter, use_len, mask_len, lo, hi, repeat, (d_blk, a_blk, b_blk, d_rep, a_rep, b_rep) = case
    x, y, o = tiles
    size = np.dtype(dtype).itemsize
    high, low = mask_of_length(mask_len) if use_len and op in ("add", "muls") else (hi, lo)
    if op == "count_then_register":
        y = reference("add", x, x)
        high, low, counter = 2**64 - 1, 2**64 - 1, False
    if op == "duplicate":
        return level0(lambda: np.float32(SCALAR), o, [], size, repeat, high, low, counter, [(d_blk, d_rep)])
    binary = op in ("add", "add_register", "count_then_register")
    strides = [(d_blk, d_rep), (a_blk, a_rep)] + ([(b_blk, b_rep)] if binary else [])
    sources = [x, y] if binary else [x]
    name = {"muls": "muls", "relu": "relu"}.get(op, "add")
    scalar = (SCALAR,) if op == "muls" else ()
    return level0(lambda *s: reference(name, *s, *scalar), o, sources, size, repeat, high, low, counter, strides)


def _case(draw_op, wide, counter, use_len, mask_len, words, repeat, strides):
    return (draw_op, wide, counter, use_len, mask_len, words[0], words[1], repeat, strides)


_words = st.one_of(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)),
                   st.sampled_from([(2**64 - 1, 2**64 - 1), (2**64 - 1, 0), (0b1010, 1 << 63)]))
# Strides that keep every lane inside a tile of TILE elements for up to 8 repeats.
_strides = st.tuples(st.integers(1, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 24),
                     st.integers(0, 24), st.integers(0, 24))
_cases = st.builds(_case, st.sampled_from(OPS), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 140),
                   _words, st.integers(0, 8), _strides)


def _counted(case):
    """A counter-mode count that stays inside the tiles: the low word's lowest 10 bits."""
    op, wide, counter, use_len, mask_len, lo, hi, repeat, strides = case
    if counter and op != "count_then_register":
        return (op, wide, counter, False, mask_len, lo % 1024, 0, repeat, strides)
    return case


@settings(max_examples=60, deadline=None)
@given(case=_cases.map(_counted), seed=st.integers(0, 2**16))
def test_level0_calls_compute_the_reference_lanes(case, seed):
    got, tiles, dtype = _run(case, seed)
    want = _expected(case, tiles, dtype)
    assert got.view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), case


FIXED = [
    ("add", True, False, True, 40, 0, 0, 3, (1, 2, 1, 8, 16, 8)),
    ("add", False, False, False, 0, 0xF0F0, 1 << 63, 2, (2, 1, 1, 16, 8, 8)),
    ("muls", False, True, False, 0, 300, 0, 1, (2, 2, 1, 16, 16, 8)),
    ("duplicate", True, False, False, 0, 0x5555, 0, 4, (3, 0, 0, 24, 0, 0)),
    ("count_then_register", True, False, False, 0, 1, 0, 2, (1, 1, 1, 8, 8, 8)),
]


@pytest.mark.parametrize("case", FIXED, ids=lambda c: c[0])
def test_compiled_interpreted_and_checked_give_the_same_bits(case):
    got = [_run(case, 5, **mode)[0] for mode in ({}, {"interpret": True}, {"checked": True, "interpret": True})]
    assert got[0].tobytes() == got[1].tobytes() == got[2].tobytes()
    _, tiles, dtype = _run(case, 5)
    assert got[0].tobytes() == _expected(case, tiles, dtype).tobytes()


def test_the_continuous_mask_is_the_devices():
    for n in range(-2, 200):
        high, low = (int(w) % 2**64 for w in lanes_of_length.py_func(n))
        assert (high, low) == mask_of_length(n), n


@pytest.mark.parametrize("case, rule, operand, details", [
    (("add", True, False, False, 0, 1, 0, 256, (1, 1, 1, 8, 8, 8)), "repeat-params-out-of-range", "dst",
     {"param": "repeatTimes", "value": 256}),
    (("add", True, False, False, 0, 1, 0, 1, (0, 1, 1, 8, 8, 8)), "repeat-params-out-of-range", "dst",
     {"param": "dstBlkStride", "value": 0}),
    (("add", True, False, False, 0, 2**64 - 1, 0, 3, (1, 1, 1, 255, 8, 8)), "ub-outside-buffer", "dst", {}),
    (("add", True, False, True, -3, 0, 0, 1, (1, 1, 1, 8, 8, 8)), "repeat-params-out-of-range", "dst",
     {"param": "mask", "value": -3}),
])
def test_checked_mode_names_a_bad_call(case, rule, operand, details):
    with pytest.raises(KernelCheckError) as caught:
        _run(case, checked=True, interpret=True)
    err = caught.value
    assert (err.rule, err.operand) == (rule, operand), str(err)
    assert details.items() <= err.details.items(), str(err)


@an.kernel
def overlap_kernel(ctx, x, out, which):
    t = alloc_buffer(ctx, 1024, np.float32)
    data_copy(ctx, t, 0, x, 0, 1024)
    if which == 0:  # dst one block past src: a partial overlap
        add(ctx, t[8:], t, t[512:], 64, 2, BinaryRepeatParams(1, 1, 1, 8, 8, 8))
    elif which == 1:  # in place, element for element
        add(ctx, t, t, t[512:], 64, 2, BinaryRepeatParams(1, 1, 1, 8, 8, 8))
    elif which == 3:  # dst on the odd blocks, src on the even ones: their extents meet, no byte does
        add(ctx, t[8:], t, t[512:], 64, 2, BinaryRepeatParams(2, 2, 1, 16, 16, 8))
    elif which == 4:  # in place at repeat stride 4: the second repeat reads half the first's result
        add(ctx, t, t, t[512:], 64, 2, BinaryRepeatParams(1, 1, 1, 4, 4, 8))
    else:  # over src1 at repeat stride 0: the device allows it for Add
        add(ctx, t[512:], t, t[512:], 64, 2, BinaryRepeatParams(1, 1, 1, 0, 8, 0))
    data_copy(ctx, out, 0, t, 0, 1024)


def _overlap_expected(x, which):
    want = x.copy()
    if which == 1:  # in place: each lane reads its own element
        want[:128] = x[:128] + x[512:640]
    elif which == 3:
        for r in range(2):
            for b in range(8):
                d, s = 8 + (16 * r + 2 * b) * 8, (16 * r + 2 * b) * 8
                want[d:d + 8] = x[s:s + 8] + x[512 + 64 * r + 8 * b:512 + 64 * r + 8 * b + 8]
    else:  # dst and src1 at repeat stride 0: the second repeat adds to the first's result
        want[512:576] = x[512:576] + x[:64] + x[64:128]
    return want


@pytest.mark.parametrize("which, bad", [(0, True), (1, False), (2, False), (3, False), (4, True)])
def test_checked_mode_refuses_a_partial_overlap_only(which, bad):
    x = np.arange(1024, dtype=np.float32)
    out = np.zeros(1024, np.float32)
    if bad:
        with pytest.raises(KernelCheckError, match="vector-partial-overlap"):
            overlap_kernel.launch(x, out, which, block_dim=1, checked=True, interpret=True)
        return
    for mode in ({}, {"checked": True, "interpret": True}):
        out[:] = 0
        overlap_kernel.launch(x, out, which, block_dim=1, **mode)
        assert np.array_equal(out, _overlap_expected(x, which)), mode


@an.kernel
def _mixed_axpy(ctx, x, out, apart):
    t = alloc_buffer(ctx, 256, np.float32)
    data_copy(ctx, t, 0, x, 0, 256)
    half = reinterpret(t, np.uint16)
    axpy(ctx, t, half[256:] if apart else half, 2.0, 64, 1, UnaryRepeatParams(1, 1, 8, 4))
    data_copy(ctx, out, 0, t, 0, 256)


@pytest.mark.parametrize("apart", [False, True])
def test_an_fp16_axpy_source_on_its_fp32_destination_is_refused(apart):
    """Lane k's fp16 source bytes lie in lane k // 2's fp32 element: not lane for lane."""
    args = (np.zeros(256, np.float32), np.zeros(256, np.float32), apart)
    if apart:
        _mixed_axpy.launch(*args, block_dim=1, checked=True, interpret=True)
        return
    with pytest.raises(KernelCheckError, match="vector-partial-overlap") as caught:
        _mixed_axpy.launch(*args, block_dim=1, checked=True, interpret=True)
    assert caught.value.details["written_in"] == 0


def test_a_level0_call_on_1_byte_tiles_does_not_compile():
    @an.kernel
    def bytes_add(ctx, x, out):
        t = alloc_buffer(ctx, 256, np.int8)
        data_copy(ctx, t, 0, x, 0, 256)
        add(ctx, t, t, t, 128, 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8))
        data_copy(ctx, out, 0, t, 0, 256)

    with pytest.raises(Exception, match="1-byte tiles only"):
        bytes_add.launch(np.zeros(256, np.int8), np.zeros(256, np.int8), block_dim=1)


@an.kernel
def _huge_counter(ctx, x, out):
    t = alloc_buffer(ctx, 256, np.float32)
    data_copy(ctx, t, 0, x, 0, 256)
    set_mask_count(ctx)
    set_vector_mask(ctx, 0, 2**31 - 1)
    muls(ctx, t, t, 2.0, MASK_PLACEHOLDER, 1, UnaryRepeatParams(1, 1, 8, 8), False)
    set_mask_norm(ctx)
    data_copy(ctx, out, 0, t, 0, 256)


def test_a_huge_counter_is_reported_at_the_tiles_end():
    """Checked mode stops at the first lane past the tile (interpreted: 2**31 lanes would not end)."""
    with pytest.raises(KernelCheckError, match="ub-outside-buffer"):
        _huge_counter.launch(np.zeros(256, np.float32), np.zeros(256, np.float32), block_dim=1, checked=True,
                             interpret=True)
