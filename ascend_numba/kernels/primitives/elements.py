"""Element intrinsics of the vector ops: where the CPU's own choice must be pinned (which NaN an
op returns, Relu of -0.0, a shift past the width), emitted as LLVM in place so a fused program
inlines them, each with its plain-Python twin for interpret mode.  The declarations in
:mod:`ascend_numba.host.primitives` name them (``element="max_element"``).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..._numba_compat.extending import python_twin
from ..half import _is_nan

__all__ = ["canonical_nan", "max_element", "min_element", "relu_element", "add_relu_element", "sub_relu_element",
           "shift_left_element", "shift_right_element", "sqrt_element"]


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
            shifted = builder.select(out_of_range, ir.Constant(a.type, 0), builder.shl(a, count))
            if not common.signed:
                return shifted
            # The device's arithmetic left shift keeps the sign bit (int16 0xAAAA << 1 is 0xD554).
            sign = ir.Constant(a.type, 1 << (width - 1))
            return builder.or_(builder.and_(a, sign), builder.and_(shifted, ir.Constant(a.type, ~(1 << (width - 1)))))
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
            if x.dtype.kind == "i":  # the sign bit kept
                sign = 1 << (width - 1)
                bits = (int(x) & sign) | (bits & ~sign & mask)
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
