"""Every declared vector primitive gives one set of bits compiled, interpreted and fused, over each
dtype's special values and a random sweep (issue #49 item 4).

One kernel, generated from the declarations (``host.primitives``), runs every vector op on fp32
and fp16 tiles, each as its primitive and in a vector program of every op; it compiles once and
runs interpreted once.  A primitive declared tomorrow is in it without editing this file.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from helpers import import_source

from ascend_numba.host.primitives import VECTOR_OPS
from ascend_numba.host.references.vector import REFERENCES, reference

TILE = 512
CASTS = {  # cast -> (source tile, destination dtype)
    "cast_f16_to_f32": ("a16", "32"), "cast_bf16_to_f32": ("a16", "32"),
    "cast_f32_to_f16": ("a32", "16"), "cast_f32_to_bf16": ("a32", "16"),
}
ARITH = [n for n, p in VECTOR_OPS.items() if p.kind != "cast"]


def _operands(spec, width):
    tiles = [f"a{width}", f"b{width}"][:spec.tiles]
    return tiles, ["s"] * spec.scalars


def _ops_of(w: str) -> list:
    return [n for n in ARITH if w == "16" or VECTOR_OPS[n].kind != "bits"]  # integer logic: 16-bit tiles


def _kernel_source() -> tuple[str, dict]:
    """The module: per tile width, one vector program of every op (one compile: a program per op
    cost CI a minute of compiling), and the kernel; with each output slot's op and form."""
    lines = ["import numpy as np", "import ascend_numba as an",
             "from ascend_numba.kernels import alloc_buffer, data_copy, vector_program",
             f"from ascend_numba.kernels import {', '.join(VECTOR_OPS)}", ""]
    for w in ("32", "16"):
        outs = [f"o_{name}" for name in _ops_of(w)]
        lines += ["@vector_program", f"def every_op_{w}(a, b, {', '.join(outs)}, s):"]
        for name in _ops_of(w):
            tiles, scalars = _operands(VECTOR_OPS[name], "")
            lines.append(f"    o_{name} = {name}({', '.join([*(t for t in ('a', 'b')[:len(tiles)]), *scalars])})")
        lines.append("")
    body = [f"@an.kernel(outputs=('out32', 'out16'))", "def every_op(ctx, x32, y32, x16, y16, out32, out16, s):"]
    for w, dt in (("32", "np.float32"), ("16", "np.uint16")):
        body += [f"    {t}{w} = alloc_buffer(ctx, {TILE}, {dt})" for t in ("a", "b", "o")]
        body += [f"    f{w}_{name} = alloc_buffer(ctx, {TILE}, {dt})" for name in _ops_of(w)]
        body += [f"    data_copy(ctx, a{w}, 0, x{w}, 0, {TILE})", f"    data_copy(ctx, b{w}, 0, y{w}, 0, {TILE})"]
    slots = {"32": [], "16": []}
    for w in ("32", "16"):
        for name in _ops_of(w):
            tiles, scalars = _operands(VECTOR_OPS[name], w)
            body.append(f"    {name}(ctx, o{w}, {', '.join([*tiles, *scalars])}, {TILE})")
            body.append(f"    data_copy(ctx, out{w}, {len(slots[w]) * TILE}, o{w}, 0, {TILE})")
            slots[w].append((name, "primitive"))
        body.append(f"    every_op_{w}(ctx, {TILE}, True, a{w}, b{w}, {', '.join(f'f{w}_{n}' for n in _ops_of(w))}, s)")
        for name in _ops_of(w):
            body.append(f"    data_copy(ctx, out{w}, {len(slots[w]) * TILE}, f{w}_{name}, 0, {TILE})")
            slots[w].append((name, "fused"))
    for name, (src, w) in CASTS.items():
        body.append(f"    {name}(ctx, o{w}, {src}, {TILE})")
        body.append(f"    data_copy(ctx, out{w}, {len(slots[w]) * TILE}, o{w}, 0, {TILE})")
        slots[w].append((name, "primitive"))
    return "\n".join(lines + body) + "\n", slots


@pytest.fixture(scope="module")
def every_op(tmp_path_factory):
    source, slots = _kernel_source()
    return import_source(tmp_path_factory.mktemp("every_op") / "every_vector_op.py", source).every_op, slots


F32_SPECIALS = [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001,
                0xFFA00001, 0x7F800001, 0x00000001, 0x80000001, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x42B17218,
                0xC2CFF1B5, 0x3F000000]
F16_SPECIALS = [0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7E01, 0xFD01, 0x7C01, 0x0001, 0x8001,
                0x03FF, 0x7BFF, 0xFBFF, 0x4C00, 0xCC00, 0x3800]


def _inputs(seed: int):
    """x: the specials then random bits; y: the specials against each other (every pair of
    specials meets somewhere in x and y) then random bits."""
    rng = np.random.default_rng(seed)
    out = []
    for specials, dtype in ((F32_SPECIALS, np.uint32), (F16_SPECIALS, np.uint16)):
        k = len(specials)
        pairs = np.array([(a, b) for a in specials for b in specials][:TILE], dtype)
        rest = TILE - len(pairs)
        x = np.concatenate([pairs[:, 0], rng.integers(0, np.iinfo(dtype).max, rest, dtype=dtype, endpoint=True)])
        y = np.concatenate([pairs[:, 1], rng.integers(0, np.iinfo(dtype).max, rest, dtype=dtype, endpoint=True)])
        assert k * k <= TILE
        out += [x.view(np.float32) if dtype == np.uint32 else x, y.view(np.float32) if dtype == np.uint32 else y]
    return out


def _run(kernel, slots, interpret: bool, scalar: float):
    x32, y32, x16, y16 = _inputs(7)
    out32 = np.zeros(len(slots["32"]) * TILE, np.uint32).view(np.float32)
    out16 = np.zeros(len(slots["16"]) * TILE, np.uint16)
    kernel.launch(x32, y32, x16, y16, out32, out16, scalar, block_dim=1, interpret=interpret)
    return out32.view(np.uint32).reshape(-1, TILE), out16.reshape(-1, TILE)


@pytest.mark.parametrize("scalar", [1.5, -0.0])
def test_every_vector_op_compiled_interpreted_and_fused_agree_bit_for_bit(every_op, scalar):
    kernel, slots = every_op
    compiled = _run(kernel, slots, False, scalar)
    interpreted = _run(kernel, slots, True, scalar)
    for w, got, want in zip(("32", "16"), compiled, interpreted):
        for k, (name, form) in enumerate(slots[w]):
            differ = np.flatnonzero(got[k] != want[k])
            assert differ.size == 0, (f"{name} ({form}, fp{w}): compiled and interpreted differ at {differ.size} "
                                      f"elements, first at {differ[0]}: {got[k][differ[0]]:#x} vs "
                                      f"{want[k][differ[0]]:#x}")
        by_op = {}
        for k, (name, form) in enumerate(slots[w]):
            by_op.setdefault(name, []).append(got[k])
        for name, rows in by_op.items():
            assert all(np.array_equal(rows[0], r) for r in rows[1:]), f"{name} fp{w}: fused and primitive differ"
        _nan_policy(w, by_op)


PINNED = ("vexp", "vln", "rsqrt")  # float64 NumPy rounded once: within one ULP of the pinned kernels


@pytest.mark.parametrize("scalar", [1.5, -0.0])
def test_every_vector_op_matches_its_numpy_reference(every_op, scalar):
    kernel, slots = every_op
    x32, y32, x16, y16 = _inputs(7)
    got32, got16 = _run(kernel, slots, False, scalar)
    for w, got, (x, y), bits in (("32", got32, (x32, y32), np.uint32),
                                 ("16", got16, (x16.view(np.float16), y16.view(np.float16)), np.uint16)):
        for k, (name, form) in enumerate(slots[w]):
            if form != "primitive" or name not in REFERENCES:
                continue
            spec = VECTOR_OPS[name]
            tiles = [x.view(bits), y.view(bits)] if spec.kind == "bits" else [x, y]
            operands = tiles[:spec.tiles] + [scalar] * spec.scalars
            if spec.kind == "fill":
                operands = [x, scalar]
            want = reference(name, *operands).view(bits)
            diff = np.abs(got[k].astype(np.int64) - want.astype(np.int64))
            allowed = 1 if name in PINNED else 0
            bad = np.flatnonzero(diff > allowed)
            assert bad.size == 0, (f"{name} fp{w}: {bad.size} elements differ from the reference, first at "
                                   f"{bad[0]}: x={x.view(bits)[bad[0]]:#x} y={y.view(bits)[bad[0]]:#x} got "
                                   f"{got[k][bad[0]]:#x}, want {want[bad[0]]:#x}")


def _nan_policy(w: str, by_op: dict):
    """The NaN policy's exact bits: an arithmetic op's every NaN is the default NaN (this covers
    each invalid operation and NaN pair: the inputs meet every special with every other); Abs
    keeps a NaN's payload with the sign cleared, Max returns its first NaN operand."""
    x, y = (_inputs(7)[0:2] if w == "32" else _inputs(7)[2:4])
    x, y = (a.view(np.uint32) if w == "32" else a for a in (x, y))
    as_float = (lambda a: a.view(np.float32)) if w == "32" else (lambda a: a.view(np.float16))
    default = 0x7FC00000 if w == "32" else 0x7E00
    sign = 0x80000000 if w == "32" else 0x8000
    for name, rows in by_op.items():
        got = rows[0]
        nan = np.isnan(as_float(got))
        if VECTOR_OPS[name].quiets:
            assert set(got[nan].tolist()) <= {default}, f"{name} fp{w}: a NaN that is not the default NaN"
        elif name == "vabs":
            assert np.array_equal(got, x & ~np.array(sign, x.dtype))
        elif name == "vneg":
            assert np.array_equal(got, x ^ np.array(sign, x.dtype))
        elif name in ("vmax", "vmin"):
            x_nan = np.isnan(as_float(x))
            assert np.array_equal(got[x_nan], x[x_nan])
            y_only = np.isnan(as_float(y)) & ~x_nan
            assert np.array_equal(got[y_only], y[y_only])
        elif name == "relu":
            x_nan = np.isnan(as_float(x))
            assert np.array_equal(got[x_nan], x[x_nan])
    invalid = {"mul": (0x7F800000, 0), "sub": (0x7F800000, 0x7F800000), "div": (0, 0)}
    for name, (a, b) in invalid.items():  # inf * 0, inf - inf, 0 / 0
        a, b = (v if w == "32" else {0x7F800000: 0x7C00, 0: 0}[v] for v in (a, b))
        at = np.flatnonzero((x == a) & (y == b))
        assert at.size and set(by_op[name][0][at].tolist()) == {default}, name


def test_every_vector_op_has_a_reference():
    missing = sorted(set(ARITH) - set(REFERENCES))
    assert not missing, f"vector ops without a NumPy reference (host/references/vector.py): {missing}"


@pytest.mark.parametrize("name", ["shift_left", "shift_right"])
def test_shifts_in_every_integer_width_and_count(name):
    """Logical on unsigned, arithmetic on signed tiles; a count outside 0..width-1 shifts every
    bit out; compiled, interpreted and the reference agree (the every-op kernel has uint16 only)."""
    from numba import njit

    from ascend_numba.kernels.interpret import python_function
    from ascend_numba.kernels.primitives.vector import element_function

    op = element_function(VECTOR_OPS[name].element, 2, False)

    @njit
    def run(x, n, out):
        for i in range(x.size):
            out[i] = op(x[i], n)

    interpreted = python_function(op.py_func)
    for dtype in (np.int16, np.uint16, np.int32, np.uint32):
        info = np.iinfo(dtype)
        x = np.array([0, 1, info.max, info.min, 0x5555, info.max // 3 * 2 + info.min], dtype)
        for count in (0, 1, 3, 15, 16, 31, 32, 40, -1):
            n = np.array(count).astype(dtype)[()]
            got = np.empty_like(x)
            run(x, n, got)
            want = reference(name, x, n)
            assert np.array_equal(got, want), (name, dtype, count, got, want)
            assert np.array_equal(np.array([interpreted(v, n) for v in x], dtype), want), (name, dtype, count)
    if name == "shift_left":  # the ShiftLeft page's examples: a signed left shift keeps the sign bit
        for dtype, count, want in ((np.int16, 1, 0xD554), (np.int16, 3, 0xD550), (np.uint16, 1, 0x5554)):
            x = np.array([0xAAAA], np.uint16).view(dtype)
            got = np.empty_like(x)
            run(x, dtype(count), got)
            assert got.view(np.uint16)[0] == want == int(reference(name, x, dtype(count)).view(np.uint16)[0])
