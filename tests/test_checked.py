"""checked=True: a corpus of broken user kernels, each caught with its rule, lane and primitive.

Every kernel here is a realistic Ascend C bug written with the user-kernel API.
Each test launches it checked and asserts the KernelCheckError names the
expected lane, primitive, operand and rule, and that the caller's arrays are
as they were before the launch.  Run unchecked, the same kernels are memory
safe (copies are clamped) but silently wrong, as on the device.
"""

import numpy as np
import pytest
from numba import njit

import ascend_numba as an
from ascend_numba._numba_compat.extending import overload
from ascend_numba._numba_compat.jit import OVERLOAD_OPTIONS
from ascend_numba.kernels import (
    add, adds, alloc_buffer, contiguous_lane_range, data_copy, data_copy_pad, duplicate, gather, muls, set_value,
    sync_all, ttrans,
)

TILE = 64  # fp32 elements per UB tile: 256 bytes, eight 32-byte blocks


@an.kernel
def off_by_one_tiles(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)
    tiles = n // TILE
    for t in range(tiles + 1):  # bug: one tile too many
        data_copy(ctx, buf, 0, x, t * TILE, TILE)
        data_copy(ctx, y, t * TILE, buf, 0, TILE)


@an.kernel(gm_padding="read")  # the tail is read as whole blocks, on purpose: the bug is its write
def unaligned_tail_copy(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)
    pos = 0
    while pos < n:
        k = min(TILE, n - pos)
        data_copy(ctx, buf, 0, x, pos, (k + 7) // 8 * 8)
        data_copy(ctx, y, pos, buf, 0, k)  # bug: a 43-element tail needs DataCopyPad
        pos += k


@an.kernel
def last_core_runs_past_the_end(ctx, x, y, n):
    # SubCustom's tiling (Ascend samples, 15_sub_frameworklaunch): 999 elements, 112 per core in
    # whole tiles, so the last core's tile runs 9 elements past the end (into GM padding).
    buf = alloc_buffer(ctx, 112, np.float32)
    start = ctx.block_idx * 112
    if start < n:
        data_copy(ctx, buf, 0, x, start, 112)
        data_copy(ctx, y, start, buf, 0, 112)


@an.kernel
def queue_slot_overlaps_next_buffer(ctx, x, y, n):
    in_q = alloc_buffer(ctx, TILE, np.float32)  # bug: one slot allocated, two used
    out_q = alloc_buffer(ctx, TILE, np.float32)
    slot = 0
    for pos in range(0, n, TILE):
        data_copy(ctx, in_q, slot * TILE, x, pos, TILE)
        muls(ctx, out_q, in_q[slot * TILE:], 2.0, TILE)
        data_copy(ctx, y, pos, out_q, 0, TILE)
        slot ^= 1


@an.kernel
def accumulator_never_zeroed(ctx, x, y, n):
    acc = alloc_buffer(ctx, TILE, np.float32)
    buf = alloc_buffer(ctx, TILE, np.float32)
    # bug: Duplicate(acc, 0) missing
    for pos in range(0, n, TILE):
        data_copy(ctx, buf, 0, x, pos, TILE)
        add(ctx, acc, acc, buf, TILE)
    data_copy(ctx, y, 0, acc, 0, TILE)


@an.kernel
def floor_start_ceil_count(ctx, x, y, n):
    buf = alloc_buffer(ctx, 8, np.float32)
    rows = n // 8  # rows of one 32-byte block
    per = (rows + ctx.block_num - 1) // ctx.block_num
    start = ctx.block_idx * (rows // ctx.block_num)  # bug: floor for the start, ceil for the count
    for r in range(start, min(start + per, rows)):
        data_copy(ctx, buf, 0, x, r * 8, 8)
        data_copy(ctx, y, r * 8, buf, 0, 8)


@an.kernel
def three_half_ub_buffers(ctx, x, y, n):
    a = alloc_buffer(ctx, ctx.ub_size // 2, np.uint8)
    b = alloc_buffer(ctx, ctx.ub_size // 2, np.uint8)
    c = alloc_buffer(ctx, ctx.ub_size // 2, np.uint8)  # bug: 1.5x the UB
    data_copy(ctx, a, 0, x, 0, 32)
    data_copy(ctx, b, 0, a, 0, 32)
    data_copy(ctx, c, 0, b, 0, 32)


@an.kernel
def stencil_halo_past_the_end(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE + 16, np.float32)
    start, end = contiguous_lane_range(ctx, n // TILE)
    for t in range(start, end):
        data_copy(ctx, buf, 0, x, t * TILE, TILE + 16)  # bug: the last tile's halo is past the padding
        adds(ctx, buf, buf[16:], 0.0, TILE)
        data_copy(ctx, y, t * TILE, buf, 0, TILE)


@an.kernel
def gather_offsets_in_elements_times_two(ctx, x, y, n):
    src = alloc_buffer(ctx, TILE, np.float32)
    dst = alloc_buffer(ctx, TILE, np.float32)
    table = alloc_buffer(ctx, TILE, np.uint32)
    for i in range(TILE):
        set_value(ctx, table, i, i * 8)  # bug: byte offsets of 8-byte elements; these are 4-byte
    data_copy(ctx, src, 0, x, 0, TILE)
    gather(ctx, dst, src, table, 0, TILE)
    data_copy(ctx, y, 0, dst, 0, TILE)


@an.kernel
def ub_offset_not_on_a_block(ctx, x, y, n):
    buf = alloc_buffer(ctx, 2 * TILE, np.float32)
    data_copy(ctx, buf, 3, x, 0, TILE)  # bug: UB address 12 bytes into the buffer
    data_copy(ctx, y, 0, buf, 3, TILE)


@an.kernel
def vector_count_twice_the_tile(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, TILE)
    muls(ctx, buf, buf, 2.0, 2 * TILE)  # bug: count in bytes / 2, not elements
    data_copy(ctx, y, 0, buf, 0, TILE)


@an.kernel
def vector_op_on_global_memory(ctx, x, y, n):
    adds(ctx, y, x, 1.0, n)  # bug: vector units read UB only; CopyIn missing


@an.kernel
def tail_written_from_a_partial_tile(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy_pad(ctx, buf, 0, x, 0, 1, n * 4, 0, 0)  # 13 floats loaded
    data_copy(ctx, y, 0, buf, 0, 16)  # bug: two whole blocks written back, 3 floats never loaded


@an.kernel
def every_lane_writes_block_zero(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, TILE)  # bug: offsets forgot GetBlockIdx()
    data_copy(ctx, y, 0, buf, 0, TILE)


@an.kernel
def ttrans_destination_too_small(ctx, x, y, n):
    src = alloc_buffer(ctx, 16 * 16, np.float32)
    dst = alloc_buffer(ctx, 16 * 8, np.float32)  # bug: sized for 8 columns, 16 transposed
    tmp = alloc_buffer(ctx, 16 * 16, np.float32)
    data_copy(ctx, src, 0, x, 0, 16 * 16)
    ttrans(ctx, dst, 16, src, 16, 16, 16, tmp)
    data_copy(ctx, y, 0, dst, 0, 16 * 8)


@an.kernel
def pad_stride_in_bytes_on_the_ub_side(ctx, x, y, n):
    buf = alloc_buffer(ctx, 8 * 16, np.float32)
    # bug: 8 rows of 32 bytes into UB with a 32 "byte" gap: UB strides count 32-byte blocks
    data_copy_pad(ctx, buf, 0, x, 0, 8, 32, 0, 32)
    data_copy(ctx, y, 0, buf, 0, 8 * 16)


@an.kernel(outputs=("y",))
def lane_range_one_block_short(ctx, x, y, n):
    per_lane = (n + ctx.block_num - 1) // ctx.block_num
    start = min(ctx.block_idx * per_lane, n)
    end = min(start + per_lane - 8, n)  # bug: one 32-byte block short of the next lane's start
    buf = alloc_buffer(ctx, TILE, np.float32)
    pos = start
    while pos < end:
        k = min(TILE, end - pos)
        data_copy(ctx, buf, 0, x, pos, k)
        data_copy(ctx, y, pos, buf, 0, k)
        pos += k


def _args(n):
    x = np.arange(n, dtype=np.float32)
    return x, np.full(n, -1.0, np.float32)


# kernel, n elements, block_dim, then the expected lane, primitive, operand, rule.
CORPUS = [
    (off_by_one_tiles, 1024, 1, 0, "DataCopy", "src", "gm-out-of-bounds"),
    (unaligned_tail_copy, 1003, 1, 0, "DataCopy", "src", "data-copy-count-unaligned"),
    (last_core_runs_past_the_end, 999, 9, 8, "DataCopy", "src", "gm-past-end"),
    (queue_slot_overlaps_next_buffer, 1024, 1, 0, "DataCopy", "dst", "ub-outside-buffer"),
    (accumulator_never_zeroed, 1024, 1, 0, "Add", "src", "ub-uninitialized-read"),
    (floor_start_ceil_count, 80, 4, 1, "DataCopy", "dst", "gm-write-race"),
    (three_half_ub_buffers, 64, 2, 0, "alloc_buffer", "dst", "ub-over-capacity"),
    (stencil_halo_past_the_end, 1024, 4, 3, "DataCopy", "src", "gm-out-of-bounds"),
    (gather_offsets_in_elements_times_two, 64, 1, 0, "Gather", "src", "ub-outside-buffer"),
    (ub_offset_not_on_a_block, 128, 1, 0, "DataCopy", "dst", "ub-address-unaligned"),
    (vector_count_twice_the_tile, 64, 1, 0, "Muls", "src", "ub-outside-buffer"),
    (vector_op_on_global_memory, 64, 1, 0, "Adds", "src", "ub-outside-ub"),
    (tail_written_from_a_partial_tile, 13, 1, 0, "DataCopy", "src", "ub-uninitialized-read"),
    (every_lane_writes_block_zero, 64, 3, 1, "DataCopy", "dst", "gm-write-race"),
    (ttrans_destination_too_small, 256, 1, 0, "TTRANS", "dst", "ub-outside-buffer"),
    (pad_stride_in_bytes_on_the_ub_side, 256, 1, 0, "DataCopyPad", "dst", "ub-outside-buffer"),
    (lane_range_one_block_short, 256, 4, 0, "end of launch", "dst", "gm-output-unwritten"),
]


@pytest.mark.parametrize("kernel, n, block_dim, lane, primitive, operand, rule", CORPUS,
                         ids=[c[0].py_func.__name__ for c in CORPUS])
def test_broken_kernel_is_caught(kernel, n, block_dim, lane, primitive, operand, rule):
    x, y = _args(n)
    before = (x.copy(), y.copy())
    with pytest.raises(an.KernelCheckError) as caught:
        kernel.launch(x, y, n, block_dim=block_dim, checked=True)
    err = caught.value
    assert (err.lane, err.primitive, err.operand, err.rule) == (lane, primitive, operand, rule), str(err)
    assert str(err).startswith(f"lane {lane}, {primitive}: [{rule}]")
    assert isinstance(err, an.KernelError)
    # Nothing the lanes wrote survives a failed checked launch.
    assert x.tobytes() == before[0].tobytes() and y.tobytes() == before[1].tobytes()
    # Interpreted, the same rules run as Python: the same error, the arrays restored again.
    with pytest.raises(an.KernelCheckError) as interpreted:
        kernel.launch(x, y, n, block_dim=block_dim, checked=True, interpret=True)
    assert str(interpreted.value) == str(err) and interpreted.value.details == err.details
    assert x.tobytes() == before[0].tobytes() and y.tobytes() == before[1].tobytes()


def test_past_the_end_is_reported_unless_the_kernel_relies_on_the_padding():
    x, y = _args(999)
    with pytest.raises(an.KernelCheckError) as caught:
        last_core_runs_past_the_end.launch(x, y, 999, block_dim=9, checked=True)
    assert str(caught.value).startswith(
        "lane 8, DataCopy: [gm-past-end] src in GM x (argument 0): a read of bytes [3584, 4032) runs 36 bytes past "
        "the tensor's 3996: on the device it lands in the allocator's padding, or in the next tensor of a memory pool")
    reads = an.kernel(gm_padding="read")(last_core_runs_past_the_end.py_func)
    with pytest.raises(an.KernelCheckError, match=r"lane 8, DataCopy: \[gm-past-end\] dst in GM y \(argument 1\): a "
                                                  r"write of bytes \[3584, 4032\) runs 36 bytes past"):
        reads.launch(x, y, 999, block_dim=9, checked=True)
    both = an.kernel(gm_padding=True)(last_core_runs_past_the_end.py_func)
    both.launch(x, y, 999, block_dim=9, checked=True)
    assert np.array_equal(y, x)
    with pytest.raises(ValueError, match="gm_padding must be False, 'read' or True, got 'write'"):
        an.kernel(gm_padding="write")(last_core_runs_past_the_end.py_func)


def test_messages_name_offsets_and_tensors():
    x, y = _args(1024)
    with pytest.raises(an.KernelCheckError) as caught:
        off_by_one_tiles.launch(x, y, 1024, block_dim=1, checked=True)
    assert caught.value.details == {"tensor": "x (argument 0)", "start": 4096, "end": 4352, "tensor_bytes": 4096,
                                    "limit": 4128}
    assert "bytes [4096, 4352) outside the tensor's 4096 bytes plus padding (4128 bytes)" in str(caught.value)
    x, y = _args(80)
    with pytest.raises(an.KernelCheckError) as caught:
        floor_start_ceil_count.launch(x, y, 80, block_dim=4, checked=True)
    assert caught.value.details == {"tensor": "y (argument 1)", "byte": 64, "other_lane": 0}
    x, y = _args(1003)
    with pytest.raises(an.KernelCheckError) as caught:
        unaligned_tail_copy.launch(x, y, 1003, block_dim=1, checked=True)
    assert caught.value.details == {"bytes": 172, "block_bytes": 32, "src": "UB", "src_byte": 0, "dst": "GM",
                                    "dst_byte": 3840}
    assert "src: DataCopy of 172 bytes from UB byte 0 to GM byte 3840 is not a multiple" in str(caught.value)
    x, y = _args(256)
    with pytest.raises(an.KernelCheckError) as caught:
        lane_range_one_block_short.launch(x, y, 256, block_dim=4, checked=True)
    assert caught.value.details == {"tensor": "y (argument 1)", "start": 224, "end": 256, "tensor_bytes": 1024,
                                    "lane_before": 0, "lane_after": 1}
    assert "bytes [224, 256) of its 1024 were written by no lane (lane 0 wrote the bytes before them; lane 1 " \
           "the bytes after them)" in str(caught.value)
    x, y = _args(64)
    with pytest.raises(an.KernelCheckError) as caught:
        three_half_ub_buffers.launch(x, y, 64, block_dim=2, checked=True)
    ub = an.get_platform("A2").ub_size
    assert caught.value.details == {"requested_end": 3 * (ub // 2), "ub_size": ub}


# The bugs that reach past a tensor (each a separate compile, so not the whole corpus).
OUT_OF_RANGE = [off_by_one_tiles, stencil_halo_past_the_end, gather_offsets_in_elements_times_two,
                vector_count_twice_the_tile, pad_stride_in_bytes_on_the_ub_side, ttrans_destination_too_small]


def test_unchecked_runs_of_broken_kernels_stay_memory_safe():
    # The device would corrupt memory or read garbage; unchecked here, every copy is clamped to
    # its tensors, so the process survives and read-only inputs stay as they were.
    for kernel, n, block_dim, *_ in CORPUS:
        if kernel not in OUT_OF_RANGE:
            continue
        x, y = _args(n)
        kernel.launch(x, y, n, block_dim=block_dim)
        assert np.array_equal(x, np.arange(n, dtype=np.float32))


def test_unchecked_over_capacity_is_still_a_kernel_error():
    x, y = _args(64)
    with pytest.raises(an.KernelError, match="exceeds ub_size"):
        three_half_ub_buffers.launch(x, y, 64, block_dim=2)


# Kernels reading a tail as whole blocks declare that they rely on GM padding (gm_padding="read").
@an.kernel(gm_padding="read")
def correct_scaled_copy(ctx, x, y, n):
    """The fixed version of several bugs above: aligned tiles, exact tail, zeroed accumulator."""
    buf = alloc_buffer(ctx, TILE, np.float32)
    acc = alloc_buffer(ctx, TILE, np.float32)
    duplicate(ctx, acc, 0.0, TILE)
    start, end = contiguous_lane_range(ctx, (n + TILE - 1) // TILE)
    for t in range(start, end):
        pos = t * TILE
        k = min(TILE, n - pos)
        k_blocks = (k + 7) // 8 * 8
        data_copy(ctx, buf, 0, x, pos, k_blocks)
        add(ctx, buf, buf, acc, k_blocks)
        if k == TILE:
            data_copy(ctx, y, pos, buf, 0, TILE)
        else:
            data_copy_pad(ctx, y, pos, buf, 0, 1, k * 4, 0, 0)


@pytest.mark.parametrize("n, block_dim", [(1003, 1), (1003, 7), (64, 48), (5, 3)])
def test_a_correct_kernel_passes_and_checked_results_equal_unchecked(n, block_dim):
    x, y = _args(n)
    correct_scaled_copy.launch(x, y, n, block_dim=block_dim, checked=True)
    assert np.array_equal(y, x)
    y2 = np.zeros_like(y)
    correct_scaled_copy.launch(x, y2, n, block_dim=block_dim)
    assert y2.tobytes() == y.tobytes()


def test_checked_and_traced_together():
    x, y = _args(1003)
    trace = correct_scaled_copy.launch(x, y, 1003, block_dim=4, checked=True, trace=True)
    assert np.array_equal(y, x)
    assert trace.totals()["bytes_ub_to_gm"] == x.nbytes


# ---- second pass: adjacent views, aliases, counts the device takes unsigned, Gather tables ----

@an.kernel(gm_padding="read")
def halves_written_by_two_lanes(ctx, x, lo, hi, n):
    """Correct: lane 0 writes ``lo``, lane 1 writes ``hi`` (two adjacent views of one array)."""
    buf = alloc_buffer(ctx, TILE, np.float32)
    dst = lo if ctx.block_idx == 0 else hi
    pos = 0 if ctx.block_idx == 0 else n
    data_copy(ctx, buf, 0, x, pos, (n + 7) // 8 * 8)
    data_copy_pad(ctx, dst, 0, buf, 0, 1, n * 4, 0, 0)


@an.kernel(gm_padding="read")
def low_half_tail_rounded_up(ctx, x, lo, hi, n):
    # bug: the tail of ``lo`` written as whole blocks runs into ``hi``: no GM padding between views
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, (n + 7) // 8 * 8)
    data_copy(ctx, lo, 0, buf, 0, (n + 7) // 8 * 8)


@an.kernel(gm_padding="read")
def both_lanes_write_the_high_half_head(ctx, x, lo, hi, n):
    # bug: every lane writes the first block of ``hi``
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, 8)
    data_copy(ctx, hi, 0, buf, 0, 8)


def _halves(n):
    out = np.full(2 * n, -1.0, np.float32)
    return np.arange(2 * n, dtype=np.float32), out, out[:n], out[n:]


def test_adjacent_views_of_one_array_are_two_tensors():
    x, out, lo, hi = _halves(20)
    halves_written_by_two_lanes.launch(x, lo, hi, 20, block_dim=2, checked=True)
    assert np.array_equal(out, x)


@pytest.mark.parametrize("kernel, n, lane, primitive, rule, tensor", [
    (low_half_tail_rounded_up, 20, 0, "DataCopy", "gm-out-of-bounds", "lo (argument 1)"),
    (both_lanes_write_the_high_half_head, 20, 1, "DataCopy", "gm-write-race", "hi (argument 2)"),
], ids=["tail-into-neighbour", "race-on-neighbour-head"])
def test_adjacent_views_bugs_are_caught_and_both_views_restored(kernel, n, lane, primitive, rule, tensor):
    x, out, lo, hi = _halves(n)
    with pytest.raises(an.KernelCheckError) as caught:
        kernel.launch(x, lo, hi, n, block_dim=2, checked=True)
    err = caught.value
    assert (err.lane, err.primitive, err.rule, err.details["tensor"]) == (lane, primitive, rule, tensor), str(err)
    assert (out == -1.0).all()  # nothing either lane wrote survives, in either view
    if rule == "gm-out-of-bounds":
        assert "no GM padding past its end" in str(err) and err.details["limit"] == n * 4


@an.kernel
def scale_in_place(ctx, x, y, n):
    """Reads its 16 elements of ``x`` and writes ``y``; launched with ``y`` the same array as ``x``."""
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, ctx.block_idx * 16, 16)
    muls(ctx, buf, buf, 2.0, 16)
    data_copy(ctx, y, ctx.block_idx * 8, buf, 0, 16)  # bug: lanes overlap by a block


def test_an_in_place_launch_names_every_alias_and_restores():
    x = np.arange(TILE, dtype=np.float32)
    before = x.copy()
    with pytest.raises(an.KernelCheckError) as caught:
        scale_in_place.launch(x, x, TILE, block_dim=2, checked=True)
    assert caught.value.rule == "gm-write-race"
    assert caught.value.details["tensor"] == "x (argument 0) = y (argument 1)"
    assert x.tobytes() == before.tobytes()


@an.kernel
def idle_lane_negative_count(ctx, x, y, n):
    # bug: a block-aligned share per lane leaves the last lane past the end, and its count
    # n - start goes negative; the device reads it unsigned
    per = ((n + ctx.block_num - 1) // ctx.block_num + 7) // 8 * 8
    start = ctx.block_idx * per
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, start, min(per, n - start))


@an.kernel
def pad_with_no_blocks(ctx, x, y, n):
    # bug: DataCopyExtParams with blockCount 0 (the API takes 1..4095)
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, TILE)
    data_copy_pad(ctx, y, 0, buf, 0, 0, 32, 0, 0)


@an.kernel
def vector_op_negative_count(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)
    duplicate(ctx, buf, 1.0, TILE)
    adds(ctx, buf, buf, 1.0, n - TILE - 1)  # bug: n - TILE - 1 < 0


@pytest.mark.parametrize("kernel, n, block_dim, lane, primitive, count, value", [
    (idle_lane_negative_count, 16, 4, 3, "DataCopy", "byte count", -32),
    (pad_with_no_blocks, 64, 1, 0, "DataCopyPad", "blockCount", 0),
    (vector_op_negative_count, 64, 1, 0, "Adds", "count", -1),
], ids=["idle-lane", "pad-zero-blocks", "vector-negative"])
def test_counts_the_device_takes_unsigned_are_checked(kernel, n, block_dim, lane, primitive, count, value):
    x, y = _args(n)
    with pytest.raises(an.KernelCheckError) as caught:
        kernel.launch(x, y, n, block_dim=block_dim, checked=True)
    err = caught.value
    assert (err.lane, err.primitive, err.rule) == (lane, primitive, "count-out-of-range"), str(err)
    assert err.details == {"count": count, "value": value}
    if value < 0:
        assert f"unsigned {value % (1 << 32)}" in str(err)
    kernel.launch(x, y, n, block_dim=block_dim)  # unchecked: skipped, memory safe


@an.kernel
def gather_with_int64_offsets(ctx, x, y, n):
    src = alloc_buffer(ctx, TILE, np.float32)
    dst = alloc_buffer(ctx, TILE, np.float32)
    table = alloc_buffer(ctx, TILE, np.int64)
    duplicate(ctx, src, 0.0, TILE)
    gather(ctx, dst, src, table, 0, TILE)


def test_a_gather_table_is_uint32_byte_offsets_or_a_clear_error():
    x, y = _args(64)
    with pytest.raises(Exception, match="offsets_bytes must be a uint32 UB tensor of byte offsets"):
        gather_with_int64_offsets.launch(x, y, 64, block_dim=1, checked=True)


# ---- garbage: bytes read from GM padding, and whatever is computed from them --------------------

@an.kernel(gm_padding="read")
def fold_padded_tail(ctx, x, y, n):
    # bug: the tail block holds GM padding past x's 12 elements; folding it onto the first block
    # puts garbage in y[4:8]
    buf = alloc_buffer(ctx, TILE, np.float32)
    out = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, 16)
    add(ctx, out, buf, buf[8:], 8)
    data_copy(ctx, y, 0, out, 0, 8)


@an.kernel(gm_padding="read")
def gather_picks_padding(ctx, x, y, n):
    # bug: the offset table points at element 13, past x's 12 elements (in the padded block)
    src = alloc_buffer(ctx, TILE, np.float32)
    dst = alloc_buffer(ctx, TILE, np.float32)
    table = alloc_buffer(ctx, 8, np.uint32)
    data_copy(ctx, src, 0, x, 0, 16)
    for i in range(8):
        set_value(ctx, table, i, (i + 6) * 4)
    gather(ctx, dst, src, table, 0, 8)
    data_copy(ctx, y, 0, dst, 0, 8)


@an.kernel(gm_padding="read")
def staged_padding_copied_out(ctx, x, y, n):
    # bug: a UB -> UB copy moves the padded block, and the whole block goes to y
    a = alloc_buffer(ctx, TILE, np.float32)
    b = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, a, 0, x, 0, 16)
    data_copy(ctx, b, 0, a, 8, 8)
    data_copy(ctx, y, 0, b, 0, 8)


@an.kernel(gm_padding="read")
def padded_tail_written_exactly(ctx, x, y, n):
    """Correct: whole blocks in and through the vector unit, exactly n elements out."""
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, 16)
    muls(ctx, buf, buf, 2.0, 16)
    data_copy_pad(ctx, y, 0, buf, 0, 1, n * 4, 0, 0)


@pytest.mark.parametrize("kernel, primitive, byte", [
    (fold_padded_tail, "DataCopy", 16),
    (gather_picks_padding, "DataCopy", 4 * 6),
    (staged_padding_copied_out, "DataCopy", 16),
], ids=["vector-fold", "gather", "ub-to-ub-copy"])
def test_garbage_reaching_a_gm_tensor_is_caught(kernel, primitive, byte):
    x = np.arange(12, dtype=np.float32)
    y = np.full(8, -1.0, np.float32)
    with pytest.raises(an.KernelCheckError) as caught:
        kernel.launch(x, y, 12, block_dim=1, checked=True)
    err = caught.value
    assert (err.lane, err.primitive, err.rule) == (0, primitive, "gm-write-garbage"), str(err)
    assert err.details == {"tensor": "y (argument 1)", "byte": byte}
    assert (y == -1.0).all()


def test_a_padded_tail_written_back_exactly_is_clean():
    x = np.arange(12, dtype=np.float32)
    y = np.zeros(12, np.float32)
    padded_tail_written_exactly.launch(x, y, 12, block_dim=1, checked=True)
    assert np.array_equal(y, 2 * x)


@an.kernel(gm_padding="read")
def whole_block_then_the_rest(ctx, x, y, n):
    """Correct, as Tile's first aligned write of a row: a whole block goes out with garbage past
    x's 4 elements, and the rest of the row is written over it afterwards."""
    buf = alloc_buffer(ctx, TILE, np.float32)
    data_copy(ctx, buf, 0, x, 0, 8)
    data_copy(ctx, y, 0, buf, 0, 8)
    data_copy_pad(ctx, y, 4, buf, 0, 1, 16, 0, 0)


def test_garbage_overwritten_before_the_launch_ends_is_clean():
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(8, np.float32)
    whole_block_then_the_rest.launch(x, y, 4, block_dim=1, checked=True)
    assert np.array_equal(y, np.tile(x, 2))


# ---- cross-core reads and SyncAll ----------------------------------------------------------------
#
# Cores run in no order within a launch: a lane reading GM bytes another lane of the launch wrote
# (or writing bytes another read) is a race unless a SyncAll lies between the two.

@njit
def _partials(ctx, x, partials):
    buf = alloc_buffer(ctx, 8, np.float32)
    data_copy(ctx, buf, 0, x, ctx.block_idx * 8, 8)
    muls(ctx, buf, buf, 2.0, 8)
    data_copy(ctx, partials, ctx.block_idx * 8, buf, 0, 8)
    return buf


@njit
def _add_partials(ctx, buf, partials, total):
    acc = alloc_buffer(ctx, 8, np.float32)
    duplicate(ctx, acc, 0.0, 8)
    for k in range(ctx.block_num):
        data_copy(ctx, buf, 0, partials, k * 8, 8)
        add(ctx, acc, acc, buf, 8)
    data_copy(ctx, total, 0, acc, 0, 8)


@an.kernel
def last_core_adds_partials_unsynced(ctx, x, partials, total):
    buf = _partials(ctx, x, partials)
    if ctx.block_idx == ctx.block_num - 1:  # bug: no SyncAll, the other cores may not have written
        _add_partials(ctx, buf, partials, total)


@an.kernel
def first_core_adds_partials_unsynced(ctx, x, partials, total):
    buf = _partials(ctx, x, partials)
    if ctx.block_idx == 0:  # bug: no SyncAll, the other cores may not have written
        _add_partials(ctx, buf, partials, total)


@an.kernel
def last_core_adds_partials(ctx, x, partials, total):
    """Correct: every core writes its partial, SyncAll, the last core adds them."""
    buf = _partials(ctx, x, partials)
    sync_all(ctx)
    if ctx.block_idx == ctx.block_num - 1:
        _add_partials(ctx, buf, partials, total)


@an.kernel
def two_lanes_read_one_overwrites(ctx, x, y):
    # bug: lanes 0 and 1 read x's first block, lane 2 overwrites it (in place, no SyncAll)
    buf = alloc_buffer(ctx, 8, np.float32)
    if ctx.block_idx < 2:
        data_copy(ctx, buf, 0, x, 0, 8)
        data_copy(ctx, y, 8 + ctx.block_idx * 8, buf, 0, 8)
    else:
        duplicate(ctx, buf, 0.0, 8)
        data_copy(ctx, x, 0, buf, 0, 8)


def _partials_args(lanes):
    x = np.arange(8 * lanes, dtype=np.float32)
    return x, np.full(8 * lanes, -1.0, np.float32), np.full(8, -1.0, np.float32)


@pytest.mark.parametrize("kernel, lane, operand, rule, byte, other", [
    (last_core_adds_partials_unsynced, 3, "src", "gm-cross-core-read", 0, 0),
    (first_core_adds_partials_unsynced, 1, "dst", "gm-write-after-read", 32, 0),
], ids=["reads-what-another-wrote", "writes-what-another-read"])
def test_cross_core_exchange_without_sync_all_is_caught(kernel, lane, operand, rule, byte, other):
    x, partials, total = _partials_args(4)
    with pytest.raises(an.KernelCheckError) as caught:
        kernel.launch(x, partials, total, block_dim=4, checked=True)
    err = caught.value
    assert (err.lane, err.primitive, err.operand, err.rule) == (lane, "DataCopy", operand, rule), str(err)
    assert err.details == {"tensor": "partials (argument 1)", "byte": byte, "other_lane": other}
    assert (partials == -1.0).all() and (total == -1.0).all()


def test_a_byte_several_lanes_read_then_overwritten_names_them():
    x, y = np.arange(8, dtype=np.float32), np.zeros(24, np.float32)
    with pytest.raises(an.KernelCheckError) as caught:
        two_lanes_read_one_overwrites.launch(x, y, block_dim=3, checked=True)
    err = caught.value
    assert (err.lane, err.rule, err.details["other_lane"]) == (2, "gm-write-after-read", -1)
    assert "read by several other lanes" in str(err)
    assert np.array_equal(x, np.arange(8)) and (y == 0).all()


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("lanes", [1, 4, 48])
@pytest.mark.parametrize("mode", ["plain", "traced", "checked"])
def test_sync_all_orders_an_exchange_between_cores(lanes, mode, interpret):
    x, partials, total = _partials_args(lanes)
    result = last_core_adds_partials.launch(x, partials, total, block_dim=lanes, checked=mode == "checked",
                                            trace=mode == "traced", interpret=interpret)
    assert np.array_equal(partials, 2 * x)
    assert np.array_equal(total, (2 * x).reshape(lanes, 8).sum(axis=0))
    if mode == "traced":
        assert result.totals()["calls_gm_to_ub"] == lanes + lanes


@an.kernel
def exchange_rounds(ctx, x, y, rounds):
    """Correct: in each round every lane adds its right neighbour's block into its own, with a
    SyncAll between reading and writing (the neighbour's read happens before the write)."""
    mine = alloc_buffer(ctx, 8, np.float32)
    theirs = alloc_buffer(ctx, 8, np.float32)
    data_copy(ctx, mine, 0, x, ctx.block_idx * 8, 8)
    data_copy(ctx, y, ctx.block_idx * 8, mine, 0, 8)
    for _ in range(rounds):
        sync_all(ctx)
        data_copy(ctx, theirs, 0, y, (ctx.block_idx + 1) % ctx.block_num * 8, 8)
        add(ctx, mine, mine, theirs, 8)
        sync_all(ctx)
        data_copy(ctx, y, ctx.block_idx * 8, mine, 0, 8)


def _exchange_reference(x, lanes, rounds):
    y = x.reshape(lanes, 8).copy()
    for _ in range(rounds):
        y = y + np.roll(y, -1, axis=0)
    return y.reshape(-1)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("checked", [False, True])
def test_sync_all_phases_repeat_and_stay_ordered(checked, interpret):
    lanes, rounds = 8, 5
    x = np.arange(8 * lanes, dtype=np.float32)
    for _ in range(3):  # the barrier really holds: unchecked runs on 8 threads give the same answer
        y = np.zeros_like(x)
        exchange_rounds.launch(x, y, rounds, block_dim=lanes, checked=checked, interpret=interpret)
        assert np.array_equal(y, _exchange_reference(x, lanes, rounds))


@an.kernel
def one_lane_skips_the_barrier(ctx, x, y):
    # bug: lane 1 returns early; on the device the others wait at SyncAll forever
    if ctx.block_idx == 1:
        return
    sync_all(ctx)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("checked", [False, True])
def test_a_lane_that_never_reaches_sync_all_is_an_error_not_a_hang(checked, interpret):
    x, y = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(an.KernelError, match="SyncAll.*abandoned: 1 lane"):
        one_lane_skips_the_barrier.launch(x, y, block_dim=4, checked=checked, interpret=interpret)


def _sync_through_a_helper(ctx):
    """Reached through an overload, which the launch does not read (a jitted helper it would)."""


@overload(_sync_through_a_helper, jit_options=OVERLOAD_OPTIONS)
def _ov_sync_through_a_helper(ctx):
    def impl(ctx):
        sync_all(ctx)
    return impl


@an.kernel
def sync_all_in_a_helper(ctx, x):
    _sync_through_a_helper(ctx)


def test_sync_all_needs_a_resident_launch():
    with pytest.raises(an.KernelError, match="not all resident"):
        sync_all_in_a_helper.launch(np.zeros(8, np.float32), block_dim=2)
    resident = an.kernel(sync_all_in_a_helper.py_func, resident=True)
    resident.launch(np.zeros(8, np.float32), block_dim=2)
    with pytest.raises(ValueError, match="block_dim 49 exceeds the 48 vector cores"):
        last_core_adds_partials.launch(*_partials_args(49), block_dim=49)


@an.kernel
def pad_rows_with_a_negative_gap(ctx, x, y, n):
    buf = alloc_buffer(ctx, 64, np.float32)
    data_copy_pad(ctx, buf, 0, x, 0, 4, 32, -16, 0)  # bug: rows 16 bytes apart overlap (srcStride -16)
    data_copy(ctx, y, 0, buf, 0, 32)


def test_a_negative_stride_is_a_count_out_of_range():
    x, y = _args(64)
    with pytest.raises(an.KernelCheckError) as caught:
        pad_rows_with_a_negative_gap.launch(x, y, 64, block_dim=1, checked=True)
    err = caught.value
    assert (err.primitive, err.rule, err.details) == ("DataCopyPad", "count-out-of-range",
                                                      {"count": "srcStride", "value": -16})


# ---- rows of a few bytes (Tile's small inner dims): checked word by word -------------------------

@an.kernel(gm_padding="read")
def interleaved_rows(ctx, x, y, shift):
    """16 rows of 4 bytes per lane, 8 bytes apart in GM: lane i fills the 4-byte slots from byte
    4 * i - shift, so with shift 0 the two lanes interleave exactly."""
    buf = alloc_buffer(ctx, 128, np.float32)
    data_copy(ctx, buf, 0, x, 0, 128)
    data_copy_pad(ctx, y, 4 * ctx.block_idx - shift * ctx.block_idx, buf, 0, 16, 4, 0, 4)


@an.kernel(gm_padding="read")
def narrow_rows_then_wider(ctx, x, y):
    """Correct: lane 0 writes 2-byte rows, then 4-byte rows over them (words of mixed owners:
    its own bytes and unwritten ones); lane 1 writes the other half of y."""
    buf = alloc_buffer(ctx, 128, np.float32)
    data_copy(ctx, buf, 0, x, 0, 128)
    if ctx.block_idx == 0:
        data_copy_pad(ctx, y, 0, buf, 0, 8, 2, 0, 6)
        data_copy_pad(ctx, y, 0, buf, 0, 8, 4, 0, 4)
    else:
        data_copy_pad(ctx, y, 64, buf, 0, 8, 4, 0, 4)


def test_small_rows_of_two_lanes_interleave_clean_and_overlap_is_caught():
    x = np.arange(128, dtype=np.float32)
    rows = x.view(np.uint8).reshape(-1, 32)[:16, :4]  # the first 4 bytes of each 32-byte UB row
    y = np.zeros(128, np.uint8)
    interleaved_rows.launch(x, y, 0, block_dim=2, checked=True)
    assert np.array_equal(y.reshape(16, 2, 4), np.stack([rows, rows], axis=1))
    y = np.full(128, 7, np.uint8)
    with pytest.raises(an.KernelCheckError) as caught:
        interleaved_rows.launch(x, y, 2, block_dim=2, checked=True)
    err = caught.value
    assert (err.lane, err.rule, err.details) == (1, "gm-write-race",
                                                 {"tensor": "y (argument 1)", "byte": 2, "other_lane": 0})
    assert (y == 7).all()  # the backups of the word path put every byte back


def test_small_rows_over_a_lanes_own_narrower_rows_are_clean():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.uint8)
    narrow_rows_then_wider.launch(x, y, block_dim=2, checked=True)
    rows = x.view(np.uint8).reshape(-1, 32)[:8, :4]
    assert np.array_equal(y[:64].reshape(8, 8)[:, :4], rows)
    assert np.array_equal(y[64:].reshape(8, 8)[:, :4], rows)


# ---- big copies: the owner and reader summaries per granule ---------------------------------------
# Rows of ROW float32 (1 KB: four 256-byte granules): each copy covers whole granules, unless it
# starts SHIFT elements into a row (part of a granule first, then whole ones).

ROW = 256


@an.kernel
def rows_of_lanes(ctx, x, y, first_row, rows, shift):
    """Lane k copies ``rows`` rows of x to y from row ``k * first_row``, ``shift`` elements on
    (first_row < rows: two lanes write the same bytes)."""
    buf = alloc_buffer(ctx, ROW, np.float32)
    for r in range(ctx.block_idx * first_row, ctx.block_idx * first_row + rows):
        data_copy(ctx, buf, 0, x, r * ROW, ROW)
        data_copy(ctx, y, r * ROW + shift * ctx.block_idx, buf, 0, ROW)


@pytest.mark.parametrize("first_row, shift, byte", [(3, 0, 3 * 1024), (3, 25, 3 * 1024 + 100), (4, 0, None)],
                         ids=["whole granules overlap", "overlap from part of a granule", "no overlap"])
def test_lanes_writing_whole_granules_race_at_the_first_shared_byte(first_row, shift, byte):
    x = np.arange(16 * ROW, dtype=np.float32)
    y = np.full(16 * ROW + 64, -1.0, np.float32)
    before = y.copy()
    if byte is None:
        rows_of_lanes.launch(x, y, first_row, 4, shift, block_dim=2, checked=True)
        assert np.array_equal(y[:8 * ROW], x[:8 * ROW])
        return
    with pytest.raises(an.KernelCheckError) as caught:
        rows_of_lanes.launch(x, y, first_row, 4, shift, block_dim=2, checked=True)
    err = caught.value
    assert (err.lane, err.primitive, err.rule) == (1, "DataCopy", "gm-write-race")
    assert err.details == {"tensor": "y (argument 1)", "byte": byte, "other_lane": 0}
    assert y.tobytes() == before.tobytes()  # every granule lane 0 wrote whole is put back


@an.kernel
def reads_a_row_another_lane_writes(ctx, x, y, n):
    """Lane 0 writes y's rows 0-3; lane 1 reads row 2 (bug: no SyncAll), or with ``n`` 1 writes
    row 2 after lane 0 read it (y is read first by lane 0 here)."""
    buf = alloc_buffer(ctx, 4 * ROW, np.float32)
    if ctx.block_idx == 0:
        data_copy(ctx, buf, 0, x, 0, 4 * ROW)
        if n == 1:
            data_copy(ctx, buf, 0, y, 0, 4 * ROW)
        else:
            data_copy(ctx, y, 0, buf, 0, 4 * ROW)
    else:
        if n == 1:
            data_copy(ctx, buf, 0, x, 0, ROW)
            data_copy(ctx, y, 2 * ROW, buf, 0, ROW)
        else:
            data_copy(ctx, buf, 0, y, 2 * ROW, ROW)
            data_copy(ctx, x, 8 * ROW, buf, 0, ROW)


@pytest.mark.parametrize("n, rule, operand", [(0, "gm-cross-core-read", "src"), (1, "gm-write-after-read", "dst")])
def test_cross_core_hazards_on_whole_granules(n, rule, operand):
    x = np.arange(16 * ROW, dtype=np.float32)
    y = np.zeros(8 * ROW, np.float32)
    x0, y0 = x.copy(), y.copy()
    with pytest.raises(an.KernelCheckError) as caught:
        reads_a_row_another_lane_writes.launch(x, y, n, block_dim=2, checked=True)
    err = caught.value
    assert (err.lane, err.operand, err.rule) == (1, operand, rule), str(err)
    assert err.details == {"tensor": "y (argument 1)", "byte": 2 * ROW * 4, "other_lane": 0}
    assert x.tobytes() == x0.tobytes() and y.tobytes() == y0.tobytes()


@an.kernel
def exchange_rows_with_sync_all(ctx, x, y, n):
    """Correct: every lane writes its row, SyncAll, every lane overwrites its right neighbour's row
    with the sum of it and its own (granules owned before the barrier are anyone's after it)."""
    mine = alloc_buffer(ctx, ROW, np.float32)
    theirs = alloc_buffer(ctx, ROW, np.float32)
    data_copy(ctx, mine, 0, x, ctx.block_idx * ROW, ROW)
    data_copy(ctx, y, ctx.block_idx * ROW, mine, 0, ROW)
    sync_all(ctx)
    right = (ctx.block_idx + 1) % ctx.block_num
    data_copy(ctx, theirs, 0, y, right * ROW, ROW)
    add(ctx, theirs, theirs, mine, ROW)
    sync_all(ctx)
    data_copy(ctx, y, right * ROW, theirs, 0, ROW)


@pytest.mark.parametrize("checked", [False, True])
def test_whole_granules_exchanged_across_sync_all_are_clean(checked):
    lanes = 6
    x = np.arange(lanes * ROW, dtype=np.float32)
    y = np.zeros_like(x)
    exchange_rows_with_sync_all.launch(x, y, 0, block_dim=lanes, checked=checked)
    rows = x.reshape(lanes, ROW)
    assert np.array_equal(y.reshape(lanes, ROW), rows + np.roll(rows, 1, axis=0))


@an.kernel
def part_then_whole_granules(ctx, x, y, n):
    """Lane 0 writes 100 bytes of y's first granule, then y's first KB whole (its own bytes: clean);
    lane 1 then writes the first KB too (bug), which meets lane 0's bytes in a granule whose
    bytes are mixed and in whole ones."""
    buf = alloc_buffer(ctx, ROW, np.float32)
    data_copy(ctx, buf, 0, x, 0, ROW)
    if ctx.block_idx == 0:
        data_copy_pad(ctx, y, 8, buf, 0, 1, 100, 0, 0)
        data_copy(ctx, y, 0, buf, 0, ROW)
    elif n == 1:
        data_copy(ctx, y, 0, buf, 0, ROW)


def test_whole_granule_writes_over_a_lanes_mixed_granules():
    x = np.arange(ROW, dtype=np.float32)
    y = np.zeros(2 * ROW, np.float32)
    part_then_whole_granules.launch(x, y, 0, block_dim=2, checked=True)
    assert np.array_equal(y[:ROW], x)
    y = np.zeros(2 * ROW, np.float32)
    with pytest.raises(an.KernelCheckError) as caught:
        part_then_whole_granules.launch(x, y, 1, block_dim=2, checked=True)
    assert (caught.value.lane, caught.value.rule, caught.value.details["byte"]) == (1, "gm-write-race", 0)
    assert (y == 0).all()


@an.kernel
def fills_its_ub(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)
    duplicate(ctx, buf, 1.0, TILE)
    data_copy(ctx, y, ctx.block_idx * TILE, buf, 0, TILE)


@an.kernel
def reads_ub_it_never_wrote(ctx, x, y, n):
    buf = alloc_buffer(ctx, TILE, np.float32)  # bug: the same UB bytes an earlier launch wrote
    data_copy(ctx, y, ctx.block_idx * TILE, buf, 0, TILE)


@pytest.mark.parametrize("lanes", [1, 7, 100])
def test_ub_written_by_an_earlier_launch_is_unwritten_for_this_one(lanes):
    """The UB shadow is reused from launch to launch with each lane's epoch running on: marks an
    earlier launch left never count, across the clear every 255 lanes."""
    x, y = np.zeros(TILE * lanes, np.float32), np.zeros(TILE * lanes, np.float32)
    for _ in range(600 // lanes + 2):
        fills_its_ub.launch(x, y, 0, block_dim=lanes, checked=True)
        with pytest.raises(an.KernelCheckError) as caught:
            reads_ub_it_never_wrote.launch(x, y, 0, block_dim=lanes, checked=True)
        assert (caught.value.lane, caught.value.rule) == (0, "ub-uninitialized-read")
