"""CreateVecIndex (issue #51) against its reference (the device's recurrence, fp16's chained
roundings included), compiled and interpreted, on the four tile types: one kernel for the count
form, one for the level-0 form (a continuous mask or mask words, normal or counter mode, block and
repeat strides; the mask register it leaves, seen through a Duplicate that does not set one)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.host.references.index import create_vec_index as reference
from ascend_numba.host.references.index import create_vec_index_level0
from ascend_numba.kernels import alloc_buffer, create_vec_index, data_copy, duplicate, set_mask_count, set_mask_norm

TILE = 2048


@an.kernel
def index_kernel(ctx, o16, oi16, o32, oi32, first, count):
    t16 = alloc_buffer(ctx, TILE, np.uint16)
    ti16 = alloc_buffer(ctx, TILE, np.int16)
    t32 = alloc_buffer(ctx, TILE, np.float32)
    ti32 = alloc_buffer(ctx, TILE, np.int32)
    data_copy(ctx, t16, 0, o16, 0, TILE)
    data_copy(ctx, ti16, 0, oi16, 0, TILE)
    data_copy(ctx, t32, 0, o32, 0, TILE)
    data_copy(ctx, ti32, 0, oi32, 0, TILE)
    create_vec_index(ctx, t16, first, count)
    create_vec_index(ctx, ti16, first, count)
    create_vec_index(ctx, t32, first, count)
    create_vec_index(ctx, ti32, first, count)
    data_copy(ctx, o16, 0, t16, 0, TILE)
    data_copy(ctx, oi16, 0, ti16, 0, TILE)
    data_copy(ctx, o32, 0, t32, 0, TILE)
    data_copy(ctx, oi32, 0, ti32, 0, TILE)


DTYPES = (np.float16, np.int16, np.float32, np.int32)


def _run(first, count, **mode):
    outs = [np.full(TILE, 7, d) for d in DTYPES]
    index_kernel.launch(outs[0].view(np.uint16), *outs[1:], first, count, block_dim=1, **mode)
    return outs


@settings(max_examples=25, deadline=None)
@given(first=st.one_of(st.integers(-40000, 40000), st.sampled_from([0, 1900, 32760, -32768, 65500])),
       count=st.integers(0, TILE))
def test_create_vec_index_is_the_devices_recurrence(first, count):
    for got, dtype in zip(_run(float(first), count), DTYPES):
        want = np.full(TILE, 7, dtype)
        want[:count] = reference(dtype, float(first), count)
        assert got.tobytes() == want.tobytes(), (dtype, np.nonzero(got != want)[0][:4])


def test_compiled_and_interpreted_agree_and_fp16_rounds_as_the_chain():
    for first in (16384.0, 32760.0):  # the second wraps int16
        compiled, interpreted = _run(first, TILE), _run(first, TILE, interpret=True)
        assert all(c.tobytes() == i.tobytes() for c, i in zip(compiled, interpreted)), first
    compiled = _run(16384.0, TILE)
    direct = (np.float32(16384) + np.arange(TILE, dtype=np.float32)).astype(np.float16)
    assert not np.array_equal(compiled[0], direct)  # the chained Adds round otherwise than first + i once


# ---- the level-0 form ---------------------------------------------------------------------------------

@an.kernel
def index_level0_kernel(ctx, o16, oi16, o32, oi32, seen, first, lanes, low, high, words, repeat, blk, rep, counter):
    t16 = alloc_buffer(ctx, TILE, np.uint16)
    ti16 = alloc_buffer(ctx, TILE, np.int16)
    t32 = alloc_buffer(ctx, TILE, np.float32)
    ti32 = alloc_buffer(ctx, TILE, np.int32)
    ts = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, t16, 0, o16, 0, TILE)
    data_copy(ctx, ti16, 0, oi16, 0, TILE)
    data_copy(ctx, t32, 0, o32, 0, TILE)
    data_copy(ctx, ti32, 0, oi32, 0, TILE)
    data_copy(ctx, ts, 0, seen, 0, 64)
    if counter:
        set_mask_count(ctx)
    if words:
        create_vec_index(ctx, t16, first, (low, high), repeat, blk, rep)
        create_vec_index(ctx, ti16, first, (low, high), repeat, blk, rep)
        create_vec_index(ctx, ti32, first, (low, high), repeat, blk, rep)
        create_vec_index(ctx, t32, first, (low, high), repeat, blk, rep)
    else:
        create_vec_index(ctx, t16, first, lanes, repeat, blk, rep)
        create_vec_index(ctx, ti16, first, lanes, repeat, blk, rep)
        create_vec_index(ctx, ti32, first, lanes, repeat, blk, rep)
        create_vec_index(ctx, t32, first, lanes, repeat, blk, rep)
    duplicate(ctx, ts, 1.0, 0, 1, 1, 8, False)  # under the register the last call left
    set_mask_norm(ctx)
    data_copy(ctx, o16, 0, t16, 0, TILE)
    data_copy(ctx, oi16, 0, ti16, 0, TILE)
    data_copy(ctx, o32, 0, t32, 0, TILE)
    data_copy(ctx, oi32, 0, ti32, 0, TILE)
    data_copy(ctx, seen, 0, ts, 0, 64)


def _level0(first, mask, repeat, blk, rep, counter=False, **mode):
    outs = [np.full(TILE, 7, d) for d in DTYPES]
    seen = np.zeros(64, np.float32)
    words = not isinstance(mask, int)
    low, high = (mask[0], mask[1]) if words else (0, 0)
    index_level0_kernel.launch(outs[0].view(np.uint16), *outs[1:], seen, first, mask if not words else 0,
                               np.uint64(low).view(np.int64), np.uint64(high).view(np.int64), words, repeat, blk, rep,
                               counter, block_dim=1, **mode)
    return outs, seen


_MASKS = st.one_of(st.integers(0, 128), st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)))


@settings(max_examples=20, deadline=None)
@given(first=st.sampled_from([0.0, 3.0, -100.0, 16384.0, 32760.0]), mask=_MASKS, repeat=st.integers(0, 6),
       blk=st.integers(1, 3), rep=st.integers(0, 24), counter=st.booleans())
def test_level0_is_the_implementations_steps(first, mask, repeat, blk, rep, counter):
    if counter and isinstance(mask, int):
        counter = False  # a continuous mask in counter mode is a count: not the form this test builds
    outs, _ = _level0(first, mask, repeat, blk, rep, counter)
    for got, dtype in zip(outs, DTYPES):
        want = create_vec_index_level0(np.full(TILE, 7, dtype), first, mask, repeat, blk, rep, counter)
        assert got.tobytes() == want.tobytes(), (dtype, np.nonzero(got != want)[0][:4])


@pytest.mark.parametrize(("lanes", "repeat", "seen"), [(20, 1, 4), (16, 1, 8), (8, 1, 8), (20, 2, 20), (5, 1, 5)])
def test_level0_leaves_the_register_as_its_last_adds(lanes, repeat, seen):
    """fp32, the last call: 8 lanes a block; the tail's Adds, else a whole block's, else (one block)
    no Adds at all, so 8 lanes leave the register as the int16 call's tail Adds (16 a block) set it."""
    _, got = _level0(0.0, lanes, repeat, 1, 8)
    assert int(np.count_nonzero(got)) == seen


def test_level0_compiled_interpreted_and_checked_agree():
    for mask in (100, (0x00FF00FF00FF00FF, 0x8000000000000001)):
        compiled = _level0(16384.0, mask, 5, 2, 20)
        for options in ({"interpret": True}, {"checked": True, "interpret": True}):
            other = _level0(16384.0, mask, 5, 2, 20, **options)
            assert all(c.tobytes() == o.tobytes() for c, o in zip(compiled[0] + [compiled[1]], other[0] + [other[1]]))


def test_level0_past_the_tile_is_reported():
    with pytest.raises(an.KernelCheckError, match="ub-outside-buffer"):
        _level0(0.0, 128, 4, 1, 255, checked=True, interpret=True)
