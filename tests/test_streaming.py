"""Streaming (non-temporal) GM writes: launches over big tensors write scattered UB -> GM rows
with streaming stores; the bytes must be the same as with plain stores, at any alignment."""

from __future__ import annotations

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.kernels import alloc_buffer, data_copy, data_copy_pad, kernel, run
from ascend_numba.kernels.lane import STATE_STREAM, STATE_STREAMED
from ascend_numba.ops.ttrans import reference as R


@pytest.fixture
def always_stream(monkeypatch):
    monkeypatch.setattr(run, "STREAM_BYTES", 0)


@kernel
def scatter_rows(ctx, x, y, rows, row_bytes, gap):
    """Lane 0: x (rows x row_bytes, packed in UB blocks) -> y, rows ``gap`` bytes apart."""
    if ctx.block_idx != 0:
        return
    pitch = (row_bytes + 31) // 32 * 32
    buf = alloc_buffer(ctx, rows * pitch, np.uint8)
    data_copy_pad(ctx, buf, 0, x, 0, rows, row_bytes, 0, 0)
    data_copy_pad(ctx, y, 0, buf, 0, rows, row_bytes, 0, gap)


@pytest.mark.parametrize("gap", [77, 96])  # rows at every alignment; rows all at the shift's
@pytest.mark.parametrize("row_bytes", [256, 300, 352, 511, 1024])
@pytest.mark.parametrize("shift", [0, 1, 4, 13, 16, 32, 63])
def test_scattered_rows_any_alignment(always_stream, row_bytes, shift, gap):
    """Partial lines at 4-byte offsets are streamed in 4- and 16-byte pieces, others stored plain."""
    rows = 9
    x = np.random.default_rng(row_bytes + shift).integers(0, 256, rows * row_bytes, dtype=np.uint8)
    backing = np.full(shift + rows * (row_bytes + gap) + 128, 0xEE, np.uint8)
    start = (-backing.ctypes.data) % 64 + shift  # from a line boundary
    y = backing[start:start + rows * (row_bytes + gap)]
    state = scatter_rows.launch(x, y, rows, row_bytes, gap, block_dim=2)
    assert (state[:, STATE_STREAM] == 1).all() and state[:, STATE_STREAMED].tolist() == [1, 0]
    expected = np.full(y.size, 0xEE, np.uint8).reshape(rows, row_bytes + gap)
    expected[:, :row_bytes] = x.reshape(rows, row_bytes)
    assert np.array_equal(y, expected.reshape(-1))
    assert (backing[:start] == 0xEE).all() and (backing[start + y.size:] == 0xEE).all()


@kernel
def gapless_copy(ctx, x, y, nbytes, pad, off):
    """Lane 0: x -> UB -> y from byte ``off``, ``nbytes`` in one piece: DataCopy (``pad`` 0) or
    gapless DataCopyPad."""
    if ctx.block_idx != 0:
        return
    buf = alloc_buffer(ctx, (nbytes + 31) // 32 * 32, np.uint8)
    data_copy(ctx, buf, 0, x, 0, (nbytes + 31) // 32 * 32)
    if pad:
        data_copy_pad(ctx, y, off, buf, 0, 1, nbytes, 0, 0)
    else:
        data_copy(ctx, y, off, buf, 0, nbytes)


@pytest.mark.parametrize("pad", [0, 1])
@pytest.mark.parametrize("nbytes", [16384, 16384 + 64, 16384 + 32, 65536, 16384 - 64])
@pytest.mark.parametrize("shift", [0, 16, 64])
def test_gapless_copies_any_alignment(always_stream, nbytes, shift, pad):
    """Whole lines of 16 KB and more go out with streaming stores, the rest plain: the same bytes,
    none past the copy's end."""
    x = np.random.default_rng(nbytes + shift).integers(0, 256, nbytes + 32, dtype=np.uint8)
    backing = np.full(nbytes + 256, 0xEE, np.uint8)
    start = (-backing.ctypes.data) % 64 + shift
    y = backing[start:start + nbytes + 64]
    state = gapless_copy.launch(x, y, nbytes, pad, 0, block_dim=1)
    streamed = nbytes >= 16384 and nbytes % 64 == 0 and shift % 64 == 0
    assert state[0, STATE_STREAM] == 1 and state[0, STATE_STREAMED] == streamed
    assert np.array_equal(y[:nbytes], x[:nbytes])
    assert (y[nbytes:] == 0xEE).all() and (backing[:start] == 0xEE).all()


@pytest.mark.parametrize("pad", [0, 1])
def test_a_copy_at_an_offset_near_2_63_is_dropped(always_stream, pad):
    """Its end wraps past 2^63 (a sum of the two would pass a bounds test): nothing is written."""
    x = np.arange(16384, dtype=np.uint8)
    backing = np.zeros(16384 + 64, np.uint8)
    y = backing[(-backing.ctypes.data) % 64:][:16384]
    state = gapless_copy.launch(x, y, 16384, pad, np.int64(2**63 - 64), block_dim=1)
    assert state[0, STATE_STREAMED] == 0 and not backing.any()
    with pytest.raises(an.KernelCheckError, match="gm-out-of-bounds"):
        gapless_copy.launch(x, y, 16384, pad, np.int64(2**63 - 64), block_dim=1, checked=True)
    assert not backing.any()


@kernel
def copy_small(ctx, x, y):
    buf = alloc_buffer(ctx, 32, np.uint8)
    data_copy(ctx, buf, 0, x, 0, 32)
    data_copy(ctx, y, 0, buf, 0, 32)


def test_only_big_launches_stream():
    x, y = np.zeros(32, np.uint8), np.zeros(32, np.uint8)
    assert (copy_small.launch(x, y, block_dim=2)[:, STATE_STREAM] == 0).all()
    big = np.zeros(run.STREAM_BYTES, np.uint8)
    assert (copy_small.launch(big, y, block_dim=2)[:, STATE_STREAM] == 1).all()


@pytest.mark.parametrize("shape", [(129, 257), (1024, 768), (300, 4096)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.float64])
def test_transposes_with_streaming_stores(always_stream, shape, dtype):
    x = (np.arange(shape[0] * shape[1]) % 251).astype(dtype).reshape(shape)
    assert an.transpose2d(x).tobytes() == R.transpose2d_reference(x).tobytes()
    out = np.empty(shape[::-1], dtype)
    an.transpose2d(x, out=out, checked=True)
    assert out.tobytes() == R.transpose2d_reference(x).tobytes()


def test_conversion_with_streaming_stores(always_stream):
    x = (np.arange(2 * 35 * 20 * 24) % 251).astype(np.float16).reshape(2, 35, 20, 24)
    assert an.convert_format(x, "NCHW", "NC1HWC0").tobytes() == R.nchw_to_nc1hwc0(x, 16).tobytes()
    y = R.nchw_to_nc1hwc0(x, 16)
    assert an.convert_format(y, "NC1HWC0", "NCHW", c=35).tobytes() == x.tobytes()
