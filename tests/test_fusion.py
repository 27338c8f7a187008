"""Tile fusion (kernels.vector_program): a fused program gives the bits of its ops run one by one,
on every fp16 and special fp32 value, in every lane mode; bad programs are refused by name."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ascend_numba.config import FUSION_BLOCK
from ascend_numba.kernels import (
    KernelCheckError, RoundMode, VectorProgramError, add, adds, alloc_buffer, cast, cast_bf16_to_f32, cast_f16_to_f32,
    cast_f32_to_bf16, cast_f32_to_f16, constant, data_copy, data_copy_pad, div, duplicate, kernel, mul, muls, sub,
    vector_program, vmax, vsqrt,
)
from ascend_numba.kernels.primitives import fusion

DT = constant("DT", "tile element type: float32, or uint16 holding fp16")
FLAG = constant("FLAG", "the programs' flag as a compile-time constant")
STATIC = constant("STATIC", "1: the flag and fuse are passed as the constants FLAG and FUSE, 0: as the run-time "
                            "arguments")
FUSE = constant("FUSE", "the programs' fuse as a compile-time constant")
SHORT = constant("SHORT", "1: a program call one argument short")
N = 1 << 16  # every fp16 bit pattern once
TILE = 2048  # elements per UB tile (the kernels loop over N / TILE tiles)
assert (TILE - 32) % FUSION_BLOCK != 0  # the programs' calls end with a part block


@vector_program(temps=("t",))
def scale_shift(x, out, t, a, b):
    """out = x * a + b, in place when out is x."""
    t = muls(x, a)
    out = adds(t, b)


@vector_program(temps=("t", "u"))
def every_op(x, y, z, o1, o2, t, u, flag, a, b):
    t = mul(x, y)
    u = div(t, z)
    t = sub(u, x)
    u = vmax(t, z)                # a select: may pass a signalling NaN through
    if flag == 1:
        o1 = vsqrt(u)
    else:
        o1 = duplicate(a - b)
    scale_shift(o1, o1, t, -a, b)  # a program inlined, its x and out the same tile
    o2 = add(o1, x)
    if flag == 1:
        x = muls(x, b)            # an input tile updated on one path only


@vector_program(temps=("w_x", "w_y", "t"))
def through_fp32(x, y, out, w_x, w_y, t, bf16, a):
    """16-bit tiles computed in fp32 and rounded once."""
    if bf16:
        w_x = cast_bf16_to_f32(x)
        w_y = cast_bf16_to_f32(y)
    else:
        w_x = cast_f16_to_f32(x)
        w_y = cast_f16_to_f32(y)
    t = mul(w_x, w_y)
    t = muls(t, a)
    if bf16:
        out = cast_f32_to_bf16(t)
    else:
        out = cast_f32_to_f16(t)


@kernel(nrt=False)
def programs(ctx, x, y, z, o1, o2, n, fuse, flag):
    xs = alloc_buffer(ctx, TILE, DT)
    ys = alloc_buffer(ctx, TILE, DT)
    zs = alloc_buffer(ctx, TILE, DT)
    r1 = alloc_buffer(ctx, TILE, DT)
    r2 = alloc_buffer(ctx, TILE, DT)
    t = alloc_buffer(ctx, TILE, DT)
    u = alloc_buffer(ctx, TILE, DT)
    for pos in range(0, n, TILE):
        data_copy(ctx, xs, 0, x, pos, TILE)
        data_copy(ctx, ys, 0, y, pos, TILE)
        data_copy(ctx, zs, 0, z, pos, TILE)
        # Two calls: whole fused blocks and a part block at the end, then a call shorter than a block.
        k = TILE - 32
        if STATIC == 1:
            every_op(ctx, k, FUSE, xs, ys, zs, r1, r2, t, u, FLAG, np.float32(0.75), np.float32(-3.0))
            every_op(ctx, 32, FUSE, xs[k:], ys[k:], zs[k:], r1[k:], r2[k:], t, u, FLAG, np.float32(0.75),
                     np.float32(-3.0))
        else:
            every_op(ctx, k, fuse, xs, ys, zs, r1, r2, t, u, flag, np.float32(0.75), np.float32(-3.0))
            every_op(ctx, 32, fuse, xs[k:], ys[k:], zs[k:], r1[k:], r2[k:], t, u, flag, np.float32(0.75),
                     np.float32(-3.0))
        data_copy(ctx, o1, pos, r1, 0, TILE)
        data_copy(ctx, o2, pos, r2, 0, TILE)
        data_copy(ctx, x, pos, xs, 0, TILE)


@kernel(nrt=False)
def widened(ctx, x, y, out, n, fuse, bf16):
    xs = alloc_buffer(ctx, TILE, np.uint16)
    ys = alloc_buffer(ctx, TILE, np.uint16)
    os = alloc_buffer(ctx, TILE, np.uint16)
    w_x = alloc_buffer(ctx, TILE, np.float32)
    w_y = alloc_buffer(ctx, TILE, np.float32)
    t = alloc_buffer(ctx, TILE, np.float32)
    for pos in range(0, n, TILE):
        data_copy(ctx, xs, 0, x, pos, TILE)
        data_copy(ctx, ys, 0, y, pos, TILE)
        through_fp32(ctx, TILE, fuse, xs, ys, os, w_x, w_y, t, bf16, np.float32(1.5))
        data_copy(ctx, out, pos, os, 0, TILE)


def _operands(dtype):
    """x, y, z of N elements: for fp16 every bit pattern (NaNs, signalling ones, infinities,
    subnormals) in three orders; for fp32 normal values mixed with the same kinds of specials."""
    rng = np.random.default_rng(7)
    if dtype == np.uint16:
        x = np.arange(N, dtype=np.uint16)
        return x, rng.permutation(x), rng.permutation(x)
    special = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
                        0x7FA00000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x3F800000], np.uint32).view(np.float32)
    x, y, z = (rng.standard_normal(N).astype(np.float32) * 10 for _ in range(3))
    for a in (x, y, z):
        a[rng.integers(0, N, 4096)] = rng.choice(special, 4096)
    return x, y, z


def _run(dtype, mode, fuse, flag, static):
    x, y, z = (a.copy() for a in _operands(dtype))
    o1, o2 = np.empty_like(x), np.empty_like(x)
    # Flag and fuse known only at run time: one specialization serves every value (FLAG, FUSE not read).
    constants = {"DT": dtype, "FLAG": flag if static else 0, "FUSE": int(fuse) if static else 0, "STATIC": int(static)}
    programs.launch(x, y, z, o1, o2, N, int(fuse), flag, block_dim=1, datatype=constants,
                    trace=mode == "traced", checked=mode == "checked")
    return [a.view(np.uint32 if a.itemsize == 4 else np.uint16) for a in (x, o1, o2)]


# (tile type, flag, flag and fuse compile-time constants, lane modes run fused besides plain): every
# pair of two factors' values fused against op by op in plain lanes (6 of the 8 combinations: each
# is a specialization of its own to compile); traced and checked lanes (always op by op) on some.
COMBINATIONS = [
    (np.float32, 0, True, ("traced",)), (np.float32, 0, False, ()), (np.float32, 1, False, ("checked",)),
    (np.uint16, 0, True, ()), (np.uint16, 1, True, ("traced", "checked")), (np.uint16, 0, False, ()),
]


@pytest.mark.parametrize("dtype, flag, static, modes", COMBINATIONS,
                         ids=[f"{'fp32' if d == np.float32 else 'fp16'}-flag{f}-{'constant' if c else 'run time'}"
                              for d, f, c, _ in COMBINATIONS])
def test_a_fused_program_gives_the_bits_of_its_ops_one_by_one(dtype, flag, static, modes):
    op_by_op = _run(dtype, "plain", False, flag, static)
    for mode in ("plain", *modes):
        got = _run(dtype, mode, True, flag, static)
        for name, g, r in zip(("x", "o1", "o2"), got, op_by_op):
            bad = np.flatnonzero(g != r)
            assert bad.size == 0, f"{mode}: {name} differs at {bad[:4]}: {g[bad[:4]]} vs {r[bad[:4]]}"


def test_the_op_by_op_program_is_the_numpy_arithmetic():
    """The unfused ops themselves against NumPy float32 (flag 1, no NaNs: payloads are the CPU's)."""
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.5, 2, N).astype(np.float32), rng.uniform(0.5, 2, N).astype(np.float32)
    z = rng.uniform(0.5, 2, N).astype(np.float32)
    x_in, o1, o2 = x.copy(), np.empty_like(x), np.empty_like(x)
    programs.launch(x_in, y, z, o1, o2, N, 0, 1, block_dim=1,
                    datatype={"DT": np.float32, "FLAG": 1, "FUSE": 0, "STATIC": 1})
    a, b = np.float32(0.75), np.float32(-3.0)
    u = np.maximum((x * y) / z - x, z)
    expected_o1 = np.sqrt(u) * -a + b
    assert np.array_equal(o1, expected_o1) and np.array_equal(o2, expected_o1 + x)
    assert np.array_equal(x_in, x * b)


@pytest.mark.parametrize("bf16", [0, 1], ids=["fp16", "bf16"])
def test_casts_fuse_with_the_arithmetic(bf16):
    dtype = ml_dtypes.bfloat16 if bf16 else np.float16
    x = np.arange(N, dtype=np.uint16)
    y = np.random.default_rng(1).permutation(x)
    fused, op_by_op = np.empty_like(x), np.empty_like(x)
    widened.launch(x, y, fused, N, 1, bf16, block_dim=1)
    widened.launch(x, y, op_by_op, N, 0, bf16, block_dim=1)
    assert fused.tobytes() == op_by_op.tobytes()
    finite = np.isfinite(x.view(dtype)) & np.isfinite(y.view(dtype))
    with np.errstate(all="ignore"):
        expected = ((x.view(dtype).astype(np.float32) * y.view(dtype).astype(np.float32))
                    * np.float32(1.5)).astype(dtype)
    assert np.array_equal(fused.view(dtype)[finite], expected[finite])


@vector_program(temps=("t",))
def scaled_to_int(x, o_i32, o_f16, t, s, mode):
    t = muls(x, s)
    o_i32 = cast(t, mode)
    o_f16 = cast(t, mode)


@kernel(nrt=False)
def scaled_to_int_kernel(ctx, x, o_i32, o_f16, n, fuse, s, mode):
    xs = alloc_buffer(ctx, n, np.float32)
    ts = alloc_buffer(ctx, n, np.float32)
    oi = alloc_buffer(ctx, n, np.int32)
    oh = alloc_buffer(ctx, n, np.uint16)
    data_copy(ctx, xs, 0, x, 0, n)
    scaled_to_int(ctx, n, fuse, xs, oi, oh, ts, s, mode)
    data_copy(ctx, o_i32, 0, oi, 0, n)
    data_copy(ctx, o_f16, 0, oh, 0, n)


@pytest.mark.parametrize("mode", [RoundMode.CAST_RINT, RoundMode.CAST_FLOOR, RoundMode.CAST_ROUND, RoundMode.CAST_ODD])
def test_a_cast_under_a_round_mode_fuses(mode):
    M = 8192 + 37  # whole blocks and a tail
    x = np.random.default_rng(2).standard_normal(M).astype(np.float32) * np.float32(3e4)
    x[:4] = [np.nan, np.inf, -2.5, 0.5]
    outs = []
    for fuse in (1, 0):
        o_i32, o_f16 = np.zeros(M, np.int32), np.zeros(M, np.uint16)
        scaled_to_int_kernel.launch(x, o_i32, o_f16, M, fuse, 1.5, int(mode), block_dim=1)
        outs.append(o_i32.tobytes() + o_f16.tobytes())
    assert outs[0] == outs[1]  # the fused pass gives the primitives' bits
    if mode == RoundMode.CAST_FLOOR:
        t = x * np.float32(1.5)
        finite = np.isfinite(t) & (np.abs(t) < 2 ** 31)
        assert np.array_equal(np.frombuffer(outs[0][:4 * M], np.int32)[finite], np.floor(t[finite]).astype(np.int32))


@vector_program
def nan_pairs(x, y, o_add, o_mul, o_adds, o_muls, s):
    o_add = add(x, y)
    o_mul = mul(x, y)
    o_adds = adds(x, s)
    o_muls = muls(x, s)


@kernel(nrt=False)
def nan_pairs_kernel(ctx, x, y, o_add, o_mul, o_adds, o_muls, n, fuse, s):
    xs = alloc_buffer(ctx, n, DT)
    ys = alloc_buffer(ctx, n, DT)
    outs = alloc_buffer(ctx, 4 * n, DT)
    data_copy(ctx, xs, 0, x, 0, n)
    data_copy(ctx, ys, 0, y, 0, n)
    if STATIC == 1:
        nan_pairs(ctx, n, FUSE, xs, ys, outs[:n], outs[n:2 * n], outs[2 * n:3 * n], outs[3 * n:], s)
    else:
        nan_pairs(ctx, n, fuse, xs, ys, outs[:n], outs[n:2 * n], outs[2 * n:3 * n], outs[3 * n:], s)
    data_copy(ctx, o_add, 0, outs, 0, n)
    data_copy(ctx, o_mul, 0, outs, n, n)
    data_copy(ctx, o_adds, 0, outs, 2 * n, n)
    data_copy(ctx, o_muls, 0, outs, 3 * n, n)


@pytest.mark.parametrize("static", [False, True], ids=["fuse at run time", "fuse a constant"])
@pytest.mark.parametrize("bits", [np.uint32, np.uint16], ids=["fp32", "fp16"])
def test_nans_of_arithmetic_are_the_default_nan(bits, static):
    """The NaN policy: whatever NaNs meet in Add, Mul, Adds or Muls (signalling or quiet, either
    sign, any payload, from a tile or the scalar), the result is the default NaN, fused and op by
    op alike: not the CPU's choice of the two, nor the compiler's ordering of the operands."""
    quiet, exp, default = (0x00400000, 0x7F800000, 0x7FC00000) if bits is np.uint32 else (0x0200, 0x7C00, 0x7E00)
    rng = np.random.default_rng(5)
    n = 4 * FUSION_BLOCK
    payload = rng.integers(1, quiet, n, dtype=np.int64)  # signalling payloads
    sign = rng.integers(0, 2, n, dtype=np.int64) << (8 * np.dtype(bits).itemsize - 1)
    x = (sign | exp | payload).astype(bits)
    y = (exp | quiet | rng.permutation(payload)).astype(bits)
    dt = np.float32 if bits is np.uint32 else np.uint16
    nan = np.uint32(0xFFA00001).view(np.float32)  # a signalling NaN
    # A NaN scalar makes the fused program run its ops one by one; a number keeps the pass.
    for scalar, fuse in ((nan, 1), (nan, 0), (np.float32(1.5), 1), (np.float32(1.5), 0)):
        outs = [np.empty_like(x) for _ in range(4)]
        nan_pairs_kernel.launch(x.view(dt), y.view(dt), *(o.view(dt) for o in outs), n, fuse, scalar,
                                block_dim=1, datatype={"DT": dt, "STATIC": int(static), "FUSE": fuse})
        for o in outs:
            assert np.all(o == default), (scalar, fuse)


@kernel(nrt=False)
def overlapping(ctx, x, out, n, fuse):
    xs = alloc_buffer(ctx, 2 * n, np.float32)
    t = alloc_buffer(ctx, n, np.float32)
    data_copy(ctx, xs, 0, x, 0, 2 * n)
    if STATIC == 1:  # out overlaps x, shifted
        scale_shift(ctx, n, FUSE, xs, xs[8:], t, np.float32(2.0), np.float32(1.0))
    else:
        scale_shift(ctx, n, fuse, xs, xs[8:], t, np.float32(2.0), np.float32(1.0))
    data_copy(ctx, out, 0, xs, 0, 2 * n)


@pytest.mark.parametrize("static", [False, True], ids=["fuse at run time", "fuse a constant"])
def test_overlapping_tiles_run_op_by_op(static):
    """Fused, out = x[8:] would read elements already written: the program runs its ops one by one."""
    x = np.arange(2048, dtype=np.float32)
    fused, op_by_op = np.empty_like(x), np.empty_like(x)
    for fuse, out in ((1, fused), (0, op_by_op)):
        overlapping.launch(x, out, 1024, fuse, block_dim=1, datatype={"STATIC": int(static), "FUSE": fuse})
    assert fused.tobytes() == op_by_op.tobytes()
    expected = x.copy()
    expected[8:1032] = x[:1024] * 2 + 1
    assert np.array_equal(fused, expected)


@kernel(nrt=False)
def short_temp(ctx, x, out, n, fuse):
    xs = alloc_buffer(ctx, n, np.float32)
    o = alloc_buffer(ctx, n, np.float32)
    t = alloc_buffer(ctx, n // 2, np.float32)
    data_copy(ctx, xs, 0, x, 0, n)
    duplicate(ctx, o, np.float32(-1.0), n)
    scale_shift(ctx, n, fuse, xs, o, t, np.float32(2.0), np.float32(1.0))
    data_copy(ctx, out, 0, o, 0, n)


def test_a_tile_shorter_than_count_runs_op_by_op():
    """A plain lane does not check UB ranges: each op covers what its tiles hold (the temp's half
    here), fused as op by op."""
    x = np.arange(1024, dtype=np.float32)
    fused, op_by_op = np.empty_like(x), np.empty_like(x)
    short_temp.launch(x, fused, 1024, 1, block_dim=1)
    short_temp.launch(x, op_by_op, 1024, 0, block_dim=1)
    assert fused.tobytes() == op_by_op.tobytes()
    assert np.array_equal(fused[:512], x[:512] * 2 + 1) and np.all(fused[512:] == -1)


@kernel(nrt=False)
def temp_after_the_program(ctx, x, out, temp, n, fuse):
    xs = alloc_buffer(ctx, n, np.float32)
    o = alloc_buffer(ctx, n, np.float32)
    t = alloc_buffer(ctx, n, np.float32)
    data_copy(ctx, xs, 0, x, 0, n)
    duplicate(ctx, t, np.float32(-7.0), n)
    scale_shift(ctx, n, fuse, xs, o, t, np.float32(2.0), np.float32(1.0))
    data_copy(ctx, out, 0, o, 0, n)
    data_copy(ctx, temp, 0, t, 0, n)


@pytest.mark.parametrize("mode", ["plain", "traced"])
def test_fused_temps_stay_in_registers(mode):
    """Plain lanes run the program as one pass: its temp tile is never written (it is dead once
    the program ends); op by op, and in traced lanes (and checked ones, which run op by op too),
    the temp holds x * a."""
    x = np.arange(1024, dtype=np.float32)
    for fuse in (1, 0):
        out, temp = np.empty_like(x), np.empty_like(x)
        temp_after_the_program.launch(x, out, temp, 1024, fuse, block_dim=1, trace=mode == "traced",
                                      checked=mode == "checked")
        assert np.array_equal(out, x * 2 + 1)
        fused = fuse == 1 and mode == "plain"
        assert np.array_equal(temp, np.full_like(x, -7.0) if fused else x * 2), (mode, fuse)


@kernel(nrt=False)
def past_the_tile(ctx, x, out, n):
    xs = alloc_buffer(ctx, n, np.float32)
    o = alloc_buffer(ctx, n, np.float32)
    t = alloc_buffer(ctx, n // 2, np.float32)
    data_copy(ctx, xs, 0, x, 0, n)
    scale_shift(ctx, n, 1, xs, o, t, np.float32(2.0), np.float32(1.0))
    data_copy(ctx, out, 0, o, 0, n)


def test_checked_mode_names_the_op_of_a_fused_program():
    x = np.ones(256, np.float32)
    with pytest.raises(KernelCheckError, match=r"lane 0, Muls: \[ub-outside-buffer\] dst"):
        past_the_tile.launch(x, np.empty_like(x), 256, block_dim=1, checked=True)


def _program_error(source: str, match: str):
    scope = {"vector_program": vector_program, "scale_shift": scale_shift}
    path = f"<fusion test {abs(hash(source))}>"
    import linecache
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    with pytest.raises(VectorProgramError, match=match):
        exec(compile(source, path, "exec"), scope)


@pytest.mark.parametrize("source, match", [
    ("@vector_program\ndef p(x, o):\n    o = exp(x)\n", "'exp' is not a vector op"),
    ("@vector_program\ndef p(x, o):\n    o = muls(x, 2.0)\n", "a number is not allowed"),
    ("@vector_program\ndef p(x, o, a):\n    o = muls(x, a)\n    o = add(o, a)\n", "'a' is used both"),
    ("@vector_program\ndef p(x, o):\n    q = muls(x, x)\n", "'q' is not a parameter"),
    ("@vector_program\ndef p(x, o, a):\n    o = add(x)\n", "add takes 2 tile"),
    ("@vector_program\ndef p(x, o, a):\n    for i in a:\n        o = add(x, x)\n", "each line is"),
    ("@vector_program\ndef p(x, ctx):\n    ctx = add(x, x)\n", "reserved"),
    ("@vector_program\ndef p(x, o, t, a):\n    scale_shift(x, o, t, a)\n", "scale_shift takes 5 arguments"),
    ("@vector_program(temps=('a',))\ndef p(x, o, a):\n    o = muls(x, a)\n", "temp 'a' is not a tile"),
])
def test_a_program_that_cannot_compile_is_refused_when_decorated(source, match):
    _program_error(source, match)


@vector_program(temps=("t",))
def reads_a_temp_first(x, o, t):
    o = add(t, x)


@kernel(nrt=False)
def uses_reads_a_temp_first(ctx, x, n):
    xs = alloc_buffer(ctx, n, np.float32)
    t = alloc_buffer(ctx, n, np.float32)
    data_copy(ctx, xs, 0, x, 0, n)
    reads_a_temp_first(ctx, n, 1, xs, xs, t)


def test_a_temp_read_before_it_is_written_is_refused_when_compiled():
    with pytest.raises(Exception, match="temp 't' may be read before it is written"):
        uses_reads_a_temp_first.launch(np.ones(8, np.float32), 8, block_dim=1)


@kernel(nrt=False)
def in_place_binary(ctx, x, y, out_b, out_ab, n):
    xs = alloc_buffer(ctx, n, np.float32)
    ys = alloc_buffer(ctx, n, np.float32)
    data_copy(ctx, xs, 0, x, 0, n)
    data_copy(ctx, ys, 0, y, 0, n)
    sub(ctx, ys, xs, ys, n)   # the result into the second operand
    data_copy(ctx, out_b, 0, ys, 0, n)
    mul(ctx, xs, xs, xs, n)   # into both operands
    data_copy(ctx, out_ab, 0, xs, 0, n)


def test_binary_ops_in_place_on_either_operand():
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out_b, out_ab = np.empty_like(x), np.empty_like(x)
    in_place_binary.launch(x, y, out_b, out_ab, 1000, block_dim=1)
    assert np.array_equal(out_b, x - y) and np.array_equal(out_ab, x * x)


def test_a_constant_fuse_compiles_only_its_path():
    """With ``fuse`` a compile-time constant a call compiles one path: the fused pass calls no
    primitive (its fallback is a loop of its own), the op-by-op Compute is the primitives' calls;
    a run-time fuse compiles both."""
    program = every_op.vector_program
    body = fusion._pruned(program.body, {"flag": 1})
    fused = fusion._source(program, body, True, set(), True)
    assert "_p." not in fused and "_op_by_op" not in fused
    assert "_p.vmax(" in fusion._source(program, body, True, set(), False)
    assert "_op_by_op(" in fusion._source(program, body, True, set(), None)


# ---- copies: a tile's CopyIn, Compute and CopyOut as one program ------------------------------------

@vector_program(temps=("t", "o"))
def shift_tile(x, out, xs, o, t, whole, nbytes, a, b):
    """CopyIn x (whole blocks), out = x * a + b, CopyOut exactly nbytes; xs is no temp: it holds
    the tile after the program."""
    xs = data_copy(x)
    t = muls(xs, a)
    o = adds(t, b)
    if whole:
        out = data_copy(o)
    else:
        out = data_copy_pad(o, nbytes)


@kernel(nrt=False, gm_padding="read")  # a tail tile is read as whole blocks
def shifted_tiles(ctx, x, out, kept, n, tile, fuse):
    """Tiles of ``tile`` elements over ``n``; ``kept`` gets each tile's UB ``xs`` after its program."""
    xs = alloc_buffer(ctx, tile, DT)
    o = alloc_buffer(ctx, tile, DT)
    t = alloc_buffer(ctx, tile, DT)
    block = ctx.block_bytes // xs.itemsize
    pos = 0
    while pos < n:
        k = min(tile, n - pos)
        k_al = (k + block - 1) // block * block
        shift_tile(ctx, k_al, fuse, x[pos:], out[pos:], xs, o, t, k == k_al, k * xs.itemsize, np.float32(2.0),
                   np.float32(1.0))
        data_copy_pad(ctx, kept, pos, xs, 0, 1, k * xs.itemsize, 0, 0)
        pos += k


def _shifted(dtype, n, tile, fuse, in_place, mode="plain"):
    x = np.linspace(-3, 3, n).astype(np.float32 if dtype is np.float32 else np.float16)
    out = x if in_place else np.full_like(x, 7)
    kept = np.zeros_like(x)
    io = np.float32 if dtype is np.float32 else np.uint16  # DT: fp16 as its bits
    source = x.copy()
    shifted_tiles.launch(x.view(io), out.view(io), kept.view(io), n, tile, fuse, block_dim=1,
                         datatype={"DT": io}, trace=mode == "traced", checked=mode == "checked")
    return source, out, kept


@pytest.mark.parametrize("in_place", [False, True], ids=["out", "in place"])
@pytest.mark.parametrize("n, tile", [(8 * FUSION_BLOCK, 2 * FUSION_BLOCK), (5000, 1536), (1003, 1024), (7, 64)],
                         ids=["whole blocks", "part blocks", "GM padding", "one short tile"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
def test_a_tile_program_fused_gives_the_bits_and_ub_of_its_copies_and_ops(dtype, n, tile, in_place):
    source, fused, kept_fused = _shifted(dtype, n, tile, 1, in_place)
    _, op_by_op, kept_op_by_op = _shifted(dtype, n, tile, 0, in_place)
    assert fused.tobytes() == op_by_op.tobytes()
    assert kept_fused.tobytes() == kept_op_by_op.tobytes()
    assert np.array_equal(kept_fused, source)  # the CopyIn's tile stays in UB, where the kernel reads it
    f = np.float32 if dtype is np.float32 else np.float16
    assert np.array_equal(fused, (source * f(2.0) + f(1.0)).astype(source.dtype))


@pytest.mark.parametrize("mode", ["traced", "checked"])
def test_traced_and_checked_lanes_run_a_tile_program_copy_by_copy(mode):
    source, got, kept = _shifted(np.float32, 1003, 256, 1, False, mode)
    assert np.array_equal(got, source * 2 + 1) and np.array_equal(kept, source)
    x = np.arange(1003, dtype=np.float32)
    trace = shifted_tiles.launch(x, np.empty_like(x), np.empty_like(x), 1003, 256, 1, block_dim=1,
                                 datatype={"DT": np.float32}, trace=True)
    # Four tiles: each a DataCopy in, Muls, Adds, a DataCopy out (the last: DataCopyPad), and the
    # kernel's DataCopyPad of xs.
    assert [int(trace.counter(name).sum()) for name in ("data_copy", "data_copy_pad", "calls_gm_to_ub",
                                                        "calls_ub_to_gm")] == [4 + 3, 1 + 4, 4, 8]


@kernel(nrt=False)
def short_block_copy(ctx, x, out, n):
    xs = alloc_buffer(ctx, 64, DT)
    o = alloc_buffer(ctx, 64, DT)
    t = alloc_buffer(ctx, 64, DT)
    shift_tile(ctx, n, 1, x, out, xs, o, t, True, 0, np.float32(2.0), np.float32(1.0))


def test_checked_mode_names_the_copy_of_a_tile_program():
    x = np.ones(64, np.float32)
    with pytest.raises(KernelCheckError, match=r"lane 0, DataCopy: \[data-copy-count-unaligned\]"):
        short_block_copy.launch(x, np.empty_like(x), 5, block_dim=1, datatype={"DT": np.float32}, checked=True)


@pytest.mark.parametrize("source, match", [
    ("@vector_program\ndef p(x, g, o, a):\n    o = muls(x, a)\n    g = data_copy(o)\n    o = adds(x, a)\n",
     "lies between vector ops"),
    ("@vector_program(temps=('o',))\ndef p(x, o):\n    o = data_copy(x)\n", "temp 'o', which nothing reads"),
    ("@vector_program\ndef p(x, o, n):\n    o = data_copy_pad(x)\n", "data_copy_pad takes 1 tile and 1 scalar"),
])
def test_a_tile_program_with_misplaced_copies_is_refused(source, match):
    _program_error(source, match)


@kernel(nrt=False)
def grouped_call(ctx, x, out, n, short):
    xs = alloc_buffer(ctx, 64, DT)
    o = alloc_buffer(ctx, 64, DT)
    t = alloc_buffer(ctx, 64, DT)
    if SHORT == 1:  # a scalar short
        shift_tile(ctx, n, 1, (x, out), (xs, o, t), True, n * 4, np.float32(2.0))
    else:
        shift_tile(ctx, n, 1, (x, out), (xs, o, t), True, n * 4, (np.float32(2.0), np.float32(1.0)))


def test_a_program_call_may_group_its_arguments_in_tuples():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    grouped_call.launch(x, out, 64, 0, block_dim=1, datatype={"DT": np.float32, "SHORT": 0})
    assert np.array_equal(out, x * 2 + 1)
    with pytest.raises(Exception, match=r"shift_tile takes 9 arguments .* got 8"):
        grouped_call.launch(x, out, 64, 1, block_dim=1, datatype={"DT": np.float32, "SHORT": 1})
