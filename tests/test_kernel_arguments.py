"""A launch refuses a GM argument whose element type differs from what the kernel moves it through
(issue #49 items 1-2): along every path (vector programs, helpers), with compile-time branches
folded as the compiler folds them, and at compile time where the source cannot tell."""

from __future__ import annotations

import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.kernels import alloc_buffer, constant, data_copy, kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import vector_add  # noqa: E402

DTYPE = constant("DTYPE", "1: the int32 path, else int8")


@pytest.mark.parametrize("interpret", [False, True])
def test_a_vector_program_copy_names_the_argument_it_reads(interpret):
    x = np.arange(1003) * 0.5  # float64: the easy slip
    z = np.zeros(1003, np.float32)
    tiling = vector_add.plan_add(x.size, 4, an.get_platform("A2"))
    with pytest.raises(TypeError, match=r"kernel vector_add: argument x is float64, but the kernel copies it into "
                                        r"x_loc, a UB buffer of float32 \(in add_tile\): pass a float32 array"):
        vector_add.vector_add.launch(x, x.copy(), z, tiling, block_dim=4, key={"UseScale": 0}, interpret=interpret)
    assert not z.any()
    with pytest.raises(TypeError, match=r"argument z is float64, but the kernel copies it from z_loc"):
        vector_add.vector_add.launch(x.astype(np.float32), x.astype(np.float32), z.astype(np.float64), tiling,
                                     block_dim=4, key={"UseScale": 0}, interpret=interpret)


@kernel(outputs=("y",))
def cast_custom(ctx, x, y):
    if DTYPE == 1:
        buf = alloc_buffer(ctx, 64, np.int32)
    else:
        buf = alloc_buffer(ctx, 64, np.int8)
    data_copy(ctx, buf, 0, x, 0, 64 if DTYPE == 1 else 64)
    data_copy(ctx, y, 0, buf, 0, 64)


def test_branches_a_constant_folds_away_are_not_read():
    x = np.arange(64, dtype=np.int8)
    y = np.zeros(64, np.int8)
    cast_custom.launch(x, y, block_dim=1, datatype={"DTYPE": 0})
    assert np.array_equal(y, x)
    with pytest.raises(TypeError, match=r"argument x is int8, but the kernel copies it into buf, a UB buffer of "
                                        r"int32"):
        cast_custom.launch(x, y, block_dim=1, datatype={"DTYPE": 1})


@numba.njit
def copy_in(ctx, local, gm, n):
    data_copy(ctx, local, 0, gm, 0, n)


@kernel(outputs=("y",))
def through_a_helper(ctx, x, y):
    buf = alloc_buffer(ctx, 64, np.float32)
    copy_in(ctx, buf, x, 64)
    data_copy(ctx, y, 0, buf, 0, 64)


def test_a_helper_the_kernel_calls_is_read_too():
    with pytest.raises(TypeError, match=r"argument x is int32, but the kernel copies it into buf, a UB buffer of "
                                        r"float32 \(in copy_in\)"):
        through_a_helper.launch(np.zeros(64, np.int32), np.zeros(64, np.float32), block_dim=1)


@kernel(outputs=("y",))
def buffer_in_a_tuple(ctx, x, y):
    bufs = (alloc_buffer(ctx, 64, np.float32),)  # the source does not say which dtype x meets
    data_copy(ctx, bufs[0], 0, x, 0, 64)
    data_copy(ctx, y, 0, bufs[0], 0, 64)


@pytest.mark.parametrize("interpret", [False, True])
def test_what_the_source_cannot_tell_the_compiled_copy_refuses(interpret):
    x = np.arange(64) * 0.5
    y = np.zeros(64, np.float32)
    expected = TypeError if not interpret else an.KernelError
    with pytest.raises(expected, match=r"a DataCopy moves elements of one type .*got dst float32 and src float64"
                                       + (r"; the GM arguments of those types: x \(float64\), y \(float32\)"
                                          if not interpret else "")):
        buffer_in_a_tuple.launch(x, y, block_dim=1, interpret=interpret)
    assert not y.any()
