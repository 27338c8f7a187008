"""The scalar unit: GetValue (a UB tensor's element, read), and the helpers kernels call between
vector ops (Ascend C's free functions, no core state): GetBitCount, CountLeadingZero,
CountBitsCntSameAsSignBit, GetSFFValue, CeilDivision and the scalar Cast (:func:`scalar_cast`).

Each takes and returns integers as the device's ``int64_t`` / ``uint64_t``: a negative argument of
a ``uint64_t`` parameter is its two's-complement bits.  Semantics: cannmirror/asc-devkit at
0da921b, ``include/basic_api/kernel_operator_scalar_intf.h`` and the pages under
``docs/zh/api/SIMD-API/基础API/标量计算/`` (their examples are the tests' cases).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.pipeline import set_pipe
from ...checked.rules import OPERAND_SRC, PRIMITIVE
from ...checked.ub_shadow import is_local_operand, ub_range_ok, ub_read_ok
from ...host.primitives import PRIMITIVES, RoundMode
from ...host.trace import DIR_SCALAR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import bf16_to_f32, f32_to_bf16, f32_to_f16
from ..lane import _address
from ..pipe_table import PIPE_S
from .context import address, trace_event, tracing
from .convert import CEIL, FLOOR, ODD, RINT, ROUND, _to_float, _to_integer
from .vector import declared

__all__ = ["get_value", "get_bit_count", "count_leading_zero", "count_bits_cnt_same_as_sign_bit", "get_sff_value",
           "ceil_division", "scalar_cast"]


_GET, _GET_CODE = PRIMITIVE["GetValue"], EVENT["get_value"]


@checked_rule
@jit
def check_get_value(ctx, addr, nbytes, index, itemsize):
    """GetValue on a UB tensor: the element inside it, written before (a read of the scalar unit's)."""
    enter(ctx, _GET)
    set_pipe(ctx, PIPE_S)
    return (is_local_operand(ctx, _GET, OPERAND_SRC, addr)
            and ub_range_ok(ctx, _GET, OPERAND_SRC, addr, nbytes, index * itemsize, itemsize)
            and ub_read_ok(ctx, _GET, OPERAND_SRC, addr, index * itemsize, itemsize))


def _get_value(ctx, src, index):
    # An index outside the tensor (checked mode reports it) reads its nearest element: never past it.
    if check_get_value(ctx, _address(src), src.nbytes, index, src.itemsize) and tracing(ctx):
        at = address(src) + index * src.itemsize
        trace_event(ctx, _GET_CODE, DIR_SCALAR, src.itemsize, 1, 0, 0, at, at + src.itemsize, 0, 0)
    return src[min(max(index, 0), src.size - 1)]


get_value = declared(_get_value, PRIMITIVES["get_value"], __name__)


@jit(always_inline=True)
def _bit(x, i):
    return (np.int64(x) >> i) & 1


@jit(python=True)
def get_bit_count(x, bit=1):
    """GetBitCount<bit>: how many of ``x``'s 64 bits equal ``bit`` (1 or 0)."""
    ones = 0
    for i in range(64):
        ones += _bit(x, i)
    return np.int64(ones if bit == 1 else 64 - ones)


@jit(python=True)
def count_leading_zero(x):
    """CountLeadingZero: the zero bits above ``x``'s highest one bit (64 for 0)."""
    for i in range(63, -1, -1):
        if _bit(x, i) == 1:
            return np.int64(63 - i)
    return np.int64(64)


@jit(python=True)
def count_bits_cnt_same_as_sign_bit(x):
    """CountBitsCntSameAsSignBit: the bits below the sign bit equal to it, counted down from bit
    62 to the first that differs; -1 for 0 and -1 (every bit the sign's), as the page says."""
    sign = _bit(x, 63)
    n = 0
    for i in range(62, -1, -1):
        if _bit(x, i) != sign:
            return np.int64(n)
        n += 1
    return np.int64(-1)


@jit(python=True)
def get_sff_value(x, bit=1):
    """GetSFFValue<bit>: the index (0: least significant) of ``x``'s first bit equal to ``bit``
    from the bottom; -1 when there is none."""
    for i in range(64):
        if _bit(x, i) == bit:
            return np.int64(i)
    return np.int64(-1)


@jit(python=True)
def ceil_division(a, b):
    """CeilDivision: ``(a + b - 1) / b``, 0 when ``b`` is 0 (the page's inputs: not negative)."""
    if b == 0:
        return np.int64(0)
    return np.int64((np.int64(a) + b - 1) // b)


# ---- the scalar Cast ---------------------------------------------------------------------------------------

def scalar_cast(value, to, mode=RoundMode.CAST_RINT):
    """The scalar unit's Cast on A2/A3, the device's four forms: ``scalar_cast(x, "bfloat16")``
    (fp32 to bf16 bits, CAST_RINT), ``scalar_cast(x, np.float16, RoundMode.CAST_ODD)`` (fp32 to fp16
    bits, the one mode the page gives), ``scalar_cast(x, np.int32, mode)`` (CAST_ROUND, CEIL, FLOOR
    or RINT; saturated, a NaN 0) and ``scalar_cast(bits, np.float32)`` (bf16 bits to fp32, exact).
    The roundings are Cast's (:mod:`.convert`); another mode is a ValueError."""
    raise NotImplementedError  # compiled only


@overload(scalar_cast, jit_options=OVERLOAD_OPTIONS)
def _ov_scalar_cast(value, to, mode=RoundMode.CAST_RINT):
    name = str(to.instance_type) if isinstance(to, types.NumberClass) else getattr(to, "literal_value", "")
    if name == "bfloat16" or isinstance(to, types.UnicodeType):  # (a name interpret mode does not see literally)
        def to_bf16(value, to, mode=RoundMode.CAST_RINT):
            if to != "bfloat16":
                raise ValueError('the scalar Cast names one type: "bfloat16"')
            return np.uint16(f32_to_bf16(np.float32(value)))
        return to_bf16
    if name == "float32":
        return lambda value, to, mode=RoundMode.CAST_RINT: bf16_to_f32(np.uint16(value))
    if name == "float16":
        def to_f16(value, to, mode=RoundMode.CAST_RINT):
            x = np.float32(value)
            if np.int64(mode) != ODD:
                raise ValueError("the scalar Cast to half takes RoundMode.CAST_ODD")
            if x != x or math.isinf(x):
                return np.uint16(f32_to_f16(x))
            return np.uint16(f32_to_f16(np.float32(_to_float(np.float64(x), 10, -14, 15, ODD))))
        return to_f16
    if name == "int32":
        def to_i32(value, to, mode=RoundMode.CAST_RINT):
            m = np.int64(mode)
            if not (m == ROUND or m == CEIL or m == FLOOR or m == RINT):
                raise ValueError("the scalar Cast to int32 takes RoundMode.CAST_ROUND, CEIL, FLOOR or RINT")
            return np.int32(_to_integer(np.float64(np.float32(value)), np.int64(-2**31), np.int64(2**31 - 1), m))
        return to_i32
    raise TypingError(f'the scalar Cast converts to "bfloat16", np.float16, np.int32 or (from bf16) np.float32; '
                      f'got {to}')
