"""kprint and dump_tensor: whole lines per lane, in lane order, prefixed like the device's (a
format's trailing newline ends its line; fp16 and bf16 tensors dump as values when their type is
named), from the kernel or its jitted helpers; off at compile time; nothing for kernels that do
not print."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba._numba_compat.jit import jit
from ascend_numba.kernels import alloc_buffer, contiguous_lane_range, data_copy, dump_tensor, kprint, sync_all
from ascend_numba.kernels.lane import STATE_PRINT


@an.kernel
def prints_its_blocks(ctx, x, y, n):
    start, end = contiguous_lane_range(ctx, n // 8)
    buf = alloc_buffer(ctx, 8, np.float32)
    for b in range(start, end):
        data_copy(ctx, buf, 0, x, b * 8, 8)
        kprint(ctx, "block %d of %d: first %.1f", b, end, buf[0])
        data_copy(ctx, y, b * 8, buf, 0, 8)
    dump_tensor(ctx, buf, 7, 4)
    dump_tensor(ctx, x, 3, 2)


def _expected(block_dim):
    lines = []
    per = -(-8 // block_dim)
    for lane in range(block_dim):
        start, end = min(lane * per, 8), min(lane * per + per, 8)
        lines += [f"[block {lane}] block {b} of {end}: first {8.0 * b:.1f}" for b in range(start, end)]
        last = 8 * (end - 1)  # the UB buffer holds the lane's last block
        lines.append(f"[block {lane}] DumpTensor: desc=7, addr=0, data_type=float32, position=UB, count=4")
        lines.append(f"[block {lane}] [{last}., {last + 1}., {last + 2}., {last + 3}.]")
        lines.append(f"[block {lane}] DumpTensor: desc=3, addr=ADDR, data_type=float32, position=GM, count=2")
        lines.append(f"[block {lane}] [0., 1.]")
    return lines


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("checked", [False, True])
def test_lines_are_whole_in_lane_order_with_the_block_prefix(capfd, checked, interpret):
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    prints_its_blocks.launch(x, y, 64, block_dim=3, checked=checked, interpret=interpret)
    out = capfd.readouterr().out.splitlines()
    address = x.ctypes.data
    want = [line.replace("ADDR", str(address)) for line in _expected(3)]
    assert out == want
    assert np.array_equal(x, y)


def test_prints_made_before_a_failure_still_come_out(capfd):
    @an.kernel
    def prints_then_raises(ctx, x):
        kprint(ctx, "lane %d here", ctx.block_idx)
        if ctx.block_idx == 1:
            raise ValueError("stop")

    with pytest.raises(an.KernelError, match="ValueError: stop"):
        prints_then_raises.launch(np.zeros(8, np.float32), block_dim=2)
    assert capfd.readouterr().out.splitlines() == ["[block 0] lane 0 here", "[block 1] lane 1 here"]


@jit
def _report_then_wait(ctx):
    kprint(ctx, "lane %d waits", ctx.block_idx)
    sync_all(ctx)


@an.kernel
def calls_a_helper(ctx, x):
    _report_then_wait(ctx)


def test_a_jitted_helper_prints_and_syncs_with_nothing_declared(capfd):
    # The launch reads the helpers the kernel names: its lanes get a print row and run resident.
    calls_a_helper.launch(np.zeros(8, np.float32), block_dim=2)
    assert capfd.readouterr().out.splitlines() == ["[block 0] lane 0 waits", "[block 1] lane 1 waits"]


def test_a_kernel_without_prints_gets_no_print_rows():
    @an.kernel
    def quiet(ctx, x):
        pass

    state = quiet.launch(np.zeros(8, np.float32), block_dim=2)
    assert (state[:, STATE_PRINT] == 0).all()
    assert not quiet.body({}, None).prints


PRINTS_OFF = textwrap.dedent("""
    import numpy as np
    import ascend_numba as an
    from ascend_numba.kernels import kprint

    @an.kernel
    def loud(ctx, x):
        kprint(ctx, "should not print %d", ctx.block_idx)

    before = an.kernel_prints(False) if {call} else None
    state = loud.launch(np.zeros(8, np.float32), block_dim=2)
    print("rows", int(state[:, {slot}].sum()), before)
""")


@pytest.mark.parametrize("how", ["call", "env"])
def test_prints_turned_off_compile_to_nothing(how, tmp_path):
    import os

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    if how == "env":
        env["ASCEND_NUMBA_KERNEL_PRINTS"] = "0"
    code = PRINTS_OFF.format(call=how == "call", slot=STATE_PRINT)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"rows 0 {True if how == 'call' else None}"]


def test_a_full_print_row_says_its_output_was_truncated(capfd, monkeypatch):
    from ascend_numba.kernels.primitives import debug

    rows = np.zeros((1, debug.KERNEL_PRINT_WORDS), np.int64)
    rows[0, :2] = (0, 1)
    assert debug.format_prints(rows)[-1].startswith("[block 0] ... output truncated")


def test_kprint_takes_a_literal_format_and_numbers():
    @an.kernel
    def bad(ctx, x):
        kprint(ctx, "x %s", x)

    with pytest.raises(Exception, match="it prints integers and floats"):
        bad.launch(np.zeros(8, np.float32), block_dim=1)


def test_benchmarks_run_compiled_kernels_without_prints():
    # bench/conftest.py turns prints off and ignores a debugging session's ASCEND_NUMBA_INTERPRET.
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = ("import runpy; runpy.run_path('bench/conftest.py')\n"
            "from ascend_numba.kernels.primitives.debug import prints_enabled\n"
            "from ascend_numba.kernels.interpret import interpreting\n"
            "print(prints_enabled(), interpreting())\n")
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_NUMBA_KERNEL_PRINTS"}
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**env, "ASCEND_NUMBA_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


@an.kernel
def prints_halves(ctx, h, b, n):
    tile = alloc_buffer(ctx, 8, np.uint16)  # fp16 as a lane holds it
    data_copy(ctx, tile, 0, h, 0, 8)
    kprint(ctx, "n=%d\n", n)
    kprint(ctx, "lane %d\nof %d\n", ctx.block_idx, ctx.block_num)
    dump_tensor(ctx, tile, 1, 4)
    dump_tensor(ctx, tile, 2, 4, "float16")
    dump_tensor(ctx, h, 3, 2, np.float16)
    dump_tensor(ctx, b, 4, 4, dtype="bf16")


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_a_trailing_newline_ends_the_line_and_fp16_bf16_dump_as_values(capfd, interpret):
    h = np.array([-43, -17, 1, 0.5, 0, 0, 0, 0], np.float16)
    b = np.array([-43, 1, np.nan, 0.333], ml_dtypes.bfloat16)
    prints_halves.launch(h, b, 5, block_dim=2, interpret=interpret)
    out = capfd.readouterr().out.splitlines()
    want = []
    for lane in range(2):
        want += [f"[block {lane}] {line}" for line in (
            "n=5", f"lane {lane}", "of 2",
            "DumpTensor: desc=1, addr=0, data_type=uint16, position=UB, count=4",
            "[53600, 52288, 15360, 14336]",  # without dtype: the uint16 bits
            "DumpTensor: desc=2, addr=0, data_type=float16, position=UB, count=4",
            "[-43. , -17. ,   1. ,   0.5]",
            f"DumpTensor: desc=3, addr={h.ctypes.data}, data_type=float16, position=GM, count=2",
            "[-43., -17.]",
            f"DumpTensor: desc=4, addr={b.ctypes.data}, data_type=bfloat16, position=GM, count=4",
            "[-43.        ,   1.        ,          nan,   0.33203125]")]  # bf16 0x3EAA, as float32
    assert out == want


def test_dump_tensor_refuses_a_dtype_of_another_width():
    @an.kernel
    def dumps_fp32_as_fp16(ctx, x):
        buf = alloc_buffer(ctx, 8, np.float32)
        dump_tensor(ctx, buf, 0, 8, "float16")

    with pytest.raises(Exception, match="dtype float16 is 2 bytes wide; the tensor's float32 elements are 4"):
        dumps_fp32_as_fp16.launch(np.zeros(8, np.float32), block_dim=1, interpret=True)
