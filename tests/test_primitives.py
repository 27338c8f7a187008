"""One primitive, one declaration (host.primitives): everything else is derived from it, and a
primitive added by a declaration alone (Abs, ``vabs``) is a whole primitive: compiled, fused,
interpreted, checked, linted and exported."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba import kernels
from ascend_numba.checked import rules as check
from ascend_numba.host import trace
from ascend_numba.host.primitives import PRIMITIVES, VECTOR_OPS, element_expression
from ascend_numba.kernels import alloc_buffer, constant, data_copy, vabs, vector_program, vmax
from ascend_numba.kernels.primitives import fusion
from ascend_numba.lint import _ROLES, lint_source


def test_every_declared_primitive_is_exported_with_its_doc():
    for name, spec in PRIMITIVES.items():
        primitive = getattr(kernels, name)
        assert name in kernels.__all__
        doc = inspect.getdoc(getattr(primitive, "py_func", primitive)) or ""
        assert doc.startswith(spec.doc.split(":")[0]), (name, doc)


def test_checked_mode_codes_trace_events_and_lint_roles_come_from_the_declarations():
    assert set(check.PRIMITIVES[1:]) == {p.device for p in PRIMITIVES.values()}
    assert [check.PRIMITIVES[check.PRIMITIVE[p.device]] for p in PRIMITIVES.values()] == \
        [p.device for p in PRIMITIVES.values()]
    assert trace.COUNTER_NAMES[:3] == ("data_copy", "data_copy_pad", "gather")
    assert trace.EVENT_NAMES[:3] == ("DataCopy", "DataCopyPad", "Gather")
    assert list(trace.EVENT) == [n for n, p in PRIMITIVES.items() if p.trace]
    assert {p.trace for p in PRIMITIVES.values()} == {"", "copy", "vector", "scalar"}
    assert _ROLES == {n: p.roles for n, p in PRIMITIVES.items() if "dst" in p.operands}
    for name, (dst, reads) in _ROLES.items():
        params = list(inspect.signature(getattr(kernels, name).py_func).parameters)
        assert params[dst] in ("dst", "tensor"), name
        assert all(params[i] in ("src", "src0", "src1", "a", "b", "mask", "offsets_bytes", "pattern") or i == dst
                   for i in reads), (name, params)
        assert (dst in reads) == PRIMITIVES[name].reads_dst, name


def test_the_fused_ops_are_the_declared_vector_ops_and_copies_with_their_element_math():
    assert set(fusion.OPS) == set(VECTOR_OPS) | {"data_copy", "data_copy_pad", "cast", "cast_bf16"}
    assert fusion.OPS["data_copy"].kind == fusion.OPS["data_copy_pad"].kind == "copy"
    assert fusion.OPS["cast"].kind == fusion.OPS["cast_bf16"].kind == "cast_mode"  # Cast under a RoundMode
    assert fusion.OPS["add"].element == "({0} + {1})" and fusion.OPS["add"].quiets
    assert fusion.OPS["vsqrt"].element == "sqrt_element({0})"
    assert fusion.OPS["vmax"].element == "max_element({0}, {1})"
    assert fusion.OPS["vabs"].element == element_expression(VECTOR_OPS["vabs"].element) == "(abs({0}))"
    assert not fusion.OPS["vabs"].quiets and not fusion.OPS["vmax"].quiets and fusion.OPS["div"].quiets


def test_an_element_function_must_be_one_return():
    def two_lines(x):
        y = x
        return y

    with pytest.raises(ValueError, match="one return"):
        element_expression(two_lines)


# ---- Abs, added by its declaration alone -----------------------------------------------------------

DT = constant("DT", "tile element type: float32, or uint16 holding fp16")
TILE = 1024


@vector_program(temps=("t",))
def abs_then_max(x, out, t):
    t = vabs(x)
    out = vmax(t, x)


@an.kernel(outputs=("y", "z"))
def absolute(ctx, x, y, z, n, fuse):
    xs = alloc_buffer(ctx, TILE, DT)
    ys = alloc_buffer(ctx, TILE, DT)
    zs = alloc_buffer(ctx, TILE, DT)
    t = alloc_buffer(ctx, TILE, DT)
    for pos in range(ctx.block_idx * TILE, n, ctx.block_num * TILE):
        data_copy(ctx, xs, 0, x, pos, TILE)
        vabs(ctx, ys, xs, TILE)
        abs_then_max(ctx, TILE, fuse, xs, zs, t)
        data_copy(ctx, y, pos, ys, 0, TILE)
        data_copy(ctx, z, pos, zs, 0, TILE)


def _values(dtype):
    if dtype == np.float16:
        return np.arange(1 << 16, dtype=np.uint16).view(np.float16)  # every fp16 bit pattern
    specials = np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00001, 0x7F800000, 0xFF800000, 0x80000000, 0,
                         0x00000001, 0x80000001], np.uint32)
    rng = np.random.default_rng(3).integers(0, 2**32, (1 << 16) - specials.size, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([specials, rng]).view(np.float32)


def _bits(a):
    return a.view(f"u{a.itemsize}")


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "op-by-op"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_abs_is_numpy_abs_bit_for_bit(dtype, fuse, interpret):
    x = _values(dtype)
    if interpret and dtype == np.float16:
        x = np.ascontiguousarray(x[::8])  # interpreted: every eighth fp16 pattern keeps the run short
    gm = x.view(np.uint16) if dtype == np.float16 else x
    y, z = np.zeros_like(gm), np.zeros_like(gm)
    absolute.launch(gm, y, z, x.size, fuse, block_dim=4, datatype={"DT": gm.dtype.type}, interpret=interpret)
    got_y, got_z = y.view(dtype), z.view(dtype)
    assert np.array_equal(_bits(got_y), _bits(np.abs(x)))  # the sign bit cleared, NaN payloads kept
    a = np.abs(x)
    with np.errstate(invalid="ignore"):
        want_z = np.where((a >= x) | np.isnan(a), a, x)  # Max: the first operand on ties (+0 over -0) and NaN
    assert np.array_equal(_bits(got_z), _bits(want_z))


def test_abs_is_checked_and_linted_like_every_vector_op():
    @an.kernel
    def abs_past_its_tile(ctx, x, y, n):
        xs = alloc_buffer(ctx, 16, np.float32)
        ys = alloc_buffer(ctx, 16, np.float32)
        data_copy(ctx, xs, 0, x, 0, 16)
        vabs(ctx, ys, xs, 32)  # bug: twice the tile
        data_copy(ctx, y, 0, ys, 0, 16)

    x = -np.arange(16, dtype=np.float32)
    for interpret in (False, True):
        with pytest.raises(an.KernelCheckError, match=r"lane 0, Abs: \[ub-outside-buffer\] src") as caught:
            abs_past_its_tile.launch(x, np.zeros_like(x), 16, block_dim=1, checked=True, interpret=interpret)
        assert caught.value.primitive == "Abs"
    findings = lint_source('''
from ascend_numba.kernels import kernel, alloc_buffer, vabs
import numpy as np

@kernel(mode="auto")
def k(ctx, x, y):
    a = alloc_buffer(ctx, 8, np.float32)
    b = alloc_buffer(ctx, 8, np.float32)
    vabs(ctx, b, a, 8)
    b[0] = 1.0
''')
    assert [f.code for f in findings] == ["PTO402"]


def test_every_declared_vector_instruction_is_in_the_device_list():
    """The docs' coverage table (host/device_api.py) counts what is declared: a vector or compare
    primitive's device name must be one of the listed instructions."""
    from ascend_numba.host.device_api import VECTOR_API, coverage
    from ascend_numba.host.primitives import COMPARE_OPS

    listed = {n for names in VECTOR_API.values() for n in names}
    assert {p.device for p in (*VECTOR_OPS.values(), *COMPARE_OPS.values())} <= listed
    declared = {n for _, done, _ in coverage() for n in done}
    assert {"Add", "Compare", "Select", "Cast"} <= declared and "Mull" not in declared
