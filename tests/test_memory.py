"""The output pool: recycled result buffers (ascend_numba.memory).

A result goes back to the pool when its last reference goes (reference counting); the tests'
young collections (``gc.collect(0)``) sweep a cycle a call may leave.  Full ones, in a test worker
holding every kernel it compiled, made this file 18-20 s of CI time (2 s in a fresh process)."""

import gc

import ml_dtypes
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba import memory
from ascend_numba.ops.ttrans.reference import nchw_to_nc1hwc0, transpose2d_reference

BIG = (1024, 1024)  # 4 MB of float32: pooled


@pytest.fixture
def pool(monkeypatch):
    """A pool with room that takes results from 1 MB (not 32), emptied before and after."""
    monkeypatch.setattr(memory, "MIN_POOLED_BYTES", 1 << 20)
    previous = an.output_pool_limit(64 << 20)
    an.clear_output_pool()
    yield
    an.clear_output_pool()
    an.output_pool_limit(previous)


def _address(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.complex64, np.bool_])
def test_pooled_result_is_a_plain_writeable_c_array(pool, dtype):
    a = memory.empty((3, 1024, 513), dtype)
    assert a.shape == (3, 1024, 513) and a.dtype == np.dtype(dtype)
    assert a.flags.c_contiguous and a.flags.writeable
    a[...] = np.ones((), dtype)
    assert np.array_equal(a, np.ones(a.shape, dtype))


def test_freed_result_is_reused(pool):
    first = memory.empty(BIG, np.float32)
    where = _address(first)
    del first
    gc.collect(0)
    before = an.output_pool_info()
    second = memory.empty(BIG, np.float32)
    after = an.output_pool_info()
    assert _address(second) == where
    assert after["hits"] == before["hits"] + 1 and after["held"] == before["held"] - second.nbytes


def test_a_view_keeps_its_buffer_out_of_the_pool(pool):
    x = np.arange(1024, dtype=np.float32).reshape(1, 1024)
    y = an.tile(x, (1024, 1))
    view = y[::3, 5:]
    expected = view.copy()
    del y
    gc.collect(0)
    z = an.tile(x + 1, (1024, 1))  # same size: must not land on the viewed buffer
    assert not np.shares_memory(z, view)
    assert np.array_equal(view, expected)


def test_small_results_bypass_the_pool(pool):
    before = an.output_pool_info()
    a = memory.empty((100,), np.float32)
    del a
    gc.collect(0)
    assert an.output_pool_info() == before


def test_limit_zero_turns_pooling_off_and_frees_idle_buffers(pool):
    a = memory.empty(BIG, np.float32)
    del a
    gc.collect(0)
    assert an.output_pool_info()["held"] > 0
    an.output_pool_limit(0)
    assert an.output_pool_info()["held"] == 0
    b = memory.empty(BIG, np.float32)
    del b
    gc.collect(0)
    assert an.output_pool_info()["held"] == 0


def test_least_recently_returned_buffers_go_first(pool):
    an.output_pool_limit(10 << 20)
    a, b, c = (memory.empty((n, 1 << 20), np.uint8) for n in (4, 3, 5))
    addr_b = _address(b)
    del a
    gc.collect(0)
    del b
    gc.collect(0)
    del c  # 4 + 3 + 5 MB > 10 MB: the 4 MB buffer, returned first, is dropped
    gc.collect(0)
    assert an.output_pool_info()["held"] == 8 << 20
    again = memory.empty((3, 1 << 20), np.uint8)
    assert _address(again) == addr_b


def test_a_buffer_larger_than_the_limit_is_not_kept(pool):
    an.output_pool_limit(2 << 20)
    a = memory.empty(BIG, np.float32)
    del a
    gc.collect(0)
    assert an.output_pool_info()["held"] == 0


def test_poison_fills_every_result(pool):
    memory.poison_outputs(0x5A)
    try:
        assert (memory.empty((7,), np.uint8) == 0x5A).all()
        assert (memory.empty(BIG, np.float32).view(np.uint8) == 0x5A).all()
    finally:
        memory.poison_outputs(0xA5)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "1"])
def test_bad_limit_raises(bad):
    with pytest.raises(ValueError):
        an.output_pool_limit(bad)


def test_ops_write_every_byte_of_a_recycled_result(pool):
    # Each op runs twice; between the runs its result's buffer, filled with 0xFF, goes back to the
    # pool, so the second run gets it again: padding or any byte the kernel skipped would show.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 13, 56, 56)).astype(np.float16)
    g = rng.standard_normal((1, 1024)).astype(np.float32)
    cases = [
        (lambda: an.convert_format(x, "NCHW", "NC1HWC0"), nchw_to_nc1hwc0(x, 16)),
        (lambda: an.transpose2d(x.reshape(-1, 3136)), transpose2d_reference(x.reshape(-1, 3136))),
        (lambda: an.tile(g, (1024, 1)), np.tile(g, (1024, 1))),
        (lambda: an.apply_adamw(*(np.ones(1 << 20, np.float32),) * 3, 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8,
                                np.ones(1 << 20, np.float32), inplace=False)[1], None),
    ]
    for make, want in cases:
        first = make()
        assert first.nbytes >= memory.MIN_POOLED_BYTES
        if want is None:
            want = first.copy()
        first.view(np.uint8)[...] = 0xFF
        del first
        gc.collect(0)
        hits = an.output_pool_info()["hits"]
        again = make()
        assert an.output_pool_info()["hits"] > hits
        assert np.array_equal(again.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("nbytes", [4 << 20, 5 << 20, 40 << 20])
def test_large_results_start_on_a_cache_line(nbytes):
    a = memory.empty((nbytes // 2,), np.float16)
    assert _address(a) % 64 == 0
