"""DataCopy with DataCopyParams (issue #52): blocks of 32-byte blocks with gaps, GM -> UB, UB -> UB
and UB -> GM, against a NumPy reference of the device's formula (hypothesis over counts, lengths
and gaps), compiled and interpreted; checked mode names a block past the buffer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.kernels import DataCopyParams, KernelCheckError, alloc_buffer, data_copy, duplicate

UB = 256  # fp32 elements of each UB tile: 32 blocks
PER_BLOCK = 8  # fp32 elements of a 32-byte block


@an.kernel
def blocks_kernel(ctx, out, x, count, length, gm_gap, ub_gap, out_gap):
    a = alloc_buffer(ctx, UB, np.float32)
    b = alloc_buffer(ctx, UB, np.float32)
    duplicate(ctx, a, -1.0, UB)
    duplicate(ctx, b, -2.0, UB)
    data_copy(ctx, a, 0, x, 0, DataCopyParams(count, length, gm_gap, ub_gap))  # GM -> UB
    data_copy(ctx, b, PER_BLOCK, a, 0, DataCopyParams(count, length, ub_gap, 0))  # UB -> UB, packed
    data_copy(ctx, out, 0, b, 0, DataCopyParams(1, UB // PER_BLOCK, 0, out_gap))  # UB -> GM, one block


def _blocks(dst, d, src, s, count, length, src_gap, dst_gap):
    """The device's DataCopyParams formula, in elements of 32-byte blocks."""
    n = length * PER_BLOCK
    for i in range(count):
        at_s, at_d = s + i * (length + src_gap) * PER_BLOCK, d + i * (length + dst_gap) * PER_BLOCK
        dst[at_d:at_d + n] = src[at_s:at_s + n]


def reference(x, count, length, gm_gap, ub_gap):
    a, b = np.full(UB, -1.0, np.float32), np.full(UB, -2.0, np.float32)
    _blocks(a, 0, x, 0, count, length, gm_gap, ub_gap)
    _blocks(b, PER_BLOCK, a, 0, count, length, ub_gap, 0)
    return b


def _case(count, length, gm_gap, ub_gap, **mode):
    x = np.arange(2048, dtype=np.float32)
    out = np.zeros(UB, np.float32)
    blocks_kernel.launch(out, x, count, length, gm_gap, ub_gap, 5, block_dim=1, **mode)
    return out, reference(x, count, length, gm_gap, ub_gap)


@settings(max_examples=25, deadline=None)
@given(count=st.integers(0, 6), length=st.integers(0, 4), gm_gap=st.integers(0, 9), ub_gap=st.integers(0, 1))
def test_blocks_are_the_devices(count, length, gm_gap, ub_gap):
    got, want = _case(count, length, gm_gap, ub_gap)
    assert np.array_equal(got, want)


def test_compiled_and_interpreted_agree():
    compiled, want = _case(5, 3, 7, 1)
    interpreted, _ = _case(5, 3, 7, 1, interpret=True)
    assert np.array_equal(compiled, want) and np.array_equal(interpreted, want)


def test_checked_mode_names_a_block_past_the_buffer():
    x = np.arange(2048, dtype=np.float32)
    out = np.zeros(UB, np.float32)
    with pytest.raises(KernelCheckError, match=r"DataCopy: \[ub-outside-buffer\] dst"):
        blocks_kernel.launch(out, x, 6, 4, 0, 2, 0, block_dim=1, checked=True)  # 6 x (4 + 2) blocks: 36 of 32
