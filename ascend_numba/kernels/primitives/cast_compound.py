"""AddReluCast, SubReluCast and MulCast: an element-wise op whose result is converted to a narrower
type (family ``cast_compound`` of :mod:`ascend_numba.host.primitives`; references:
:mod:`ascend_numba.host.references.cast_compound`), in the count form ``(ctx, dst, a, b, count)``
and the level-0 form ``(..., mask, repeat_times, BinaryRepeatParams, is_set_mask=True)``.

The pairs are the A2/A3 tables of the pages: AddReluCast and SubReluCast fp16 -> int8, fp32 -> fp16
and int16 -> int8; MulCast fp16 -> int8 and fp16 -> uint8 (fp16 is a uint16 tile).  Other pairs do
not compile.  The op runs in the source type, as Add, Sub, Mul and Relu give it (fp16 rounded to
fp16, int16 wrapping), then the result is converted as Cast's CAST_RINT converts it: to nearest,
ties to even; an integer destination saturates and takes 0 for a NaN; fp16 overflows to infinity
and a NaN is the default NaN.  The pages name neither the rounding nor where the op rounds: the
conversion is CAST_NONE's rule (RINT where inexact), the twin's choice.

A level-0 repeat is 256 bytes of the wider type (128 lanes from fp16 or int16, 64 from fp32), so
the destination's repeat spans half as many blocks; the mask's continuous form counts those lanes,
as the device sets it for the wider type.

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/复合计算/``
(AddReluCast.md, SubReluCast.md, MulCast.md), ``impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h``
(vaddreluconv, vsubreluconv) and ``kernel_operator_vec_mulcast_impl.h`` (vmulconv).  They do not fuse
into a vector program.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.rules import PRIMITIVE
from ...host.primitives import CAST_COMPOUND_OPS
from ...host.trace import EVENT
from ..._numba_compat.extending import as_dtype, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f32_to_f16
from ..lane import _address
from .compound import round_to, types_check
from .elements import add_relu_element, canonical_nan, sub_relu_element
from .masks import REPEAT_BYTES, binary_params, call_mask, check_repeat, count_form_done, mask_length, repeats_of
from .preload import advance_preload
from .vector import (_bits_store, _trace_repeat, _trace_vector, _vload_operand, binary_strides, check_vector, count_of,
                     declared, repeat_loop, saturated, two_forms)

__all__ = [*CAST_COMPOUND_OPS]

# (dst, src) tile types each op takes (A2/A3).
_PAIRS = {
    "add_relu_cast": ((types.int8, types.uint16), (types.uint16, types.float32), (types.int8, types.int16)),
    "mul_cast": ((types.int8, types.uint16), (types.uint8, types.uint16)),
}
_PAIRS["sub_relu_cast"] = _PAIRS["add_relu_cast"]


def _narrowed(dst, value):
    """``value`` converted to ``dst``'s type as CAST_RINT converts it."""
    raise NotImplementedError  # compiled only


@overload(_narrowed, jit_options=OVERLOAD_OPTIONS)
def _ov_narrowed(dst, value):
    if dst.dtype == types.uint16:  # fp32 -> fp16: IEEE overflow; an arithmetic NaN is the default NaN
        return lambda dst, value: f32_to_f16(canonical_nan(value))
    dtype = dst.dtype
    info = np.iinfo(as_dtype(dtype))
    lo, hi = np.int64(info.min), np.int64(info.max)
    if isinstance(value, types.Float):
        return lambda dst, value: dtype(saturated(np.rint(value), lo, hi))
    return lambda dst, value: dtype(min(max(np.int64(value), lo), hi))


def _pair_check(name):
    def pair_ok(dst, a):
        raise NotImplementedError  # compiled only

    lead = f"{CAST_COMPOUND_OPS[name].device} converts (dst, src) tiles of types"
    overload(pair_ok, jit_options=OVERLOAD_OPTIONS)(types_check(_PAIRS[name], lead))
    return pair_ok


@jit(inline="always")
def _add_relu_cast(dst, src, x, y):
    return _narrowed(dst, round_to(src, add_relu_element(x, y)))


@jit(inline="always")
def _sub_relu_cast(dst, src, x, y):
    return _narrowed(dst, round_to(src, sub_relu_element(x, y)))


@jit(inline="always")
def _mul_cast(dst, src, x, y):
    return _narrowed(dst, round_to(src, x * y))


@jit(inline="always")
def _apply(op, load, a, i, b, j, scalar, dst, k, lane):
    return op(dst, a, load(a, i), load(b, j))


_ELEMENTS = {"add_relu_cast": _add_relu_cast, "sub_relu_cast": _sub_relu_cast, "mul_cast": _mul_cast}


def _define(name: str):
    spec = CAST_COMPOUND_OPS[name]
    prim, code, op, pair_ok = PRIMITIVE[spec.device], EVENT[name], _ELEMENTS[name], _pair_check(name)
    load = _vload_operand  # arithmetic quiets a NaN anyway

    def count_form(ctx, dst, a, b, count):
        pair_ok(dst, a)
        pair_ok(dst, b)
        if not check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, _address(a), a.nbytes,
                            a.itemsize, _address(b), b.nbytes, b.itemsize):
            return
        _trace_vector(ctx, code, count, dst, a, b)
        advance_preload(ctx)
        for i in range(min(count, dst.size, a.size, b.size)):
            dst[i] = op(dst, a, load(a, i), load(b, i))
        count_form_done(ctx)

    def level_0(ctx, dst, a, b, mask, repeat_times, params, is_set_mask):
        pair_ok(dst, a)
        pair_ok(dst, b)
        binary_params(params)
        counter, high, low = call_mask(ctx, mask, is_set_mask)
        if not check_repeat(ctx, prim, repeat_times, counter, high, low, mask_length(mask) if is_set_mask else 0, 0xFF,
                            _address(dst), dst.nbytes, dst.itemsize, params[0], params[3], _address(a), a.nbytes,
                            a.itemsize, params[1], params[4], _address(b), b.nbytes, b.itemsize, params[2], params[5],
                            False):
            return
        d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = binary_strides(params)
        nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // max(dst.itemsize, a.itemsize))
        _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, b, b_blk, b_rep)
        advance_preload(ctx)
        repeat_loop(dst, a, b, 0, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep, _apply, op, load,
                    _bits_store)

    count_form, level_0 = two_forms(name, count_form, level_0)

    def primitive(ctx, dst, a, b, count, repeat_times=None, params=None, is_set_mask=True):
        if repeat_times is None:
            count_form(ctx, dst, a, b, count_of(count))
        else:
            level_0(ctx, dst, a, b, count, repeat_times, params, is_set_mask)
    return declared(primitive, spec, __name__)


globals().update({name: _define(name) for name in CAST_COMPOUND_OPS})
