"""DataCopyPad GM -> UB with DataCopyPadExtParams (issue #52): the left and right pads and the bytes
to the block's end as the device fills them (padding_value, SetPadValue's value, or the block's
first element when no padding is asked for), compiled and interpreted; checked mode counts the
pads written only where their value is defined."""

from __future__ import annotations

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.kernels import (DataCopyPadExtParams, KernelCheckError, alloc_buffer, data_copy, data_copy_pad,
                                  duplicate, set_pad_value)

UB = 256  # fp32 elements of the UB tile


@an.kernel
def padded_kernel(ctx, out, x, blocks, nbytes, src_stride, dst_stride, is_pad, left, right, value, register):
    t = alloc_buffer(ctx, UB, np.float32)
    duplicate(ctx, t, -7.0, UB)
    if register == 1:
        set_pad_value(ctx, 3.5)
    data_copy_pad(ctx, t, 0, x, 0, blocks, nbytes, src_stride, dst_stride,
                  DataCopyPadExtParams(is_pad == 1, left, right, value))
    data_copy(ctx, out, 0, t, 0, UB)


def reference(x, blocks, nbytes, src_stride, dst_stride, is_pad, left, right, value, register):
    out = np.full(UB, -7.0, np.float32)
    n = nbytes // 4
    padded = -(-(4 * (left + n + right)) // 32) * 8  # elements a UB block spans
    for k in range(blocks):
        at = k * (padded + dst_stride * 8)
        first = k * (nbytes + src_stride) // 4
        data = x[first:first + n]
        out[at + left:at + left + n] = data
        fill = value if is_pad else 3.5 if register else data[0] if left == right == 0 else None
        if fill is not None:
            out[at:at + left] = fill
            out[at + left + n:at + padded] = fill
    return out


CASES = [(3, 20, 0, 0, 1, 2, 1, 9.0, 0), (2, 44, 4, 1, 0, 0, 0, 0.0, 0), (2, 12, 0, 0, 0, 1, 2, 0.0, 1),
         (4, 32, 8, 0, 1, 0, 0, -1.0, 0)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mode", [{}, {"interpret": True}])
def test_padded_blocks_are_the_devices(case, mode):
    x = np.arange(1, 65, dtype=np.float32)
    out = np.zeros(UB, np.float32)
    padded_kernel.launch(out, x, *case, block_dim=1, **mode)
    assert np.array_equal(out, reference(x, *case))


def test_undefined_pads_are_unwritten_in_checked_mode():
    x = np.arange(1, 65, dtype=np.float32)
    out = np.zeros(UB, np.float32)
    padded_kernel.launch(out, x, 2, 12, 0, 0, 1, 1, 2, 5.0, 0, block_dim=1, checked=True)  # defined: passes
    assert np.array_equal(out, reference(x, 2, 12, 0, 0, 1, 1, 2, 5.0, 0))


@an.kernel
def undefined_kernel(ctx, out, x):
    t = alloc_buffer(ctx, 16, np.float32)
    data_copy_pad(ctx, t, 0, x, 0, 1, 12, 0, 0, DataCopyPadExtParams(False, 1, 0, 0.0))  # no value for the pads
    data_copy(ctx, out, 0, t, 0, 8)


def test_a_read_of_undefined_pads_is_reported():
    with pytest.raises(KernelCheckError, match=r"DataCopy: \[ub-uninitialized-read\]"):
        undefined_kernel.launch(np.zeros(8, np.float32), np.ones(8, np.float32), block_dim=1, checked=True)
