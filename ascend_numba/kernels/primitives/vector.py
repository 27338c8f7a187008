"""Vector unit: every vector op declared in :mod:`ascend_numba.host.primitives` (arithmetic,
Duplicate, the casts), built here from its declaration, and SetValue (tile fusion of these ops:
:mod:`.fusion`).

Operands are UB tensors.  uint16 tiles are fp16 in arithmetic: each op is computed in fp32 and
rounded to fp16, which is exact IEEE fp16 for + - * / sqrt.  bf16 has no vector arithmetic here,
as on the device: cast it to fp32 first.  Each op also advances the lane's preload (see
:mod:`.preload`).

Checked-mode rules beside the primitives: :func:`check_vector` and :func:`check_set_value`.
"""

from __future__ import annotations

import numpy as np
from numba import types
from llvmlite import ir
from numba.extending import intrinsic

from ...checked.auto import enter
from ...checked.dispatch import ELEMENTS, checked_rule, count_ok
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import is_local_operand, mark_written, propagate_garbage, ub_aligned, ub_range_ok, ub_read_ok
from ...host.primitives import VECTOR_OPS, Primitive
from ...host.trace import DIR_SCALAR, DIR_VECTOR, EVENT, EVENT_SET_VALUE
from ..._numba_compat.extending import overload, python_twin
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from .. import half
from ..half import _is_nan, f16_to_f32, f16_to_f32_quiet, f32_to_f16
from ..lane import _address
from .context import address, trace_event, tracing
from . import pinned
from .preload import advance_preload

__all__ = ["set_value", *VECTOR_OPS]

PRIM_SET_VALUE = PRIMITIVE["SetValue"]
NO_OPERAND = -1  # the element size passed for an absent vector operand


# ---- checked-mode rules: True when the primitive may run ------------------------------------------


@jit
def _vector_source_ok(ctx, prim, operand, addr, nbytes, n):
    return (is_local_operand(ctx, prim, operand, addr) and ub_aligned(ctx, prim, operand, addr, 0)
            and ub_range_ok(ctx, prim, operand, addr, nbytes, 0, n) and ub_read_ok(ctx, prim, operand, addr, 0, n))


@checked_rule
@jit
def check_vector(ctx, prim, count, dst_addr, dst_nbytes, dst_size, a_addr, a_nbytes, a_size, b_addr, b_nbytes,
                 b_size):
    """A vector op on ``count`` elements of ``dst_size`` bytes, reading elements of ``a_size`` /
    ``b_size`` bytes (NO_OPERAND: absent); a result is garbage where a source element is."""
    enter(ctx, prim)
    if not count_ok(ctx, prim, OPERAND_DST, count, ELEMENTS, 0):
        return False
    if count == 0:
        return True
    if a_size != NO_OPERAND and not _vector_source_ok(ctx, prim, OPERAND_SRC, a_addr, a_nbytes, count * a_size):
        return False
    if b_size != NO_OPERAND and not _vector_source_ok(ctx, prim, OPERAND_SRC1, b_addr, b_nbytes, count * b_size):
        return False
    if not (is_local_operand(ctx, prim, OPERAND_DST, dst_addr) and ub_aligned(ctx, prim, OPERAND_DST, dst_addr, 0)
            and ub_range_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, 0, count * dst_size)):
        return False
    ub = np.int64(ctx.ub_addr)
    propagate_garbage(ctx, np.int64(dst_addr) - ub, dst_size, count,
                      np.int64(a_addr) - ub if a_size != NO_OPERAND else np.int64(-1), a_size,
                      np.int64(b_addr) - ub if b_size != NO_OPERAND else np.int64(-1), b_size)
    return True


@checked_rule
@jit
def check_set_value(ctx, addr, nbytes, index, itemsize):
    """SetValue on a UB tensor."""
    enter(ctx, PRIM_SET_VALUE)
    if not (is_local_operand(ctx, PRIM_SET_VALUE, OPERAND_DST, addr)
            and ub_range_ok(ctx, PRIM_SET_VALUE, OPERAND_DST, addr, nbytes, index * itemsize, itemsize)):
        return False
    mark_written(ctx, addr - ctx.ub_addr + index * itemsize, itemsize)
    return True


# ---- element access: fp16 (uint16) tiles compute through fp32 -------------------------------------

def _vload(tensor, i):
    raise NotImplementedError  # compiled only


def _vload_operand(tensor, i):
    raise NotImplementedError  # compiled only


def _vstore(tensor, i, value):
    raise NotImplementedError  # compiled only


def _vscalar(tensor, value):
    raise NotImplementedError  # compiled only


@jit(always_inline=True)
def _bits_load(tensor, i):
    return tensor[i]


@jit(always_inline=True)
def _bits_store(tensor, i, value):
    tensor[i] = value  # the tile's integer type: a wider intermediate wraps, as 16-bit logic does


def _bits_scalar(tensor, value):
    raise NotImplementedError  # compiled only


@overload(_vload, jit_options=OVERLOAD_OPTIONS)
def _ov_vload(tensor, i):
    if tensor.dtype == types.uint16:
        return lambda tensor, i: f16_to_f32(tensor[i])
    return lambda tensor, i: tensor[i]


@overload(_vload_operand, jit_options=OVERLOAD_OPTIONS)
def _ov_vload_operand(tensor, i):
    # An operand of arithmetic, which quiets a NaN anyway: the hardware's fp16 widening gives the
    # same result as NumPy's (see half.f16_to_f32_quiet) in a fraction of the instructions.
    if tensor.dtype == types.uint16:
        return lambda tensor, i: f16_to_f32_quiet(tensor[i])
    return lambda tensor, i: tensor[i]


@overload(_vstore, jit_options=OVERLOAD_OPTIONS)
def _ov_vstore(tensor, i, value):
    if tensor.dtype == types.uint16:
        def store_f16(tensor, i, value):
            tensor[i] = f32_to_f16(value)
        return store_f16

    def store(tensor, i, value):
        tensor[i] = value
    return store


_INT64_MIN, _INT64_MAX = np.int64(np.iinfo(np.int64).min), np.int64(np.iinfo(np.int64).max)


@jit(always_inline=True)
def saturated(r, lo, hi):
    """A float ``r`` toward zero as an int64 in ``[lo, hi]``, a NaN as 0: one answer compiled and
    interpreted, on every CPU (the CPU's own conversion of a NaN or an out-of-range float differs,
    and NumPy raises)."""
    if r != r:
        return np.int64(0)
    if r >= 9.223372036854775807e18:  # 2**63: past int64 (the float compare is exact)
        return hi
    if r < -9.223372036854775808e18:
        return lo
    return min(max(np.int64(r), lo), hi)


def as_element(dtype, value_type):
    """A scalar of ``value_type`` as a tile of ``dtype`` takes it: an integer tile, an integer
    modulo its width (a C++ conversion; through int64, which wraps alike compiled and interpreted
    where a Python int out of the type's range would raise), a float first toward zero (NaN: 0,
    saturated to int64); otherwise the dtype's conversion."""
    if isinstance(dtype, types.Integer):
        if isinstance(value_type, types.Float):
            return lambda tensor, value: dtype(saturated(value, _INT64_MIN, _INT64_MAX))
        return lambda tensor, value: dtype(np.int64(value))
    return lambda tensor, value: dtype(value)


@overload(_bits_scalar, jit_options=OVERLOAD_OPTIONS)
def _ov_bits_scalar(tensor, value):
    return as_element(tensor.dtype, value)


@overload(_vscalar, jit_options=OVERLOAD_OPTIONS)
def _ov_vscalar(tensor, value):
    if tensor.dtype == types.uint16:
        # A scalar entering an fp16 vector op is an fp16 value.
        return lambda tensor, value: f16_to_f32(f32_to_f16(np.float32(value)))
    return as_element(tensor.dtype, value)


# ---- element intrinsics: where the CPU's own choice must be pinned ---------------------------------

# The NaN policy (docs/kernels/primitives.md, "Bits"): an arithmetic op whose result is a NaN
# gives the default NaN, positive and quiet (0x7FC00000; fp16 0x7E00 and bf16 0x7FC0 after
# rounding), whatever its operands' NaNs were.  Left to the CPU, an invalid operation's NaN is
# negative on x86 and positive on ARM, and which NaN operand of two survives depends on the CPU
# and on how the compiler ordered a commutative op's operands.  Selections, sign changes, copies and
# casts keep a NaN's bits.

def _element(name: str, accepted: tuple, emit, twin):
    """An intrinsic ``name(x, y)`` of two numbers of the ``accepted`` kinds, in their common type:
    ``emit(builder, common, x, y)``; ``twin(x, y)``: the same on NumPy scalars (interpret mode).
    The element ops are intrinsics so a fused program emits them in place (see half._conversion);
    the primitives' loops take them as functions, through the jit wrappers."""
    def typer(typingctx, x, y):
        if not (isinstance(x, accepted) and isinstance(y, accepted)):
            return None
        common = typingctx.unify_types(x, y)

        def codegen(context, builder, signature, args):
            a, b = (context.cast(builder, v, t, common) for v, t in zip(args, signature.args))
            return emit(builder, common, a, b)

        return common(x, y), codegen

    typer.__name__ = typer.__qualname__ = name
    element = intrinsic(typer)
    python_twin(element)(lambda x, y: twin(*_common(x, y)))
    return element


def _common(x, y):
    """Interpret mode: two NumPy scalars in their common type (the intrinsics' unify_types)."""
    common = np.result_type(*(np.int64 if isinstance(v, int) else np.float64 if isinstance(v, float) else v.dtype
                              for v in (x, y)))
    return common.type(x), common.type(y)


_DEFAULT_NAN = {32: 0x7FC00000, 64: 0x7FF8000000000000}  # by float width: positive, quiet, payload 0
_MANTISSA = {32: 23, 64: 52}


def _canonical_nan_typer(typingctx, x):
    if not isinstance(x, (types.Float, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        (v,) = args
        if not isinstance(x, types.Float):
            return v
        # On the bits: LLVM takes a float NaN's payload as unspecified and folds a select of a
        # NaN constant over a NaN test away (it may return any NaN); an integer select it keeps.
        width = x.bitwidth
        int_t = ir.IntType(width)
        bits = builder.bitcast(v, int_t)
        magnitude = builder.and_(bits, ir.Constant(int_t, (1 << (width - 1)) - 1))
        infinity = _DEFAULT_NAN[width] - (1 << (_MANTISSA[width] - 1))
        # Signed: the magnitude has no sign bit, and a signed vector compare is one instruction
        # where an unsigned one is emulated (AVX2), a sixth of a fused ApplyAdamW pass at 16M.
        is_nan = builder.icmp_signed(">", magnitude, ir.Constant(int_t, infinity))
        return builder.bitcast(builder.select(is_nan, ir.Constant(int_t, _DEFAULT_NAN[width]), bits), v.type)

    return x(x), codegen


def _canonical_nan_twin(x):
    return x if x == x else type(x)(np.nan)


# An arithmetic result: itself, or the default NaN (positive, quiet) when it is a NaN.  A select
# on the result: the vector loops keep vectorizing.
canonical_nan = intrinsic(_canonical_nan_typer)
python_twin(canonical_nan)(_canonical_nan_twin)


def _keep_first(op: str):
    """Codegen of ``a if (a op b or a != a) else b``: Max (``>=``) and Min (``<=``), NaN-propagating
    like numpy.maximum / minimum, the first NaN operand's bits kept."""
    def emit(builder, common, a, b):
        if isinstance(common, types.Float):
            keep = builder.or_(builder.fcmp_ordered(op, a, b), _is_nan(builder, a))
        elif common.signed:
            keep = builder.icmp_signed(op, a, b)
        else:
            keep = builder.icmp_unsigned(op, a, b)
        return builder.select(keep, a, b)
    return emit


max_element = _element("max_element", (types.Float, types.Integer), _keep_first(">="),
                       lambda x, y: x if x >= y or x != x else y)
min_element = _element("min_element", (types.Float, types.Integer), _keep_first("<="),
                       lambda x, y: x if x <= y or x != x else y)


def _relu(builder, v):
    """v where v > 0 or v is a NaN, else +0 of v's type."""
    zero = ir.Constant(v.type, 0)
    if isinstance(v.type, ir.IntType):
        return builder.select(builder.icmp_signed(">", v, zero), v, zero)
    return builder.select(builder.or_(builder.fcmp_ordered(">", v, zero), _is_nan(builder, v)), v, zero)


def _relu_twin(v):
    return v if v > 0 or v != v else type(v)(0)


def _relu_typer(typingctx, x):
    if not isinstance(x, (types.Float, types.Integer)):
        return None
    return x(x), lambda context, builder, signature, args: _relu(builder, args[0])


# Relu keeps a NaN's bits (a selection) and gives +0 for -0.0 and every negative value.
relu_element = intrinsic(_relu_typer)
python_twin(relu_element)(_relu_twin)


def _then_relu(arith_float, arith_int):
    def emit(builder, common, a, b):
        if isinstance(common, types.Float):
            return _relu(builder, getattr(builder, arith_float)(a, b))
        return _relu(builder, getattr(builder, arith_int)(a, b))
    return emit


def _shift_codegen(left: bool):
    def emit(builder, common, a, n):
        width = common.bitwidth
        # A count outside 0..width-1 (a negative one read as unsigned is one) shifts every bit out:
        # LLVM's shift of that many bits is poison, so it is decided here.
        out_of_range = builder.icmp_unsigned(">=", n, ir.Constant(n.type, width))
        count = builder.select(out_of_range, ir.Constant(n.type, 0), n)
        if left:
            return builder.select(out_of_range, ir.Constant(a.type, 0), builder.shl(a, count))
        if common.signed:
            return builder.ashr(a, builder.select(out_of_range, ir.Constant(n.type, width - 1), count))
        return builder.select(out_of_range, ir.Constant(a.type, 0), builder.lshr(a, count))
    return emit


def _shift_twin(left: bool):
    def twin(x, n):
        width = x.dtype.itemsize * 8
        count, mask = int(n) % (1 << width), (1 << width) - 1  # the count as unsigned, as compiled
        if left:
            bits = 0 if count >= width else (int(x) << count) & mask
        elif count >= width:
            bits = mask if x.dtype.kind == "i" and x < 0 else 0
        else:
            bits = (int(x) >> count) & mask  # Python's >> of a negative int is arithmetic
        return np.array(bits, f"u{width // 8}").view(x.dtype)[()]
    return twin


# ShiftLeft, ShiftRight (logical on unsigned tiles, arithmetic on signed ones, as the device
# documents), by a count of the tile's type.
shift_left_element = _element("shift_left_element", (types.Integer,), _shift_codegen(True), _shift_twin(True))
shift_right_element = _element("shift_right_element", (types.Integer,), _shift_codegen(False), _shift_twin(False))


# AddRelu, SubRelu: the sum or difference, then Relu (one rounding: Relu only selects).
add_relu_element = _element("add_relu_element", (types.Float, types.Integer), _then_relu("fadd", "add"),
                            lambda x, y: _relu_twin(x + y))
sub_relu_element = _element("sub_relu_element", (types.Float, types.Integer), _then_relu("fsub", "sub"),
                            lambda x, y: _relu_twin(x - y))


def _sqrt_typer(typingctx, x):
    if not isinstance(x, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return builder.call(builder.module.declare_intrinsic("llvm.sqrt", [args[0].type]), args)

    return x(x), codegen


# The correctly rounded square root as LLVM's intrinsic (the CPU's sqrtss / sqrtps; NaN below 0):
# NumPy's sqrt compiles to a call of the C library's sqrtf, which may set errno, so a loop holding
# it stays scalar (a fused ApplyAdamW tile's pass was not vectorized).  The same bits.
sqrt_element = intrinsic(_sqrt_typer)
python_twin(sqrt_element)(lambda x: np.sqrt(x))


# ---- the loops -----------------------------------------------------------------------------------

@jit(always_inline=True)
def _check_unary(ctx, prim, dst, src, count):
    return check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, _address(src), src.nbytes,
                        src.itemsize, 0, 0, NO_OPERAND)


@jit(always_inline=True)
def _check_binary(ctx, prim, dst, a, b, count):
    return check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, _address(a), a.nbytes,
                        a.itemsize, _address(b), b.nbytes, b.itemsize)


@jit  # called, not inlined: Duplicate's loop, and the rare NaN-scalar case of Adds / Muls
def _fill(dst, value, count):
    for i in range(min(count, dst.size)):
        _vstore(dst, i, value)


@jit(inline="always")
def _map(dst, src, count, op, load, store):
    # An op of one tile (Sqrt).
    n = min(count, dst.size, src.size)
    if _address(dst) == _address(src):
        for i in range(n):
            store(dst, i, op(load(dst, i)))
    else:
        for i in range(n):
            store(dst, i, op(load(src, i)))


@jit(inline="always")
def _unary(dst, src, scalar, count, op, load, store):
    # An op of a tile and a scalar (Adds, Muls).
    n = min(count, dst.size, src.size)
    if _address(dst) == _address(src):
        for i in range(n):
            store(dst, i, op(load(dst, i), scalar))
    else:
        for i in range(n):
            store(dst, i, op(load(src, i), scalar))


@jit(inline="always")
def _binary(dst, a, b, count, op, load, store):
    # In place on the first operand (t = op(t, x), the common form) gets a loop of its own, which
    # vectorizes; any other overlap takes the general loop, whose overlap check then runs it
    # element by element (each element is read before it is written: still exact).
    n = min(count, dst.size, a.size, b.size)
    if _address(dst) == _address(a):
        for i in range(n):
            store(dst, i, op(load(dst, i), load(b, i)))
    else:
        for i in range(n):
            store(dst, i, op(load(a, i), load(b, i)))


# ---- the primitives, from their declarations (host.primitives) --------------------------------------

ELEMENT_INTRINSICS = {"max_element": max_element, "min_element": min_element, "relu_element": relu_element,
                      "add_relu_element": add_relu_element, "sub_relu_element": sub_relu_element,
                      "shift_left_element": shift_left_element, "shift_right_element": shift_right_element,
                      "sqrt_element": sqrt_element, "canonical_nan": canonical_nan, **pinned.ELEMENT_FUNCTIONS}
_ELEMENTS: dict = {}


def element_function(element, arity: int, canonical: bool):
    """The compiled element function of a declaration's ``element`` of ``arity`` operands (a plain
    function, or the name of an element intrinsic), as a jit wrapper the loops inline (an
    intrinsic cannot be passed to them); ``canonical``: its NaN results are the default NaN (an
    arithmetic op, ``quiets``)."""
    found = _ELEMENTS.get((element, canonical))
    if found is None:
        inner = element if callable(element) else ELEMENT_INTRINSICS[element]
        inner = jit(always_inline=True)(inner) if callable(element) else inner
        # One signature per arity (no *args: a star-args tuple per call in every loop).
        if arity == 1:
            def call(x):
                return canonical_nan(inner(x)) if canonical else inner(x)
        else:
            def call(x, y):
                return canonical_nan(inner(x, y)) if canonical else inner(x, y)
        name = element.__name__ if callable(element) else element
        call.__name__ = call.__qualname__ = f"_{name}" + ("_canonical" if canonical else "")
        found = _ELEMENTS[(element, canonical)] = jit(always_inline=True)(call)
    return found


@jit(always_inline=True)
def _trace_vector(ctx, code, count, dst, a, b):
    """Log a vector op on ``count`` elements: it writes ``dst`` and reads ``a`` and ``b`` (an op with
    fewer tile operands passes one again; a Duplicate passes ``dst``)."""
    if tracing(ctx):
        n = max(count, 0)
        d, s, t = address(dst), address(a), address(b)
        trace_event(ctx, code, DIR_VECTOR, n * a.itemsize, n, d, d + n * dst.itemsize, s, s + n * a.itemsize, t,
                    t + n * b.itemsize)


def _arith(spec: Primitive):
    """Duplicate, and the ops that compute: fp16 tiles through fp32, rounded to the destination."""
    prim = PRIMITIVE[spec.device]
    code = EVENT[spec.name]
    op = element_function(spec.element, spec.tiles + spec.scalars, spec.quiets)
    # A select or sign change keeps a NaN operand's bits, as NumPy does: its fp16 loads keep the
    # payload.  Arithmetic quiets a NaN anyway: the hardware's cheaper widening gives the same bits.
    # A bits op reads and writes the stored integers (a uint16 tile is not fp16 to it).
    bits = spec.kind == "bits"
    load = _bits_load if bits else _vload_operand if spec.quiets else _vload
    store = _bits_store if bits else _vstore
    # The scalar as the destination's type takes it (an fp16 tile: the fp16 value nearest it).
    scalar_as = _bits_scalar if bits else _vscalar
    if spec.kind == "fill":
        def primitive(ctx, dst, value, count):
            if not check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, 0, 0, NO_OPERAND, 0, 0,
                                NO_OPERAND):
                return
            _trace_vector(ctx, code, count, dst, dst, dst)
            advance_preload(ctx)
            _fill(dst, _vscalar(dst, op(value)), count)
    elif (spec.tiles, spec.scalars) == (1, 1):
        def primitive(ctx, dst, src, scalar, count):
            if not _check_unary(ctx, prim, dst, src, count):
                return
            _trace_vector(ctx, code, count, dst, src, src)
            advance_preload(ctx)
            _unary(dst, src, scalar_as(dst, scalar), count, op, load, store)
    elif (spec.tiles, spec.scalars) == (2, 0):
        def primitive(ctx, dst, a, b, count):
            if not _check_binary(ctx, prim, dst, a, b, count):
                return
            _trace_vector(ctx, code, count, dst, a, b)
            advance_preload(ctx)
            _binary(dst, a, b, count, op, load, store)
    elif (spec.tiles, spec.scalars) == (1, 0):
        def primitive(ctx, dst, src, count):
            if not _check_unary(ctx, prim, dst, src, count):
                return
            _trace_vector(ctx, code, count, dst, src, src)
            advance_preload(ctx)
            _map(dst, src, count, op, load, store)
    else:
        raise ValueError(f"vector op {spec.name}: {spec.tiles} tile and {spec.scalars} scalar operands "
                         "have no loop here")
    return primitive


def _cast(spec: Primitive):
    """A cast: bits in, bits out, through the named conversion of kernels.half."""
    prim = PRIMITIVE[spec.device]
    code = EVENT[spec.name]
    convert = getattr(half, spec.element)

    def primitive(ctx, dst, src, count):
        if not _check_unary(ctx, prim, dst, src, count):
            return
        _trace_vector(ctx, code, count, dst, src, src)
        advance_preload(ctx)
        for i in range(min(count, dst.size, src.size)):
            dst[i] = convert(src[i])
    return primitive


def _define(spec: Primitive):
    primitive = (_cast if spec.kind == "cast" else _arith)(spec)
    # Its own name (Numba's on-disk cache files a function under its qualified name; tracebacks,
    # pdb and coverage name the code object).
    primitive.__name__ = primitive.__qualname__ = spec.name
    code = primitive.__code__.replace(co_name=spec.name)
    primitive.__code__ = code.replace(co_qualname=spec.name) if hasattr(code, "co_qualname") else code
    primitive.__doc__ = spec.doc
    primitive.__module__ = __name__
    return jit(primitive)


globals().update({name: _define(spec) for name, spec in VECTOR_OPS.items()})


@jit
def set_value(ctx, tensor, index, value):
    """SetValue: ``tensor[index] = value`` on a UB tensor, from the scalar unit."""
    if check_set_value(ctx, _address(tensor), tensor.nbytes, index, tensor.itemsize) and 0 <= index < tensor.size:
        if tracing(ctx):
            at = address(tensor) + index * tensor.itemsize
            trace_event(ctx, EVENT_SET_VALUE, DIR_SCALAR, tensor.itemsize, 1, at, at + tensor.itemsize, 0, 0, 0, 0)
        tensor[index] = value
