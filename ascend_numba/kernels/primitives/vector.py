"""Vector unit: every vector op declared in :mod:`ascend_numba.host.primitives` (arithmetic,
Duplicate, the casts), built here from its declaration, and SetValue (tile fusion of these ops:
:mod:`.fusion`).

Each op takes two forms: the count form ``(ctx, dst, src..., count)`` and the level-0 form
``(ctx, dst, src..., mask, repeat_times, params, is_set_mask=True)`` with a BinaryRepeatParams
(two tiles) or UnaryRepeatParams (one tile and a scalar, or one tile); Duplicate's level-0 form is
``(ctx, dst, scalar, mask, repeat_times, dst_block_stride, dst_repeat_stride)``.  The lanes of
the level-0 form and the mask register: :mod:`.masks`; the element intrinsics: :mod:`.elements`.

Operands are UB tensors.  uint16 tiles are fp16 in arithmetic: each op is computed in fp32 and
rounded to fp16, which is exact IEEE fp16 for + - * / sqrt.  bf16 has no vector arithmetic here,
as on the device: cast it to fp32 first.  Each op also advances the lane's preload (see
:mod:`.preload`).

Checked-mode rules beside the primitives: :func:`check_vector` and :func:`check_set_value`.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.auto import enter
from ...checked.dispatch import ELEMENTS, checked_rule, count_ok
from ...checked.pipeline import set_pipe
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import is_local_operand, mark_written, propagate_garbage, ub_aligned, ub_range_ok, ub_read_ok
from ...host.primitives import VECTOR_OPS, Primitive
from ...host.trace import DIR_SCALAR, DIR_VECTOR, EVENT, EVENT_SET_VALUE
from ..._numba_compat.extending import overload, python_twin
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from .. import half
from ..half import f16_to_f32, f16_to_f32_quiet, f32_to_f16
from ..lane import _address
from ..pipe_table import PIPE_S
from .context import address, trace_event, tracing
from . import pinned
from .elements import (add_relu_element, canonical_nan, max_element, min_element, relu_element,
                       shift_left_element, shift_right_element, sqrt_element, sub_relu_element)
from .masks import (BLOCK_BYTES, BLOCKS, REPEAT_BYTES, _alias, binary_params, block_lanes, call_mask, check_repeat,
                    contiguous_count, count_form_done, lane_index, lanes_fit, mask_length, repeats_of, run_lanes,
                    stride_u8, stride_u16, unary_params)
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
    """SetValue on a UB tensor (a write of the scalar unit's)."""
    enter(ctx, PRIM_SET_VALUE)
    set_pipe(ctx, PIPE_S)
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


# ---- the level-0 form: repeats of 8 strided blocks under the mask register (see .masks) -------------

@jit(inline="always")  # inlined in Numba's IR: a function of functions compiled apart cannot be cached
def _apply_binary(op, load, a, i, b, j, scalar, dst, k, lane):
    return op(load(a, i), load(b, j))


@jit(inline="always")  # inlined in Numba's IR: a function of functions compiled apart cannot be cached
def _apply_scalar(op, load, a, i, b, j, scalar, dst, k, lane):
    return op(load(a, i), scalar)


@jit(inline="always")  # inlined in Numba's IR: a function of functions compiled apart cannot be cached
def _apply_unary(op, load, a, i, b, j, scalar, dst, k, lane):
    return op(load(a, i))


@jit(inline="always")  # inlined in Numba's IR: a function of functions compiled apart cannot be cached
def _apply_fill(op, load, a, i, b, j, scalar, dst, k, lane):
    return scalar


@jit(inline="always")
def repeat_loop(dst, a, b, scalar, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep, apply, op, load,
                store):
    """A level-0 call's lanes: ``dst[k] = apply(op, load, a, i, b, j, scalar, dst, k, lane)`` with each
    operand's index of the lane (``k``: dst's) and the lane's number counted from the first
    repeat's first lane (``repeat * lanes + lane in the repeat``), in the device's order (repeat,
    block, element).
    Each operand has its own element size (a narrower operand spans fewer blocks, as a mixed Axpy's
    source or a narrowing cast's destination); the lanes of a repeat are ``256 / the widest
    operand's element size``."""
    # Where each repeat computes its first m lanes (a continuous mask, counter mode) and the blocks
    # of a repeat are back to back, a repeat is one loop over m elements; otherwise block by
    # block, a whole block's lanes in a loop without tests.  An element past an operand's tensor is
    # skipped (checked mode has reported it).
    lanes_fit(dst, a, b)
    widest = max(dst.itemsize, a.itemsize, b.itemsize)
    lanes, epb = REPEAT_BYTES // widest, BLOCK_BYTES // widest
    d_epb, a_epb, b_epb = BLOCK_BYTES // dst.itemsize, BLOCK_BYTES // a.itemsize, BLOCK_BYTES // b.itemsize
    whole = ~(np.int64(-1) << epb)
    first = run_lanes(counter, high, low, lanes, 0)
    runs = d_blk == 1 and a_blk == 1 and b_blk == 1 and first >= 0
    in_place = _address(dst) == _address(a) and d_rep == a_rep and a.itemsize == dst.itemsize
    alias = _alias(dst, a)
    for r in range(nrep):
        if runs:
            d0, a0, b0 = r * d_rep * d_epb, r * a_rep * a_epb, r * b_rep * b_epb
            m = min(run_lanes(counter, high, low, lanes, r) if counter else first, dst.size - d0, a.size - a0,
                    b.size - b0)
            if in_place:  # one pointer read and written: the loop vectorizes (as _binary's)
                for e in range(m):
                    store(dst, d0 + e, apply(op, load, alias, d0 + e, b, b0 + e, scalar, dst, d0 + e, r * lanes + e))
            else:
                for e in range(m):
                    store(dst, d0 + e, apply(op, load, a, a0 + e, b, b0 + e, scalar, dst, d0 + e, r * lanes + e))
            continue
        for blk in range(BLOCKS):
            on = block_lanes(counter, high, low, lanes, r, blk * epb, epb)
            if on == 0:
                continue
            d0 = lane_index(r, blk * epb, d_blk, d_rep, d_epb)
            a0 = lane_index(r, blk * epb, a_blk, a_rep, a_epb)
            b0 = lane_index(r, blk * epb, b_blk, b_rep, b_epb)
            n = min(epb, dst.size - d0, a.size - a0, b.size - b0)
            lane0 = r * lanes + blk * epb
            if on == whole:
                for e in range(n):
                    store(dst, d0 + e, apply(op, load, a, a0 + e, b, b0 + e, scalar, dst, d0 + e, lane0 + e))
            else:
                for e in range(n):
                    if (on >> e) & 1:
                        store(dst, d0 + e, apply(op, load, a, a0 + e, b, b0 + e, scalar, dst, d0 + e, lane0 + e))


@jit(always_inline=True)
def _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, b, b_blk, b_rep):
    """Log a level-0 call: its lanes, and the bytes each operand's repeats span."""
    if tracing(ctx):
        lanes = REPEAT_BYTES // max(dst.itemsize, a.itemsize, b.itemsize)
        n = nrep * lanes
        d, s, t = address(dst), address(a), address(b)
        trace_event(ctx, code, DIR_VECTOR, n * a.itemsize, n, d, d + _span(nrep, d_blk, d_rep, lanes * dst.itemsize),
                    s, s + _span(nrep, a_blk, a_rep, lanes * a.itemsize), t,
                    t + _span(nrep, b_blk, b_rep, lanes * b.itemsize))


@jit(always_inline=True)
def _span(nrep, blk, rep, repeat_bytes=REPEAT_BYTES):
    """The bytes ``nrep`` repeats of an operand span, ``repeat_bytes`` of it a repeat."""
    blocks = max(repeat_bytes // BLOCK_BYTES, 1)
    return 0 if nrep <= 0 else ((nrep - 1) * rep + (blocks - 1) * blk + 1) * BLOCK_BYTES


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
    arithmetic op, ``quiets``).  Its calls keep their integer types (``widen=False``): ShiftLeft of
    a signed tile keeps the sign bit of the tile's width, not of an int64."""
    found = _ELEMENTS.get((element, canonical))
    if found is None:
        inner = element if callable(element) else ELEMENT_INTRINSICS[element]
        inner = jit(always_inline=True, widen=False)(inner) if callable(element) else inner
        # One signature per arity (no *args: a star-args tuple per call in every loop).
        if arity == 1:
            def call(x):
                return canonical_nan(inner(x)) if canonical else inner(x)
        else:
            def call(x, y):
                return canonical_nan(inner(x, y)) if canonical else inner(x, y)
        name = element.__name__ if callable(element) else element
        call.__name__ = call.__qualname__ = f"_{name}" + ("_canonical" if canonical else "")
        found = _ELEMENTS[(element, canonical)] = jit(always_inline=True, widen=False)(call)
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


@jit(always_inline=True)
def _check_unary_repeat(ctx, prim, dst, src, mask, repeat_times, params, is_set_mask, counter, high, low):
    # UnaryRepeatParams: block strides uint16_t, repeat strides uint8_t.
    unary_params(params)
    return check_repeat(ctx, prim, repeat_times, counter, high, low, mask_length(mask) if is_set_mask else 0, 0xFFFF,
                        _address(dst), dst.nbytes, dst.itemsize, params[0], params[2], _address(src), src.nbytes,
                        src.itemsize, params[1], params[3], 0, 0, NO_OPERAND, 0, 0, False)


@jit(always_inline=True)
def unary_strides(params):
    """UnaryRepeatParams as the device's fields hold them: (dst_blk, src_blk, dst_rep, src_rep)."""
    return stride_u16(params[0]), stride_u16(params[1]), stride_u8(params[2]), stride_u8(params[3])


@jit(always_inline=True)
def binary_strides(params):
    """BinaryRepeatParams as the device's uint8_t fields hold them: (dst_blk, src0_blk, src1_blk,
    dst_rep, src0_rep, src1_rep)."""
    return (stride_u8(params[0]), stride_u8(params[1]), stride_u8(params[2]), stride_u8(params[3]),
            stride_u8(params[4]), stride_u8(params[5]))


def two_forms(name: str, count_form, level_0):
    """The count form and the level-0 form of primitive ``name``, each compiled apart under a name
    of its own (Numba's cache files a function by its qualified name).  The primitive calls one in
    an ``if repeat_times is None`` branch: a count-form call passes no repeat_times (Omitted), so
    Numba prunes the level-0 branch and the call compiles as a primitive of one form; a level-0
    call types both (its count branch with :func:`count_of`, never run)."""
    made = []
    for form, suffix in ((count_form, "count"), (level_0, "level0")):
        qualified = f"{name}_{suffix}"
        form.__name__ = form.__qualname__ = qualified
        code = form.__code__.replace(co_name=qualified)
        form.__code__ = code.replace(co_qualname=qualified) if hasattr(code, "co_qualname") else code
        made.append(jit(always_inline=True)(form))
    return made


def count_of(count):
    """A count-form call's count; 0 for a level-0 call's mask (that branch never runs)."""
    raise NotImplementedError  # compiled only


@python_twin(count_of)
def _count_of_py(count):
    return count if isinstance(count, (int, np.integer)) else 0


@overload(count_of, jit_options=OVERLOAD_OPTIONS)
def _ov_count_of(count):
    if isinstance(count, types.Integer):
        return lambda count: count
    return lambda count: np.int64(0)


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
    # The device lets these write over src1 where a repeat stride is 0 (checked mode's overlap rule).
    exempt = spec.device in ("Add", "Sub", "Mul", "Max", "Min", "AddRelu", "SubRelu")
    # Each primitive has two forms, the count form ``(..., count)`` and the level-0 form ``(...,
    # mask, repeat_times, params, is_set_mask=True)`` (see .masks and two_forms).
    if spec.kind == "fill":
        def count_form(ctx, dst, value, count):
            if not check_vector(ctx, prim, count, _address(dst), dst.nbytes, dst.itemsize, 0, 0, NO_OPERAND, 0, 0,
                                NO_OPERAND):
                return
            _trace_vector(ctx, code, count, dst, dst, dst)
            advance_preload(ctx)
            _fill(dst, _vscalar(dst, op(value)), count)
            count_form_done(ctx)

        def level_0(ctx, dst, value, mask, repeat_times, dst_block_stride, dst_repeat_stride, is_set_mask):
            counter, high, low = call_mask(ctx, mask, is_set_mask)
            if not check_repeat(ctx, prim, repeat_times, counter, high, low, mask_length(mask) if is_set_mask else 0,
                                0xFFFF, _address(dst), dst.nbytes, dst.itemsize, dst_block_stride, dst_repeat_stride,
                                0, 0, NO_OPERAND, 0, 0, 0, 0, NO_OPERAND, 0, 0, False):
                return
            d_blk, d_rep = stride_u16(dst_block_stride), stride_u8(dst_repeat_stride)
            nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
            _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, dst, d_blk, d_rep, dst, d_blk, d_rep)
            advance_preload(ctx)
            repeat_loop(dst, dst, dst, _vscalar(dst, op(value)), nrep, counter, high, low, d_blk, d_rep, d_blk, d_rep,
                        d_blk, d_rep, _apply_fill, op, load, store)

        count_form, level_0 = two_forms(spec.name, count_form, level_0)

        def primitive(ctx, dst, value, count, repeat_times=None, dst_block_stride=1, dst_repeat_stride=8,
                      is_set_mask=True):
            if repeat_times is None:
                count_form(ctx, dst, value, count_of(count))
            else:
                level_0(ctx, dst, value, count, repeat_times, dst_block_stride, dst_repeat_stride, is_set_mask)
    elif (spec.tiles, spec.scalars) == (1, 1):
        def count_form(ctx, dst, src, scalar, count):
            if not _check_unary(ctx, prim, dst, src, count):
                return
            _trace_vector(ctx, code, count, dst, src, src)
            advance_preload(ctx)
            _unary(dst, src, scalar_as(dst, scalar), count, op, load, store)
            count_form_done(ctx)

        def level_0(ctx, dst, src, scalar, mask, repeat_times, params, is_set_mask):
            counter, high, low = call_mask(ctx, mask, is_set_mask)
            if not _check_unary_repeat(ctx, prim, dst, src, mask, repeat_times, params, is_set_mask, counter, high,
                                       low):
                return
            d_blk, a_blk, d_rep, a_rep = unary_strides(params)
            nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
            _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, src, a_blk, a_rep, src, a_blk, a_rep)
            advance_preload(ctx)
            value = scalar_as(dst, scalar)
            n = contiguous_count(counter, high, low, nrep, REPEAT_BYTES // dst.itemsize, d_blk, d_rep, a_blk, a_rep,
                                 a_blk, a_rep)
            if n >= 0:
                _unary(dst, src, value, n, op, load, store)
            else:
                repeat_loop(dst, src, src, value, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, a_blk, a_rep,
                            _apply_scalar, op, load, store)

        count_form, level_0 = two_forms(spec.name, count_form, level_0)

        def primitive(ctx, dst, src, scalar, count, repeat_times=None, params=None, is_set_mask=True):
            if repeat_times is None:
                count_form(ctx, dst, src, scalar, count_of(count))
            else:
                level_0(ctx, dst, src, scalar, count, repeat_times, params, is_set_mask)
    elif (spec.tiles, spec.scalars) == (2, 0):
        def count_form(ctx, dst, a, b, count):
            if not _check_binary(ctx, prim, dst, a, b, count):
                return
            _trace_vector(ctx, code, count, dst, a, b)
            advance_preload(ctx)
            _binary(dst, a, b, count, op, load, store)
            count_form_done(ctx)

        def level_0(ctx, dst, a, b, mask, repeat_times, params, is_set_mask):
            binary_params(params)
            counter, high, low = call_mask(ctx, mask, is_set_mask)
            if not check_repeat(ctx, prim, repeat_times, counter, high, low, mask_length(mask) if is_set_mask else 0,
                                0xFF, _address(dst), dst.nbytes, dst.itemsize, params[0], params[3], _address(a),
                                a.nbytes, a.itemsize, params[1], params[4], _address(b), b.nbytes, b.itemsize,
                                params[2], params[5], exempt):
                return
            d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = binary_strides(params)
            nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
            _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, b, b_blk, b_rep)
            advance_preload(ctx)
            n = contiguous_count(counter, high, low, nrep, REPEAT_BYTES // dst.itemsize, d_blk, d_rep, a_blk, a_rep,
                                 b_blk, b_rep)
            if n >= 0:
                _binary(dst, a, b, n, op, load, store)
            else:
                repeat_loop(dst, a, b, 0, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep,
                            _apply_binary, op, load, store)

        count_form, level_0 = two_forms(spec.name, count_form, level_0)

        def primitive(ctx, dst, a, b, count, repeat_times=None, params=None, is_set_mask=True):
            if repeat_times is None:
                count_form(ctx, dst, a, b, count_of(count))
            else:
                level_0(ctx, dst, a, b, count, repeat_times, params, is_set_mask)
    elif (spec.tiles, spec.scalars) == (1, 0):
        def count_form(ctx, dst, src, count):
            if not _check_unary(ctx, prim, dst, src, count):
                return
            _trace_vector(ctx, code, count, dst, src, src)
            advance_preload(ctx)
            _map(dst, src, count, op, load, store)
            count_form_done(ctx)

        def level_0(ctx, dst, src, mask, repeat_times, params, is_set_mask):
            counter, high, low = call_mask(ctx, mask, is_set_mask)
            if not _check_unary_repeat(ctx, prim, dst, src, mask, repeat_times, params, is_set_mask, counter, high,
                                       low):
                return
            d_blk, a_blk, d_rep, a_rep = unary_strides(params)
            nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
            _trace_repeat(ctx, code, nrep, dst, d_blk, d_rep, src, a_blk, a_rep, src, a_blk, a_rep)
            advance_preload(ctx)
            n = contiguous_count(counter, high, low, nrep, REPEAT_BYTES // dst.itemsize, d_blk, d_rep, a_blk, a_rep,
                                 a_blk, a_rep)
            if n >= 0:
                _map(dst, src, n, op, load, store)
            else:
                repeat_loop(dst, src, src, 0, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, a_blk, a_rep,
                            _apply_unary, op, load, store)

        count_form, level_0 = two_forms(spec.name, count_form, level_0)

        def primitive(ctx, dst, src, count, repeat_times=None, params=None, is_set_mask=True):
            if repeat_times is None:
                count_form(ctx, dst, src, count_of(count))
            else:
                level_0(ctx, dst, src, count, repeat_times, params, is_set_mask)
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


def declared(primitive, spec: Primitive, module: str):
    """A primitive built from its declaration, compiled under its own name (Numba's on-disk cache
    files a function under its qualified name; tracebacks, pdb and coverage name the code object)."""
    primitive.__name__ = primitive.__qualname__ = spec.name
    code = primitive.__code__.replace(co_name=spec.name)
    primitive.__code__ = code.replace(co_qualname=spec.name) if hasattr(code, "co_qualname") else code
    primitive.__doc__ = spec.doc
    primitive.__module__ = module
    return jit(primitive)


globals().update({name: declared((_cast if spec.kind == "cast" else _arith)(spec), spec, __name__)
                  for name, spec in VECTOR_OPS.items()})


@jit
def set_value(ctx, tensor, index, value):
    """SetValue: ``tensor[index] = value`` on a UB tensor, from the scalar unit."""
    if check_set_value(ctx, _address(tensor), tensor.nbytes, index, tensor.itemsize) and 0 <= index < tensor.size:
        if tracing(ctx):
            at = address(tensor) + index * tensor.itemsize
            trace_event(ctx, EVENT_SET_VALUE, DIR_SCALAR, tensor.itemsize, 1, at, at + tensor.itemsize, 0, 0, 0, 0)
        tensor[index] = value
