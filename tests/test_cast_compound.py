"""AddReluCast, SubReluCast and MulCast (issue #51) against their NumPy references
(``host.references.cast_compound``): every pair of types, count and level-0 forms (masks, repeats,
strides; the destination narrower than the sources), compiled, interpreted and checked.

One kernel runs every op on every pair (the tiles are byte buffers viewed as each pair's types),
so it compiles once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import ascend_numba as an
from ascend_numba.host.references.cast_compound import reference
from ascend_numba.host.references.repeat import level0
from ascend_numba.kernels import (
    BinaryRepeatParams, add_relu_cast, alloc_buffer, data_copy, mul_cast, reinterpret, sub_relu_cast,
)

BYTES = 4096
OPS = ("add_relu_cast", "sub_relu_cast", "mul_cast")
# (source dtype, destination dtype, the ops that take the pair): the A2/A3 tables.
PAIRS = ((np.float16, np.int8, OPS), (np.float32, np.float16, OPS[:2]), (np.int16, np.int8, OPS[:2]),
         (np.float16, np.uint8, OPS[2:]))


@njit
def _add_or_sub(ctx, d, a, b, which, level, lo, hi, repeat, params):
    if which == 0:
        if level:
            add_relu_cast(ctx, d, a, b, (lo, hi), repeat, params)
        else:
            add_relu_cast(ctx, d, a, b, a.size)
    elif level:
        sub_relu_cast(ctx, d, a, b, (lo, hi), repeat, params)
    else:
        sub_relu_cast(ctx, d, a, b, a.size)


@njit
def _mul(ctx, d, a, b, level, lo, hi, repeat, params):
    if level:
        mul_cast(ctx, d, a, b, (lo, hi), repeat, params)
    else:
        mul_cast(ctx, d, a, b, a.size)


@an.kernel
def cast_compound_kernel(ctx, a_gm, b_gm, d_gm, which, pair, level, lo, hi, repeat, d_blk, a_blk, b_blk, d_rep, a_rep,
                         b_rep):
    ta, tb, td = (alloc_buffer(ctx, BYTES, np.uint8), alloc_buffer(ctx, BYTES, np.uint8),
                  alloc_buffer(ctx, BYTES, np.uint8))
    data_copy(ctx, ta, 0, a_gm, 0, BYTES)
    data_copy(ctx, tb, 0, b_gm, 0, BYTES)
    data_copy(ctx, td, 0, d_gm, 0, BYTES)
    params = BinaryRepeatParams(d_blk, a_blk, b_blk, d_rep, a_rep, b_rep)
    if pair == 1:  # fp32 -> fp16
        _add_or_sub(ctx, reinterpret(td, np.uint16), reinterpret(ta, np.float32), reinterpret(tb, np.float32), which,
                    level, lo, hi, repeat, params)
    elif pair == 2:  # int16 -> int8
        _add_or_sub(ctx, reinterpret(td, np.int8), reinterpret(ta, np.int16), reinterpret(tb, np.int16), which,
                    level, lo, hi, repeat, params)
    elif pair == 3:  # fp16 -> uint8
        _mul(ctx, td, reinterpret(ta, np.uint16), reinterpret(tb, np.uint16), level, lo, hi, repeat, params)
    elif which == 2:  # fp16 -> int8
        _mul(ctx, reinterpret(td, np.int8), reinterpret(ta, np.uint16), reinterpret(tb, np.uint16), level, lo, hi,
             repeat, params)
    else:
        _add_or_sub(ctx, reinterpret(td, np.int8), reinterpret(ta, np.uint16), reinterpret(tb, np.uint16), which,
                    level, lo, hi, repeat, params)
    data_copy(ctx, d_gm, 0, td, 0, BYTES)


FLOAT_SPECIALS = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 126.5, 127.5, 128.0, 254.5, 255.5, 300.0, -129.0, 65504.0,
                  7e4, np.inf, -np.inf, np.nan, 1e-8]


def _tiles(pair, seed):
    src, dst, _ = PAIRS[pair]
    rng = np.random.default_rng(seed)
    n = BYTES // np.dtype(src).itemsize
    tiles = []
    for _ in range(2):
        if src == np.int16:
            t = rng.integers(-2**15, 2**15, n).astype(np.int16)
            t[rng.integers(0, n, 32)] = rng.choice([0, 1, -1, 127, 128, -128, 32767, -32768], 32)
        else:
            with np.errstate(over="ignore"):
                t = (rng.standard_normal(n) * rng.choice([1.0, 40.0, 4e4], n)).astype(src)
                t[rng.integers(0, n, n // 8)] = np.array(rng.choice(FLOAT_SPECIALS, n // 8)).astype(src)
        tiles.append(t)
    d = rng.integers(0, 256, BYTES).astype(np.uint8).view(dst)
    return tiles[0], tiles[1], d


def _run(which, pair, level, lo, hi, repeat, strides, seed, **mode):
    a, b, d = _tiles(pair, seed)
    out = d.view(np.uint8).copy()
    cast_compound_kernel.launch(a.view(np.uint8), b.view(np.uint8), out, OPS.index(which), pair, level, np.uint64(lo),
                                np.uint64(hi), repeat, *strides, block_dim=1, **mode)
    return out


def _want(which, pair, level, lo, hi, repeat, strides, seed):
    a, b, d = _tiles(pair, seed)
    if not level:  # the first a.size elements of dst (a narrower dst has more)
        out = d.copy()
        out[:a.size] = reference(which, d.dtype, a, b)
        return out.view(np.uint8)
    d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = strides
    return level0(lambda x, y: reference(which, d.dtype, x, y), d, [a, b], a.itemsize, repeat, hi, lo, False,
                  [(d_blk, d_rep), (a_blk, a_rep), (b_blk, b_rep)]).view(np.uint8)


CASES = [(op, pair) for pair, (_, _, ops) in enumerate(PAIRS) for op in ops]
_words = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([2**64 - 1, 0, 0xF0F0]))
# Strides that keep 8 repeats inside the 4096-byte tiles.
_strides = st.tuples(st.integers(1, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 8), st.integers(0, 12),
                     st.integers(0, 12))


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(CASES), level=st.booleans(), lo=_words, hi=_words, repeat=st.integers(0, 8),
       strides=_strides, seed=st.integers(0, 2**16))
def test_ops_compute_their_references(case, level, lo, hi, repeat, strides, seed):
    which, pair = case
    got = _run(which, pair, level, lo, hi, repeat, strides, seed)
    want = _want(which, pair, level, lo, hi, repeat, strides, seed)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (which, PAIRS[pair][:2], bad[:4])


@pytest.mark.parametrize("which, pair", CASES)
def test_compiled_interpreted_and_checked_agree(which, pair):
    for level, strides in ((False, (1, 1, 1, 8, 8, 8)), (True, (1, 2, 1, 4, 12, 8))):
        want = _want(which, pair, level, 0xFFFF_0000_FFFF_0001, 2**63 + 5, 3, strides, 11)
        for mode in ({}, {"interpret": True}, {"checked": True, "interpret": True}):
            got = _run(which, pair, level, 0xFFFF_0000_FFFF_0001, 2**63 + 5, 3, strides, 11, **mode)
            assert got.tobytes() == want.tobytes(), (which, pair, level, mode)


def test_the_conversion_rounds_to_even_and_saturates():
    a = np.array([0.5, 1.5, 2.5, 126.5, 127.5, 300.0, -3.0, np.nan], np.float16)
    zero = np.zeros_like(a)
    assert reference("add_relu_cast", np.int8, a, zero).tolist() == [0, 2, 2, 126, 127, 127, 0, 0]
    assert reference("mul_cast", np.uint8, a, np.full_like(a, 2)).tolist() == [1, 3, 5, 253, 255, 255, 0, 0]
    big = np.array([7e4, -1.0, np.nan], np.float32)
    assert reference("add_relu_cast", np.float16, big, np.zeros_like(big)).view(np.uint16).tolist() == \
        [0x7C00, 0x0000, 0x7E00]


def test_a_pair_the_device_does_not_convert_does_not_compile():
    @an.kernel
    def fp32_mul_cast(ctx, x, out):
        a = alloc_buffer(ctx, 64, np.float32)
        d = alloc_buffer(ctx, 64, np.int8)
        data_copy(ctx, a, 0, x, 0, 64)
        mul_cast(ctx, d, a, a, 64)
        data_copy(ctx, out, 0, d, 0, 64)

    with pytest.raises(Exception, match="MulCast converts"):
        fp32_mul_cast.launch(np.ones(64, np.float32), np.zeros(64, np.int8), block_dim=1)
