"""TransDataTo5HD (issue #52) against its reference on the UB's bytes: hypothesis over 1-, 2- and
4-byte elements, list placements, repeats, strides and the 1-byte halves; the address form
(get_phy_addr) as the tensor-list form; compiled and interpreted alike; checked mode on seeded bugs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba._numba_compat.jit import jit
from ascend_numba.host.references.layout import trans_data_to_5hd as reference
from ascend_numba.kernels import (KernelCheckError, TransDataTo5HDParams, alloc_buffer, data_copy, get_phy_addr,
                                  set_value, trans_data_to_5hd)

NB = 4096  # bytes of the source tile and of the destination tile
WIDTHS = (1, 2, 4)


@jit
def _list(t, first, step):
    """16 views of ``t``, entry k at its 32-byte block ``first + k * step``."""
    n = 32 // t.itemsize
    return (t[(first + 0 * step) * n:], t[(first + 1 * step) * n:], t[(first + 2 * step) * n:],
            t[(first + 3 * step) * n:], t[(first + 4 * step) * n:], t[(first + 5 * step) * n:],
            t[(first + 6 * step) * n:], t[(first + 7 * step) * n:], t[(first + 8 * step) * n:],
            t[(first + 9 * step) * n:], t[(first + 10 * step) * n:], t[(first + 11 * step) * n:],
            t[(first + 12 * step) * n:], t[(first + 13 * step) * n:], t[(first + 14 * step) * n:],
            t[(first + 15 * step) * n:])


@jit
def _tile(ctx, out, x, dtype, width, s0, s_step, d0, d_step, params, by_address):
    a = alloc_buffer(ctx, NB // width, dtype)
    b = alloc_buffer(ctx, NB // width, dtype)
    data_copy(ctx, a, 0, x.view(dtype), 0, a.size)
    data_copy(ctx, b, 0, out.view(dtype), 0, b.size)
    if by_address:
        src_at = alloc_buffer(ctx, 16, np.uint64)
        dst_at = alloc_buffer(ctx, 16, np.uint64)
        n = 32 // a.itemsize
        for k in range(16):
            set_value(ctx, src_at, k, get_phy_addr(ctx, a, (s0 + k * s_step) * n))
            set_value(ctx, dst_at, k, get_phy_addr(ctx, b, (d0 + k * d_step) * n))
        trans_data_to_5hd(ctx, dst_at, src_at, params, dtype)
    else:
        trans_data_to_5hd(ctx, _list(b, d0, d_step), _list(a, s0, s_step), params)
    data_copy(ctx, out.view(dtype), 0, b, 0, b.size)


@an.kernel
def vnchwconv_kernel(ctx, out, x, width, s0, s_step, d0, d_step, dst_high, src_high, repeat, d_rep, s_rep,
                     by_address):
    params = TransDataTo5HDParams(dst_high == 1, src_high == 1, repeat, d_rep, s_rep)
    if width == 1:
        _tile(ctx, out, x, np.uint8, 1, s0, s_step, d0, d_step, params, by_address == 1)
    elif width == 2:
        _tile(ctx, out, x, np.uint16, 2, s0, s_step, d0, d_step, params, by_address == 1)
    else:
        _tile(ctx, out, x, np.uint32, 4, s0, s_step, d0, d_step, params, by_address == 1)


def _run(seed, width, s0, s_step, d0, d_step, dst_high, src_high, repeat, d_rep, s_rep, by_address=0, **mode):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, NB, dtype=np.uint8)
    out = np.full(NB, 0xEE, np.uint8)
    before = out.copy()
    vnchwconv_kernel.launch(out, x, width, s0, s_step, d0, d_step, dst_high, src_high, repeat, d_rep, s_rep,
                            by_address, block_dim=1, **mode)
    ub = np.concatenate([x, before])  # the source tile, then the destination tile
    want = reference(ub, [NB + 32 * (d0 + k * d_step) for k in range(16)], [32 * (s0 + k * s_step) for k in range(16)],
                     width, bool(dst_high), bool(src_high), repeat, d_rep, s_rep)
    return out, want[NB:]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 99), width=st.sampled_from(WIDTHS), s0=st.integers(0, 16), s_step=st.integers(1, 4),
       d0=st.integers(0, 16), d_step=st.integers(1, 4), halves=st.integers(0, 3), repeat=st.integers(0, 3),
       d_rep=st.integers(0, 8), s_rep=st.integers(0, 8), by_address=st.integers(0, 1))
def test_vnchwconv_is_the_reference(seed, width, s0, s_step, d0, d_step, halves, repeat, d_rep, s_rep, by_address):
    dst_high, src_high = (halves & 1, halves >> 1) if width == 1 else (0, 0)
    got, want = _run(seed, width, s0, s_step, d0, d_step, dst_high, src_high, repeat, d_rep, s_rep, by_address)
    assert np.array_equal(got, want)


def test_a_16x16_half_block_is_its_transpose():
    got, _ = _run(1, 2, 0, 1, 0, 1, 0, 0, 1, 0, 0)
    x = np.random.default_rng(1).integers(0, 256, NB, dtype=np.uint8)
    assert np.array_equal(got[:512].view(np.uint16).reshape(16, 16), x[:512].view(np.uint16).reshape(16, 16).T)


def test_compiled_and_interpreted_agree():
    for width in WIDTHS:
        args = (7, width, 2, 3, 1, 2, 1 if width == 1 else 0, 0, 3, 5, 2)
        compiled, want = _run(*args)
        interpreted, _ = _run(*args, interpret=True)
        assert np.array_equal(compiled, want) and np.array_equal(interpreted, want), width


@pytest.mark.parametrize("args, message", [
    ((2, 0, 8, 0, 1, 0, 0, 2, 0, 200), r"TransDataTo5HD: \[ub-outside-buffer\] src"),  # repeat 1: block 120 + 200
    ((2, 0, 1, 0, 1, 1, 0, 1, 0, 0), r"TransDataTo5HD: \[mode-out-of-range\] dst: high half 1")])
def test_checked_mode_names_the_bug(args, message):
    with pytest.raises(KernelCheckError, match=message):
        _run(0, *args, checked=True)


@an.kernel
def short_list_kernel(ctx, out, x):
    a = alloc_buffer(ctx, 512, np.uint16)
    at = alloc_buffer(ctx, 4, np.uint64)  # 4 addresses, not 16
    data_copy(ctx, a, 0, x, 0, 512)
    for k in range(4):
        set_value(ctx, at, k, get_phy_addr(ctx, a, 16 * k))
    trans_data_to_5hd(ctx, at, at, TransDataTo5HDParams(False, False, 1, 0, 0), np.uint16)
    data_copy(ctx, out, 0, a, 0, 512)


def test_an_address_list_of_fewer_than_16_is_refused():
    x = np.arange(512, dtype=np.uint16)
    out = np.zeros(512, np.uint16)
    short_list_kernel.launch(out, x, block_dim=1)  # plain: nothing runs, nothing is read past the list
    assert np.array_equal(out, x)
    with pytest.raises(KernelCheckError, match=r"TransDataTo5HD: \[ub-outside-buffer\] src1"):
        short_list_kernel.launch(out, x, block_dim=1, checked=True)
