"""Compare and select: Compare, Compares and Select in the count form (family ``compare`` of
:mod:`ascend_numba.host.primitives`; references: :mod:`ascend_numba.host.references.compare`).

A comparison writes one bit per element into a uint8 tensor: element ``i`` at bit ``i % 8`` of
byte ``i // 8``, least significant first, the layout Select reads (a mask tensor of uint16,
uint32 or uint64 words reads the same on the little-endian hosts the twin runs on, x86-64 and
aarch64).  As on the device, Compare and Compares compute whole 256-byte repeats of the source:
the elements past the last whole repeat are not computed and their bytes of ``dst`` not written
(checked mode reports such a count); the whole repeats' ``n / 8`` bytes are written.  Select
takes any count.  The destination of a comparison is a uint8 (or int8) tile and Select's tiles
have one type, or the kernel does not compile.

Comparisons follow the A2/A3 boundary-value tables (asc-devkit ``docs/zh/api/附录/
Memory矢量计算接口边界值汇总.md``, cannmirror/asc-devkit at 0da921b): a NaN operand makes every
mode false, NE included (unlike IEEE's NE), and ``-0.0 == +0.0``.  fp16 (uint16) tiles compare
their exact fp32 values.  Select moves the chosen element's bits (an fp16 tile's uint16, a NaN's
payload with it).

Compare and Compares also take the level-0 form (``mask, repeat_times, params``): every lane of
each repeat is compared (A2/A3 neither set nor read the mask there) and the repeats' bits are
packed from ``dst``'s start, whatever its strides (c220's ``vcmpv``: cannmirror/asc-devkit at
0da921b, ``impl/basic_api/dav_c220/kernel_operator_vec_cmp_impl.h``); checked mode verifies it with
:func:`~.masks.check_repeat` (a ``dst`` of element size 0: packed bits).

Select's level-0 form (``select(ctx, dst, mask, a, b, mode, vmask, repeat_times, params)``, and
``select_scalar``'s) runs under the vector mask, which c220 always sets here; a lane left out
keeps ``dst``.  VSEL_CMPMASK_SPR loads CMPMASK from the mask tensor's first 16 bytes and every
repeat reads its first 256 / element size bits; the tensor-tensor and tensor-scalar modes read
each repeat's bits after the last (8 bytes a repeat for fp32, 16 for fp16) whatever the
strides, and leave in CMPMASK what the device's hand-off puts there (the mask's UB offset, or the
scalar, repeated).  Semantics: ``impl/basic_api/dav_c220/kernel_operator_vec_cmpsel_impl.h`` and
the ``Select`` page, cannmirror/asc-devkit at 0da921b.

Checked-mode rule beside them: :func:`check_with_mode`.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import ELEMENTS, checked_rule, count_ok
from ...checked.rules import MODES, OPERAND_DST, OPERAND_MASK, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, mark_written, set_garbage, ub_aligned,
                                  ub_range_ok, ub_read_ok)
from ...host.primitives import COMPARE_OPS, CMPMODE, SELMODE
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f32_as_u32
from ..lane import _address
from .context import address, trace_event, tracing
from .element_bits import stored_scalar
from .masks import (binary_params, call_mask, check_repeat, count_form_done, lane_index, mask_length, read_cmpmask,
                    repeats_of, unary_params, write_cmpmask)
from .preload import advance_preload
# An element as a vector op reads it (an fp16 tile's exact fp32 value, a NaN kept a NaN); a scalar as
# it enters one (the tile's type: fp16, the nearest fp16).
from .vector import NO_OPERAND as VECTOR_NO_OPERAND
from .vector import (_bits_load, _bits_store, _span, _trace_repeat, _vload, _vscalar, binary_strides, count_of,
                     repeat_loop, two_forms, unary_strides)

__all__ = [*COMPARE_OPS]

NO_OPERAND = -1  # the byte extent passed for an absent operand
REPEAT_BYTES = 256  # one repeat of the vector unit: VSEL_CMPMASK_SPR's mask bits cover this many bytes
_CMPMODE, _SELMODE = MODES.index("CMPMODE"), MODES.index("SELMODE")
# The modes as plain ints in compiled code (an IntEnum global keeps Numba from caching a function).
LT, GT, EQ, LE, GE, NE = (int(m) for m in CMPMODE)
SPR, TENSOR_SCALAR, TENSOR_TENSOR = (int(m) for m in SELMODE)

# ---- checked-mode rule: True when the primitive may run ------------------------------------------

@jit
def _source(ctx, prim, operand, addr, nbytes, ext):
    """-1: a violation (reported); 1: the bytes read hold garbage; 0: clean."""
    if ext == NO_OPERAND:
        return 0
    if not (is_local_operand(ctx, prim, operand, addr) and ub_aligned(ctx, prim, operand, addr, 0)
            and ub_range_ok(ctx, prim, operand, addr, nbytes, 0, ext) and ub_read_ok(ctx, prim, operand, addr, 0, ext)):
        return -1
    return 1 if first_garbage(ctx, np.int64(addr) - np.int64(ctx.ub_addr), ext) >= 0 else 0


@checked_rule
@jit
def check_with_mode(ctx, prim, count, a_size, repeat_bytes, mode, which_mode, mode_ok, dst_addr, dst_nbytes, dst_ext,
                    a_addr, a_nbytes, a_ext, b_addr, b_nbytes, b_ext, m_addr, m_nbytes, m_ext, no_overlap):
    """A Compare, Compares or Select on ``count`` elements of ``a_size`` bytes, in whole repeats of
    ``repeat_bytes`` (0: any count): writes ``dst_ext`` bytes of ``dst``, reads ``a_ext`` /
    ``b_ext`` / ``m_ext`` bytes of the sources and the mask (NO_OPERAND: absent); ``mode_ok``:
    the mode is one this form takes (``which_mode`` names its enum); ``no_overlap``: the
    destination must not overlap the first source (a widening Cast).  The destination is garbage
    where any byte read is."""
    enter(ctx, prim)
    if not count_ok(ctx, prim, OPERAND_DST, count, ELEMENTS, 0):
        return False
    if repeat_bytes > 0 and (count * a_size) % repeat_bytes != 0:
        report.vector_count_unaligned(ctx, prim, OPERAND_SRC, count=count, nbytes=count * a_size,
                                      repeat_bytes=repeat_bytes)
        return False
    if not mode_ok:
        report.mode_out_of_range(ctx, prim, OPERAND_DST, mode=which_mode, value=mode)
        return False
    if count == 0:
        return True
    a = _source(ctx, prim, OPERAND_SRC, a_addr, a_nbytes, a_ext)
    b = _source(ctx, prim, OPERAND_SRC1, b_addr, b_nbytes, b_ext) if a >= 0 else -1
    m = _source(ctx, prim, OPERAND_MASK, m_addr, m_nbytes, m_ext) if b >= 0 else -1
    if m < 0 or not (is_local_operand(ctx, prim, OPERAND_DST, dst_addr)
                     and ub_aligned(ctx, prim, OPERAND_DST, dst_addr, 0)
                     and ub_range_ok(ctx, prim, OPERAND_DST, dst_addr, dst_nbytes, 0, dst_ext)):
        return False
    dst = np.int64(dst_addr) - np.int64(ctx.ub_addr)
    src = np.int64(a_addr) - np.int64(ctx.ub_addr)
    if no_overlap and dst < src + a_ext and src < dst + dst_ext:
        report.cast_overlap(ctx, prim, OPERAND_DST, dst_start=dst, dst_end=dst + dst_ext, src_start=src,
                            src_end=src + a_ext)
        return False
    if a + b + m > 0:
        set_garbage(ctx, dst, dst_ext, 1)
        mark_epoch(ctx, dst, dst_ext)
    else:
        mark_written(ctx, dst, dst_ext)
    return True


# ---- operand types: refused when the kernel compiles ------------------------------------------------

def _mask_result(dst):
    raise NotImplementedError  # compiled only


@overload(_mask_result, jit_options=OVERLOAD_OPTIONS)
def _ov_mask_result(dst):
    if dst.dtype not in (types.uint8, types.int8):
        raise TypingError(f"Compare / Compares write one bit per element into a uint8 (or int8) tile, not {dst.dtype}")
    return lambda dst: None


def _one_type(dst, a, b):
    raise NotImplementedError  # compiled only


@overload(_one_type, jit_options=OVERLOAD_OPTIONS)
def _ov_one_type(dst, a, b):
    if not (dst.dtype == a.dtype == b.dtype):
        raise TypingError(f"Select moves elements between tiles of one type, not {dst.dtype} from {a.dtype} and "
                          f"{b.dtype}")
    return lambda dst, a, b: None


# ---- element access ------------------------------------------------------------------------------

def _repeated_bits(value):
    raise NotImplementedError  # compiled only


@overload(_repeated_bits, jit_options=OVERLOAD_OPTIONS)
def _ov_repeated_bits(value):
    # A tile element's bits repeated over a 64-bit word (the register loaded from a duplicated scalar).
    if value == types.float32:
        def repeated(value):
            b = np.int64(f32_as_u32(value))
            return b | (b << 32)
        return repeated
    if isinstance(value, types.Integer) and value.bitwidth in (16, 32):
        width = value.bitwidth

        def repeated(value):
            b = np.int64(value) & ((np.int64(1) << width) - 1)
            b |= b << 16 if width == 16 else 0
            return b | (b << 32)
        return repeated
    raise TypingError(f"Select takes fp16 or fp32 tiles, not {value}")


def _value_at(b, i):
    raise NotImplementedError  # compiled only


@overload(_value_at, jit_options=OVERLOAD_OPTIONS)
def _ov_value_at(b, i):
    # The second operand's value: a tile's element as a vector op reads it, or the scalar itself.
    if isinstance(b, types.Array):
        return lambda b, i: _vload(b, i)
    return lambda b, i: b


def _element_at(b, i):
    raise NotImplementedError  # compiled only


@overload(_element_at, jit_options=OVERLOAD_OPTIONS)
def _ov_element_at(b, i):
    # The second operand's stored element (its bits), or the scalar as the tile stores it.
    if isinstance(b, types.Array):
        return lambda b, i: b[i]
    return lambda b, i: b


# The relations, one per CMPMODE (in its order): ordered, so a NaN operand makes each false, NE
# included (A2/A3's documented boundary values, unlike IEEE's NE).
@jit(always_inline=True)
def _lt(x, y):
    return np.uint8(x < y)


@jit(always_inline=True)
def _gt(x, y):
    return np.uint8(x > y)


@jit(always_inline=True)
def _eq(x, y):
    return np.uint8(x == y)


@jit(always_inline=True)
def _le(x, y):
    return np.uint8(x <= y)


@jit(always_inline=True)
def _ge(x, y):
    return np.uint8(x >= y)


@jit(always_inline=True)
def _ne(x, y):
    return np.uint8(x < y) | np.uint8(x > y)


def _packer(rel):
    """Compare's loop for one relation: byte j of ``dst`` holds ``rel`` of elements 8j..8j+7 of ``a``
    and ``b`` (a tile, or a value for every element; ``n`` a multiple of 8, as whole repeats are),
    bit k for 8j+k.  Written out, the eight make a loop LLVM vectorizes; the relation is bound here
    (a function passed as an argument would keep Numba from caching the primitive).  Linked, not
    inlined: compiled once per tile type for every kernel (a kernel of ten instructions with
    Compare and Select: 13.3 s CPU cold, 8.0 s with Sub and Div in their place)."""
    @jit
    def pack(dst, n, a, b):
        for j in range(n // 8):
            i = 8 * j
            dst[j] = (rel(_vload(a, i), _value_at(b, i)) | (rel(_vload(a, i + 1), _value_at(b, i + 1)) << 1)
                      | (rel(_vload(a, i + 2), _value_at(b, i + 2)) << 2)
                      | (rel(_vload(a, i + 3), _value_at(b, i + 3)) << 3)
                      | (rel(_vload(a, i + 4), _value_at(b, i + 4)) << 4)
                      | (rel(_vload(a, i + 5), _value_at(b, i + 5)) << 5)
                      | (rel(_vload(a, i + 6), _value_at(b, i + 6)) << 6)
                      | (rel(_vload(a, i + 7), _value_at(b, i + 7)) << 7))
    return pack


_pack_lt, _pack_gt, _pack_eq, _pack_le, _pack_ge, _pack_ne = (_packer(rel) for rel in (_lt, _gt, _eq, _le, _ge, _ne))


@jit(always_inline=True)
def _compare(dst, n, mode, a, b):
    # One loop per mode: a mode's relation alone in the loop vectorizes (a table of relations per
    # element ran 3.5x slower).  ``b``: a tile (Compare) or a value (Compares).
    if mode == LT:
        _pack_lt(dst, n, a, b)
    elif mode == GT:
        _pack_gt(dst, n, a, b)
    elif mode == EQ:
        _pack_eq(dst, n, a, b)
    elif mode == LE:
        _pack_le(dst, n, a, b)
    elif mode == GE:
        _pack_ge(dst, n, a, b)
    elif mode == NE:
        _pack_ne(dst, n, a, b)


@jit(always_inline=True)
def _mask_bit(mask_bytes, k):
    return (mask_bytes[k >> 3] >> (k & 7)) & 1


@jit(always_inline=True)
def _mask_word(mask_bytes, w):
    # Mask bits 32w .. 32w + 31, least significant first.
    return (np.uint32(mask_bytes[4 * w]) | (np.uint32(mask_bytes[4 * w + 1]) << np.uint32(8))
            | (np.uint32(mask_bytes[4 * w + 2]) << np.uint32(16)) | (np.uint32(mask_bytes[4 * w + 3]) << np.uint32(24)))


@jit(always_inline=True)
def _mask_bytes_word(mask_bytes, start):
    # Bytes start .. start + 7 of the mask as a word, least significant first (past its end: 0).
    w = np.int64(0)
    for i in range(min(8, mask_bytes.size - start)):
        w |= np.int64(mask_bytes[start + i]) << (8 * i)
    return w


@jit(always_inline=True)
def _choose(dst, mask_bytes, a, b, n, period):
    """``dst[i] = a[i]`` where bit ``i % period`` of the mask is 1, else ``b[i]`` (``b``: a tile, or
    a value stored as the tile stores it).  Word by word (32 elements of one mask word) where the
    period allows: the element loop then vectorizes (both operands are loaded before the choice,
    so it is a select)."""
    words = n // 32 if period % 32 == 0 else 0
    if _address(dst) == _address(a):  # in place (a = Select(a, b)): loads through dst, which vectorizes
        for w in range(words):
            word = _mask_word(mask_bytes, w % (period // 32))
            base = 32 * w
            for k in range(32):
                x, y = dst[base + k], _element_at(b, base + k)
                dst[base + k] = x if (word >> np.uint32(k)) & np.uint32(1) else y
    else:
        for w in range(words):
            word = _mask_word(mask_bytes, w % (period // 32))
            base = 32 * w
            for k in range(32):
                x, y = a[base + k], _element_at(b, base + k)
                dst[base + k] = x if (word >> np.uint32(k)) & np.uint32(1) else y
    for i in range(32 * words, n):
        x, y = a[i], _element_at(b, i)
        dst[i] = x if _mask_bit(mask_bytes, i % period) else y


@jit(always_inline=True)
def _past(n):
    # A mask period past ``n`` elements, a whole number of 32-bit words: bit i for element i.
    return 32 * ((n + 31) // 32) + 32


@jit(always_inline=True)
def _trace(ctx, code, count, dst, dst_ext, a, a_ext, b, b_ext):
    if tracing(ctx):
        n = max(count, 0)
        d, s, t = address(dst), address(a), address(b)
        trace_event(ctx, code, DIR_VECTOR, n * a.itemsize, n, d, d + dst_ext, s, s + a_ext, t, t + b_ext)


@jit(always_inline=True)
def _mode_ok_cmp(mode):
    return LT <= mode <= NE


# ---- the primitives --------------------------------------------------------------------------------

_COMPARE, _COMPARES = PRIMITIVE["Compare"], PRIMITIVE["Compares"]
_SELECT = PRIMITIVE["Select"]
_EV_COMPARE, _EV_COMPARES = EVENT["compare"], EVENT["compare_scalar"]
_EV_SELECT, _EV_SELECT_SCALAR = EVENT["select"], EVENT["select_scalar"]


@jit(always_inline=True)
def _whole_repeats(count, itemsize):
    # Compare and Compares compute whole 256-byte repeats: the elements past the last are not computed.
    return max(count, 0) * itemsize // REPEAT_BYTES * REPEAT_BYTES // itemsize


def _compare_count(ctx, dst, a, b, mode, count):
    _mask_result(dst)
    m = np.int64(mode)
    n = _whole_repeats(count, a.itemsize)
    if not check_with_mode(ctx, _COMPARE, count, a.itemsize, REPEAT_BYTES, m, _CMPMODE, _mode_ok_cmp(m), _address(dst),
                         dst.nbytes, n // 8, _address(a), a.nbytes, n * a.itemsize, _address(b), b.nbytes,
                         n * b.itemsize, 0, 0, NO_OPERAND, False):
        return
    _trace(ctx, _EV_COMPARE, n, dst, n // 8, a, n * a.itemsize, b, n * b.itemsize)
    advance_preload(ctx)
    _compare(dst, min(n, a.size, b.size, 8 * dst.size), m, a, b)


def _compare_level0(ctx, dst, a, b, mode, mask, repeat_times, params, is_set_mask):
    # A2/A3 neither set nor read the vector mask here (a reserved parameter): every lane is compared.
    _mask_result(dst)
    binary_params(params)
    m = np.int64(mode)
    if not (check_with_mode(ctx, _COMPARE, 0, a.itemsize, 0, m, _CMPMODE, _mode_ok_cmp(m), _address(dst), dst.nbytes,
                            0, _address(a), a.nbytes, 0, _address(b), b.nbytes, 0, 0, 0, NO_OPERAND, False)
            and check_repeat(ctx, _COMPARE, repeat_times, False, -1, -1, 0, 0xFF, _address(dst), dst.nbytes, 0,
                             params[0], params[3], _address(a), a.nbytes, a.itemsize, params[1], params[4],
                             _address(b), b.nbytes, b.itemsize, params[2], params[5], False)):
        return
    _, a_blk, b_blk, _, a_rep, b_rep = binary_strides(params)
    nrep = repeats_of(False, 0, repeat_times, REPEAT_BYTES // a.itemsize)
    _trace(ctx, _EV_COMPARE, nrep * (REPEAT_BYTES // a.itemsize), dst, nrep * (REPEAT_BYTES // a.itemsize) // 8, a,
           _span(nrep, a_blk, a_rep), b, _span(nrep, b_blk, b_rep))
    advance_preload(ctx)
    _compare_repeats(dst, a, b, m, nrep, a_blk, a_rep, b_blk, b_rep)


def _compares_level0(ctx, dst, a, scalar, mode, mask, repeat_times, params, is_set_mask):
    _mask_result(dst)
    unary_params(params)
    m = np.int64(mode)
    if not (check_with_mode(ctx, _COMPARES, 0, a.itemsize, 0, m, _CMPMODE, _mode_ok_cmp(m), _address(dst),
                            dst.nbytes, 0, _address(a), a.nbytes, 0, 0, 0, NO_OPERAND, 0, 0, NO_OPERAND, False)
            and check_repeat(ctx, _COMPARES, repeat_times, False, -1, -1, 0, 0xFFFF, _address(dst), dst.nbytes, 0,
                             params[0], params[2], _address(a), a.nbytes, a.itemsize, params[1], params[3], 0, 0,
                             VECTOR_NO_OPERAND, 0, 0, False)):
        return
    _, a_blk, _, a_rep = unary_strides(params)
    nrep = repeats_of(False, 0, repeat_times, REPEAT_BYTES // a.itemsize)
    _trace(ctx, _EV_COMPARES, nrep * (REPEAT_BYTES // a.itemsize), dst, nrep * (REPEAT_BYTES // a.itemsize) // 8, a,
           _span(nrep, a_blk, a_rep), a, _span(nrep, a_blk, a_rep))
    advance_preload(ctx)
    _compare_repeats(dst, a, _vscalar(a, scalar), m, nrep, a_blk, a_rep, 0, 0)


@jit(always_inline=True)
def _relation(mode, x, y):
    if mode == LT:
        return _lt(x, y)
    if mode == GT:
        return _gt(x, y)
    if mode == EQ:
        return _eq(x, y)
    if mode == LE:
        return _le(x, y)
    if mode == GE:
        return _ge(x, y)
    return _ne(x, y)


@jit
def _compare_repeats(dst, a, b, mode, nrep, a_blk, a_rep, b_blk, b_rep):
    """The level-0 comparison: repeat ``r``'s lanes (``a``, ``b``: a tile or a value, each at its
    strides) into bits ``r * lanes ..`` of ``dst``, packed.  A lane past a tile compares as false."""
    lanes, epb = REPEAT_BYTES // a.itemsize, 32 // a.itemsize
    for r in range(nrep):
        for j in range(lanes // 8):
            d = r * (lanes // 8) + j
            if d >= dst.size:
                return
            byte = np.uint8(0)
            for e in range(8):
                k = 8 * j + e
                i = lane_index(r, k, a_blk, a_rep, epb)
                i1 = lane_index(r, k, b_blk, b_rep, epb)
                if i < a.size and _in_tile(b, i1):
                    byte |= np.uint8(_relation(mode, _vload(a, i), _value_at(b, i1)) << e)
            dst[d] = byte


def _in_tile(b, i):
    raise NotImplementedError  # compiled only


@overload(_in_tile, jit_options=OVERLOAD_OPTIONS)
def _ov_in_tile(b, i):
    if isinstance(b, types.Array):
        return lambda b, i: i < b.size
    return lambda b, i: True


_compare_count, _compare_level0 = two_forms("compare", _compare_count, _compare_level0)


@jit
def compare(ctx, dst, a, b, mode, count, repeat_times=None, params=None, is_set_mask=True):
    if repeat_times is None:
        _compare_count(ctx, dst, a, b, mode, count_of(count))
    else:
        _compare_level0(ctx, dst, a, b, mode, count, repeat_times, params, is_set_mask)


def _compares_count(ctx, dst, a, scalar, mode, count):
    _mask_result(dst)
    m = np.int64(mode)
    n = _whole_repeats(count, a.itemsize)
    if not check_with_mode(ctx, _COMPARES, count, a.itemsize, REPEAT_BYTES, m, _CMPMODE, _mode_ok_cmp(m),
                         _address(dst), dst.nbytes, n // 8, _address(a), a.nbytes, n * a.itemsize, 0, 0, NO_OPERAND,
                         0, 0, NO_OPERAND, False):
        return
    _trace(ctx, _EV_COMPARES, n, dst, n // 8, a, n * a.itemsize, a, n * a.itemsize)
    advance_preload(ctx)
    _compare(dst, min(n, a.size, 8 * dst.size), m, a, _vscalar(a, scalar))


_compares_count, _compares_level0 = two_forms("compare_scalar", _compares_count, _compares_level0)


@jit
def compare_scalar(ctx, dst, a, scalar, mode, count, repeat_times=None, params=None, is_set_mask=True):
    if repeat_times is None:
        _compares_count(ctx, dst, a, scalar, mode, count_of(count))
    else:
        _compares_level0(ctx, dst, a, scalar, mode, count, repeat_times, params, is_set_mask)


def _select_count(ctx, dst, mask, a, b, mode, count):
    _one_type(dst, a, b)
    m = np.int64(mode)
    spr = m == SPR
    # VSEL_CMPMASK_SPR: every 256-byte repeat reads the same first bits of the mask.
    period = REPEAT_BYTES // dst.itemsize if spr else count
    ext = max(count, 0) * dst.itemsize
    mode_ok = spr or m == TENSOR_TENSOR
    if not check_with_mode(ctx, _SELECT, count, dst.itemsize, 0, m, _SELMODE, mode_ok, _address(dst), dst.nbytes, ext,
                         _address(a), a.nbytes, ext, _address(b), b.nbytes, ext, _address(mask), mask.nbytes,
                         (min(count, period) + 7) // 8, False):
        return
    _trace(ctx, _EV_SELECT, count, dst, ext, a, ext, b, ext)
    advance_preload(ctx)
    count_form_done(ctx)  # the device's level-2 Select ends in normal mode with a full mask
    bits = mask.view(np.uint8)
    n = max(min(count, dst.size, a.size, b.size), 0)
    if spr:
        write_cmpmask(ctx, _mask_bytes_word(bits, 0), _mask_bytes_word(bits, 8))  # the device's set_cmpmask
        # (a mask shorter than the repeat's bits: checked mode reports it; here its bits repeat)
        period = min(period, 8 * bits.size)
        _choose(dst, bits, a, b, n if period > 0 else 0, max(period, 1))
    else:
        n = min(n, 8 * bits.size)
        _choose(dst, bits, a, b, n, _past(n))


def _select_scalar_count(ctx, dst, mask, a, scalar, mode, count):
    _one_type(dst, a, a)
    m = np.int64(mode)
    ext = max(count, 0) * dst.itemsize
    if not check_with_mode(ctx, _SELECT, count, dst.itemsize, 0, m, _SELMODE, m == TENSOR_SCALAR,
                         _address(dst), dst.nbytes, ext, _address(a), a.nbytes, ext, 0, 0, NO_OPERAND,
                         _address(mask), mask.nbytes, (count + 7) // 8, False):
        return
    _trace(ctx, _EV_SELECT_SCALAR, count, dst, ext, a, ext, a, ext)
    advance_preload(ctx)
    count_form_done(ctx)  # the device's level-2 Select ends in normal mode with a full mask
    bits = mask.view(np.uint8)
    n = max(min(count, dst.size, a.size, 8 * bits.size), 0)
    _choose(dst, bits, a, stored_scalar(dst, scalar), n, _past(n))


@jit(inline="always")
def _apply_register_bit(op, load, a, i, b, j, bits, dst, k, lane):
    # ``bits``: the register's (low, high) words, every repeat reading the same 64 (fp32) or 128
    # (fp16) bits; the operands' bits move, as Select moves them.
    bit = lane % (REPEAT_BYTES // dst.itemsize)
    word = bits[0] if bit < 64 else bits[1]
    return load(a, i) if (word >> (bit % 64)) & 1 else load(b, j)


@jit(inline="always")
def _apply_mask_bit(op, load, a, i, b, j, mask_bits, dst, k, lane):
    # Lane ``lane`` (counted across repeats) reads bit ``lane`` of the mask tensor's bytes.
    return load(a, i) if (mask_bits[lane >> 3] >> (lane & 7)) & 1 else load(b, j)


@jit(inline="always")
def _apply_mask_bit_scalar(value, load, a, i, b, j, mask_bits, dst, k, lane):
    # VSEL_TENSOR_SCALAR_MODE: ``value`` is the scalar as the tile stores it.
    return load(a, i) if (mask_bits[lane >> 3] >> (lane & 7)) & 1 else value


@jit(always_inline=True)
def _select_mask_bytes(spr, nrep, itemsize):
    # The mask tensor's bytes a level-0 Select reads: VSEL_CMPMASK_SPR one repeat's bits (reused),
    # the other modes each repeat's bits one after another (8 bytes a repeat for fp32, 16 for fp16).
    lanes = REPEAT_BYTES // itemsize
    return lanes // 8 if spr else max(nrep, 0) * lanes // 8


def _select_level0(ctx, dst, mask, a, b, mode, vmask, repeat_times, params, is_set_mask):
    # c220's level-0 Select sets the vector mask whatever is_set_mask says; dst keeps its lanes the
    # mask leaves out.
    _one_type(dst, a, b)
    binary_params(params)
    m = np.int64(mode)
    spr = m == SPR
    counter, high, low = call_mask(ctx, vmask, True)
    nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
    # check_with_mode: the mode and the mask tensor's bytes (the lanes' operands: check_repeat).
    if not (check_with_mode(ctx, _SELECT, nrep, dst.itemsize, 0, m, _SELMODE, spr or m == TENSOR_TENSOR, _address(dst),
                            dst.nbytes, 0, 0, 0, NO_OPERAND, 0, 0, NO_OPERAND, _address(mask), mask.nbytes,
                            _select_mask_bytes(spr, nrep, dst.itemsize), False)
            and check_repeat(ctx, _SELECT, repeat_times, counter, high, low, mask_length(vmask), 0xFF,
                             _address(dst), dst.nbytes, dst.itemsize, params[0], params[3], _address(a), a.nbytes,
                             a.itemsize, params[1], params[4], _address(b), b.nbytes, b.itemsize, params[2],
                             params[5], False)):
        return
    d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = binary_strides(params)
    _trace_repeat(ctx, _EV_SELECT, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, b, b_blk, b_rep)
    advance_preload(ctx)
    bits = mask.view(np.uint8)
    if spr:  # set_cmpmask from the mask tensor, then every repeat reads the register
        write_cmpmask(ctx, _mask_bytes_word(bits, 0), _mask_bytes_word(bits, 8))
        repeat_loop(dst, a, b, read_cmpmask(ctx), nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep,
                    _apply_register_bit, None, _bits_load, _bits_store)
    else:  # the register holds the mask tensor's UB address (four times over), the device's hand-off
        where = np.int64(_address(mask) - ctx.ub_addr) & np.int64(0xFFFFFFFF)
        write_cmpmask(ctx, where | (where << 32), where | (where << 32))
        repeat_loop(dst, a, b, bits, nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep,
                    _apply_mask_bit, None, _bits_load, _bits_store)


def _select_scalar_level0(ctx, dst, mask, a, scalar, mode, vmask, repeat_times, params, is_set_mask):
    # As the tensor form; BinaryRepeatParams, src1's strides unused (the device reads the mask there).
    _one_type(dst, a, a)
    binary_params(params)
    m = np.int64(mode)
    counter, high, low = call_mask(ctx, vmask, True)
    nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
    if not (check_with_mode(ctx, _SELECT, nrep, dst.itemsize, 0, m, _SELMODE, m == TENSOR_SCALAR, _address(dst),
                            dst.nbytes, 0, 0, 0, NO_OPERAND, 0, 0, NO_OPERAND, _address(mask), mask.nbytes,
                            _select_mask_bytes(False, nrep, dst.itemsize), False)
            and check_repeat(ctx, _SELECT, repeat_times, counter, high, low, mask_length(vmask), 0xFF,
                             _address(dst), dst.nbytes, dst.itemsize, params[0], params[3], _address(a), a.nbytes,
                             a.itemsize, params[1], params[4], 0, 0, VECTOR_NO_OPERAND, 0, 0, False)):
        return
    d_blk, a_blk, _, d_rep, a_rep, _ = binary_strides(params)
    _trace_repeat(ctx, _EV_SELECT_SCALAR, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, a, a_blk, a_rep)
    advance_preload(ctx)
    value = stored_scalar(dst, scalar)
    write_cmpmask(ctx, _repeated_bits(value), _repeated_bits(value))  # the scalar, duplicated into CMPMASK
    repeat_loop(dst, a, a, mask.view(np.uint8), nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, a_blk, a_rep,
                _apply_mask_bit_scalar, value, _bits_load, _bits_store)


_select_count, _select_level0 = two_forms("select", _select_count, _select_level0)
_select_scalar_count, _select_scalar_level0 = two_forms("select_scalar", _select_scalar_count, _select_scalar_level0)


@jit
def select(ctx, dst, mask, a, b, mode, count, repeat_times=None, params=None, is_set_mask=True):
    if repeat_times is None:
        _select_count(ctx, dst, mask, a, b, mode, count_of(count))
    else:
        _select_level0(ctx, dst, mask, a, b, mode, count, repeat_times, params, is_set_mask)


@jit
def select_scalar(ctx, dst, mask, a, scalar, mode, count, repeat_times=None, params=None, is_set_mask=True):
    if repeat_times is None:
        _select_scalar_count(ctx, dst, mask, a, scalar, mode, count_of(count))
    else:
        _select_scalar_level0(ctx, dst, mask, a, scalar, mode, count, repeat_times, params, is_set_mask)


for _name, _spec in COMPARE_OPS.items():  # each primitive's doc is its declaration's
    globals()[_name].py_func.__doc__ = _spec.doc
