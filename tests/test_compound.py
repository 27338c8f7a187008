"""Axpy, MulAddDst, FusedMulAdd and MulAddRelu (the ops that read their destination; issue #51)
against their NumPy references: fp32, fp16 and fp16 sources into fp32, count and level-0 forms,
compiled and interpreted, special values included; checked mode reads the destination.

One kernel runs every op in every form on every pair of types, so it compiles once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import ascend_numba as an
from ascend_numba.host.references.compound import reference
from ascend_numba.host.references.repeat import level0, mask_of_length
from ascend_numba.kernels import (
    BinaryRepeatParams, KernelCheckError, UnaryRepeatParams, alloc_buffer, axpy, data_copy, fused_mul_add,
    mul_add_dst, mul_add_relu,
)

TILE = 1024
OPS = ("axpy", "mul_add_dst", "fused_mul_add", "mul_add_relu")
SCALAR = -1.5


@njit
def _one_op(ctx, d, a, b, which, level, mask, repeat):
    # Axpy takes UnaryRepeatParams, the others BinaryRepeatParams.
    unary = UnaryRepeatParams(1, 1, 8, 8)
    binary = BinaryRepeatParams(1, 1, 1, 8, 8, 8)
    if which == 0:
        if level:
            axpy(ctx, d, a, SCALAR, mask, repeat, unary)
        else:
            axpy(ctx, d, a, SCALAR, TILE)
    elif which == 1:
        if level:
            mul_add_dst(ctx, d, a, b, mask, repeat, binary)
        else:
            mul_add_dst(ctx, d, a, b, TILE)
    elif which == 2:
        if level:
            fused_mul_add(ctx, d, a, b, mask, repeat, binary)
        else:
            fused_mul_add(ctx, d, a, b, TILE)
    elif level:
        mul_add_relu(ctx, d, a, b, mask, repeat, binary)
    else:
        mul_add_relu(ctx, d, a, b, TILE)


@njit
def _one_mixed_op(ctx, d, a, b, which, level, mask, repeat):
    # fp16 sources into fp32 (Axpy and MulAddDst only: the others do not compile for it); a repeat
    # reads 64 fp16 sources, 4 blocks.
    if which == 0:
        if level:
            axpy(ctx, d, a, SCALAR, mask, repeat, UnaryRepeatParams(1, 1, 8, 4))
        else:
            axpy(ctx, d, a, SCALAR, TILE)
    elif level:
        mul_add_dst(ctx, d, a, b, mask, repeat, BinaryRepeatParams(1, 1, 1, 8, 4, 4))
    else:
        mul_add_dst(ctx, d, a, b, TILE)


@an.kernel
def compound_kernel(ctx, a32, b32, d32, a16, b16, d16, dm, which, level, mask, repeat):
    ta32, tb32, td32 = alloc_buffer(ctx, TILE, np.float32), alloc_buffer(ctx, TILE, np.float32), \
        alloc_buffer(ctx, TILE, np.float32)
    ta16, tb16, td16 = alloc_buffer(ctx, TILE, np.uint16), alloc_buffer(ctx, TILE, np.uint16), \
        alloc_buffer(ctx, TILE, np.uint16)
    tdm = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, ta32, 0, a32, 0, TILE)
    data_copy(ctx, tb32, 0, b32, 0, TILE)
    data_copy(ctx, td32, 0, d32, 0, TILE)
    data_copy(ctx, ta16, 0, a16, 0, TILE)
    data_copy(ctx, tb16, 0, b16, 0, TILE)
    data_copy(ctx, td16, 0, d16, 0, TILE)
    data_copy(ctx, tdm, 0, dm, 0, TILE)
    _one_op(ctx, td32, ta32, tb32, which, level, mask, repeat)
    _one_op(ctx, td16, ta16, tb16, which, level, mask, repeat)
    if which < 2:
        _one_mixed_op(ctx, tdm, ta16, tb16, which, level, mask, repeat)
    data_copy(ctx, d32, 0, td32, 0, TILE)
    data_copy(ctx, d16, 0, td16, 0, TILE)
    data_copy(ctx, dm, 0, tdm, 0, TILE)


SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 65504.0, -65504.0, 1e-7, np.inf, -np.inf, np.nan, 3.0e38, 2.0**-24],
                    np.float32)


def _inputs(seed):
    rng = np.random.default_rng(seed)
    out = []
    for dtype in (np.float32, np.float16):
        tiles = []
        for _ in range(3):
            t = rng.standard_normal(TILE).astype(np.float32) * np.float32(rng.choice([1, 100, 1e4]))
            t[rng.integers(0, TILE, 64)] = rng.choice(SPECIALS, 64)
            with np.errstate(over="ignore"):  # past fp16's range: inf, one more special value
                tiles.append(t.astype(dtype))
        out.append(tiles)
    dm = rng.standard_normal(TILE).astype(np.float32)
    return out[0], out[1], dm


def _run(which, level, mask, repeat, seed, **mode):
    (a32, b32, d32), (a16, b16, d16), dm = _inputs(seed)
    args = [a32, b32, d32.copy(), a16.view(np.uint16), b16.view(np.uint16), d16.copy().view(np.uint16), dm.copy()]
    compound_kernel.launch(*args, OPS.index(which), level, mask, repeat, block_dim=1, **mode)
    return args[2], args[5].view(np.float16), args[6]


def _want(which, level, mask, repeat, seed):
    (a32, b32, d32), (a16, b16, d16), dm = _inputs(seed)
    scalar_or_b = (lambda b: (SCALAR,)) if which == "axpy" else (lambda b: (b,))
    pairs = [(d32, a32, b32, 8), (d16, a16, b16, 8)] + ([(dm, a16, b16, 4)] if which in ("axpy", "mul_add_dst") else [])
    out = []
    for d, a, b, src_rep in pairs:
        if not level:
            out.append(reference(which, d, a, *scalar_or_b(b)))
            continue
        high, low = mask_of_length(mask)
        srcs = [a] if which == "axpy" else [a, b]
        strides = [(1, 8), (1, 8)] + [(1, src_rep)] * len(srcs)  # dst written, dst read, then the sources

        def op(dv, *sv):
            return reference(which, dv, *sv, *(() if which != "axpy" else (SCALAR,)))
        out.append(level0(op, d, [d, *srcs], d.itemsize, repeat, high, low, False, strides))
    return out + ([dm] if len(pairs) == 2 else [])


@settings(max_examples=12, deadline=None)
@given(which=st.sampled_from(OPS), level=st.booleans(), mask=st.integers(0, 128), repeat=st.integers(0, 7),
       seed=st.integers(0, 2**16))
def test_compound_ops_compute_their_references(which, level, mask, repeat, seed):
    got = _run(which, level, mask, repeat, seed)
    want = _want(which, level, mask, repeat, seed)
    for g, w, name in zip(got, want, ("fp32", "fp16", "fp16 into fp32")):
        assert g.tobytes() == w.tobytes(), (name, np.nonzero(g.view(np.uint8) != w.view(np.uint8))[0][:4])


@pytest.mark.parametrize("which", OPS)
def test_compiled_and_interpreted_agree(which):
    for level, mask, repeat in ((False, 0, 0), (True, 40, 5)):
        got = [_run(which, level, mask, repeat, 3, **mode) for mode in ({}, {"interpret": True})]
        for g, i in zip(*got):
            assert g.tobytes() == i.tobytes(), (which, level)


@an.kernel
def unread_dst(ctx, x, out):
    a = alloc_buffer(ctx, 64, np.float32)
    d = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    axpy(ctx, d, a, 2.0, 64)  # d was never written: Axpy reads it
    data_copy(ctx, out, 0, d, 0, 64)


def test_checked_mode_reports_a_destination_read_before_it_is_written():
    x = np.ones(64, np.float32)
    with pytest.raises(KernelCheckError, match="ub-uninitialized-read") as caught:
        unread_dst.launch(x, np.zeros(64, np.float32), block_dim=1, checked=True, interpret=True)
    assert caught.value.primitive == "Axpy"
