"""Interpret mode: the switch, the twins against the compiled code they stand for, a debugger
stopping inside a lane, tracing tools seeing kernel lines, errors as compiled launches give them.

The registry's every case, dtype and mode interpreted against compiled is in test_registry.py;
the bug corpus interpreted is in test_checked.py; prints interpreted in test_kernel_prints.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from numba.extending import intrinsic

import ascend_numba as an
from ascend_numba._numba_compat.extending import TWINS, CompileCounter
from ascend_numba.kernels import add, alloc_buffer, data_copy, half, muls
from ascend_numba.kernels.interpret import InterpretError, interpreting
from ascend_numba.kernels.primitives import llvm, vector
from ascend_numba.kernels.primitives.ttrans import _transpose_blocks

interpret_module = sys.modules["ascend_numba.kernels.interpret"]  # the package's name is the function

ROOT = Path(__file__).resolve().parents[1]


# ---- the switch --------------------------------------------------------------------------------------

def test_the_switch_explicit_block_and_environment(monkeypatch):
    monkeypatch.setattr(interpret_module, "_ENV_DEFAULT", False)
    assert not interpreting()
    with an.interpret():
        assert interpreting()
        assert not interpreting(False)  # an op's interpret= wins
        with an.interpret(False):
            assert not interpreting()
        assert interpreting()
    assert not interpreting()
    assert interpret_module._open_blocks == 0
    monkeypatch.setattr(interpret_module, "_ENV_DEFAULT", True)
    assert interpreting()
    with an.interpret(False):
        assert not interpreting()


def test_the_environment_variable_is_read_at_import():
    code = "from ascend_numba.kernels.interpret import interpreting; print(interpreting(), interpreting(False))"
    env = {**os.environ, "ASCEND_NUMBA_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]


@an.kernel
def scale_by_lane(ctx, x, y, n):
    buf = alloc_buffer(ctx, 8, np.float32)
    for b in range(ctx.block_idx, n // 8, ctx.block_num):
        data_copy(ctx, buf, 0, x, b * 8, 8)
        muls(ctx, buf, buf, np.float32(ctx.block_idx + 1), 8)
        add(ctx, buf, buf, buf, 8)
        data_copy(ctx, y, b * 8, buf, 0, 8)


def _scale_reference(x, lanes):
    lane = (np.arange(x.size) // 8) % lanes
    return (x * (lane + 1).astype(np.float32)) * np.float32(2)


def test_an_interpreted_launch_compiles_nothing():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    with CompileCounter() as compiles, an.interpret():
        scale_by_lane.launch(x, y, 64, block_dim=3)
        an.staged_copy(x)
    assert compiles.count == 0
    assert np.array_equal(y, _scale_reference(x, 3))


def test_ops_take_interpret_and_the_block():
    x = np.arange(48 * 64, dtype=np.float32).reshape(64, 48)
    with an.interpret():
        assert np.array_equal(an.tile(x, (2, 1)), np.tile(x, (2, 1)))
    assert np.array_equal(an.transpose2d(x, interpret=True), x.T)


# ---- inside a lane ----------------------------------------------------------------------------------

SEEN = []


@an.kernel
def hands_its_tile_to_python(ctx, x):
    buf = alloc_buffer(ctx, 8, np.float32)
    data_copy(ctx, buf, 0, x, ctx.block_idx * 8, 8)
    SEEN.append((ctx.block_idx, buf))  # only interpreted: compiled code cannot call Python


def test_a_ub_tile_is_a_numpy_view_of_the_lanes_ub_in_lane_order():
    SEEN.clear()
    x = np.arange(24, dtype=np.float32)
    hands_its_tile_to_python.launch(x, block_dim=3, interpret=True)
    assert [lane for lane, _ in SEEN] == [0, 1, 2]
    for lane, buf in SEEN:
        assert isinstance(buf, np.ndarray) and buf.dtype == np.float32 and buf.base is not None
    # One UB serves the lanes one after another, as on one core: the view shows the last lane's tile.
    assert np.array_equal(SEEN[-1][1], x[16:24])


def test_tracing_tools_see_the_kernel_and_primitive_lines():
    lines = set()

    def tracer(frame, event, arg):
        if event == "line":
            lines.add((Path(frame.f_code.co_filename).name, frame.f_code.co_name))
        return tracer

    x = np.arange(16, dtype=np.float32)
    sys.settrace(tracer)  # what coverage.py and debuggers hook
    try:
        scale_by_lane.launch(x, np.zeros_like(x), 16, block_dim=2, interpret=True)
    finally:
        sys.settrace(None)
    assert ("test_interpret.py", "scale_by_lane") in lines
    assert ("dma.py", "data_copy") in lines and ("vector.py", "muls") in lines


@an.kernel
def raises_in_lane_one(ctx, x):
    if ctx.block_idx == 1:
        raise ValueError(f"lane {ctx.block_idx} found {x.size} elements")


def test_a_lane_that_raises_is_a_kernel_error_with_its_traceback():
    with pytest.raises(an.KernelError, match=r"^lane 1: the kernel raised ValueError: lane 1 found 4 elements$") \
            as caught:
        raises_in_lane_one.launch(np.zeros(4, np.float32), block_dim=3, interpret=True)
    cause = caught.value.__cause__
    assert isinstance(cause, ValueError)
    frames = []
    tb = cause.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert frames[-1] == "raises_in_lane_one"


def test_pdb_stops_inside_a_lane_and_prints_a_ub_tile():
    commands = "p ctx.block_idx, pos, count\np y_loc[:4]\nc\n"
    env = {**os.environ, "PYTHONBREAKPOINT": "pdb.set_trace"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "debugging.py"), "--break"], input=commands,
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert _stop(out[:2]), out
    assert _plain_ints(out[2]) == "(Pdb) (1, 288, 32)"
    assert out[3] == "(Pdb) array([288., 289., 290., 291.], dtype=float32)"  # x's values: the bug
    assert out[4] == "(Pdb) 64 of 320 elements wrong, the first at 128"


@intrinsic
def _no_twin(typingctx, x):
    def codegen(context, builder, signature, args):
        return args[0]
    return x(x), codegen


@an.kernel
def calls_an_intrinsic_without_a_twin(ctx, x):
    x[0] = _no_twin(x[0])


def test_an_intrinsic_without_a_twin_is_a_clear_error():
    with pytest.raises(an.KernelError, match="_no_twin is compiled-only: it has no plain-Python twin") as caught:
        calls_an_intrinsic_without_a_twin.launch(np.zeros(4, np.float32), block_dim=1, interpret=True)
    assert isinstance(caught.value.__cause__, InterpretError)


# ---- the twins against their intrinsics -------------------------------------------------------------

def _bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.itemsize}")


_F32 = np.concatenate([np.random.default_rng(0).integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32),
                       np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0x7F800000, 0x387FE000, 0x33000000, 0x33000001,
                                 0x477FF000, 0x80000000, 0], np.uint32)]).view(np.float32)
_F16 = np.arange(65536, dtype=np.uint16)


@pytest.mark.parametrize("name", ["f32_to_f16", "f32_to_f16_quiet", "f32_round_f16", "f32_round_f16_quiet",
                                  "f32_to_bf16", "f16_to_f32", "f16_to_f32_quiet", "bf16_to_f32"])
def test_half_twins_match_the_intrinsics_bit_for_bit(name):
    conversion = getattr(half, name)
    source = _F16 if name.startswith(("f16", "bf16")) else _F32
    twin = TWINS[conversion]
    with np.errstate(all="ignore"):
        want_dtype = np.asarray(twin(source[0])).dtype
        got = np.array([twin(v) for v in source], want_dtype)

    @njit
    def compiled(src, out):
        for i in range(src.size):
            out[i] = conversion(src[i])

    want = np.empty(source.size, want_dtype)
    compiled(source, want)
    assert np.array_equal(_bits(got), _bits(want))


def test_element_twins_match_the_intrinsics():
    max_element, canonical_nan = vector.max_element, vector.canonical_nan
    pairs = _F32[:4000].reshape(2, -1)

    @njit
    def compiled(a, b, out, canonical):
        for i in range(a.size):
            out[i] = max_element(a[i], b[i])
            canonical[i] = canonical_nan(a[i] * b[i])

    want, want_canonical = np.empty(pairs.shape[1], np.float32), np.empty(pairs.shape[1], np.float32)
    compiled(pairs[0], pairs[1], want, want_canonical)
    with np.errstate(all="ignore"):
        got = np.array([TWINS[max_element](a, b) for a, b in zip(*pairs)], np.float32)
        got_canonical = np.array([TWINS[canonical_nan](a * b) for a, b in zip(*pairs)], np.float32)
    assert np.array_equal(_bits(got), _bits(want))
    assert np.array_equal(_bits(got_canonical), _bits(want_canonical))
    assert set(_bits(want_canonical[np.isnan(want_canonical)]).tolist()) == {0x7FC00000}  # the default NaN
    ints = np.array([-5, 3, 7, -9], np.int32)
    assert [TWINS[max_element](a, b) for a, b in zip(ints, ints[::-1])] == [-5, 7, 7, -5]


@pytest.mark.parametrize("blocks", [1, 2])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_transpose_blocks_twin(dtype, blocks):
    side = 32 // np.dtype(dtype).itemsize
    src = np.arange(4 * side * side, dtype=dtype)
    want, got = np.zeros(6 * side * side, dtype), np.zeros(6 * side * side, dtype)

    @njit
    def compiled(dst, src):
        _transpose_blocks(dst, 5, 2 * side, src, 3, 2 * side + 1, blocks)

    compiled(want, src)
    TWINS[_transpose_blocks](got, 5, 2 * side, src, 3, 2 * side + 1, blocks)
    assert np.array_equal(got, want)
    k = np.arange(side)
    for b in range(blocks):  # block b's transpose, b * side rows down
        block = src[3 + b * side + k[:, None] * (2 * side + 1) + k]
        assert np.array_equal(want[5 + (b * side + k[:, None]) * 2 * side + k], block.T)


@pytest.mark.parametrize("name, args", [("memmove_bytes", (3, 7, 40)), ("copy_short", (0, 5, 13)),
                                        ("copy_short", (9, 4, 20)), ("copy_fixed", (2, 6, 8))])
def test_copy_twins_match_the_intrinsics(name, args):
    copy = getattr(llvm, name)
    d, s, n = args
    base = np.arange(64, dtype=np.uint8)
    want, got = base.copy(), base.copy()
    if name == "copy_fixed":
        @njit
        def compiled(buf):
            copy(buf, d, buf, s, 8)
    else:
        @njit
        def compiled(buf):
            copy(buf, d, buf, s, n)
    compiled(want)  # one buffer: the overlapping case, where a forward loop repeats bytes
    TWINS[copy](got, d, got, s, n)
    assert np.array_equal(got, want)


def test_lane_memory_twins_round_trip():
    from ascend_numba.kernels import lane

    row = np.zeros(4, np.int64)
    at = TWINS[lane._address](row)
    assert at == row.ctypes.data
    TWINS[lane._store_i64](at, 2, -7)
    assert TWINS[lane._load_i64](at, 2) == -7 and row[2] == -7
    TWINS[lane._store_word](at + 8, 2**64 - 1)
    assert TWINS[lane._load_word](at + 8) == 2**64 - 1 and row[1] == -1
    assert TWINS[lane._load_i32](at + 16, 0) == -7


def _text_after(path: Path, command: str) -> list[str]:
    """The lines of the ``text`` block that follows the block running ``command`` in a page."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(command))
    start = lines.index("```text", at) + 1
    return lines[start:lines.index("```", start)]


@pytest.mark.parametrize("page", ["README.md", "docs/kernels/debugging.md"])
def test_the_pages_show_the_real_debugging_output(page):
    shown = _text_after(ROOT / page, "python examples/debugging.py")
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "debugging.py")], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    printed = iter(done.stdout.splitlines())
    for line in shown:  # in order; "..." stands for any lines
        if line != "...":
            assert line in printed, (page, line)
    shown = _text_after(ROOT / page, "python examples/debugging.py --break")
    session = [line.removeprefix("(Pdb) ") for line in shown if not line.startswith("(Pdb) ") or
               not line.removeprefix("(Pdb) ").startswith(("p ", "c"))]
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "debugging.py"), "--break"],
                          input="p ctx.block_idx, pos, count\np y_loc[:4]\nc\n", capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**os.environ, "PYTHONBREAKPOINT": "pdb.set_trace"})
    printed = [_plain_ints(line.removeprefix("(Pdb) ")) for line in done.stdout.splitlines()]
    assert _stop(session[:2]) and _stop(printed[:2])
    assert printed[2:] == [_plain_ints(line) for line in session[2:]]


def _stop(lines: list[str]) -> bool:
    """pdb's first two lines: Python 3.13 stops on the breakpoint() line, earlier ones on the next."""
    return (lines[0].endswith("debugging.py(43)tail_add()") and lines[1] == "-> dump_tensor(ctx, y_loc, pos, 4)"
            or lines[0].endswith("debugging.py(42)tail_add()") and lines[1] == "-> breakpoint()")


def _plain_ints(line: str) -> str:
    return re.sub(r"np\.int64\((-?\d+)\)", r"\1", line)  # NumPy 2 reprs scalars as np.int64(1), NumPy 1 as 1
