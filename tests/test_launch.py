"""The launch path: lanes, UB, key specializations, argument checks, memory safety."""

from __future__ import annotations

import pathlib
import sys
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.host import InvalidArgument, InvalidType, InvalidVal, int32
from ascend_numba.kernels import (
    KernelError, alloc_buffer, constant, data_copy, data_copy_pad, gather, in_ub, kernel, muls,
    preload, reinterpret,
)
from ascend_numba.kernels.lane import PRELOAD_REGIONS, STATE_PRELOAD, STATE_PRELOAD_PENDING

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import vector_add as va  # noqa: E402


@pytest.mark.parametrize("n", [1, 7, 8, 1000, 49157, 200_003])
def test_vector_add_identical_bytes_on_any_lane_count(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    ref = (x + y) * np.float32(1.5)
    outs = [va.add_arrays(x, y, scale=1.5, block_dim=b) for b in (1, 7, 24, 48)]
    for z in outs:
        assert z.tobytes() == ref.tobytes()


def test_vector_add_small_tiles_and_key_without_scale():
    x = np.arange(5000, dtype=np.float32)
    y = np.ones(5000, dtype=np.float32)
    assert np.array_equal(va.add_arrays(x, y, block_dim=3, tile_elems=64), x + y)


def test_pyPTO_bracket_launch():
    x = np.arange(100, dtype=np.float32)
    z = np.zeros_like(x)
    tiling = va.plan_add(100, 4, an.get_platform("A2"))
    va.vector_add[None, 4, {"UseScale": 0}](x, x, z, tiling)
    assert np.array_equal(z, 2 * x)


def test_bad_inputs_raise_before_launch():
    x = np.zeros(10, np.float32)
    with pytest.raises(TypeError, match="float32"):
        va.add_arrays(x.astype(np.float64), x)
    with pytest.raises(ValueError, match="shapes differ"):
        va.add_arrays(x, np.zeros(11, np.float32))
    with pytest.raises(an.UBPlanError, match="ub_size"):
        va.add_arrays(x, x, tile_elems=65536)
    tiling = va.plan_add(10, 2, an.get_platform("A2"))
    z = np.zeros_like(x)
    with pytest.raises(ValueError, match="block_dim"):
        va.vector_add.launch(x, x, z, tiling, block_dim=0, key={"UseScale": 0})
    with pytest.raises(InvalidArgument):
        va.vector_add.launch(x, x, z, tiling, block_dim=2, key={})
    with pytest.raises(InvalidVal):
        va.vector_add.launch(x, x, z, tiling, block_dim=2, key={"UseScale": 3})
    with pytest.raises(InvalidType):
        va.vector_add.launch(x, x, z, tiling, block_dim=2, key=[0])
    with pytest.raises(TypeError, match="pass a key"):
        va.vector_add.launch(x, x, z, tiling, block_dim=2)
    with pytest.raises(ValueError, match="C-contiguous"):
        va.vector_add.launch(np.zeros(20, np.float32)[::2], x, z, tiling, block_dim=2, key={"UseScale": 0})
    with pytest.raises(TypeError, match="argument 0"):
        va.vector_add.launch([1.0] * 10, x, z, tiling, block_dim=2, key={"UseScale": 0})
    assert not z.any()  # nothing ran


@dataclass
class CopyTiling:
    nbytes: int
    chunk: int32
    ub_elems: int


@kernel
def hostile_copy(ctx, src, dst, tiling):
    # Deliberately wrong offsets: past both ends, negative, and a UB over-allocation by lane 1.
    buf = alloc_buffer(ctx, tiling.ub_elems if ctx.block_idx == 1 else 64, np.uint8)
    data_copy(ctx, buf, 0, src, src.size - 8, 64)         # reads 56 bytes past the end (virtual padding)
    data_copy(ctx, dst, dst.size - 8, buf, 0, 64)         # writes past the end: dropped
    data_copy(ctx, dst, -5, buf, 0, 64)                   # negative offset: dropped
    data_copy_pad(ctx, dst, 0, buf, 0, 3, 8, 0, 1 << 40)  # huge stride: later blocks dropped
    gather(ctx, buf, src, reinterpret(buf, np.uint32), 1 << 30, 16)  # indices past the source: skipped


def test_out_of_range_accesses_never_touch_memory():
    src = np.arange(64, dtype=np.uint8)
    guard = np.full(256, 0xAB, np.uint8)
    dst = guard[64:128]
    hostile_copy.launch(src, dst, CopyTiling(64, 32, 64), block_dim=1)
    assert (guard[:64] == 0xAB).all() and (guard[128:] == 0xAB).all()
    assert np.array_equal(dst[-8:], src[-8:])


def test_ub_over_capacity_raises_kernel_error():
    src = np.arange(64, dtype=np.uint8)
    dst = np.zeros(64, np.uint8)
    with pytest.raises(KernelError, match="lane 1: UB allocation"):
        hostile_copy.launch(src, dst, CopyTiling(64, 32, 300_000), block_dim=2)


def test_prepared_launch_reruns_with_new_tensors_and_raises_lane_errors():
    # Kernel.prepare fixes lanes, tiling bytes and the launcher; each call takes fresh GM tensors.
    plat = an.get_platform("A2")
    tiling = va.plan_add(1000, 7, plat, 2.0)
    launch = va.vector_add.prepare(an.host.to_array(tiling), an.host.numpy_dtype(va.AddTiling), 7, plat,
                                   {"UseScale": 1})
    for seed in (1, 2):
        x, y = np.random.default_rng(seed).standard_normal((2, 1000)).astype(np.float32)
        z = np.empty_like(x)
        state = launch((x, y, z))
        assert state.shape[0] == 7
        assert z.tobytes() == ((x + y) * np.float32(2.0)).tobytes()
    src, dst = np.arange(64, dtype=np.uint8), np.zeros(64, np.uint8)
    bad = hostile_copy.prepare(an.host.to_array(CopyTiling(64, 32, 300_000)),
                               an.host.numpy_dtype(CopyTiling), 2, plat)
    with pytest.raises(KernelError, match="lane 1: UB allocation"):
        bad((src, dst))


@kernel
def lane_ids(ctx, out):
    out[ctx.block_idx] = ctx.block_idx * 1000 + ctx.block_num
    probe = alloc_buffer(ctx, 8, np.int32)
    out[ctx.block_num + ctx.block_idx] = 1 if (in_ub(ctx, probe) and not in_ub(ctx, out)) else 0


@pytest.mark.parametrize("block_dim", [1, 2, 48, 300])
def test_every_lane_runs_once_with_its_index(block_dim):
    out = np.zeros(2 * block_dim, np.int64)
    lane_ids.launch(out, block_dim=block_dim)
    assert list(out[:block_dim]) == [i * 1000 + block_dim for i in range(block_dim)]
    assert out[block_dim:].all()


@pytest.mark.parametrize("platform", ["A2", "A5"])
def test_every_ub_starts_on_a_host_cache_line(platform):
    # A block aligned in UB is then aligned on the host: a 64-byte row of a TTRANS register pass
    # never straddles two cache lines (kernels/pools.py).
    from ascend_numba.kernels.pools import UB_POOL
    ub_size = an.get_platform(platform).ub_size
    for pool in (UB_POOL.get(ub_size), UB_POOL.resident(ub_size, 3)):
        assert [row.ctypes.data % 64 for row in pool] == [0] * len(pool)


@kernel
def copy_any(ctx, src, dst):
    if ctx.block_idx == 0:
        data_copy(ctx, dst, 0, src, 0, src.size)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_arrays_reach_kernels_as_uint16(dtype):
    src = np.linspace(-2, 2, 33).astype(dtype)
    dst = np.zeros_like(src)
    copy_any.launch(src.reshape(3, 11), dst, block_dim=2)
    assert dst.tobytes() == src.tobytes()


def test_kernel_without_key_rejects_one():
    with pytest.raises(TypeError, match="no TilingKey"):
        copy_any.launch(np.zeros(4), np.zeros(4), block_dim=1, key={"A": 1})


@kernel
def preload_then_compute(ctx, x, y, out, ops):
    preload(ctx, x, 3, 1000, 4)      # 4000 bytes, a 1000-byte share per vector op
    preload(ctx, y, 0, 10, 4)        # 40 bytes: one op fetches them (shares are whole lines)
    preload(ctx, x, -1, 10, 4)       # outside x: ignored
    preload(ctx, x, x.size, 10, 4)
    buf = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, buf, 0, x, 0, 64)
    for _ in range(ops):
        muls(ctx, buf, buf, 2.0, 64)
    data_copy(ctx, out, 0, buf, 0, 64)


@pytest.mark.parametrize("ops", [0, 1, 3, 4, 6])
def test_preload_is_fetched_a_share_per_vector_op_and_changes_no_value(ops):
    x = np.arange(4096, dtype=np.float32)
    y = np.ones(16, np.float32)
    out = np.zeros(64, np.float32)
    state = preload_then_compute.launch(x, y, out, ops, block_dim=1)[0]
    assert out.tobytes() == (x[:64] * np.float32(2.0 ** ops)).tobytes()
    x_region, y_region = state[STATE_PRELOAD:STATE_PRELOAD + 3], state[STATE_PRELOAD + 3:STATE_PRELOAD + 6]
    fetched = min(ops, 4) * 1000
    assert list(x_region) == [x.ctypes.data + 12 + fetched, 4000 - fetched, 1000]
    assert y_region[1] == (40 if ops == 0 else 0)
    assert state[STATE_PRELOAD_PENDING] == (ops < 4) + (ops == 0)
    assert not state[STATE_PRELOAD + 6:STATE_PRELOAD + 3 * PRELOAD_REGIONS].any()  # the hints outside x took none


@kernel
def preload_too_many(ctx, x):
    for k in range(PRELOAD_REGIONS + 3):
        preload(ctx, x, k, 1, 1)


def test_preload_drops_hints_beyond_its_regions():
    x = np.zeros(64, np.float32)
    state = preload_too_many.launch(x, block_dim=1)[0]
    assert state[STATE_PRELOAD_PENDING] == PRELOAD_REGIONS
    addresses = state[STATE_PRELOAD:STATE_PRELOAD + 3 * PRELOAD_REGIONS:3]
    assert list(addresses) == [x.ctypes.data + 4 * k for k in range(PRELOAD_REGIONS)]


@kernel
def _raises_on_lane_one(ctx, x):
    if ctx.block_idx == 1:
        raise ValueError("boom")


def test_an_exception_in_a_lane_is_a_kernel_error_naming_the_lane():
    with pytest.raises(KernelError, match="^lane 1: the kernel raised ValueError: boom$"):
        _raises_on_lane_one.launch(np.zeros(4), block_dim=3)


UNBOUND = constant("UNBOUND", "never bound by the launches below")


@kernel
def reads_a_declared_constant(ctx, x):
    if UNBOUND == 1:
        x[0] = 1


def test_a_declared_constant_left_unbound_is_a_clear_error():
    x = np.zeros(8, np.int64)
    with pytest.raises(TypeError, match="UNBOUND"):
        reads_a_declared_constant.launch(x, block_dim=1)
    reads_a_declared_constant.launch(x, block_dim=1, datatype={"UNBOUND": 1})
    assert x[0] == 1


@kernel(outputs=("out",))
def scalars_to_gm(ctx, out, flag, small, big, single, double, tiny):
    out[0] = np.float64(flag)
    out[1] = np.float64(small)
    out[2] = np.float64(big)
    out[3] = np.float64(single)
    out[4] = double
    out[5] = np.float64(tiny)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_scalar_arguments_of_every_width_reach_the_body_exactly(interpret):
    # The entry unpacks scalars from their bits in the payload (kernels.entry).
    values = (True, -7, np.uint64(2**63 + 4096), np.float32(1.0000001), -0.0, np.int8(-128))
    out = np.full(6, np.nan)
    scalars_to_gm.launch(out, *values, block_dim=1, interpret=interpret)
    assert out.tobytes() == np.array([np.float64(v) for v in values]).tobytes()


def test_one_launcher_serves_kernels_of_any_argument_types():
    # The launchers take the payload and the entry's address, never the arguments' types.
    from ascend_numba.kernels.launchers import launch_lanes

    x = np.arange(64, dtype=np.float32)
    an.tile(x, (2,))
    compiled = len(launch_lanes.overloads)
    an.tile(x.astype(np.int8).reshape(8, 8), (3, 1, 2))
    scalars_to_gm.launch(np.zeros(6), True, 1, 2, 3.0, 4.0, 5, block_dim=2)
    assert len(launch_lanes.overloads) == compiled
