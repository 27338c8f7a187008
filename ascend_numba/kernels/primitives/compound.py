"""The compound vector ops that read their destination: Axpy, MulAddDst, FusedMulAdd and
MulAddRelu (family ``compound`` of :mod:`ascend_numba.host.primitives`; references:
:mod:`ascend_numba.host.references.compound`), each in the count form ``(ctx, dst, a, b or
scalar, count)`` and the level-0 form ``(..., mask, repeat_times, params, is_set_mask=True)`` of
the vector ops (Axpy: UnaryRepeatParams, the others BinaryRepeatParams; see :mod:`.masks`).

fp16 tiles (uint16) round the product to fp16 before the add, then the sum: two roundings, as
NumPy's fp16 arithmetic gives and the asc-devkit pages' examples show (their outputs match two
roundings and not one; the pages do not say).  An fp32 tile rounds each step in fp32 (no fused
multiply-add).  Axpy and MulAddDst also take fp16 sources into an fp32 ``dst`` (Axpy's scalar as
fp16): the product of two fp16 values is exact in fp32, so one rounding; a level-0 repeat of that
form is 64 lanes, its sources reading 4 blocks.  Other pairs of types do not compile.  A NaN result
is the default NaN (the NaN policy); MulAddRelu's Relu passes it.

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/复合计算/``
(Axpy, MulAddDst, FusedMulAdd, MulAddRelu) and ``impl/basic_api/dav_c220/`` (vaxpy, vmla, vmadd,
vmaddrelu).  They do not fuse into a vector program.
"""

from __future__ import annotations

from numba import types

from ...checked.rules import PRIMITIVE
from ...host.primitives import COMPOUND_OPS
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f16_to_f32, f32_to_f16
from ..lane import _address
from .elements import canonical_nan, relu_element
from .masks import (REPEAT_BYTES, binary_params, call_mask, check_repeat, count_form_done, mask_length, repeats_of,
                    unary_params)
from .preload import advance_preload
from .vector import (_trace_repeat, _trace_vector, _vload_operand, _vscalar, _vstore, binary_strides, check_vector,
                     count_of, declared, repeat_loop, two_forms, unary_strides)

__all__ = [*COMPOUND_OPS]


# ---- the elements: the product rounded to dst's type, then the sum ------------------------------------

def round_to(dst, value):
    """``value`` (fp32) rounded to ``dst``'s element type: an fp16 (uint16) tile's nearest fp16."""
    raise NotImplementedError  # compiled only


@overload(round_to, jit_options=OVERLOAD_OPTIONS)
def _ov_round_to(dst, value):
    if dst.dtype == types.uint16:
        return lambda dst, value: f16_to_f32(f32_to_f16(value))
    return lambda dst, value: value


def _one_type(dst, a):
    """The tiles have one type (fp32, or fp16 as uint16); else a compile error."""
    raise NotImplementedError  # compiled only


def _one_type_or_wider(dst, a):
    """As :func:`_one_type`, or fp16 sources into an fp32 dst (Axpy, MulAddDst)."""
    raise NotImplementedError  # compiled only


def types_check(allowed, lead="this compound op takes tiles of (dst, src) types"):
    """The overload of a (dst, src) type check: a compile error, ``lead`` then the ``allowed`` pairs,
    for any other pair."""
    def generator(dst, a):
        if (dst.dtype, a.dtype) not in allowed:
            raise TypingError(f"{lead} {', '.join(map(str, allowed))} (fp16 is uint16); got {(dst.dtype, a.dtype)}")
        return lambda dst, a: None
    return generator


_SAME = [(types.float32, types.float32), (types.uint16, types.uint16)]
overload(_one_type, jit_options=OVERLOAD_OPTIONS)(types_check(_SAME))
overload(_one_type_or_wider, jit_options=OVERLOAD_OPTIONS)(types_check([*_SAME, (types.float32, types.uint16)]))


@jit(inline="always")
def _axpy(dst, x, s, d):
    return canonical_nan(round_to(dst, x * s) + d)


@jit(inline="always")
def _mul_add_dst(dst, x, y, d):
    return canonical_nan(round_to(dst, x * y) + d)


@jit(inline="always")
def _fused_mul_add(dst, x, y, d):
    return canonical_nan(round_to(dst, x * d) + y)


@jit(inline="always")
def _mul_add_relu(dst, x, y, d):
    return relu_element(canonical_nan(round_to(dst, x * d) + y))


@jit(inline="always")
def _apply_with_scalar(op, load, a, i, b, j, scalar, dst, k, lane):
    return op(dst, load(a, i), scalar, load(dst, k))


@jit(inline="always")
def _apply_with_tile(op, load, a, i, b, j, scalar, dst, k, lane):
    return op(dst, load(a, i), load(b, j), load(dst, k))


# ---- the primitives ------------------------------------------------------------------------------

_ELEMENTS = {"axpy": _axpy, "mul_add_dst": _mul_add_dst, "fused_mul_add": _fused_mul_add,
             "mul_add_relu": _mul_add_relu}
_MIXED = ("axpy", "mul_add_dst")  # fp16 sources into an fp32 dst too


def _define(name: str):
    spec = COMPOUND_OPS[name]
    prim, code, op = PRIMITIVE[spec.device], EVENT[name], _ELEMENTS[name]
    types_ok = _one_type_or_wider if name in _MIXED else _one_type
    load = _vload_operand  # arithmetic quiets a NaN anyway
    if spec.scalars:
        def count_form(ctx, dst, src, scalar, count):
            types_ok(dst, src)
            # dst is read too: checked as a second source, then src with dst (the garbage of all three).
            if not check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, _address(src), src.nbytes,
                                src.itemsize, _address(dst), dst.nbytes, dst.itemsize):
                return
            _trace_vector(ctx, code, count, dst, src, dst)
            advance_preload(ctx)
            value = _vscalar(src, scalar)
            for i in range(min(count, dst.size, src.size)):
                _vstore(dst, i, op(dst, load(src, i), value, load(dst, i)))
            count_form_done(ctx)

        def level_0(ctx, dst, src, scalar, mask, repeat_times, params, is_set_mask):
            types_ok(dst, src)
            unary_params(params)
            counter, high, low = call_mask(ctx, mask, is_set_mask)
            if not check_repeat(ctx, prim, repeat_times, counter, high, low, mask_length(mask) if is_set_mask else 0,
                                0xFFFF, _address(dst), dst.nbytes, dst.itemsize, params[0], params[2], _address(src),
                                src.nbytes, src.itemsize, params[1], params[3], _address(dst), dst.nbytes,
                                dst.itemsize, params[0], params[2], False):
                return
            d_blk, a_blk, d_rep, a_rep = unary_strides(params)
            nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
            _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, src, a_blk, a_rep, dst, d_blk, d_rep)
            advance_preload(ctx)
            repeat_loop(dst, src, src, _vscalar(src, scalar), nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep,
                        a_blk, a_rep, _apply_with_scalar, op, load, _vstore)

        count_form, level_0 = two_forms(name, count_form, level_0)

        def primitive(ctx, dst, src, scalar, count, repeat_times=None, params=None, is_set_mask=True):
            if repeat_times is None:
                count_form(ctx, dst, src, scalar, count_of(count))
            else:
                level_0(ctx, dst, src, scalar, count, repeat_times, params, is_set_mask)
    else:
        def count_form(ctx, dst, a, b, count):
            types_ok(dst, a)
            types_ok(dst, b)
            # Three sources: checked as (dst, b), then (a, dst), so dst carries the garbage of all three.
            if not (check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, _address(dst), dst.nbytes,
                                 dst.itemsize, _address(b), b.nbytes, b.itemsize)
                    and check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, _address(a), a.nbytes,
                                     a.itemsize, _address(dst), dst.nbytes, dst.itemsize)):
                return
            _trace_vector(ctx, code, count, dst, a, b)
            advance_preload(ctx)
            for i in range(min(count, dst.size, a.size, b.size)):
                _vstore(dst, i, op(dst, load(a, i), load(b, i), load(dst, i)))
            count_form_done(ctx)

        def level_0(ctx, dst, a, b, mask, repeat_times, params, is_set_mask):
            types_ok(dst, a)
            types_ok(dst, b)
            binary_params(params)
            counter, high, low = call_mask(ctx, mask, is_set_mask)
            m = mask_length(mask) if is_set_mask else 0
            if not (check_repeat(ctx, prim, repeat_times, counter, high, low, m, 0xFF, _address(dst), dst.nbytes,
                                 dst.itemsize, params[0], params[3], _address(dst), dst.nbytes, dst.itemsize,
                                 params[0], params[3], _address(b), b.nbytes, b.itemsize, params[2], params[5], False)
                    and check_repeat(ctx, prim, repeat_times, counter, high, low, m, 0xFF, _address(dst), dst.nbytes,
                                     dst.itemsize, params[0], params[3], _address(a), a.nbytes, a.itemsize, params[1],
                                     params[4], _address(dst), dst.nbytes, dst.itemsize, params[0], params[3], False)):
                return
            d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = binary_strides(params)
            nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
            _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, b, b_blk, b_rep)
            advance_preload(ctx)
            repeat_loop(dst, a, b, 0, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep,
                        _apply_with_tile, op, load, _vstore)

        count_form, level_0 = two_forms(name, count_form, level_0)

        def primitive(ctx, dst, a, b, count, repeat_times=None, params=None, is_set_mask=True):
            if repeat_times is None:
                count_form(ctx, dst, a, b, count_of(count))
            else:
                level_0(ctx, dst, a, b, count, repeat_times, params, is_set_mask)
    return declared(primitive, spec, __name__)


globals().update({name: _define(name) for name in COMPOUND_OPS})
