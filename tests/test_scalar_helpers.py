"""GetValue and the scalar unit's helpers (issue #52): the asc-devkit pages' examples and edge
cases, from Python and inside a compiled kernel (SetValue of their results, GetValue of them);
checked mode names a GetValue of bytes never written."""

from __future__ import annotations

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.host.primitives import RoundMode
from ascend_numba.kernels import (alloc_buffer, ceil_division, count_bits_cnt_same_as_sign_bit, count_leading_zero,
                                  KernelCheckError, data_copy, get_bit_count, get_sff_value, get_value, scalar_cast,
                                  set_value)

CASES = [  # (function, arguments, result)
    (count_leading_zero, (0x0100000000000020,), 7), (count_leading_zero, (0,), 64), (count_leading_zero, (-1,), 0),
    (count_bits_cnt_same_as_sign_bit, (0x0100000000000020,), 6),
    (count_bits_cnt_same_as_sign_bit, (0x0F00000000000000,), 3),
    (count_bits_cnt_same_as_sign_bit, (0x000F00FF0FF0FFFF,), 11),
    (count_bits_cnt_same_as_sign_bit, (0,), -1), (count_bits_cnt_same_as_sign_bit, (-1,), -1),
    (count_bits_cnt_same_as_sign_bit, (-2,), 62),
    (get_sff_value, (0x1000000000000100, 1), 8), (get_sff_value, (0, 1), -1), (get_sff_value, (-1, 0), -1),
    (get_sff_value, (0xFF, 0), 8), (get_bit_count, (0xF0F0, 1), 8), (get_bit_count, (0xF0F0, 0), 56),
    (get_bit_count, (-1, 1), 64), (ceil_division, (7, 2), 4), (ceil_division, (8, 2), 4), (ceil_division, (5, 0), 0),
]


def test_the_pages_examples():
    for function, args, want in CASES:
        assert function(*args) == want, (function.__name__, args)


@an.kernel
def helpers_kernel(ctx, out, x):
    t = alloc_buffer(ctx, 8, np.int64)
    set_value(ctx, t, 0, count_leading_zero(x))
    set_value(ctx, t, 1, count_bits_cnt_same_as_sign_bit(x))
    set_value(ctx, t, 2, get_sff_value(x, 1))
    set_value(ctx, t, 3, get_bit_count(x, 1))
    set_value(ctx, t, 4, ceil_division(x & 0xFFFF, 3))
    set_value(ctx, t, 5, get_value(ctx, t, 0) + get_value(ctx, t, 4))
    set_value(ctx, t, 6, 0)
    set_value(ctx, t, 7, 0)
    data_copy(ctx, out, 0, t, 0, 8)


def test_inside_a_kernel_compiled_and_interpreted():
    x = 0x000F00FF0FF0FFFF
    want = [count_leading_zero(x), 11, 0, bin(x).count("1"), -(-(x & 0xFFFF) // 3), 0, 0, 0]
    want[5] = want[0] + want[4]
    for mode in ({}, {"interpret": True}):
        out = np.zeros(8, np.int64)
        helpers_kernel.launch(out, x, block_dim=1, **mode)
        assert list(out) == want


@an.kernel
def unread_kernel(ctx, out):
    t = alloc_buffer(ctx, 8, np.float32)
    set_value(ctx, t, 0, 1.0)
    set_value(ctx, t, 0, get_value(ctx, t, 3))
    data_copy(ctx, out, 0, t, 0, 8)


def test_checked_mode_names_a_get_value_of_unwritten_bytes():
    with pytest.raises(KernelCheckError, match=r"GetValue: \[ub-uninitialized-read\] src"):
        unread_kernel.launch(np.zeros(8, np.float32), block_dim=1, checked=True)


@an.kernel
def cast_kernel(ctx, ints, halves, floats, x):
    i = alloc_buffer(ctx, 8, np.int32)
    h = alloc_buffer(ctx, 16, np.uint16)
    f = alloc_buffer(ctx, 8, np.float32)
    for k, mode in enumerate((RoundMode.CAST_ROUND, RoundMode.CAST_CEIL, RoundMode.CAST_FLOOR, RoundMode.CAST_RINT)):
        set_value(ctx, i, k, scalar_cast(x[0], np.int32, mode))
        set_value(ctx, i, 4 + k, scalar_cast(x[1], np.int32, mode))
    set_value(ctx, h, 0, scalar_cast(x[2], np.float16, RoundMode.CAST_ODD))
    set_value(ctx, h, 1, scalar_cast(x[2], "bfloat16"))
    set_value(ctx, f, 0, scalar_cast(scalar_cast(x[2], "bfloat16"), np.float32))
    data_copy(ctx, ints, 0, i, 0, 8)
    data_copy(ctx, halves, 0, h, 0, 16)
    data_copy(ctx, floats, 0, f, 0, 8)


@pytest.mark.parametrize("mode", [{}, {"interpret": True}])
def test_the_scalar_casts_are_the_pages(mode):
    import ml_dtypes
    ints, halves, floats = np.zeros(8, np.int32), np.zeros(16, np.uint16), np.zeros(8, np.float32)
    cast_kernel.launch(ints, halves, floats, np.array([1.5, 2.5, 3.14159], np.float32), block_dim=1, **mode)
    assert list(ints) == [2, 2, 1, 2, 3, 3, 2, 2]  # ROUND, CEIL, FLOOR, RINT of 1.5 and of 2.5
    assert halves[0] == np.float16(3.142578).view(np.uint16)  # the page's CAST_ODD result
    bf16 = np.array(3.14159, np.float32).astype(ml_dtypes.bfloat16)
    assert halves[1] == bf16.view(np.uint16) and floats[0] == np.float32(3.140625)
