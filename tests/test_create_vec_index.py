"""CreateVecIndex (issue #51) against its reference (the device's recurrence, fp16's chained
roundings included), compiled and interpreted, on the four tile types; one kernel for every case."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.host.references.index import create_vec_index as reference
from ascend_numba.kernels import alloc_buffer, create_vec_index, data_copy

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
