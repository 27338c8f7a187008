"""DataCopy's ND2NZ, NZ2ND and slice forms (issue #52) against their references: hypothesis over
fp16 and fp32, matrices, rows, columns (a short C0 chunk) and strides; the slice page's example
and back; compiled and interpreted alike; checked mode names a row past the source."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba._numba_compat.jit import jit
from ascend_numba.host.references.layout import nd2nz, nz2nd, slice_copy
from ascend_numba.kernels import (KernelCheckError, Nd2NzParams, Nz2NdParamsFull, SliceInfo, alloc_buffer, data_copy,
                                  data_copy_slice, duplicate)

UB_BYTES, GM = 16384, 4096  # bytes of the UB tile; GM elements


@jit
def _round_trip(ctx, nz_out, nd_out, x, nd, params, back):
    t = alloc_buffer(ctx, UB_BYTES // x.itemsize, x.dtype)
    duplicate(ctx, t.view(np.uint32), np.uint32(0xAAAAAAAA), UB_BYTES // 4)
    data_copy(ctx, t, 0, x, 0, params)  # ND -> NZ
    data_copy(ctx, nz_out, 0, t, 0, t.size)
    data_copy(ctx, nd_out, 0, t, 0, back)  # NZ -> ND


@an.kernel
def nz_kernel(ctx, nz16, nd16, x16, nz32, nd32, x32, nd, n, d, s_mat, s_d, c0_stride, n_stride, d_mat, b_mat,
              b_n, b_d, b_dmat):
    params = Nd2NzParams(nd, n, d, s_mat, s_d, c0_stride, n_stride, d_mat)
    back = Nz2NdParamsFull(nd, n, d // 16 * 16, b_mat, b_n, b_d, b_dmat)
    _round_trip(ctx, nz16, nd16, x16, nd, params, back)
    _round_trip(ctx, nz32, nd32, x32, nd, params, back)


def _run(nd, n, d, s_mat, s_d, c0_stride, n_stride, d_mat, b_mat, b_n, b_d, b_dmat, **mode):
    x32 = np.arange(1, GM + 1, dtype=np.float32)
    x16 = np.arange(1, GM + 1, dtype=np.float16).view(np.uint16)
    want, outs = [], {}
    for x in (x16, x32):
        nz, back = np.zeros(UB_BYTES // x.itemsize, x.dtype), np.full(GM, 7, x.dtype)
        outs[x.dtype] = (nz, back)
        if mode.get("checked"):
            continue
        ub = nd2nz(np.full(UB_BYTES // x.itemsize, 0xAAAA if x.itemsize == 2 else np.uint32(0xAAAAAAAA).view(
            np.float32), x.dtype), x, nd, n, d, s_mat, s_d, c0_stride, n_stride, d_mat)
        want.append((ub, nz2nd(back, ub, nd, n, d // 16 * 16, b_mat, b_n, b_d, b_dmat)))
    nz_kernel.launch(*outs[np.dtype(np.uint16)], x16, *outs[np.dtype(np.float32)], x32, nd, n, d, s_mat, s_d,
                     c0_stride, n_stride, d_mat, b_mat, b_n, b_d, b_dmat, block_dim=1, **mode)
    got = [outs[np.dtype(np.uint16)], outs[np.dtype(np.float32)]]
    return got, want


@settings(max_examples=25, deadline=None)
@given(nd=st.integers(0, 2), n=st.integers(0, 12), d=st.integers(1, 40), extra=st.integers(0, 8),
       c0_gap=st.integers(0, 4), n_stride=st.integers(1, 2), b_n=st.integers(0, 4), b_gap=st.integers(0, 8))
def test_nd2nz_and_nz2nd_are_the_reference(nd, n, d, extra, c0_gap, n_stride, b_n, b_gap):
    s_d = d + extra
    c0_stride = n * n_stride + c0_gap  # a column chunk's rows, then a gap
    d_mat = 3 * c0_stride * 16  # room for three fp16 chunks of C0 = 16 (fp32: C0 = 8)
    b_n = max(b_n, n)
    got, want = _run(nd, n, d, n * s_d + 5, s_d, c0_stride, n_stride, d_mat, d_mat // 256 + 1, b_n, d + b_gap,
                     n * (d + b_gap) + 3)
    for (nz, back), (want_nz, want_back) in zip(got, want):
        assert nz.tobytes() == want_nz.tobytes()
        assert back.tobytes() == want_back.tobytes()


def test_compiled_and_interpreted_agree():
    args = (2, 5, 21, 130, 24, 6, 1, 320, 2, 8, 40, 333)
    compiled, want = _run(*args)
    interpreted, _ = _run(*args, interpret=True)
    for c, i, w in zip(compiled, interpreted, want):
        assert c[0].tobytes() == i[0].tobytes() == w[0].tobytes() and c[1].tobytes() == i[1].tobytes()


def test_checked_mode_names_a_row_past_the_source():
    with pytest.raises(KernelCheckError, match=r"DataCopyPad: \[gm-out-of-bounds\] src in GM x16 \(argument 2\)"):
        _run(1, 12, 16, 0, 400, 12, 1, 0, 1, 12, 16, 0, checked=True)  # rows 400 elements apart: 4800 > 4096


# ---- the slice form ----------------------------------------------------------------------------------------

SRC_INFO = (SliceInfo(16, 70, 7, 3, 87), SliceInfo(0, 2, 1, 1, 3))  # the page's: rows 0 and 2, two bursts each
DST_INFO = (SliceInfo(0, 47, 0, 3, 48), SliceInfo(0, 1, 0, 1, 2))
BACK_INFO = (SliceInfo(8, 63, 8, 3, 64), SliceInfo(1, 3, 1, 1, 4))  # a gap of 8, rows 1 and 3 of 4 x 64


@an.kernel
def slice_kernel(ctx, out, x):
    t = alloc_buffer(ctx, 256, np.float32)
    duplicate(ctx, t, -1.0, 256)
    data_copy_slice(ctx, t, x, DST_INFO, SRC_INFO, 2)  # GM -> UB
    data_copy_slice(ctx, out, t, BACK_INFO, DST_INFO, 2)  # UB -> GM


def test_the_pages_slice_example_and_back():
    x = np.arange(3 * 87, dtype=np.float32)
    ub = slice_copy(np.full(256, -1.0, np.float32), x, DST_INFO, SRC_INFO)
    rows = x.reshape(3, 87)[[0, 2]]
    assert np.array_equal(ub[:96].reshape(2, 48), np.concatenate([rows[:, 16:40], rows[:, 47:71]], axis=1))
    for mode in ({}, {"interpret": True}, {"checked": True}):
        out = np.zeros(256, np.float32)
        slice_kernel.launch(out, x, block_dim=1, **mode)
        assert np.array_equal(out, slice_copy(np.zeros(256, np.float32), ub, BACK_INFO, DST_INFO)), mode
