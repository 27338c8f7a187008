"""The compare-mask register (CMPMASK, 128 bits): SetCmpMask and GetCmpMask, Compare with its
result in the register, and Select reading it (VSEL_CMPMASK_SPR without a mask tensor).

* ``set_cmp_mask(ctx, src)`` loads the register from the first 16 bytes of a UB tensor (low word
  first); ``get_cmp_mask(ctx, dst)`` stores it there.
* ``compare_register(ctx, a, b, mode, mask, params, is_set_mask=True)`` is the device's
  ``Compare(src0, src1, cmpMode, mask, repeatParams)``: one repeat, no destination tensor.  Bit
  ``k`` of the register is lane ``k``'s result (128 lanes of fp16, 64 of fp32 in the low word);
  a lane the vector mask leaves out keeps its bit, as the CCE pages say (the Ascend 950's emulation
  clears it instead; the A2/A3 hardware is the twin's model).  The fp32 form leaves the high word.
* ``select_register(ctx, dst, a, b, repeat_times, params)`` is the device's ``Select(dst, src0,
  src1, repeatTime, repeatParams)`` in VSEL_CMPMASK_SPR: each repeat's lane ``k`` takes ``a``
  where bit ``k`` of the register is 1, else ``b``, under the vector mask register as it is.
* A count-form ``select`` in VSEL_CMPMASK_SPR loads the register from its mask tensor first, as
  the device's does (``set_cmpmask``).

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/比较与选择/``
(``Compare（结果存入寄存器）``, ``GetCmpMask``, ``SetCmpMask``, ``Select``) and
``impl/basic_api/dav_c220/kernel_operator_vec_cmp_impl.h`` / ``..._cmpsel_impl.h``.  Relations as
Compare's (a NaN makes every mode false, NE too).
"""

from __future__ import annotations

import numpy as np

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import MODES, OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import is_local_operand, mark_written, ub_aligned, ub_range_ok, ub_read_ok
from ...host.primitives import PRIMITIVES
from ...host.trace import DIR_SCALAR, DIR_VECTOR, EVENT
from ..._numba_compat.jit import jit
from ..lane import _address, _load_word, _store_word
from .cmpsel import EQ, GE, GT, LE, LT, NE, _apply_register_bit, _mode_ok_cmp, _one_type
from .context import address, trace_event, tracing
from .masks import (BLOCK_BYTES, NO_OPERAND, REPEAT_BYTES, _runs_ok, binary_params, call_mask, check_repeat,
                    lane_index, lane_on, read_cmpmask, repeats_of, stride_u8, word, write_cmpmask)
from .preload import advance_preload
from .vector import _bits_load, _bits_store, _span, _trace_repeat, _vload, binary_strides, repeat_loop

__all__ = ["set_cmp_mask", "get_cmp_mask", "compare_register", "select_register"]

CMPMASK_BYTES = 16
_SET, _GET = PRIMITIVE["SetCmpMask"], PRIMITIVE["GetCmpMask"]
_COMPARE, _SELECT = PRIMITIVE["Compare"], PRIMITIVE["Select"]
_EV_SET, _EV_GET = EVENT["set_cmp_mask"], EVENT["get_cmp_mask"]
_EV_COMPARE, _EV_SELECT = EVENT["compare_register"], EVENT["select_register"]
_CMPMODE = MODES.index("CMPMODE")


# ---- checked-mode rules ----------------------------------------------------------------------------

@checked_rule
@jit
def check_cmpmask_io(ctx, prim, addr, nbytes, load):
    """SetCmpMask (``load``) reads, GetCmpMask writes, the first 16 bytes of a UB tensor."""
    enter(ctx, prim)
    operand = OPERAND_SRC if load else OPERAND_DST
    if not (is_local_operand(ctx, prim, operand, addr) and ub_aligned(ctx, prim, operand, addr, 0)
            and ub_range_ok(ctx, prim, operand, addr, nbytes, 0, CMPMASK_BYTES)):
        return False
    if load:
        return ub_read_ok(ctx, prim, operand, addr, 0, CMPMASK_BYTES)
    mark_written(ctx, np.int64(addr) - np.int64(ctx.ub_addr), CMPMASK_BYTES)
    return True


@checked_rule
@jit
def check_compare_register(ctx, prim, mode, counter, high, low, lanes, a_addr, a_nbytes, a_size, a_blk, b_addr,
                           b_nbytes, b_size, b_blk):
    """Compare into the register: a CMPMODE, and the lanes of one repeat inside each source and
    written."""
    enter(ctx, prim)
    if not _mode_ok_cmp(mode):
        report.mode_out_of_range(ctx, prim, OPERAND_DST, mode=_CMPMODE, value=mode)
        return False
    for operand, addr, nbytes, size, blk in ((OPERAND_SRC, a_addr, a_nbytes, a_size, a_blk),
                                            (OPERAND_SRC1, b_addr, b_nbytes, b_size, b_blk)):
        if size == NO_OPERAND:
            continue
        if not (is_local_operand(ctx, prim, operand, addr) and ub_aligned(ctx, prim, operand, addr, 0)):
            return False
        lo, _ = _runs_ok(ctx, prim, operand, addr, nbytes, size, blk, 0, 1, counter, high, low, lanes, False)
        if lo < 0:
            return False
    return True


# ---- the primitives ----------------------------------------------------------------------------------

@jit(always_inline=True)
def _trace_scalar(ctx, code, tensor):
    if tracing(ctx):
        at = address(tensor)
        trace_event(ctx, code, DIR_SCALAR, CMPMASK_BYTES, 1, at, at + CMPMASK_BYTES, 0, 0, 0, 0)


@jit
def set_cmp_mask(ctx, src):
    if not check_cmpmask_io(ctx, _SET, _address(src), src.nbytes, True) or src.nbytes < CMPMASK_BYTES:
        return
    _trace_scalar(ctx, _EV_SET, src)
    at = _address(src)
    write_cmpmask(ctx, word(_load_word(at)), word(_load_word(at + 8)))


@jit
def get_cmp_mask(ctx, dst):
    if not check_cmpmask_io(ctx, _GET, _address(dst), dst.nbytes, False) or dst.nbytes < CMPMASK_BYTES:
        return
    _trace_scalar(ctx, _EV_GET, dst)
    low, high = read_cmpmask(ctx)
    at = _address(dst)
    _store_word(at, low)
    _store_word(at + 8, high)


@jit(always_inline=True)
def _holds(mode, x, y):
    if mode == LT:
        return x < y
    if mode == GT:
        return x > y
    if mode == EQ:
        return x == y
    if mode == LE:
        return x <= y
    if mode == GE:
        return x >= y
    return mode == NE and (x < y or x > y)


@jit
def compare_register(ctx, a, b, mode, mask, params, is_set_mask=True):
    _one_type(a, a, b)
    binary_params(params)
    m = np.int64(mode)
    counter, high, low = call_mask(ctx, mask, is_set_mask)
    lanes, epb = REPEAT_BYTES // a.itemsize, BLOCK_BYTES // a.itemsize
    a_blk, b_blk = stride_u8(params[1]), stride_u8(params[2])
    if not check_compare_register(ctx, _COMPARE, m, counter, high, low, lanes, _address(a), a.nbytes, a.itemsize,
                                  params[1], _address(b), b.nbytes, b.itemsize, params[2]):
        return
    if tracing(ctx):  # one repeat's bytes of each source; it writes no memory
        s, t = address(a), address(b)
        trace_event(ctx, _EV_COMPARE, DIR_VECTOR, REPEAT_BYTES, lanes, 0, 0, s, s + _span(1, a_blk, 0), t,
                    t + _span(1, b_blk, 0))
    advance_preload(ctx)
    c_low, c_high = read_cmpmask(ctx)
    for k in range(lanes):
        if not lane_on(counter, high, low, lanes, 0, k):
            continue
        i, j = lane_index(0, k, a_blk, 0, epb), lane_index(0, k, b_blk, 0, epb)
        if i >= a.size or j >= b.size:
            continue
        bit = np.int64(1) << (k % 64)
        on = _holds(m, _vload(a, i), _vload(b, j))
        if k < 64:
            c_low = (c_low | bit) if on else (c_low & ~bit)
        else:
            c_high = (c_high | bit) if on else (c_high & ~bit)
    write_cmpmask(ctx, c_low, c_high)


@jit
def select_register(ctx, dst, a, b, repeat_times, params):
    _one_type(dst, a, b)
    binary_params(params)
    counter, high, low = call_mask(ctx, 0, False)
    if not check_repeat(ctx, _SELECT, repeat_times, counter, high, low, 0, 0xFF, _address(dst), dst.nbytes,
                        dst.itemsize, params[0], params[3], _address(a), a.nbytes, a.itemsize, params[1], params[4],
                        _address(b), b.nbytes, b.itemsize, params[2], params[5], False):
        return
    d_blk, a_blk, b_blk, d_rep, a_rep, b_rep = binary_strides(params)
    nrep = repeats_of(counter, low, repeat_times, REPEAT_BYTES // dst.itemsize)
    _trace_repeat(ctx, _EV_SELECT, nrep, dst, d_blk, d_rep, a, a_blk, a_rep, b, b_blk, b_rep)
    advance_preload(ctx)
    repeat_loop(dst, a, b, read_cmpmask(ctx), nrep, counter, high, low, d_blk, d_rep, a_blk, a_rep, b_blk, b_rep,
                _apply_register_bit, None, _bits_load, _bits_store)



for _name in __all__:  # each primitive's doc is its declaration's
    globals()[_name].py_func.__doc__ = PRIMITIVES[_name].doc
