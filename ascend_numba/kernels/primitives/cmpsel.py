"""Compare and select: Compare, Compares and Select in the count form (family ``compare`` of
:mod:`ascend_numba.host.primitives`; references: :mod:`ascend_numba.host.references.compare`).

A comparison writes one bit per element into a uint8 tensor: element ``i`` at bit ``i % 8`` of
byte ``i // 8``, least significant first, the layout Select reads (a mask tensor of uint16,
uint32 or uint64 words reads the same on a little-endian host: the twin refuses other byte
orders).  As on the device, Compare and Compares compute whole 256-byte repeats of the source:
the elements past the last whole repeat are not computed and their bytes of ``dst`` not written
(checked mode reports such a count); ``count / 8`` bytes are written.  Select takes any count.

Comparisons follow the A2/A3 boundary-value tables (asc-devkit ``docs/zh/api/附录/
Memory矢量计算接口边界值汇总.md``, cannmirror/asc-devkit at 0da921b): a NaN operand makes every
mode false, NE included (unlike IEEE's NE), and ``-0.0 == +0.0``.  fp16 (uint16) tiles compare
their exact fp32 values.  Select moves the chosen element's bits (an fp16 tile's uint16, a NaN's
payload with it).

Checked-mode rule beside them: :func:`check_compare`.
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
from ..._numba_compat.extending import overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f32_to_f16
from ..lane import _address
from .context import address, trace_event, tracing
from .preload import advance_preload
# An element as a vector op reads it (an fp16 tile's exact fp32 value, a NaN kept a NaN); a scalar as
# it enters one (the tile's type: fp16, the nearest fp16).
from .vector import _vload, _vscalar, as_element

__all__ = [*COMPARE_OPS]

NO_OPERAND = -1  # the byte extent passed for an absent operand
REPEAT_BYTES = 256  # one repeat of the vector unit: VSEL_CMPMASK_SPR's mask bits cover this many bytes
_CMPMODE, _SELMODE = MODES.index("CMPMODE"), MODES.index("SELMODE")

# Per CMPMODE, the outcomes that make it true: less (1), greater (2), equal (4); unordered (8)
# makes none true, NE included (A2/A3's documented boundary values, unlike IEEE's NE).
_HOLDS = np.zeros(8, np.uint8)
for _mode, _outcomes in ((CMPMODE.LT, 1), (CMPMODE.GT, 2), (CMPMODE.EQ, 4), (CMPMODE.LE, 5), (CMPMODE.GE, 6),
                         (CMPMODE.NE, 3)):
    _HOLDS[_mode] = _outcomes
_HOLDS.setflags(write=False)


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
def check_compare(ctx, prim, count, a_size, repeat_bytes, mode, which_mode, mode_ok, dst_addr, dst_nbytes, dst_ext,
                  a_addr, a_nbytes, a_ext, b_addr, b_nbytes, b_ext, m_addr, m_nbytes, m_ext):
    """A Compare, Compares or Select on ``count`` elements of ``a_size`` bytes, in whole repeats of
    ``repeat_bytes`` (0: any count): writes ``dst_ext`` bytes of ``dst``, reads ``a_ext`` /
    ``b_ext`` / ``m_ext`` bytes of the sources and the mask (NO_OPERAND: absent); ``mode_ok``:
    the mode is one this form takes (``which_mode`` names its enum).  The destination is garbage
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
    if a + b + m > 0:
        set_garbage(ctx, dst, dst_ext, 1)
        mark_epoch(ctx, dst, dst_ext)
    else:
        mark_written(ctx, dst, dst_ext)
    return True


# ---- element access ------------------------------------------------------------------------------

def _stored(tensor, value):
    raise NotImplementedError  # compiled only


@overload(_stored, jit_options=OVERLOAD_OPTIONS)
def _ov_stored(tensor, value):
    # A scalar as the tile stores it: an fp16 tile's bits of the nearest fp16 (round to nearest even).
    if tensor.dtype == types.uint16:
        return lambda tensor, value: f32_to_f16(np.float32(value))
    return as_element(tensor.dtype)


@jit(always_inline=True)
def _outcome(x, y):
    # Exactly one of less (1), greater (2), equal (4), unordered (8).
    return np.uint8((x < y) + 2 * (x > y) + 4 * (x == y) + 8 * ((x != x) or (y != y)))


@jit(always_inline=True)
def _pack(dst, n, holds, a, b):
    """Byte j of ``dst``: the results of elements 8j..8j+7 (those below ``n``), bit k for 8j+k."""
    for j in range((n + 7) // 8):
        byte = np.uint8(0)
        for k in range(min(8, n - 8 * j)):
            if _outcome(_vload(a, 8 * j + k), _vload(b, 8 * j + k)) & holds:
                byte |= np.uint8(1 << k)
        dst[j] = byte


@jit(always_inline=True)
def _pack_scalar(dst, n, holds, a, y):
    for j in range((n + 7) // 8):
        byte = np.uint8(0)
        for k in range(min(8, n - 8 * j)):
            if _outcome(_vload(a, 8 * j + k), y) & holds:
                byte |= np.uint8(1 << k)
        dst[j] = byte


@jit(always_inline=True)
def _mask_bit(mask_bytes, k):
    return (mask_bytes[k >> 3] >> (k & 7)) & 1


@jit(always_inline=True)
def _trace(ctx, code, count, dst, dst_ext, a, a_ext, b, b_ext):
    if tracing(ctx):
        n = max(count, 0)
        d, s, t = address(dst), address(a), address(b)
        trace_event(ctx, code, DIR_VECTOR, n * a.itemsize, n, d, d + dst_ext, s, s + a_ext, t, t + b_ext)


@jit(always_inline=True)
def _mode_ok_cmp(mode):
    return 0 <= mode < _HOLDS.size and _HOLDS[mode] != 0


# ---- the primitives --------------------------------------------------------------------------------

_COMPARE, _COMPARES = PRIMITIVE["Compare"], PRIMITIVE["Compares"]
_SELECT = PRIMITIVE["Select"]
_EV_COMPARE, _EV_COMPARES = EVENT["compare"], EVENT["compare_scalar"]
_EV_SELECT, _EV_SELECT_SCALAR = EVENT["select"], EVENT["select_scalar"]


@jit(always_inline=True)
def _whole_repeats(count, itemsize):
    # Compare and Compares compute whole 256-byte repeats: the elements past the last are not computed.
    return max(count, 0) * itemsize // REPEAT_BYTES * REPEAT_BYTES // itemsize


@jit
def compare(ctx, dst, a, b, mode, count):
    m = np.int64(mode)
    n = _whole_repeats(count, a.itemsize)
    if not check_compare(ctx, _COMPARE, count, a.itemsize, REPEAT_BYTES, m, _CMPMODE, _mode_ok_cmp(m), _address(dst),
                         dst.nbytes, n // 8, _address(a), a.nbytes, n * a.itemsize, _address(b), b.nbytes,
                         n * b.itemsize, 0, 0, NO_OPERAND):
        return
    _trace(ctx, _EV_COMPARE, n, dst, n // 8, a, n * a.itemsize, b, n * b.itemsize)
    advance_preload(ctx)
    if _mode_ok_cmp(m):
        _pack(dst, min(n, a.size, b.size, 8 * dst.size), _HOLDS[m], a, b)


@jit
def compare_scalar(ctx, dst, a, scalar, mode, count):
    m = np.int64(mode)
    n = _whole_repeats(count, a.itemsize)
    if not check_compare(ctx, _COMPARES, count, a.itemsize, REPEAT_BYTES, m, _CMPMODE, _mode_ok_cmp(m),
                         _address(dst), dst.nbytes, n // 8, _address(a), a.nbytes, n * a.itemsize, 0, 0, NO_OPERAND,
                         0, 0, NO_OPERAND):
        return
    _trace(ctx, _EV_COMPARES, n, dst, n // 8, a, n * a.itemsize, a, n * a.itemsize)
    advance_preload(ctx)
    if _mode_ok_cmp(m):
        _pack_scalar(dst, min(n, a.size, 8 * dst.size), _HOLDS[m], a, _vscalar(a, scalar))


@jit
def select(ctx, dst, mask, a, b, mode, count):
    m = np.int64(mode)
    spr = m == SELMODE.VSEL_CMPMASK_SPR
    # VSEL_CMPMASK_SPR: every 256-byte repeat reads the same first bits of the mask.
    period = REPEAT_BYTES // dst.itemsize if spr else count
    ext = count * dst.itemsize
    mode_ok = spr or m == SELMODE.VSEL_TENSOR_TENSOR_MODE
    if not check_compare(ctx, _SELECT, count, dst.itemsize, 0, m, _SELMODE, mode_ok, _address(dst), dst.nbytes, ext,
                         _address(a), a.nbytes, ext, _address(b), b.nbytes, ext, _address(mask), mask.nbytes,
                         (min(count, period) + 7) // 8):
        return
    _trace(ctx, _EV_SELECT, count, dst, ext, a, ext, b, ext)
    advance_preload(ctx)
    bits = mask.view(np.uint8)
    n = max(min(count, dst.size, a.size, b.size), 0)
    if spr:
        period = min(period, 8 * bits.size)  # (a mask shorter than the repeat's bits: checked mode reports it)
        for i in range(n):
            dst[i] = a[i] if _mask_bit(bits, i % period) else b[i]
    else:
        for i in range(min(n, 8 * bits.size)):
            dst[i] = a[i] if _mask_bit(bits, i) else b[i]


@jit
def select_scalar(ctx, dst, mask, a, scalar, mode, count):
    m = np.int64(mode)
    ext = count * dst.itemsize
    if not check_compare(ctx, _SELECT, count, dst.itemsize, 0, m, _SELMODE, m == SELMODE.VSEL_TENSOR_SCALAR_MODE,
                         _address(dst), dst.nbytes, ext, _address(a), a.nbytes, ext, 0, 0, NO_OPERAND,
                         _address(mask), mask.nbytes, (count + 7) // 8):
        return
    _trace(ctx, _EV_SELECT_SCALAR, count, dst, ext, a, ext, a, ext)
    advance_preload(ctx)
    bits = mask.view(np.uint8)
    s = _stored(dst, scalar)
    for i in range(max(min(count, dst.size, a.size, 8 * bits.size), 0)):
        dst[i] = a[i] if _mask_bit(bits, i) else s


for _name, _spec in COMPARE_OPS.items():  # each primitive's doc is its declaration's
    globals()[_name].py_func.__doc__ = _spec.doc
