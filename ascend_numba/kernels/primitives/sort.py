"""Sort32, MrgSort and GetMrgSortResult (family ``sort`` of :mod:`ascend_numba.host.primitives`):
the A2/A3 sort instructions on (score, index) records.

A record is 8 bytes: an fp32 tile's is the score and the index's uint32 bits (elements ``2k``,
``2k + 1``); an fp16 tile's (uint16 bits) is the score, 2 reserved bytes (Sort32 writes 0,
MrgSort moves records whole) and the index (elements ``4k .. 4k + 3``).

* ``sort32(ctx, dst, src0, src1, repeat_time)``: each repeat sorts 32 scores of ``src0`` with
  their uint32 indices from ``src1`` into 32 records, the highest score first; ``src0`` and
  ``src1`` advance 32 elements a repeat, ``dst`` 256 bytes.  The index is carried, not made.
* ``mrg_sort(ctx, dst, MrgSortSrcList(src1, src2, src3, src4), MrgSort4Info(element_lengths,
  if_exhausted_suspension, valid_bit, repeat_times))``: merges the first 2, 3 or 4 queues
  (``valid_bit`` 3, 7, 15) of ``element_lengths[i]`` sorted records into one, highest first;
  repeat ``r`` reads each queue and writes ``dst`` ``r * (the lengths' sum)`` records on (the
  device takes repeats for four equal, back-to-back queues only: checked mode says so).  With
  ``if_exhausted_suspension`` the merge stops after the last record of the first queue to run
  out, the rest of ``dst`` left.
* ``get_mrg_sort_result(ctx)``: the records the last MrgSort's last repeat took from each queue
  (the VMS4_SR register's four 16-bit fields), as a tuple of four.

The order: descending by the score's IEEE total order (sign-magnitude: +NaN above +inf, -NaN
below -inf, +0.0 above -0.0: the twin's choice, the one order that fits the TopK page's NaN
first and pto-isa's negative-NaN padding sorting last); equal scores keep their input order, and
in a merge the lower queue's record comes first (the pages' tie rule, pto-isa's goldens).

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/
排序组合（ISASI）/`` (Sort32, MrgSort, GetMrgSortResult), ``include/basic_api/kernel_struct_proposal.h``
and ``impl/basic_api/dav_c220/kernel_operator_proposal_impl.h``; goldens: cannmirror/pto-isa at
defdb75, ``tests/npu/a2a3/src/st/testcase/{tsort32,tmrgsort}/gen_data.py``.  MrgSort4, RpSort16,
ProposalConcat and ProposalExtract are not A2/A3 instructions (c220 issues nothing for them).
"""

from __future__ import annotations

import collections

import numpy as np
from numba import types

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import MODES, OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE, REPEAT_PARAMS
from ...checked.ub_shadow import is_local_operand, mark_written, ub_aligned, ub_range_ok, ub_read_ok
from ...host.primitives import PRIMITIVES
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import STATE_VMS4_SR, _address, _load_i64, _store_i64
from .context import address, trace_event, tracing
from .tile_types import check_contiguous
from .element_bits import bits_of, put_bits
from .masks import _REPEAT_TIMES, MAX_REPEAT, _param_ok
from .preload import advance_preload
from .vector import declared

__all__ = ["sort32", "mrg_sort", "get_mrg_sort_result", "MrgSortSrcList", "MrgSort4Info"]

_SORT32, _MRG = PRIMITIVE["Sort32"], PRIMITIVE["MrgSort"]
_SORT32_CODE, _MRG_CODE = EVENT["sort32"], EVENT["mrg_sort"]
_VALID_BIT, _LENGTHS = MODES.index("validBit"), REPEAT_PARAMS.index("elementLengths")
RECORD_BYTES, SORT_RUN = 8, 32
MAX_LENGTH = 4095  # elementLengths: the page's range

MrgSortSrcList = collections.namedtuple("MrgSortSrcList", ("src1", "src2", "src3", "src4"))
MrgSort4Info = collections.namedtuple("MrgSort4Info", ("element_lengths", "if_exhausted_suspension", "valid_bit",
                                                       "repeat_times"), defaults=((0, 0, 0, 0), False, 0, 1))


def _check_tiles(dst, scores, index):
    if not (isinstance(dst, types.Array) and dst.dtype in (types.float32, types.uint16)):
        raise TypingError(f"a sort's records are fp32 or fp16 (uint16 bits) tiles; got dst {dst}")
    for t in scores:
        if not (isinstance(t, types.Array) and t.dtype == dst.dtype):
            raise TypingError(f"a sort's scores are of dst's type ({dst.dtype}); got {t}")
    if index is not None and not (isinstance(index, types.Array) and index.dtype == types.uint32):
        raise TypingError(f"Sort32's indices are a uint32 tile; got {index}")
    check_contiguous(dst, *scores, *(() if index is None else (index,)))


def _sort32_tiles(dst, src0, src1):
    raise NotImplementedError  # compiled only


@overload(_sort32_tiles, jit_options=OVERLOAD_OPTIONS)
def _ov_sort32_tiles(dst, src0, src1):
    _check_tiles(dst, (src0,), src1)
    return lambda dst, src0, src1: None


def _merge_tiles(dst, q0, q1, q2, q3):
    raise NotImplementedError  # compiled only


@overload(_merge_tiles, jit_options=OVERLOAD_OPTIONS)
def _ov_merge_tiles(dst, q0, q1, q2, q3):
    _check_tiles(dst, (q0, q1, q2, q3), None)
    return lambda dst, q0, q1, q2, q3: None


@jit(always_inline=True)
def _record(t, k):
    """Record ``k``'s (score word, index) as integers."""
    if t.itemsize == 4:
        return bits_of(t, 2 * k), bits_of(t, 2 * k + 1)
    return bits_of(t, 4 * k) | (bits_of(t, 4 * k + 1) << 16), bits_of(t, 4 * k + 2) | (bits_of(t, 4 * k + 3) << 16)


@jit(always_inline=True)
def _put_record(t, k, score, index):
    if t.itemsize == 4:
        put_bits(t, 2 * k, score)
        put_bits(t, 2 * k + 1, index)
    else:
        put_bits(t, 4 * k, score)
        put_bits(t, 4 * k + 1, score >> 16)
        put_bits(t, 4 * k + 2, index)
        put_bits(t, 4 * k + 3, index >> 16)


@jit(always_inline=True)
def _key(score, size):
    """The score's place in the IEEE total order, as an unsigned integer (higher sorts first)."""
    bits = size * 8
    s = score & ((np.int64(1) << bits) - 1)
    sign = np.int64(1) << (bits - 1)
    return ((np.int64(1) << bits) - 1) ^ s if s & sign else s | sign


# ---- checked-mode rules ------------------------------------------------------------------------------

@jit(always_inline=True)
def _operand_ok(ctx, prim, operand, addr, nbytes, start, n, read):
    if not (is_local_operand(ctx, prim, operand, addr) and ub_aligned(ctx, prim, operand, addr, 0)
            and ub_range_ok(ctx, prim, operand, addr, nbytes, start, n)):
        return False
    return not read or ub_read_ok(ctx, prim, operand, addr, start, n)


@checked_rule
@jit
def check_sort32(ctx, repeat_time, dst_addr, dst_nbytes, src0_addr, src0_nbytes, src1_addr, src1_nbytes, size):
    """Sort32: repeatTime 0..255; the scores and indices read inside their tensors (written before),
    the records inside ``dst``."""
    enter(ctx, _SORT32)
    if not _param_ok(ctx, _SORT32, _REPEAT_TIMES, repeat_time, 0, MAX_REPEAT):
        return False
    if repeat_time == 0:
        return True
    n = repeat_time * SORT_RUN
    if not (_operand_ok(ctx, _SORT32, OPERAND_SRC, src0_addr, src0_nbytes, 0, n * size, True)
            and _operand_ok(ctx, _SORT32, OPERAND_SRC1, src1_addr, src1_nbytes, 0, n * 4, True)
            and _operand_ok(ctx, _SORT32, OPERAND_DST, dst_addr, dst_nbytes, 0, n * RECORD_BYTES, False)):
        return False
    mark_written(ctx, np.int64(dst_addr) - np.int64(ctx.ub_addr), n * RECORD_BYTES)
    return True


@checked_rule
@jit
def check_mrg_sort(ctx, valid_bit, exhausted, repeat_times, dst_addr, dst_nbytes, k, addr, nbytes, length, total,
                   next_addr):
    """MrgSort, called for the call (``k`` -1), each valid queue ``k`` (0..3), ``dst`` (4) and, after
    a suspended merge, the ``total`` records it wrote (5):
    validBit 3, 7 or 15, repeatTimes 0..255 and above 1 only for four equal queues back to back
    without suspension; each valid queue's records read inside its tensor (written before),
    aligned; the merged records inside ``dst``."""
    if k < 0:
        enter(ctx, _MRG)
        if not (valid_bit == 3 or valid_bit == 7 or valid_bit == 15):
            report.mode_out_of_range(ctx, _MRG, OPERAND_SRC, mode=_VALID_BIT, value=valid_bit)
            return False
        return _param_ok(ctx, _MRG, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
    if k >= 4:
        if repeat_times == 0:
            return True
        if k == 5:  # after a suspended merge: the records it wrote (``total``)
            mark_written(ctx, np.int64(dst_addr) - np.int64(ctx.ub_addr), total * RECORD_BYTES)
            return True
        if not _operand_ok(ctx, _MRG, OPERAND_DST, dst_addr, dst_nbytes, 0, repeat_times * total * RECORD_BYTES,
                           False):
            return False
        if not exhausted:
            mark_written(ctx, np.int64(dst_addr) - np.int64(ctx.ub_addr), repeat_times * total * RECORD_BYTES)
        return True
    if not _param_ok(ctx, _MRG, _LENGTHS, length, 0, MAX_LENGTH):
        return False
    if repeat_times > 1 and (valid_bit != 15 or exhausted or length * 4 != total
                             or (k < 3 and next_addr != addr + length * RECORD_BYTES)):
        report.repeat_params_out_of_range(ctx, _MRG, OPERAND_SRC, param=_REPEAT_TIMES, value=repeat_times, low=0,
                                          high=1)
        return False
    if repeat_times == 0 or length == 0:
        return True
    if not _operand_ok(ctx, _MRG, OPERAND_SRC, addr, nbytes, 0, 0, False):
        return False
    for r in range(repeat_times):
        at = r * total * RECORD_BYTES
        if not (ub_range_ok(ctx, _MRG, OPERAND_SRC, addr, nbytes, at, length * RECORD_BYTES)
                and ub_read_ok(ctx, _MRG, OPERAND_SRC, addr, at, length * RECORD_BYTES)):
            return False
    return True


# ---- the primitives ------------------------------------------------------------------------------------

@jit(_nrt=True)  # a repeat's keys and order in small arrays
def _sort_runs(dst, src0, src1, nrep):
    size = src0.itemsize
    keys, order = np.empty(SORT_RUN, np.int64), np.empty(SORT_RUN, np.int64)
    for r in range(nrep):
        base = r * SORT_RUN
        end = base + SORT_RUN
        if end > src0.size or end > src1.size or end * RECORD_BYTES > dst.nbytes:
            return  # checked mode reports the tensor that is short
        for j in range(SORT_RUN):
            keys[j] = _key(bits_of(src0, base + j), size)
            order[j] = j
        for j in range(1, SORT_RUN):  # insertion sort: stable, the higher key first
            o, q = order[j], j
            while q > 0 and keys[order[q - 1]] < keys[o]:
                order[q] = order[q - 1]
                q -= 1
            order[q] = o
        for j in range(SORT_RUN):
            _put_record(dst, base + j, bits_of(src0, base + order[j]), np.int64(src1[base + order[j]]))


def _sort32(ctx, dst, src0, src1, repeat_time):
    _sort32_tiles(dst, src0, src1)
    if not check_sort32(ctx, np.int64(repeat_time), _address(dst), dst.nbytes, _address(src0), src0.nbytes,
                        _address(src1), src1.nbytes, src0.itemsize):
        return
    nrep = np.int64(repeat_time) & MAX_REPEAT
    if tracing(ctx):
        d, s, i = address(dst), address(src0), address(src1)
        n = nrep * SORT_RUN
        trace_event(ctx, _SORT32_CODE, DIR_VECTOR, n * RECORD_BYTES, n, d, d + n * RECORD_BYTES, s,
                    s + n * src0.itemsize, i, i + 4 * n)
    advance_preload(ctx)
    _sort_runs(dst, src0, src1, nrep)


@jit(_nrt=True)  # the queues' heads in small arrays
def _merge(dst, q0, q1, q2, q3, lengths, queues, exhausted, nrep, total):
    """The merges; returns the VMS4_SR word of the last repeat (the records taken per queue)."""
    size = dst.itemsize
    heads = np.zeros(4, np.int64)
    register = np.int64(0)
    for r in range(nrep):
        heads[:] = 0
        out = r * total
        while True:
            best, best_key = -1, np.int64(-1)
            for i in range(queues):
                if heads[i] < lengths[i]:
                    q = q0 if i == 0 else q1 if i == 1 else q2 if i == 2 else q3
                    k = r * total + heads[i]
                    if (k + 1) * RECORD_BYTES > q.nbytes:
                        continue  # past its tensor: checked mode reports it
                    key = _key(_record(q, k)[0], size)
                    if key > best_key:
                        best, best_key = i, key
            if best < 0:
                break
            q = q0 if best == 0 else q1 if best == 1 else q2 if best == 2 else q3
            score, index = _record(q, r * total + heads[best])
            if (out + 1) * RECORD_BYTES <= dst.nbytes:
                _put_record(dst, out, score, index)
            out += 1
            heads[best] += 1
            if exhausted and heads[best] == lengths[best]:
                break
        register = heads[0] | (heads[1] << 16) | (heads[2] << 32) | (heads[3] << 48)
    return register


def _mrg_sort(ctx, dst, src, params):
    q0, q1, q2, q3 = src[0], src[1], src[2], src[3]
    _merge_tiles(dst, q0, q1, q2, q3)
    valid_bit = np.int64(params[2])
    exhausted = bool(params[1])
    nrep = np.int64(params[3]) & 0xFF  # a uint8_t field
    queues = 4 if valid_bit == 15 else 3 if valid_bit == 7 else 2
    lengths = (np.int64(params[0][0]) & 0xFFFF, np.int64(params[0][1]) & 0xFFFF,
               np.int64(params[0][2]) & 0xFFFF if queues > 2 else np.int64(0),
               np.int64(params[0][3]) & 0xFFFF if queues > 3 else np.int64(0))
    total = lengths[0] + lengths[1] + lengths[2] + lengths[3]
    addrs = (np.int64(_address(q0)), np.int64(_address(q1)), np.int64(_address(q2)), np.int64(_address(q3)))
    sizes = (np.int64(q0.nbytes), np.int64(q1.nbytes), np.int64(q2.nbytes), np.int64(q3.nbytes))
    if not check_mrg_sort(ctx, valid_bit, exhausted, np.int64(params[3]), _address(dst), dst.nbytes, -1, 0, 0, 0,
                          total, 0):
        return
    for k in range(queues):
        if not check_mrg_sort(ctx, valid_bit, exhausted, nrep, _address(dst), dst.nbytes, k, addrs[k], sizes[k],
                              lengths[k], total, addrs[k + 1] if k + 1 < queues else 0):
            return
    if not check_mrg_sort(ctx, valid_bit, exhausted, nrep, _address(dst), dst.nbytes, 4, 0, 0, 0, total, 0):
        return
    if tracing(ctx):
        d = address(dst)
        n = nrep * total
        trace_event(ctx, _MRG_CODE, DIR_VECTOR, n * RECORD_BYTES, n, d, d + n * RECORD_BYTES, addrs[0],
                    addrs[0] + lengths[0] * RECORD_BYTES, addrs[1], addrs[1] + lengths[1] * RECORD_BYTES)
    advance_preload(ctx)
    if nrep > 0:
        taken = _merge(dst, q0, q1, q2, q3, lengths, queues, exhausted, nrep, total)
        _store_i64(ctx.state_addr, STATE_VMS4_SR, taken)
        if exhausted:
            written = (taken & 0xFFFF) + ((taken >> 16) & 0xFFFF) + ((taken >> 32) & 0xFFFF) + ((taken >> 48) & 0xFFFF)
            check_mrg_sort(ctx, valid_bit, exhausted, nrep, _address(dst), dst.nbytes, 5, 0, 0, 0, written, 0)


sort32 = declared(_sort32, PRIMITIVES["sort32"], __name__)
mrg_sort = declared(_mrg_sort, PRIMITIVES["mrg_sort"], __name__)


def _get_mrg_sort_result(ctx):
    sr = _load_i64(ctx.state_addr, STATE_VMS4_SR)
    return (np.uint16(sr & 0xFFFF), np.uint16((sr >> 16) & 0xFFFF), np.uint16((sr >> 32) & 0xFFFF),
            np.uint16((sr >> 48) & 0xFFFF))


get_mrg_sort_result = declared(_get_mrg_sort_result, PRIMITIVES["get_mrg_sort_result"], __name__)
