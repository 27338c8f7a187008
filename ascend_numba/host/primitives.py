"""Every kernel primitive, declared once (SPEC §3).

A :class:`Primitive` says what a primitive is: its name in kernels and on the device, its operands
and their roles, its one-line doc, the checked-mode rule that verifies it, the trace event it
records and, for a vector op, the math of one element.  Everything else is derived from
:data:`PRIMITIVES`:

* the compiled vector ops (``kernels/primitives/vector.py`` builds one per vector entry from its
  element function; the other families implement theirs by hand, under the declared name);
* checked mode's primitive codes and names (:mod:`.check`), the trace's event codes and
  counters (:mod:`.trace`);
* the linter's operand roles (:mod:`ascend_numba.lint`);
* tile fusion's ops (``kernels/primitives/fusion_codegen.py``: a fused pass inlines the element
  function's expression, so it computes what the primitive computes);
* interpret mode, which runs the compiled code as Python (``kernels/interpret.py``).

An element function is plain Python of numbers, one ``return`` of an expression of its
parameters (the tile operands' values, then the scalars), so the compiler, the fusion pass and
the interpreter read the same expression.  The expression may use only what computes the same
bits compiled and interpreted: ``+ - * /``, unary minus, ``abs``, comparisons and ``a if c else
b`` (:func:`element_expression` refuses anything else, such as ``np.exp``: the host's math library
is LLVM's compiled and NumPy's interpreted, and their last bits differ).  Where the CPU's own
choice must be pinned (which NaN an fp16 Add returns) or a function is needed (Exp, Ln),
``element`` names an element intrinsic of ``kernels/primitives/vector.py``, a
pinned function of ``kernels/primitives/pinned.py`` or a conversion of ``kernels/half.py``
instead.

Plain Python: no Numba here (the linter and checked mode's messages read it without compiling).
"""

from __future__ import annotations

import ast
import collections
import enum
import inspect
import textwrap
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Primitive", "PRIMITIVES", "VECTOR_OPS", "COMPARE_OPS", "COMPOUND_OPS", "CAST_COMPOUND_OPS", "TENSOR_ROLES",
           "CMPMODE", "SELMODE", "RoundMode", "CAST_MODES", "BinaryRepeatParams", "UnaryRepeatParams",
           "BrcbRepeatParams", "GatherMaskParams", "GatherRepeatParams", "DataCopyPadExtParams", "DataCopyParams",
           "ReduceOrder", "ReduceType", "MASK_PLACEHOLDER",
           "element_expression"]

# An operand a primitive writes (dst) or reads (``mask``: Select's selection bits); checked mode's codes.
TENSOR_ROLES = ("dst", "src", "src1", "tmp", "mask")
_READ_ROLES = ("src", "src1", "mask")


class CMPMODE(enum.IntEnum):
    """Compare's and Compares' modes, numbered as the device's ``AscendC::CMPMODE``
    (``kernel_utils_mode.h``): ``dst bit = src0 <op> src1``."""

    LT = 0
    GT = 1
    EQ = 2
    LE = 3
    GE = 4
    NE = 5


class ReduceType(enum.IntEnum):
    """CANN 9.1's reduction type (ReduceRepeat, ReduceDataBlock, ReducePairElem's template argument),
    numbered as the device's ``AscendC::ReduceType`` (``impl/utils/common_types.h``)."""

    SUM = 0
    MAX = 1
    MIN = 2


class RoundMode(enum.IntEnum):
    """Cast's rounding modes, numbered as the device's ``AscendC::RoundMode``: CAST_NONE rounds as
    CAST_RINT where the conversion is inexact; CAST_ROUND is to nearest, ties away from zero;
    CAST_ODD sets the last bit of an inexact result (round to odd)."""

    CAST_NONE = 0
    CAST_RINT = 1
    CAST_FLOOR = 2
    CAST_CEIL = 3
    CAST_ROUND = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


_EXACT = frozenset({RoundMode.CAST_NONE})
_DIRECTED = frozenset({RoundMode.CAST_RINT, RoundMode.CAST_FLOOR, RoundMode.CAST_CEIL, RoundMode.CAST_ROUND,
                       RoundMode.CAST_TRUNC})
# The conversions on A2/A3, (source, destination) -> the modes each takes: the table of the
# asc-devkit Cast page (cannmirror/asc-devkit at 0da921b, docs/zh/api/SIMD-API/基础API/
# Memory矢量计算/类型转换/Cast.md).  A uint16 tile is fp16 to ``cast`` and bf16 to ``cast_bf16``; int4b_t
# is a byte tile of two elements to ``cast_int4``.
CAST_MODES = {
    ("float16", "float32"): _EXACT, ("int8", "float16"): _EXACT, ("uint8", "float16"): _EXACT,
    ("int16", "float32"): _EXACT, ("int32", "int64"): _EXACT, ("int32", "int16"): _EXACT, ("int64", "int32"): _EXACT,
    ("float16", "int8"): _DIRECTED | _EXACT, ("float16", "uint8"): _DIRECTED | _EXACT,
    ("float16", "int16"): _DIRECTED, ("float16", "int32"): _DIRECTED,
    ("int16", "float16"): _DIRECTED | _EXACT, ("int32", "float32"): _DIRECTED | _EXACT,
    ("float32", "float16"): _DIRECTED | _EXACT | {RoundMode.CAST_ODD},
    ("float32", "float32"): _DIRECTED, ("float32", "int16"): _DIRECTED, ("float32", "int32"): _DIRECTED,
    ("float32", "int64"): _DIRECTED, ("int64", "float32"): _DIRECTED,
    ("bfloat16", "float32"): _EXACT, ("bfloat16", "int32"): _DIRECTED, ("float32", "bfloat16"): _DIRECTED,
    ("int32", "float16"): frozenset(RoundMode),  # the mode ignored: SetDeqScale's fp16 scale (CastDequant's rule)
    ("float16", "int4b_t"): _DIRECTED | _EXACT, ("int4b_t", "float16"): _EXACT,  # cast_int4
}


class SELMODE(enum.IntEnum):
    """Select's modes, numbered as the device's ``AscendC::SELMODE``: mode 0 applies the first
    256 bytes' worth of mask bits to every 256-byte repeat, modes 1 and 2 one bit per element
    (against a scalar, against a second tensor)."""

    VSEL_CMPMASK_SPR = 0
    VSEL_TENSOR_SCALAR_MODE = 1
    VSEL_TENSOR_TENSOR_MODE = 2


class ReduceOrder(enum.IntEnum):
    """Where WholeReduceMax / WholeReduceMin put the value and its index, numbered as the device's
    ``AscendC::ReduceOrder`` (``kernel_utils_mode.h``)."""

    ORDER_VALUE_INDEX = 0
    ORDER_INDEX_VALUE = 1
    ORDER_ONLY_VALUE = 2
    ORDER_ONLY_INDEX = 3


# A level-0 call's strides, in 32-byte blocks, field for field the device's structs
# (include/basic_api/kernel_struct_binary.h, kernel_struct_unary.h; cannmirror/asc-devkit at 0da921b).
# Compiled code builds one with every field given; the defaults are the contiguous layout.
BinaryRepeatParams = collections.namedtuple(
    "BinaryRepeatParams", ("dst_blk_stride", "src0_blk_stride", "src1_blk_stride", "dst_rep_stride", "src0_rep_stride",
                           "src1_rep_stride"), defaults=(1, 1, 1, 8, 8, 8))
UnaryRepeatParams = collections.namedtuple(
    "UnaryRepeatParams", ("dst_blk_stride", "src_blk_stride", "dst_rep_stride", "src_rep_stride"),
    defaults=(1, 1, 8, 8))
# Brcb's strides (include/basic_api/kernel_struct_brcb.h): the constructor's order, blocks of 32 bytes.
BrcbRepeatParams = collections.namedtuple("BrcbRepeatParams", ("dst_blk_stride", "dst_rep_stride"), defaults=(1, 8))
# GatherMask's parameters (include/basic_api/kernel_struct_gather.h): the constructor's order.
GatherMaskParams = collections.namedtuple(
    "GatherMaskParams", ("src0_block_stride", "repeat_times", "src0_repeat_stride", "src1_repeat_stride"),
    defaults=(1, 0, 8, 8))
# Gatherb's strides (include/basic_api/kernel_struct_gather.h): the constructor's order, blocks of 32 bytes.
GatherRepeatParams = collections.namedtuple("GatherRepeatParams", ("dst_blk_stride", "dst_rep_stride"),
                                            defaults=(1, 8))
# DataCopy's block form, field for field the device's DataCopyParams (every field in 32-byte blocks).
DataCopyParams = collections.namedtuple("DataCopyParams", ("block_count", "block_len", "src_stride", "dst_stride"),
                                        defaults=(1, 0, 0, 0))
# DataCopyPad's padding (GM -> UB), field for field the device's DataCopyPadExtParams<T>.
DataCopyPadExtParams = collections.namedtuple(
    "DataCopyPadExtParams", ("is_pad", "left_padding", "right_padding", "padding_value"), defaults=(False, 0, 0, 0))
MASK_PLACEHOLDER = 0  # the mask a call with is_set_mask=False passes (it reads the register)


@dataclass(frozen=True)
class Primitive:
    """One primitive.  ``operands``: each parameter after ``ctx`` with its role (``dst``: the
    tensor it writes; ``src``, ``src1``, ``mask``, ``tmp``: tensors it reads; ``scalar``: a value;
    anything else: an offset, count or stride); ``rule``: the checked-mode rule verifying it
    (a function beside it); ``trace``: the unit a traced lane logs each call as (``"copy"``: a DMA or
    Gather, also counted per primitive; ``"vector"``; ``"scalar"``), empty when it is not logged.

    Vector ops (``family == "vector"``): ``kind`` is ``"arith"`` (computed in fp32 for fp16
    tiles, rounded to the destination), ``"cast"`` (``element`` names the conversion, bits in and
    out), ``"bits"`` (integer and logical ops on the stored bits: a uint16 tile is 16 bits, not
    fp16) or ``"fill"`` (the scalar itself); ``quiets``: its result is arithmetic, so a NaN result
    is the default NaN, positive and quiet, whatever NaN operands it had (the NaN policy; False for
    a selection or sign change, which keeps a NaN's bits)."""

    name: str
    device: str
    family: str
    operands: tuple
    doc: str
    rule: str
    trace: str = ""
    kind: str = ""
    element: Callable | str | None = None
    quiets: bool = True
    reads_dst: bool = False  # dst is also read (Axpy accumulates into it)

    @property
    def tiles(self) -> int:
        """Tensor operands a vector op reads."""
        return sum(1 for r in self.operands if r in ("src", "src1"))

    @property
    def scalars(self) -> int:
        return sum(1 for r in self.operands if r == "scalar")

    @property
    def roles(self) -> tuple[int, tuple]:
        """The call's argument index (``ctx`` is 0) of the tensor it writes and of those it reads
        (a ``tmp`` is scratch: neither)."""
        dst = self.operands.index("dst") + 1 if "dst" in self.operands else -1
        reads = _READ_ROLES + (("dst",) if self.reads_dst else ())
        return dst, tuple(i + 1 for i, r in enumerate(self.operands) if r in reads)


# ---- vector elements: plain Python of numbers ---------------------------------------------------------

def _add(x, y):
    return x + y


def _sub(x, y):
    return x - y


def _mul(x, y):
    return x * y


def _div(x, y):
    return x / y


def _abs(x):
    return abs(x)


def _scalar(value):
    return value


def _neg(x):
    return -x


def _reciprocal(x):
    return 1 / x


def _abs_sub(x, y):
    return abs(x - y)


def _leaky(x, alpha):
    return x if x > 0 else x * alpha


def _and(x, y):
    return x & y


def _or(x, y):
    return x | y


def _not(x):
    return ~x


# What an element expression may be made of: operations each exactly rounded (or exact), so compiled,
# interpreted and fused code compute the same bits.
_EXACT_NODES = (ast.Name, ast.Load, ast.Constant, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.UnaryOp,
                ast.USub, ast.UAdd, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.IfExp,
                ast.BoolOp, ast.And, ast.Or, ast.Not, ast.BitAnd, ast.BitOr, ast.Invert)
_EXACT_CALLS = ("abs",)


def element_expression(element: Callable) -> str:
    """An element function's expression with its parameters as ``{0}``, ``{1}``... (the fused
    pass inlines it).  Raises ValueError for a body that is not one ``return`` of an expression
    of exact operations (see the module doc)."""
    fdef = ast.parse(textwrap.dedent(inspect.getsource(element))).body[0]
    params = [a.arg for a in fdef.args.args]
    ret = fdef.body[0] if len(fdef.body) == 1 else None
    if not isinstance(ret, ast.Return) or ret.value is None:
        raise ValueError(f"element {element.__name__}: the body is one return of an expression")
    for node in ast.walk(ret.value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _EXACT_CALLS:
            continue
        if isinstance(node, ast.Name) and node.id not in params and node.id not in _EXACT_CALLS:
            raise ValueError(f"element {element.__name__}: {node.id!r} is not one of its parameters")
        if not isinstance(node, _EXACT_NODES):
            raise ValueError(
                f"element {element.__name__}: `{ast.unparse(node)}` is not exact arithmetic: a math library's "
                "function gives other last bits compiled (LLVM) than interpreted (NumPy), and a fused pass would "
                "give a third; name a pinned element function instead (kernels/primitives/pinned.py: exp_element, "
                "ln_element, or add one there) so every form computes one implementation")

    class _Slots(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.Name(id=f"{{{params.index(node.id)}}}", ctx=node.ctx) if node.id in params else node

    return f"({ast.unparse(_Slots().visit(ret.value))})"


def _vector(name, device, operands, doc, element, *, kind="arith", quiets=None):
    quiets = kind == "arith" if quiets is None else quiets  # a cast or a bits op keeps a NaN's bits
    if callable(element):
        element_expression(element)  # refused here, at the declaration, when not exact
    return Primitive(name, device, "vector", operands, doc, "check_vector", "vector", kind=kind, element=element,
                     quiets=quiets)


_BINARY = ("dst", "src", "src1", "count")
_WITH_SCALAR = ("dst", "src", "scalar", "count")
_UNARY = ("dst", "src", "count")

# The order is the codes' (checked mode, trace): append, do not reorder within a run of the cache.
PRIMITIVES: dict[str, Primitive] = {p.name: p for p in (
    Primitive("alloc_buffer", "alloc_buffer", "memory", ("count", "dtype"),
              "Bind ``count`` elements of ``dtype`` at the next block-aligned UB offset (TPipe::InitBuffer).",
              "check_alloc"),
    Primitive("data_copy", "DataCopy", "dma", ("dst", "dst_off", "src", "src_off", "count"),
              "DataCopy: GM<->UB or UB<->UB, ``count`` elements in whole 32-byte blocks.", "check_transfer", "copy"),
    Primitive("data_copy_pad", "DataCopyPad", "dma",
              ("dst", "dst_off", "src", "src_off", "block_count", "block_len", "src_stride", "dst_stride", "pad"),
              "DataCopyPad: ``block_count`` blocks of ``block_len`` bytes, strided, exact bytes; GM -> UB with "
              "DataCopyPadExtParams: left / right pads and the bytes to the block's end filled.", "check_transfer",
              "copy"),
    Primitive("gather", "Gather", "dma", ("dst", "src", "src1", "base", "count"),
              "Gather: ``dst[i] = src[base + offsets_bytes[i] / sizeof]`` (UB to UB).", "check_gather", "copy"),
    _vector("duplicate", "Duplicate", ("dst", "scalar", "count"), "Duplicate: fill ``dst[:count]`` with a scalar.",
            _scalar, kind="fill"),
    _vector("adds", "Adds", _WITH_SCALAR, "Adds: ``dst = src + scalar``.", _add),
    _vector("muls", "Muls", _WITH_SCALAR, "Muls: ``dst = src * scalar``.", _mul),
    _vector("add", "Add", _BINARY, "Add: ``dst = a + b``.", _add),
    _vector("sub", "Sub", _BINARY, "Sub: ``dst = a - b``.", _sub),
    _vector("mul", "Mul", _BINARY, "Mul: ``dst = a * b``.", _mul),
    _vector("div", "Div", _BINARY, "Div: ``dst = a / b`` (IEEE division, no fast reciprocal).", _div),
    _vector("vmax", "Max", _BINARY, "Max: ``dst = max(a, b)``, NaN-propagating like ``numpy.maximum``.",
            "max_element", quiets=False),
    _vector("vsqrt", "Sqrt", _UNARY, "Sqrt: ``dst = sqrt(src)`` (correctly rounded).",
            "sqrt_element"),
    _vector("cast_f16_to_f32", "Cast", _UNARY, "Cast fp16 (uint16 bits) to fp32, exact.", "f16_to_f32",
            kind="cast"),
    _vector("cast_f32_to_f16", "Cast", _UNARY, "Cast fp32 to fp16 bits with round-to-nearest-even (CAST_RINT).",
            "f32_to_f16", kind="cast"),
    _vector("cast_bf16_to_f32", "Cast", _UNARY, "Cast bf16 (uint16 bits) to fp32, exact.", "bf16_to_f32",
            kind="cast"),
    _vector("cast_f32_to_bf16", "Cast", _UNARY, "Cast fp32 to bf16 bits with round-to-nearest-even (CAST_RINT).",
            "f32_to_bf16", kind="cast"),
    Primitive("ttrans", "TTRANS", "ttrans", ("dst", "dst_stride", "src", "src_stride", "rows", "cols", "tmp"),
              "TTRANS: ``dst[j*dst_stride + i] = src[i*src_stride + j]`` for ``i < rows, j < cols``.",
              "check_ttrans", "vector"),
    Primitive("set_value", "SetValue", "vector", ("dst", "index", "scalar"),
              "SetValue: ``tensor[index] = value`` on a UB tensor, from the scalar unit.", "check_set_value", "scalar"),
    _vector("vabs", "Abs", _UNARY, "Abs: ``dst = |src|`` (the sign bit cleared, a NaN's payload kept).", _abs,
            quiets=False),
    _vector("vexp", "Exp", _UNARY, "Exp: ``dst = e**src``, computed in float64 and rounded once to fp32 (within "
            "0.5 + 2**-26 ULP; a NaN quieted, payload kept; fp16: the fp32 result rounded).", "exp_element"),
    _vector("vln", "Ln", _UNARY, "Ln: ``dst = ln(src)``, computed in float64 and rounded once to fp32 (within "
            "0.5 + 2**-26 ULP; ln(x < 0) is the positive default NaN, ln(+-0) = -inf; fp16: the fp32 result "
            "rounded).", "ln_element"),
    # The vector API, part 1 (issue #51): element-wise ops of the count form.  Formulas: the asc-devkit
    # docs (gitcode cann/asc-devkit 9.1.0-beta.3, docs/api/c_api/vector_compute/asc_relu.md,
    # asc_leakyrelu.md); the choices they leave open: docs/kernels/primitives.md, "Bits".
    _vector("vmin", "Min", _BINARY, "Min: ``dst = min(a, b)``, NaN-propagating like ``numpy.minimum`` (the "
            "first NaN operand's bits).", "min_element", quiets=False),
    _vector("maxs", "Maxs", _WITH_SCALAR, "Maxs: ``dst = max(src, scalar)``, as Max.", "max_element",
            quiets=False),
    _vector("mins", "Mins", _WITH_SCALAR, "Mins: ``dst = min(src, scalar)``, as Min.", "min_element",
            quiets=False),
    _vector("subs", "Subs", _WITH_SCALAR, "Subs: ``dst = src - scalar``.", _sub),
    _vector("divs", "Divs", _WITH_SCALAR, "Divs: ``dst = src / scalar`` (IEEE division).", _div),
    _vector("relu", "Relu", _UNARY, "Relu: ``dst = src`` where ``src > 0``, else +0 (Relu(-0.0) = +0.0); a NaN "
            "passes with its bits.", "relu_element", quiets=False),
    _vector("vneg", "Neg", _UNARY, "Neg: ``dst = -src`` (the sign bit flipped, a NaN's payload kept).", _neg,
            quiets=False),
    _vector("reciprocal", "Reciprocal", _UNARY, "Reciprocal: ``dst = 1 / src`` (IEEE division, correctly "
            "rounded; Reciprocal(+-0) = +-inf).", _reciprocal),
    _vector("rsqrt", "Rsqrt", _UNARY, "Rsqrt: ``dst = 1 / sqrt(src)``, computed in float64 and rounded once to "
            "fp32 (within 0.5 + 2**-28 ULP; Rsqrt(+-0) = +-inf, Rsqrt(x < 0) the default NaN).", "rsqrt_element"),
    _vector("add_relu", "AddRelu", _BINARY, "AddRelu: ``dst = Relu(a + b)`` (one rounding).", "add_relu_element"),
    _vector("sub_relu", "SubRelu", _BINARY, "SubRelu: ``dst = Relu(a - b)`` (one rounding).", "sub_relu_element"),
    _vector("abs_sub", "AbsSub", _BINARY, "AbsSub: ``dst = |a - b|``.", _abs_sub),
    _vector("prelu", "Prelu", _BINARY, "Prelu: ``dst = a`` where ``a > 0``, else ``a * b``.", _leaky),
    _vector("leaky_relu", "LeakyRelu", _WITH_SCALAR, "LeakyRelu: ``dst = src`` where ``src > 0``, else "
            "``src * scalar``.", _leaky),
    _vector("vand", "And", _BINARY, "And: ``dst = a & b``, bitwise (int16 / uint16 tiles: their bits).", _and,
            kind="bits"),
    _vector("vor", "Or", _BINARY, "Or: ``dst = a | b``, bitwise (int16 / uint16 tiles: their bits).", _or,
            kind="bits"),
    _vector("vnot", "Not", _UNARY, "Not: ``dst = ~src``, bitwise (int16 / uint16 tiles: their bits).", _not,
            kind="bits"),
    _vector("ands", "Ands", _WITH_SCALAR, "Ands: ``dst = src & scalar``, bitwise (the scalar as the tile's "
            "integer type).", _and, kind="bits"),
    _vector("ors", "Ors", _WITH_SCALAR, "Ors: ``dst = src | scalar``, bitwise (the scalar as the tile's integer "
            "type).", _or, kind="bits"),
    _vector("shift_left", "ShiftLeft", _WITH_SCALAR, "ShiftLeft: ``dst = src << scalar`` in the tile's width, "
            "logical on unsigned tiles; a signed tile keeps its sign bit, the bit below it dropped (the device's "
            "arithmetic left shift: int16 0xAAAA << 1 = 0xD554); a count outside 0..width-1 shifts every bit out.",
            "shift_left_element", kind="bits"),
    _vector("shift_right", "ShiftRight", _WITH_SCALAR, "ShiftRight: ``dst = src >> scalar``, logical on unsigned "
            "tiles, arithmetic on signed ones (a count outside 0..width-1 gives 0, or -1 for a negative signed "
            "element).", "shift_right_element", kind="bits"),
    # Compare and select (issue #51), the count form.  One bit per element, element i at bit i % 8
    # of byte i // 8 (least significant first), as Select reads it.  Semantics: the asc-devkit
    # pages of Compare, Compares and Select (cannmirror/asc-devkit at 0da921b, docs/zh/api/SIMD-API/
    # 基础API/Memory矢量计算/比较与选择/) and its boundary-value tables; the modes' numbering:
    # kernel_utils_mode.h of the Ascend C headers.
    Primitive("compare", "Compare", "compare", ("dst", "src", "src1", "mode", "count"),
              "Compare: bit i of ``dst`` (uint8) = ``a[i] <mode> b[i]`` for a CMPMODE, over the whole 256-byte "
              "repeats of ``count`` elements; a NaN operand makes every mode false (NE too, as A2/A3 document), "
              "-0.0 == +0.0.",
              "check_with_mode", "vector", kind="compare"),
    Primitive("compare_scalar", "Compares", "compare", ("dst", "src", "scalar", "mode", "count"),
              "Compares (CompareScalar): bit i of ``dst`` = ``src[i] <mode> scalar``, the scalar as the tile's "
              "type; as Compare.", "check_with_mode", "vector", kind="compare"),
    Primitive("select", "Select", "compare", ("dst", "mask", "src", "src1", "mode", "count"),
              "Select: ``dst[i] = a[i]`` where the mask bit is 1, else ``b[i]`` (bits moved, a NaN's kept); "
              "VSEL_TENSOR_TENSOR_MODE: bit i; VSEL_CMPMASK_SPR: bit i mod (256 / element size).  Level-0 "
              "(``count`` a vector mask, then repeat_times, BinaryRepeatParams): lane l of repeat r reads bit "
              "r * lanes + l (SPR: bit l of the mask's first 256 / element size bits, through CMPMASK); a lane "
              "the mask leaves out keeps dst.",
              "check_with_mode", "vector", kind="select"),
    Primitive("select_scalar", "Select", "compare", ("dst", "mask", "src", "scalar", "mode", "count"),
              "Select, VSEL_TENSOR_SCALAR_MODE: ``dst[i] = src[i]`` where mask bit i is 1, else the scalar as "
              "the tile's type; level-0 as Select's (src1's strides unused).", "check_with_mode", "vector",
              kind="select"),
    Primitive("cast", "Cast", "convert", ("dst", "src", "mode", "count"),
              "Cast: ``dst[i] = src[i]`` converted to dst's type under a RoundMode, for the pairs and modes of "
              "CAST_MODES; an integer result saturates (a NaN gives 0), a float one follows IEEE overflow.",
              "check_with_mode", "vector", kind="cast"),
    Primitive("cast_bf16", "Cast", "convert", ("dst", "src", "mode", "count"),
              "Cast with bf16 tiles (uint16 bits): bf16 -> fp32 (exact), bf16 -> int32 and fp32 -> bf16 under a "
              "RoundMode of CAST_MODES, as ``cast``.", "check_with_mode", "vector", kind="cast"),
    Primitive("cast_int4", "Cast", "convert", ("dst", "src", "mode", "count"),
              "Cast between fp16 and int4b_t (a byte tile, element i in the low nibble of byte i // 2 when i is "
              "even): fp16 -> int4b_t rounded under a RoundMode and saturated to [-8, 7] (a NaN gives 0), int4b_t -> "
              "fp16 exact; the count form.", "check_with_mode", "vector", kind="cast"),
    # The DEQSCALE register and CastDequant (kernels/primitives/dequant.py): asc-devkit at 0da921b,
    # 类型转换/寄存器配置说明/SetDeqScale.md, 复合计算/CastDequant.md and the dav_c220 vconv implementation.
    Primitive("set_deq_scale", "SetDeqScale", "dequant", ("scale", "offset", "sign_mode", "sign_modes"),
              "SetDeqScale: the DEQSCALE register from an fp16 scale; from (scale, offset, sign_mode) as one word "
              "(fp32 scale bits 0-31, offset bits 37-45, sign mode bit 46); or 16 such words written into a uint64 "
              "tile ``(vdeq, scales, offsets, sign_modes)``, the register holding its address.", ""),
    Primitive("cast_dequant", "CastDequant", "dequant", ("dst", "src", "count"),
              "CastDequant: int16 -> int8 / uint8 ``sat(clamp(rint(src * scale), -256, 255) + offset)`` (the "
              "scale's low 13 fraction "
              "bits dropped; ``is_vec_deq``: element j of each block under word j of the register's tensor), 16 "
              "results in the high (``half_block``) or low half of each destination block; int32 -> fp16 "
              "``fp16(src * 2**-17 * scale * 2**17)``, saturated; fp32 products, ties to even (the 950's model).",
              "check_with_mode",
              "vector", kind="cast"),
    Primitive("add_deq_relu", "AddDeqRelu", "dequant", ("dst", "src", "src1", "count"),
              "AddDeqRelu: ``dst = Relu(fp16(a + b) under SetDeqScale(half))``, as c220 computes it: the int32 sum "
              "(wrapping) to fp32, times 2**-17, the scale and 2**17 (each rounded to fp32), to fp16, Max with +0.  "
              "The device computes in its sources: checked mode marks those bytes garbage.", "check_vector", "vector",
              kind="arith"),
    # The mask register of the level-0 forms (kernels/primitives/masks.py).
    Primitive("set_mask_norm", "SetMaskNorm", "mask", (), "SetMaskNorm: the mask register is a bit per lane "
              "(normal mode, the default).", ""),
    Primitive("set_mask_count", "SetMaskCount", "mask", (), "SetMaskCount: the mask register's low word is a count "
              "of elements over the repeats (counter mode).", ""),
    Primitive("set_vector_mask", "SetVectorMask", "mask", ("mask_high", "mask_low"),
              "SetVectorMask: the mask register's two words, high first; one argument ``n``: the first ``n`` "
              "lanes.", ""),
    Primitive("reset_mask", "ResetMask", "mask", (), "ResetMask: every bit of the mask register set.", ""),
    # The compound ops that read their destination (kernels/primitives/compound.py): count and level-0
    # forms.  Formulas: the asc-devkit pages (cannmirror/asc-devkit at 0da921b, docs/zh/api/SIMD-API/
    # 基础API/Memory矢量计算/复合计算/); fp16 rounds the product to fp16 before the add (two roundings,
    # as the pages' examples and NumPy's fp16 arithmetic give).
    Primitive("axpy", "Axpy", "compound", ("dst", "src", "scalar", "count"),
              "Axpy: ``dst = src * scalar + dst``, the product rounded to the tile's type first; an fp16 ``src`` "
              "into an fp32 ``dst`` (the scalar as fp16) adds the exact product.", "check_vector", "vector",
              kind="arith", reads_dst=True),
    Primitive("mul_add_dst", "MulAddDst", "compound", ("dst", "src", "src1", "count"),
              "MulAddDst: ``dst = a * b + dst``, as Axpy (fp16 ``a``, ``b`` into an fp32 ``dst`` too).", "check_vector",
              "vector", kind="arith", reads_dst=True),
    Primitive("fused_mul_add", "FusedMulAdd", "compound", ("dst", "src", "src1", "count"),
              "FusedMulAdd: ``dst = a * dst + b``, the product rounded to the tile's type first.", "check_vector",
              "vector", kind="arith", reads_dst=True),
    Primitive("mul_add_relu", "MulAddRelu", "compound", ("dst", "src", "src1", "count"),
              "MulAddRelu (FusedMulAddRelu): ``dst = Relu(a * dst + b)``, as FusedMulAdd.", "check_vector", "vector",
              kind="arith", reads_dst=True),
    # The compound ops whose result is converted to a narrower type (kernels/primitives/cast_compound.py):
    # count and level-0 forms; asc-devkit at 0da921b, 复合计算/AddReluCast.md, SubReluCast.md, MulCast.md
    # and impl/basic_api/dav_c220 (vaddreluconv, vsubreluconv, vmulconv).
    Primitive("add_relu_cast", "AddReluCast", "cast_compound", ("dst", "src", "src1", "count"),
              "AddReluCast: ``dst = Cast(Relu(a + b))``, fp16 -> int8, fp32 -> fp16, int16 -> int8: the sum in the "
              "source type, the cast as CAST_RINT (an integer saturates, a NaN gives 0).", "check_vector", "vector",
              kind="arith"),
    Primitive("sub_relu_cast", "SubReluCast", "cast_compound", ("dst", "src", "src1", "count"),
              "SubReluCast: ``dst = Cast(Relu(a - b))``, as AddReluCast.", "check_vector", "vector", kind="arith"),
    Primitive("mul_cast", "MulCast", "cast_compound", ("dst", "src", "src1", "count"),
              "MulCast: ``dst = Cast(a * b)``, fp16 -> int8 or uint8: the product rounded to fp16, the cast as "
              "CAST_RINT, saturated (a NaN gives 0).", "check_vector", "vector", kind="arith"),
    # CreateVecIndex (kernels/primitives/index.py): the c220 implementation's recurrence
    # (impl/basic_api/dav_c220/kernel_operator_vec_createvecindex_impl.h, asc-devkit at 0da921b).
    Primitive("create_vec_index", "CreateVecIndex", "index", ("dst", "scalar", "count"),
              "CreateVecIndex: ``dst[i] = first + i`` as the device computes it: the first block from the scalar "
              "unit, each later block the one before plus its length in the tile's type (fp16 from 16384 on: the "
              "chain's roundings, not ``first + i`` rounded once).  Level-0 (``count`` a mask, then repeat_times, "
              "dst_block_stride, dst_repeat_stride): the first repeat as the count form over a continuous mask's "
              "lanes, or ``first + lane`` at each lane of mask words; each later repeat the one before plus a "
              "repeat's length under the mask.", "check_vector", "vector", kind="fill"),
    # The compare-mask register (kernels/primitives/cmpmask.py): asc-devkit at 0da921b, 比较与选择/.
    Primitive("set_cmp_mask", "SetCmpMask", "cmpmask", ("src",),
              "SetCmpMask: the 128-bit compare-mask register from the first 16 bytes of ``src``, low word first.",
              "check_cmpmask_io", "scalar"),
    Primitive("get_cmp_mask", "GetCmpMask", "cmpmask", ("dst",),
              "GetCmpMask: the compare-mask register into the first 16 bytes of ``dst``, low word first.",
              "check_cmpmask_io", "scalar"),
    Primitive("compare_register", "Compare", "cmpmask", ("src", "src1", "mode", "lane_mask", "params", "is_set_mask"),
              "Compare, the result in the register: bit k of CMPMASK = ``a <mode> b`` at lane k of one repeat; a "
              "lane the vector mask leaves out keeps its bit.", "check_compare_register", "vector"),
    Primitive("select_register", "Select", "cmpmask", ("dst", "src", "src1", "repeat_times", "params"),
              "Select, VSEL_CMPMASK_SPR without a mask tensor: lane k of each repeat takes ``a`` where bit k of "
              "CMPMASK is 1, else ``b``, under the vector mask register.", "check_repeat", "vector", kind="select"),
    # The vector API, part 2 (issue #52): broadcast (kernels/primitives/broadcast.py).
    Primitive("brcb", "Brcb", "broadcast", ("dst", "src", "repeat_times", "params"),
              "Brcb: repeat i fills destination block ``i * dst_rep_stride + j * dst_blk_stride`` (32-byte blocks; "
              "a block stride of 0 as 1) with ``src[8i + j]``, j < 8; bits moved; leaves every mask lane set.",
              "check_brcb", "vector"),
    # Reductions (issue #52; kernels/primitives/reduce.py): asc-devkit at 0da921b, 归约计算/ and the c220
    # reduce implementation.  A repeat's lanes as the level-0 forms'; sums by a binary tree.
    Primitive("whole_reduce_sum", "WholeReduceSum", "reduce",
              ("dst", "src", "mask", "repeat_times", "dst_rep_stride", "src_blk_stride", "src_rep_stride"),
              "WholeReduceSum (ReduceRepeat<SUM>): each repeat's lanes summed by a binary tree (each addition "
              "rounded to the tile's type), one result a repeat at ``dst_rep_stride`` elements.", "check_reduce",
              "vector"),
    Primitive("whole_reduce_max", "WholeReduceMax", "reduce",
              ("dst", "src", "mask", "repeat_times", "dst_rep_stride", "src_blk_stride", "src_rep_stride", "order"),
              "WholeReduceMax (ReduceRepeat<MAX>): each repeat's largest lane and its lane index (the smallest on a "
              "tie; a NaN wins, the first one) in the ReduceOrder's layout, the index as the tile's bits.",
              "check_reduce", "vector"),
    Primitive("whole_reduce_min", "WholeReduceMin", "reduce",
              ("dst", "src", "mask", "repeat_times", "dst_rep_stride", "src_blk_stride", "src_rep_stride", "order"),
              "WholeReduceMin (ReduceRepeat<MIN>): as WholeReduceMax, the smallest.", "check_reduce", "vector"),
    Primitive("repeat_reduce_sum", "RepeatReduceSum", "reduce",
              ("dst", "src", "repeat_times", "elems_in_one_repeat", "dst_blk_stride", "src_blk_stride",
               "dst_rep_stride", "src_rep_stride"),
              "RepeatReduceSum: WholeReduceSum of the first ``elems_in_one_repeat`` lanes of each repeat (the "
              "destination block stride unused, as on c220).", "check_reduce", "vector"),
    Primitive("block_reduce_sum", "BlockReduceSum", "reduce",
              ("dst", "src", "repeat_times", "mask", "dst_rep_stride", "src_blk_stride", "src_rep_stride"),
              "BlockReduceSum (ReduceDataBlock<SUM>): each 32-byte block's lanes summed by a binary tree, 8 results "
              "a repeat (``dst_rep_stride`` in 8 elements); a block with no lane set writes nothing.",
              "check_reduce", "vector"),
    Primitive("block_reduce_max", "BlockReduceMax", "reduce",
              ("dst", "src", "repeat_times", "mask", "dst_rep_stride", "src_blk_stride", "src_rep_stride"),
              "BlockReduceMax (ReduceDataBlock<MAX>): each block's largest lane, as BlockReduceSum.", "check_reduce",
              "vector"),
    Primitive("block_reduce_min", "BlockReduceMin", "reduce",
              ("dst", "src", "repeat_times", "mask", "dst_rep_stride", "src_blk_stride", "src_rep_stride"),
              "BlockReduceMin (ReduceDataBlock<MIN>): each block's smallest lane, as BlockReduceSum.", "check_reduce",
              "vector"),
    Primitive("pair_reduce_sum", "PairReduceSum", "reduce",
              ("dst", "src", "repeat_times", "mask", "dst_rep_stride", "src_blk_stride", "src_rep_stride"),
              "PairReduceSum (ReducePairElem<SUM>): lanes 2i and 2i + 1 summed, 128 bytes of results a repeat "
              "(``dst_rep_stride`` in 128 bytes); a lane left out is absent.", "check_reduce", "vector"),
    Primitive("reduce_sum", "ReduceSum", "reduce", ("dst", "src", "tmp", "count"),
              "ReduceSum: ``dst[0]`` = the sum of ``src[:count]``: each repeat's binary tree, the repeats' sums added "
              "in order (A2/A3's count form); level-0 (mask, repeat_times, src_rep_stride): the repeats' sums by "
              "trees of a repeat's lanes.", "check_reduce", "vector"),
    Primitive("reduce_max", "ReduceMax", "reduce", ("dst", "src", "tmp", "count"),
              "ReduceMax: ``dst[0]`` = the largest of ``src[:count]`` (a NaN wins), ``cal_index``: ``dst[1]`` its "
              "first index as the tile's bits; level-0 as ReduceSum's (the index: the element's offset in src).",
              "check_reduce", "vector"),
    Primitive("reduce_min", "ReduceMin", "reduce", ("dst", "src", "tmp", "count"),
              "ReduceMin: as ReduceMax, the smallest.", "check_reduce", "vector"),
    Primitive("get_reduce_repeat_sum_spr", "GetReduceRepeatSumSpr", "reduce", ("dtype",),
              "GetReduceRepeatSumSpr (GetAccVal): the ACC_VAL register, the last count-form ReduceSum's sum; as "
              "``dtype`` (np.float32, np.float16 as its uint16 bits), the raw int64 without one.", ""),
    Primitive("get_reduce_repeat_max_min_spr", "GetReduceRepeatMaxMinSpr", "reduce", ("dtype",),
              "GetReduceRepeatMaxMinSpr: (value, index) of the MAX_MIN_CNT register, the last WholeReduceMax / Min's "
              "(or ReduceMax / Min's) extreme over its repeats and its first index (uint32); value as ``dtype``.", ""),
    # GatherMask (kernels/primitives/gather_mask.py): asc-devkit at 0da921b, GatherMask and its c220 call.
    Primitive("gather_mask", "GatherMask", "gather_mask",
              ("dst", "src", "src1", "reduce_mode", "mask", "params"),
              "GatherMask: the source elements whose pattern bit is 1 (a built-in pattern 1..7 or a bit tensor), "
              "packed from ``dst[0]`` across the repeats; returns rsvdCnt, the count kept; leaves normal mode.",
              "check_gather_mask", "vector"),
    Primitive("gatherb", "Gatherb", "gather", ("dst", "src", "src1", "repeat_times", "params"),
              "Gatherb: repeat i copies the 32 bytes at byte ``offsets[8i + j]`` of ``src`` to destination block "
              "``i * dst_rep_stride + j * dst_blk_stride`` (a block stride of 0 as 1); leaves every mask lane set.",
              "check_gatherb", "vector"),
    # DMA atomics (kernels/primitives/atomic.py): asc-devkit at 0da921b, 原子操作/ and the c220 set_atomic calls.
    Primitive("set_atomic_add", "SetAtomicAdd", "atomic", ("dtype",),
              "SetAtomicAdd<T>: the lane's copies into GM add each element to GM's in type T (np.float32, "
              "np.float16, \"bfloat16\", np.int16, np.int32, np.int8), until DisableDmaAtomic.", ""),
    Primitive("set_atomic_max", "SetAtomicMax", "atomic", ("dtype",),
              "SetAtomicMax<T>: copies into GM keep the larger of each element and GM's.", ""),
    Primitive("set_atomic_min", "SetAtomicMin", "atomic", ("dtype",),
              "SetAtomicMin<T>: copies into GM keep the smaller of each element and GM's.", ""),
    Primitive("set_atomic_type", "SetAtomicType", "atomic", ("dtype",),
              "SetAtomicType<T>: the atomic's type, its operation kept (an add when none was set: the "
              "device register's operation field rests at the sum).", ""),
    Primitive("disable_dma_atomic", "DisableDmaAtomic", "atomic", (),
              "DisableDmaAtomic (SetAtomicNone): copies into GM overwrite again.", ""),
    Primitive("transpose", "Transpose", "layout", ("dst", "src", "tmp", "params"),
              "Transpose: a 16x16 block of 2-byte elements, ``dst = src.T``; with a scratch tensor and "
              "TransposeParamsExt, [N, C, H, W] <-> [N, H, W, C] (bits moved; the scratch left garbage).",
              "check_transpose", "vector"),
    Primitive("get_value", "GetValue", "scalar", ("src", "index"),
              "GetValue: ``tensor[index]`` of a UB tensor, read by the scalar unit (its stored bits' type: a uint16 "
              "tile gives fp16 bits).", "check_get_value", "scalar"),
    Primitive("set_pad_value", "SetPadValue", "dma", ("scalar",),
              "SetPadValue: the value a padded DataCopyPad with ``is_pad`` False fills its pads with.", ""),
    Primitive("init_global_memory", "InitGlobalMemory", "atomic", ("dst", "count", "scalar"),
              "InitGlobalMemory (Fill): the first ``count`` elements of a GM tensor set to the value (uint16: fp16), "
              "written as a copy is (under a DMA atomic: combined); traced as one event.", "check_fill", "scalar"),
    Primitive("copy", "Copy", "layout", ("dst", "src", "mask", "repeat_times", "params"),
              "Copy (vcopy): UB -> UB, each lane the mask sets copied at CopyRepeatParams' block strides and repeat "
              "sizes (in counter mode, the count is each repeat's lanes); a lane left out leaves dst.",
              "check_copy", "vector"),
    Primitive("trans_data_to_5hd", "TransDataTo5HD", "layout", ("dst", "src", "params"),
              "TransDataTo5HD (vnchwconv): per repeat, 16 source blocks of 32 bytes transposed into 16 destination "
              "blocks (2-byte: 16 x 16; 4-byte: 16 x 8 into two blocks a row; 1-byte: the halves the params name).",
              "check_5hd_call", "vector"),
    # Sort (kernels/primitives/sort.py): asc-devkit at 0da921b, 排序组合（ISASI）/, c220's vbitsort / vmrgsort4.
    Primitive("sort32", "Sort32", "sort", ("dst", "src", "src1", "repeat_times"),
              "Sort32: each repeat's 32 scores with their uint32 indices into 8-byte (score, index) records, the "
              "highest first (IEEE total order; ties in input order).", "check_sort32", "vector"),
    Primitive("mrg_sort", "MrgSort", "sort", ("dst", "src", "params"),
              "MrgSort: 2 to 4 sorted record queues (MrgSortSrcList, MrgSort4Info) merged, the highest first, a tie "
              "to the lower queue; with suspension, stops after the first queue to run out.", "check_mrg_sort",
              "vector"),
    Primitive("get_mrg_sort_result", "GetMrgSortResult", "sort", (),
              "GetMrgSortResult: the records the last MrgSort took from each of its four queues.", ""),
    # Ascend C's programming model (kernels/primitives/tpipe.py; its rules: checked/pipeline.py).
    Primitive("init_buffer", "InitBuffer", "pipe", ("owner", "handle", "num", "length"),
              "InitBuffer: bind ``num`` buffers of ``length`` bytes to a queue (one to a TBuf) from the TPipe's UB.",
              "check_pipe_call"),
    Primitive("alloc_tensor", "AllocTensor", "pipe", ("que", "dtype"),
              "AllocTensor: the queue's next free buffer as a tensor.", "check_pipe_call"),
    Primitive("en_que", "EnQue", "pipe", ("que", "tensor"),
              "EnQue: the tensor joins its queue for the stage that DeQues it.", "check_pipe_call"),
    Primitive("de_que", "DeQue", "pipe", ("que", "dtype"),
              "DeQue: the queue's oldest enqueued tensor.", "check_pipe_call"),
    Primitive("free_tensor", "FreeTensor", "pipe", ("que", "tensor"),
              "FreeTensor: the tensor's buffer back to its queue.", "check_pipe_call"),
    Primitive("tbuf_get", "Get", "pipe", ("buf", "dtype", "count"),
              "Get: a TBuf's buffer as a tensor.", "check_pipe_call"),
    Primitive("set_flag", "SetFlag", "pipe", ("event", "event_id"),
              "SetFlag: the event's destination pipe may go on once its source pipe's work so far is done.",
              "check_pipe_call"),
    Primitive("wait_flag", "WaitFlag", "pipe", ("event", "event_id"),
              "WaitFlag: the event's destination pipe waits for the matching SetFlag.", ""),
    Primitive("pipe_barrier", "PipeBarrier", "pipe", ("pipe",),
              "PipeBarrier: PIPE_ALL orders every pipe after everything before it.", ""),
    Primitive("set_global_buffer", "SetGlobalBuffer", "pipe", ("gm", "dtype", "offset", "count"),
              "SetGlobalBuffer: ``count`` elements of a GM argument from ``offset``, typed.", "check_pipe_call"),
)}

VECTOR_OPS = {n: p for n, p in PRIMITIVES.items() if p.family == "vector" and p.kind}
COMPARE_OPS = {n: p for n, p in PRIMITIVES.items() if p.family == "compare"}
COMPOUND_OPS = {n: p for n, p in PRIMITIVES.items() if p.family == "compound"}
CAST_COMPOUND_OPS = {n: p for n, p in PRIMITIVES.items() if p.family == "cast_compound"}
