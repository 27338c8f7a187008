"""TPipe / TQue / TBuf (kernels/primitives/tpipe.py) and checked mode's pipeline rules
(checked/pipeline.py): one kernel whose ``bug`` argument picks a broken pipeline (one compile for
the whole corpus), each bug caught with its rule, lane, queue and stage; the same kernel without
a bug checked clean; the device's hangs as lane errors in plain launches."""

from __future__ import annotations

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.kernels import (
    HardEvent, KernelCheckError, KernelError, PIPE, TBuf, TBufPool, TPipe, TPosition, TQue, TQueBind, add, adds,
    alloc_buffer, data_copy, duplicate, get_value, ib_set, ib_wait, pipe_barrier, set_flag, set_global_buffer, trap,
    wait_flag,
)

N = 64  # elements per lane, two tiles of 32 fp32
TILE = 32

# The bugs, by the number the kernel takes; each with the rule, primitive and operand it reports.
BUGS = {
    1: ("pipe-read-before-deque", "Add", "src"),       # Compute reads the CopyIn's tensor it never DeQue'd
    2: ("pipe-use-after-free", "Add", "src"),          # Compute reads x after its FreeTensor
    3: ("pipe-alloc-past-depth", "AllocTensor", "dst"),  # three AllocTensor on a queue of two buffers
    4: ("pipe-wrong-queue", "EnQue", "src"),           # x's tensor enqueued on y's queue
    5: ("pipe-never-freed", "FreeTensor", "dst"),      # y never freed
    6: ("pipe-unsynchronized", "Add", "src1"),         # a copy into a TBuf read by Add with no WaitFlag
    7: ("pipe-wrong-queue", "DeQue", "src"),           # DeQue of an empty queue
    8: ("pipe-read-before-deque", "DataCopy", "src"),  # CopyOut of a VECOUT tensor never EnQue'd / DeQue'd
    9: ("pipe-use-after-free", "FreeTensor", "src"),   # FreeTensor twice
    12: ("pipe-unsynchronized", "GetValue", "src"),    # a scalar read of a copy's TBuf after MTE2_V only
    14: ("pipe-unsynchronized", "Add", "src1"),        # a copy's blocks, then a vector write to the TBuf's others
    16: ("pipe-use-after-free", "DeQue", "src"),       # FreeTensor of an enqueued tensor, then its DeQue
    17: ("pipe-unsynchronized", "Add", "src1"),        # a copy into a dequeued tensor, read with no wait
}
SYNCED_TBUF = 10  # the TBuf path with SetFlag / WaitFlag<MTE2_V>: clean
BARRIER_TBUF = 11  # the TBuf path with PipeBarrier<PIPE_ALL>: clean
SCALAR_SYNCED = 13  # a scalar read of the copy's TBuf after MTE2_S: clean
DISJOINT = 15  # the vector unit's blocks and a copy's blocks of one TBuf, the vector's read: clean
CLEAN = (0, SYNCED_TBUF, BARRIER_TBUF, SCALAR_SYNCED, DISJOINT)


@an.kernel(nrt=False, outputs=("z",))
def pipeline_bugs(ctx, x, y, z, bug):
    pipe = TPipe(ctx)
    in_x, in_y = TQue(pipe, TPosition.VECIN, 2), TQue(pipe, TPosition.VECIN, 2)
    out_z = TQue(pipe, TPosition.VECOUT, 2)
    tmp = TBuf(pipe, TPosition.VECCALC)
    x_gm = set_global_buffer(ctx, x, np.float32, N * ctx.block_idx, N)
    y_gm = set_global_buffer(ctx, y, np.float32, N * ctx.block_idx, N)
    z_gm = set_global_buffer(ctx, z, np.float32, N * ctx.block_idx, N)
    pipe.init_buffer(in_x, 2, TILE * 4)
    pipe.init_buffer(in_y, 2, TILE * 4)
    pipe.init_buffer(out_z, 2, TILE * 4)
    pipe.init_buffer(tmp, TILE * 4)
    for i in range(N // TILE):
        x_loc = in_x.alloc_tensor(np.float32)
        y_loc = in_y.alloc_tensor(np.float32)
        if bug == 3:
            in_x.alloc_tensor(np.float32)
            in_x.alloc_tensor(np.float32)
        data_copy(ctx, x_loc, 0, x_gm, i * TILE, TILE)
        data_copy(ctx, y_loc, 0, y_gm, i * TILE, TILE)
        if bug == 4:
            in_y.en_que(x_loc)
        in_x.en_que(x_loc)
        in_y.en_que(y_loc)
        if bug == 16:
            in_x.free_tensor(x_loc)
        if bug != 1:
            x_loc = in_x.de_que(np.float32)
        if bug == 7:
            in_x.de_que(np.float32)
        y_loc = in_y.de_que(np.float32)
        if bug == 17:
            data_copy(ctx, y_loc, 0, y_gm, i * TILE, TILE)
        if bug == 2:
            in_x.free_tensor(x_loc)
        z_loc = out_z.alloc_tensor(np.float32)
        if bug == 6 or bug == SYNCED_TBUF or bug == BARRIER_TBUF:  # y through the TBuf
            t = tmp.get(np.float32)
            data_copy(ctx, t, 0, y_gm, i * TILE, TILE)
            if bug == SYNCED_TBUF:
                set_flag(ctx, HardEvent.MTE2_V, 0)
                wait_flag(ctx, HardEvent.MTE2_V, 0)
            if bug == BARRIER_TBUF:
                pipe_barrier(ctx, PIPE.PIPE_ALL)
            add(ctx, z_loc, x_loc, t, TILE)
        elif bug == 12 or bug == SCALAR_SYNCED:  # y's first element through the TBuf, read by the scalar unit
            t = tmp.get(np.float32)
            data_copy(ctx, t, 0, y_gm, i * TILE, TILE)
            set_flag(ctx, HardEvent.MTE2_S if bug == SCALAR_SYNCED else HardEvent.MTE2_V, 0)
            wait_flag(ctx, HardEvent.MTE2_S if bug == SCALAR_SYNCED else HardEvent.MTE2_V, 0)
            adds(ctx, z_loc, x_loc, get_value(ctx, t, 0), TILE)
        elif bug == 14 or bug == DISJOINT:  # half of the TBuf a copy's, half the vector unit's
            t = tmp.get(np.float32)
            if bug == 14:
                data_copy(ctx, t, 0, y_gm, i * TILE, TILE // 2)
                duplicate(ctx, t[TILE // 2:], np.float32(0.5), TILE // 2)
                add(ctx, z_loc, x_loc, t, TILE)
            else:
                duplicate(ctx, t, np.float32(0.5), TILE // 2)
                data_copy(ctx, t[TILE // 2:], 0, y_gm, i * TILE + TILE // 2, TILE // 2)
                add(ctx, z_loc, x_loc, t, TILE // 2)
                add(ctx, z_loc[TILE // 2:], x_loc[TILE // 2:], y_loc[TILE // 2:], TILE // 2)
        else:
            add(ctx, z_loc, x_loc, y_loc, TILE)
        if bug != 8:
            out_z.en_que(z_loc)
            z_loc = out_z.de_que(np.float32)
        if bug != 2:
            in_x.free_tensor(x_loc)
        if bug != 5:
            in_y.free_tensor(y_loc)
        if bug == 9:
            in_y.free_tensor(y_loc)
        data_copy(ctx, z_gm, i * TILE, z_loc, 0, TILE)
        out_z.free_tensor(z_loc)


def _run(bug, **kw):
    x = np.arange(2 * N, dtype=np.float32)
    y = np.full(2 * N, 0.5, np.float32)
    z = np.zeros_like(x)
    pipeline_bugs.launch(x, y, z, bug, block_dim=2, **kw)
    return x, y, z


@pytest.mark.parametrize("bug", CLEAN)
@pytest.mark.parametrize("mode", ["plain", "checked"])
def test_a_correct_pipeline_runs_and_checks_clean(bug, mode):
    x, y, z = _run(bug, checked=mode == "checked")
    assert np.array_equal(z, x + y)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_pipeline_bug_is_caught_with_its_rule(bug):
    rule, primitive, operand = BUGS[bug]
    with pytest.raises(KernelCheckError) as err:
        _run(bug, checked=True)
    e = err.value
    assert (e.rule, e.lane, e.primitive, e.operand) == (rule, 0, primitive, operand), str(e)
    assert "queue" in str(e) or "TBuf" in str(e)


def test_the_messages_name_queue_buffer_state_and_pipe():
    with pytest.raises(KernelCheckError, match=r"buffer 0 of queue 0 \(VECIN.*ENQUE.*V pipe"):
        _run(1, checked=True)
    with pytest.raises(KernelCheckError, match=r"MTE2 pipe wrote.*WaitFlag<HardEvent::MTE2_V>"):
        _run(6, checked=True)
    with pytest.raises(KernelCheckError, match=r"AllocTensor on queue 0 \(VECIN.*all 2 of its buffers"):
        _run(3, checked=True)


@pytest.mark.parametrize("bug, text", [(3, "AllocTensor with every buffer"), (7, "DeQue of an empty queue"),
                                       (9, "already freed")])
def test_the_hangs_stop_a_plain_lane(bug, text):
    with pytest.raises(KernelError, match=text):
        _run(bug)


def test_interpreted_runs_the_model_and_its_rules():
    x, y, z = _run(0, interpret=True)
    assert np.array_equal(z, x + y)
    with pytest.raises(KernelCheckError, match="pipe-read-before-deque"):
        _run(1, interpret=True, checked=True)


def test_a_global_tensor_of_another_type_is_refused_at_the_launch():
    x = np.arange(2 * N, dtype=np.float64)
    with pytest.raises(TypeError, match=r"argument x is float64.*GlobalTensor<float32>"):
        pipeline_bugs.launch(x, x, x, 0, block_dim=2)


@an.kernel(nrt=False)
def queues_and_pools(ctx, x, z, which):
    pipe = TPipe(ctx)
    if which == 0:  # a TQueBind VECIN -> VECOUT: the copy in is the copy out
        que = TQueBind(pipe, TPosition.VECIN, TPosition.VECOUT, 1)
        pipe.init_buffer(que, 1, 64 * 4)
        t = que.alloc_tensor(np.float32)
        data_copy(ctx, t, 0, x, 0, 64)
        que.en_que(t)
        t = que.de_que(np.float32)
        data_copy(ctx, z, 0, t, 0, 64)
        que.free_tensor(t)
    elif which == 1:  # two TBufPools on the same bytes: the first's queue, its Reset, the second's
        pool, pool2 = TBufPool(pipe, TPosition.VECCALC), TBufPool(pipe, TPosition.VECCALC)
        pipe.init_buf_pool(pool, 64 * 4)
        pipe.init_buf_pool(pool2, 64 * 4, pool)
        que, que2 = TQueBind(pipe, TPosition.VECIN, TPosition.VECOUT, 1), TQueBind(pipe, TPosition.VECIN,
                                                                                    TPosition.VECOUT, 1)
        pool.init_buffer(que, 1, 64 * 4)
        t = que.alloc_tensor(np.float32)
        data_copy(ctx, t, 0, x, 0, 32)
        que.en_que(t)
        t = que.de_que(np.float32)
        data_copy(ctx, z, 0, t, 0, 32)
        que.free_tensor(t)
        pool.reset()
        pool2.init_buffer(que2, 1, 64 * 4)
        t = que2.alloc_tensor(np.float32)
        data_copy(ctx, t, 0, x, 32, 32)
        que2.en_que(t)
        t = que2.de_que(np.float32)
        data_copy(ctx, z, 32, t, 0, 32)
        que2.free_tensor(t)
    elif which == 2:  # a TQueBind from VECOUT back to VECIN: no such path
        TQueBind(pipe, TPosition.VECOUT, TPosition.VECIN, 1)
    elif which == 3:  # InitBuffer past the platform's UB
        que = TQue(pipe, TPosition.VECIN, 2)
        pipe.init_buffer(que, 2, ctx.ub_size)
    elif which == 4:  # InitBuffer past the pool's bytes
        pool = TBufPool(pipe, TPosition.VECCALC)
        pipe.init_buf_pool(pool, 64)
        pool.init_buffer(TQue(pipe, TPosition.VECIN, 1), 1, 128)
    elif which == 5:  # a negative length (a tiling's underflow)
        pipe.init_buffer(TQue(pipe, TPosition.VECIN, 2), 2, -64)
    elif which == 6:  # depth 0: the device's in-place forms
        TQue(pipe, TPosition.VECIN, 0)
    elif which == 7:  # a GlobalTensor ending past the allocator's padding
        set_global_buffer(ctx, x, np.float32, 0, 64 + 32)
    elif which == 8:  # InitBuffer in a pool after its Reset
        pool = TBufPool(pipe, TPosition.VECCALC)
        pipe.init_buf_pool(pool, 256)
        pool.reset()
        pool.init_buffer(TQue(pipe, TPosition.VECIN, 1), 1, 128)
    elif which == 9:  # a 33rd handle
        for _ in range(33):
            TBuf(pipe, TPosition.VECCALC)
    else:  # a TBuf Get of no elements
        buf = TBuf(pipe, TPosition.VECCALC)
        pipe.init_buffer(buf, 256)
        buf.get(np.float32, 0)


@pytest.mark.parametrize("checked", [False, True])
@pytest.mark.parametrize("which", [0, 1])
def test_tquebind_and_tbufpool_move_the_bytes(which, checked):
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    queues_and_pools.launch(x, z, which, block_dim=1, checked=checked)
    assert np.array_equal(z, x)


@pytest.mark.parametrize("which, rule, text", [
    (2, "pipe-setup", "a position"), (3, "ub-over-capacity", "exceeds ub_size"),
    (4, "pipe-setup", "past its TBufPool"), (5, "pipe-setup", "not positive .* value -64"),
    (6, "pipe-setup", "depth below 1"), (7, "pipe-setup", "SetGlobalBuffer .* padding"),
    (8, "pipe-setup", "after its Reset"), (9, "pipe-setup", "more handles"), (10, "pipe-setup", "not positive")])
def test_a_pipe_the_device_refuses_is_named(which, rule, text):
    x = np.zeros(64, np.float32)
    with pytest.raises(KernelCheckError, match=text) as err:
        queues_and_pools.launch(x, x.copy(), which, block_dim=1, checked=True)
    assert err.value.rule == rule
    with pytest.raises(KernelError):
        queues_and_pools.launch(x, x.copy(), which, block_dim=1)


@an.kernel(nrt=False)
def traps_on_lane_one(ctx, x):
    if ctx.block_idx == 1:
        trap(ctx)


@pytest.mark.parametrize("interpret", [False, True])
def test_trap_stops_its_lane_as_a_failed_assert(interpret):
    with pytest.raises(KernelError, match=r"lane 1: .*AssertionError: Trap"):
        traps_on_lane_one.launch(np.zeros(8, np.float32), block_dim=2, interpret=interpret)


@an.kernel(nrt=False)
def core_one_waits_for_core_zero(ctx, x, y, ws, event):
    buf = alloc_buffer(ctx, 8, np.float32)
    sync = alloc_buffer(ctx, 8, np.int32)
    if ctx.block_idx == 0:
        data_copy(ctx, buf, 0, x, 0, 8)
        data_copy(ctx, y, 0, buf, 0, 8)  # y[:8] written by core 0 ...
        ib_set(ctx, ws, sync, 0, 0)
    else:
        ib_wait(ctx, ws, sync, 0, event)  # ... read by core 1 once core 0's flag is up
        data_copy(ctx, buf, 0, y, 0, 8)
        data_copy(ctx, y, 8, buf, 0, 8)


@pytest.mark.parametrize("mode", ["plain", "checked", "interpreted"])
def test_ibwait_orders_one_core_after_another(mode):
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(16, np.float32)
    ws = np.zeros(2 * 8 * 2, np.int32)  # 2 cores x 32 bytes x 2 events
    core_one_waits_for_core_zero.launch(x, y, ws, 0, block_dim=2, checked=mode == "checked",
                                        interpret=mode == "interpreted")
    assert np.array_equal(y, np.concatenate([x, x]))
    assert ws[0] == 1  # core 0's flag for event 0


@pytest.mark.parametrize("checked", [False, True])
def test_an_ibwait_no_ibset_answers_is_a_lane_error(checked):
    x = np.arange(8, dtype=np.float32)
    ws = np.zeros(2 * 8 * 2, np.int32)
    with pytest.raises(KernelError, match="IBWait for core 0's event 1 can never end"):
        core_one_waits_for_core_zero.launch(x, np.zeros(16, np.float32), ws, 1, block_dim=2, checked=checked)
