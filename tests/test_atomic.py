"""DMA atomics (issue #52): lanes of one launch copy into the same GM bytes under SetAtomicAdd / Max /
Min in each A2/A3 type; every contribution lands (compiled, threads racing; interpreted); the
atomic ends with DisableDmaAtomic; checked mode lets atomic copies meet and names a plain write
under another lane's atomic one."""

from __future__ import annotations

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.host.references.atomic import accumulate
from ascend_numba.kernels import (KernelCheckError, adds, alloc_buffer, data_copy, data_copy_pad,
                                  disable_dma_atomic, init_global_memory, set_atomic_add, set_atomic_max,
                                  set_atomic_min, set_atomic_type, sync_all, vector_program)
from ascend_numba.kernels.lane import LANE_TYPES
from ascend_numba._numba_compat.extending import overload
from ascend_numba._numba_compat.jit import OVERLOAD_OPTIONS, jit

LANES, N = 4, 4096  # bytes each lane contributes


@an.kernel
def atomic_kernel(ctx, gm, parts, op, type_code, rounds):
    t = alloc_buffer(ctx, N, np.uint8)
    data_copy(ctx, t, 0, parts, ctx.block_idx * N, N)
    if op == 0:
        set_atomic_add(ctx, np.float32)
    elif op == 1:
        set_atomic_max(ctx, np.float32)
    else:
        set_atomic_min(ctx, np.float32)
    if type_code == 1:
        set_atomic_type(ctx, np.float16)
    elif type_code == 2:
        set_atomic_type(ctx, "bfloat16")
    elif type_code == 3:
        set_atomic_type(ctx, np.int16)
    elif type_code == 4:
        set_atomic_type(ctx, np.int32)
    elif type_code == 5:
        set_atomic_type(ctx, np.int8)
    for _ in range(rounds):
        data_copy(ctx, gm, 0, t, 0, N // 2)
        data_copy_pad(ctx, gm, N // 2, t, N // 2, 4, N // 8, 0, 0)
    disable_dma_atomic(ctx)
    if ctx.block_idx == 0:  # plain again: overwrites its own last 64 bytes... of a scratch tail
        data_copy(ctx, gm, N, t, 0, 64)


TYPES = ["float32", "float16", "bfloat16", "int16", "int32", "int8"]


def _parts(type_name, seed):
    rng = np.random.default_rng(seed)
    if type_name.startswith("int"):
        return rng.integers(0, 256, LANES * N, dtype=np.uint8)
    # small integers as floats: sums exact in any order, so racing lanes give one answer
    values = rng.integers(-8, 9, LANES * N // 4).astype(np.float32)
    if type_name == "float32":
        return values.view(np.uint8)
    if type_name == "float16":
        return np.resize(values.astype(np.float16), LANES * N // 2).view(np.uint8)
    import ml_dtypes
    return np.resize(values.astype(ml_dtypes.bfloat16), LANES * N // 2).view(np.uint8)


@pytest.mark.parametrize("op", [0, 1, 2])
@pytest.mark.parametrize("type_code", range(6))
def test_every_contribution_lands(op, type_code):
    name = TYPES[type_code]
    parts = _parts(name, type_code * 3 + op)
    start = _parts(name, 99)[:N + 64].copy()
    gm = start.copy()
    rounds = 2 if op == 0 and not name.startswith("int") else 1
    atomic_kernel.launch(gm, parts, op, type_code, rounds, block_dim=LANES)
    contributions = [parts[k * N:(k + 1) * N] for k in range(LANES)] * rounds
    want = accumulate(start[:N], contributions, ("add", "max", "min")[op], name)
    assert gm[:N].tobytes() == want.tobytes()
    assert gm[N:].tobytes() == parts[:64].tobytes()  # after DisableDmaAtomic: a plain copy


def test_interpreted_and_checked_agree():
    parts = _parts("int32", 1)
    outs = []
    for mode in ({}, {"interpret": True}, {"checked": True}):
        gm = np.zeros(N + 64, np.uint8)
        atomic_kernel.launch(gm, parts, 0, 4, 1, block_dim=LANES, **mode)
        outs.append(gm.tobytes())
    assert outs[0] == outs[1] == outs[2]


@an.kernel
def plain_meets_atomic(ctx, gm, x, which):
    t = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, t, 0, x, 0, 64)
    if which == 3:  # lane 0 zeroes the output, then every lane adds into it: no SyncAll between
        if ctx.block_idx == 0:
            init_global_memory(ctx, gm, 64, 0.0)
        set_atomic_add(ctx, np.float32)
        data_copy(ctx, gm, 0, t, 0, 64)
        return
    if which == 4:  # each lane adds into its own half, then reads it back: its own bytes, in order
        set_atomic_add(ctx, np.float32)
        data_copy(ctx, gm, 32 * ctx.block_idx, t, 0, 32)
        disable_dma_atomic(ctx)
        data_copy(ctx, t, 0, gm, 32 * ctx.block_idx, 32)
        data_copy(ctx, gm, 32 * ctx.block_idx, t, 0, 32)
        return
    atomic = ctx.block_idx == (1 if which == 0 else 0)  # lanes run in order in checked mode: 0, then 1
    if atomic:
        set_atomic_add(ctx, np.float32)
        data_copy(ctx, gm, 0, t, 0, 64)
        disable_dma_atomic(ctx)
    elif which == 2:
        data_copy(ctx, t, 0, gm, 0, 64)  # a plain read of what the other lane's atomic copy wrote
    else:
        data_copy(ctx, gm, 0, t, 0, 64)


GM0 = r"in GM gm \(argument 0\): byte 0"


@pytest.mark.parametrize("which, message", [
    (0, r"lane 1, DataCopy: \[gm-write-race\] dst " + GM0 + " was already written by lane 0"),
    (1, r"lane 1, DataCopy: \[gm-write-race\] dst " + GM0 + " was already written by a DMA atomic copy of lane 0"),
    (2, r"lane 1, DataCopy: \[gm-cross-core-read\] src " + GM0 + " was written by a DMA atomic copy of lane 0"),
    (3, r"lane 1, DataCopy: \[gm-write-race\] dst " + GM0 + " was already written by lane 0")])
def test_checked_mode_names_a_plain_copy_meeting_an_atomic_one(which, message):
    with pytest.raises(KernelCheckError, match=message):
        plain_meets_atomic.launch(np.zeros(64, np.float32), np.ones(64, np.float32), which, block_dim=2, checked=True)


def test_a_lane_reads_back_and_overwrites_its_own_atomic_result():
    gm = np.zeros(64, np.float32)
    plain_meets_atomic.launch(gm, np.ones(64, np.float32), 4, block_dim=2, checked=True)
    assert np.array_equal(gm, np.ones(64, np.float32))


@an.kernel(resident=True)
def zero_then_accumulate(ctx, out, parts, n):
    t = alloc_buffer(ctx, 64, np.float32)
    if ctx.block_idx == 0:
        init_global_memory(ctx, out, n, 0.0)  # the output a workspace: zeroed by the kernel
    sync_all(ctx)
    data_copy(ctx, t, 0, parts, ctx.block_idx * 64, 64)
    set_atomic_add(ctx, np.float32)
    data_copy(ctx, out, 0, t, 0, 64)
    disable_dma_atomic(ctx)


@pytest.mark.parametrize("mode", [{}, {"interpret": True}, {"checked": True}])
def test_init_global_memory_then_atomic_adds(mode):
    parts = np.random.default_rng(4).integers(-8, 9, 4 * 64).astype(np.float32)
    out = np.full(64, 123.0, np.float32)
    zero_then_accumulate.launch(out, parts, 64, block_dim=4, **mode)
    assert np.array_equal(out, parts.reshape(4, 64).sum(axis=0))


@an.kernel
def fill_kernel(ctx, f32, f16, i16, n, value, atomic):
    if atomic == 1:
        set_atomic_max(ctx, np.float32)
    init_global_memory(ctx, f32, n, value)
    if atomic == 1:
        set_atomic_type(ctx, np.float16)
    init_global_memory(ctx, f16, n, value)
    if atomic == 1:
        set_atomic_type(ctx, np.int16)
    init_global_memory(ctx, i16, n, value)


def test_init_global_memory_fills_count_elements_and_combines_under_an_atomic():
    f32, f16, i16 = np.full(40, 9.0, np.float32), np.full(40, 9.0, np.float16), np.full(40, 9, np.int16)
    fill_kernel.launch(f32, f16.view(np.uint16), i16, 33, -2.5, 0, block_dim=1)
    assert np.array_equal(f32, [-2.5] * 33 + [9.0] * 7) and np.array_equal(f16, [-2.5] * 33 + [9.0] * 7)
    assert np.array_equal(i16, [-2] * 33 + [9] * 7)  # a float toward zero, as a C++ conversion
    fill_kernel.launch(f32, f16.view(np.uint16), i16, 40, 5.0, 1, block_dim=1)  # max with 5
    assert np.array_equal(f32, [5.0] * 33 + [9.0] * 7) and np.array_equal(i16, [5] * 33 + [9] * 7)


@an.kernel
def odd_kernel(ctx, gm, x):
    t = alloc_buffer(ctx, 32, np.uint8)
    data_copy(ctx, t, 0, x, 0, 32)
    set_atomic_add(ctx, np.int32)
    data_copy_pad(ctx, gm, 1, t, 0, 1, 8, 0, 0)  # two int32 at GM bytes 1..8: off their alignment


@pytest.mark.parametrize("mode", [{}, {"interpret": True}])
def test_an_element_off_its_alignment_combines_without_faulting(mode):
    x = np.zeros(32, np.uint8)
    x[:8] = np.array([5, -3], np.int32).view(np.uint8)
    gm = np.zeros(16, np.uint8)
    gm[1:9] = np.array([10, 10], np.int32).view(np.uint8)
    odd_kernel.launch(gm, x, block_dim=1, **mode)
    assert list(gm[1:9].copy().view(np.int32)) == [15, 7]


# ---- which lanes carry atomics: compiled in only where a kernel sets one ------------------------------

@vector_program(temps=("a_loc", "b_loc"))
def _plus(a, b, a_loc, b_loc, one):
    a_loc = data_copy(a)
    b_loc = adds(a_loc, one)
    b = data_copy(b_loc)


@an.kernel
def fused_under_atomic_kernel(ctx, src, dst):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    set_atomic_add(ctx, np.float32)
    _plus(ctx, 64, True, src[ctx.block_idx * 64:], dst, a, b, np.float32(1))


@pytest.mark.parametrize("mode", ["compiled", "interpret", "checked"])
def test_a_tile_program_combines_under_an_atomic(mode):
    # Fused in a plain Lane, the program's CopyOut overwrote GM whatever the atomic said.
    src = np.arange(2 * 64, dtype=np.float32)
    dst = np.full(64, 100, np.float32)
    fused_under_atomic_kernel.launch(src, dst, block_dim=2, interpret=mode == "interpret", checked=mode == "checked")
    assert dst.tobytes() == (100 + (src[:64] + 1) + (src[64:] + 1)).tobytes()


@jit
def _start_adding(ctx):  # a helper: the kernel's own code does not name the setter
    set_atomic_add(ctx, np.float32)


@an.kernel
def helper_atomic_kernel(ctx, src, dst):
    a = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, src, 0, 64)
    _start_adding(ctx)
    data_copy(ctx, dst, 0, a, 0, 64)


def _start_adding_unseen(ctx):
    """A helper the launch cannot see from the kernel's code (an overload): typing finds its setter."""


@overload(_start_adding_unseen, jit_options=OVERLOAD_OPTIONS)
def _ov_start_adding_unseen(ctx):
    def impl(ctx):
        set_atomic_add(ctx, np.float32)
    return impl


add_on = set_atomic_add


def _adds_under_another_name(ctx, src, dst):
    add_on(ctx, np.float32)
    data_copy(ctx, dst, 0, src, 0, 64)


@an.kernel
def unseen_helper_atomic_kernel(ctx, src, dst):
    a = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, src, 0, 64)
    _start_adding_unseen(ctx)
    data_copy(ctx, dst, 0, a, 0, 64)


@an.kernel
def type_only_kernel(ctx, src, dst):
    a = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, src, 0, 64)
    set_atomic_type(ctx, np.float32)
    data_copy(ctx, dst, 0, a, 0, 64)


@pytest.mark.parametrize("kernel", [helper_atomic_kernel, type_only_kernel], ids=["helper", "type_only"])
@pytest.mark.parametrize("mode", ["compiled", "interpret", "checked"])
def test_copies_add_after_a_setter_in_a_helper_or_a_type_set_alone(kernel, mode):
    # The type alone: it made copies an atomic Min (the register's operation 0 read as neither add
    # nor max); the device's operation field rests at the sum.
    src = np.arange(64, dtype=np.float32) - 7.5
    dst = np.full(64, 10, np.float32)
    kernel.launch(src, dst, block_dim=1, interpret=mode == "interpret", checked=mode == "checked")
    assert dst.tobytes() == (10 + src).tobytes()


def test_only_bodies_that_set_an_atomic_compile_for_an_atomic_lane():
    def lane_of(kernel, *args):
        kernel.launch(*args, block_dim=1)
        return [body.dispatcher.signatures[0][0] for body in kernel._bodies.values()
                if body.mode == "plain" and not body.interpreted]

    src, dst = np.zeros(64, np.float32), np.zeros(64, np.float32)
    assert helper_atomic_kernel.atomics  # named in a jitted helper
    assert an.kernel(_adds_under_another_name).atomics
    assert not unseen_helper_atomic_kernel.atomics
    assert lane_of(helper_atomic_kernel, src, dst) == [LANE_TYPES["atomic"]]
    assert lane_of(unseen_helper_atomic_kernel, src, dst) == [LANE_TYPES["atomic"]]  # found while typing
    assert lane_of(type_only_kernel, src, dst) == [LANE_TYPES["atomic"]]  # named in the kernel
    assert lane_of(plain_copy_kernel, src, dst) == [LANE_TYPES["plain"]]


def test_threads_first_launching_a_kernel_with_a_setter_typing_finds_all_add():
    # Each thread's launch first types the body for a plain Lane; the first to fail switches the
    # body to an AtomicLane, and the others, failing after it, must switch too rather than raise.
    import threading

    kernel = an.kernel(unseen_helper_atomic_kernel.py_func)  # a new Kernel: no lane chosen yet
    src = np.arange(64, dtype=np.float32)
    dsts = [np.full(64, 10, np.float32) for _ in range(4)]
    barrier, errors = threading.Barrier(len(dsts)), []

    def launch(dst):
        barrier.wait()
        try:
            kernel.launch(src, dst, block_dim=1)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=launch, args=(dst,)) for dst in dsts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert all(dst.tobytes() == (10 + src).tobytes() for dst in dsts)


@an.kernel
def plain_copy_kernel(ctx, src, dst):
    a = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, src, 0, 64)
    data_copy(ctx, dst, 0, a, 0, 64)


def test_a_plain_launcher_calls_either_lane_body_alike():
    # The launcher builds a Lane and calls an AtomicLane body with it: the two pass the same values.
    from numba.core.registry import cpu_target
    model = cpu_target.target_context.data_model_manager
    plain, atomic = model[LANE_TYPES["plain"]], model[LANE_TYPES["atomic"]]
    assert str(plain.get_argument_type()) == str(atomic.get_argument_type())
    assert str(plain.get_data_type()) == str(atomic.get_data_type())
