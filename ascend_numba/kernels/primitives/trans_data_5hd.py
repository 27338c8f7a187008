"""TransDataTo5HD (vnchwconv): 16 source blocks of 32 bytes transposed into 16 destination blocks
(family ``layout`` of :mod:`ascend_numba.host.primitives`), the NCHW -> NC1HWC0 step.

``trans_data_to_5hd(ctx, dst_list, src_list, TransDataTo5HDParams(dst_high_half, src_high_half,
repeat_times, dst_rep_stride, src_rep_stride))``: the lists are 16 UB tensors each (a tuple), or
two uint64 UB tensors of 16 UB byte addresses (``get_phy_addr``) with the element type as a fifth
argument.  Repeat ``r`` takes each list's block at its address plus ``r * rep_stride`` 32-byte
blocks (one repeat: plus ``rep_stride``, as the page says; pass 0 to start at the address).  With
``S[k]`` the k-th source block and ``D[e]`` the e-th destination block, by element width:

* 2 bytes: ``D[e][k] = S[k][e]`` (a 16 x 16 transpose);
* 4 bytes: ``D[2j][k] = S[k][j]`` and ``D[2j + 1][k] = S[k + 8][j]`` (16 x 8 into 8 x 16, each row
  in two blocks);
* 1 byte: ``D[e][dh + k] = S[k][sh + e]`` with ``sh`` / ``dh`` 16 when ``src_high_half`` /
  ``dst_high_half``, else 0: half of each destination block is written.

A repeat reads its 16 blocks before writing any.  The mask register plays no part; bits are moved.
``repeat_times`` 0..255, strides uint16 fields.  Checked mode: each block inside its tensor (the
address form: inside UB) and on 32 bytes, the sources written before, the halves set only on a
1-byte type; the destination blocks count as written (a garbage source does not carry over).

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/
数据排布转换/TransDataTo5HD.md``, ``include/basic_api/kernel_struct_transpose.h`` and
``impl/basic_api/dav_c220/kernel_operator_vec_transpose_impl.h``; the element formulas are the
scatter_vnchwconv intrinsic page's (hiascend CANN 8.5 cceintrinsicapi).
"""

from __future__ import annotations

import collections

import numpy as np
from numba import carray, types

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import MODES, OPERAND_DST, OPERAND_SRC, OPERAND_SRC1, PRIMITIVE
from ...checked.ub_shadow import is_local_operand, mark_written, ub_aligned, ub_range_ok, ub_read_ok
from ...host.primitives import PRIMITIVES
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import _address, _voidptr
from .context import trace_event, tracing
from .tile_types import check_contiguous
from .masks import _DST_REP, _REPEAT_TIMES, _SRC0_REP, BLOCK_BYTES, MAX_REPEAT, _param_ok
from .preload import advance_preload
from .vector import declared

__all__ = ["trans_data_to_5hd", "TransDataTo5HDParams", "get_phy_addr"]

_PRIM, _CODE = PRIMITIVE["TransDataTo5HD"], EVENT["trans_data_to_5hd"]
LIST = 16  # addresses in each list
_HIGH_HALF = MODES.index("high half")

TransDataTo5HDParams = collections.namedtuple(
    "TransDataTo5HDParams", ("dst_high_half", "src_high_half", "repeat_times", "dst_rep_stride", "src_rep_stride"),
    defaults=(False, False, 1, 0, 0))


@jit(always_inline=True)
def get_phy_addr(ctx, tensor, offset=0):
    """GetPhyAddr of a UB tensor's element ``offset``: its byte address in the lane's UB (an
    address outside the UB, as of a GM tensor, is 2**64 - 1: no UB address)."""
    at = np.int64(_address(tensor)) - ctx.ub_addr + offset * tensor.itemsize
    return np.uint64(at) if 0 <= at < ctx.ub_size else np.uint64(0xFFFF_FFFF_FFFF_FFFF)


@checked_rule
@jit
def check_5hd_call(ctx, repeat_times, d_rep, s_rep, width, high_halves):
    """TransDataTo5HD: repeatTime 0..255, strides in uint16, the high halves only on 1-byte types."""
    enter(ctx, _PRIM)
    if not (_param_ok(ctx, _PRIM, _REPEAT_TIMES, repeat_times, 0, MAX_REPEAT)
            and _param_ok(ctx, _PRIM, _DST_REP, d_rep, 0, 0xFFFF)
            and _param_ok(ctx, _PRIM, _SRC0_REP, s_rep, 0, 0xFFFF)):
        return False
    if width != 1 and high_halves:
        report.mode_out_of_range(ctx, _PRIM, OPERAND_DST, mode=_HIGH_HALF, value=high_halves)
        return False
    return True


@checked_rule
@jit
def check_5hd_list(ctx, addr, nbytes):
    """The address form's list: a UB tensor of 16 addresses, written before."""
    return (is_local_operand(ctx, _PRIM, OPERAND_SRC1, addr)
            and ub_range_ok(ctx, _PRIM, OPERAND_SRC1, addr, nbytes, 0, LIST * 8)
            and ub_read_ok(ctx, _PRIM, OPERAND_SRC1, addr, 0, LIST * 8))


@checked_rule
@jit
def check_5hd_block(ctx, is_dst, addr, nbytes, byte, half):
    """One list entry's block of a repeat: a UB tensor's, on 32 bytes, inside it; the bytes it
    reads written before, the bytes it writes marked written (``half`` -1: all 32; else the 16 at
    ``half``, the 1-byte form's)."""
    operand = OPERAND_DST if is_dst else OPERAND_SRC
    if not (is_local_operand(ctx, _PRIM, operand, addr) and ub_aligned(ctx, _PRIM, operand, addr, byte)
            and ub_range_ok(ctx, _PRIM, operand, addr, nbytes, byte, BLOCK_BYTES)):
        return False
    at, n = (byte, BLOCK_BYTES) if half < 0 else (byte + half, BLOCK_BYTES // 2)
    if not is_dst:
        return ub_read_ok(ctx, _PRIM, operand, addr, at, n)
    mark_written(ctx, addr - ctx.ub_addr + at, n)
    return True


@jit(_nrt=True)  # the UB's bytes as a view, a repeat's source blocks in a buffer
def _vnchwconv(ctx, dst_list, src_list, width, dst_high, src_high, nrep, d_rep, s_rep):
    """The repeats (see the module doc); a block outside the UB is skipped (checked mode reports it)."""
    ub = carray(_voidptr(ctx.ub_addr), ctx.ub_size, np.uint8)
    blocks = np.empty((LIST, BLOCK_BYTES), np.uint8)
    have = np.empty(LIST, np.bool_)
    sh, dh = 16 if src_high else 0, 16 if dst_high else 0
    for r in range(nrep):
        step = r if nrep > 1 else 1  # one repeat starts a stride on (the page's rule)
        for k in range(LIST):
            s = _entry(ctx, src_list, k)[2] + step * s_rep * BLOCK_BYTES
            have[k] = 0 <= s and s + BLOCK_BYTES <= ctx.ub_size
            if have[k]:
                blocks[k, :] = ub[s:s + BLOCK_BYTES]
        for e in range(LIST):
            d = _entry(ctx, dst_list, e)[2] + step * d_rep * BLOCK_BYTES
            if not (0 <= d and d + BLOCK_BYTES <= ctx.ub_size):
                continue
            for k in range(LIST):
                if width == 1:
                    if have[k]:
                        ub[d + dh + k] = blocks[k, sh + e]
                elif width == 2:
                    if have[k]:
                        ub[d + 2 * k] = blocks[k, 2 * e]
                        ub[d + 2 * k + 1] = blocks[k, 2 * e + 1]
                elif k < 8:
                    j, row = e // 2, k + 8 * (e % 2)
                    if have[row]:
                        for b in range(4):
                            ub[d + 4 * k + b] = blocks[row, 4 * j + b]


def _width(lists, dtype):
    if isinstance(lists, types.BaseTuple):
        if len(lists) != LIST or not all(isinstance(t, types.Array) for t in lists) or len(set(lists)) != 1:
            raise TypingError("TransDataTo5HD's lists: 16 UB tensors of one type each")
        check_contiguous(*lists)
        return lists[0].dtype.bitwidth // 8
    if isinstance(lists, types.Array) and lists.dtype == types.uint64:
        if not isinstance(dtype, types.NumberClass):
            raise TypingError("TransDataTo5HD's address form names its element type: (ctx, dst, src, params, dtype)")
        return dtype.instance_type.bitwidth // 8
    raise TypingError("TransDataTo5HD takes two tuples of 16 UB tensors or two uint64 tensors of UB addresses")


def _width_of(dst, src, dtype):
    """The element width (bytes) of both lists: the tensor-list form's tensors or the address
    form's ``dtype``."""
    raise NotImplementedError  # compiled only


@overload(_width_of, jit_options=OVERLOAD_OPTIONS)
def _ov_width_of(dst, src, dtype):
    width = _width(dst, dtype)
    if _width(src, dtype) != width or width not in (1, 2, 4):
        raise TypingError(f"TransDataTo5HD moves 1-, 2- or 4-byte elements, one type for both lists; got {dst}, {src}")
    return lambda dst, src, dtype: width


def _lists_ok(ctx, dst, src):
    """Whether the address form's lists hold 16 addresses each (checked mode: written before)."""
    raise NotImplementedError  # compiled only


@overload(_lists_ok, jit_options=OVERLOAD_OPTIONS)
def _ov_lists_ok(ctx, dst, src):
    if isinstance(dst, types.BaseTuple):
        return lambda ctx, dst, src: True
    return lambda ctx, dst, src: (check_5hd_list(ctx, _address(dst), dst.nbytes)
                                  and check_5hd_list(ctx, _address(src), src.nbytes)
                                  and dst.size >= LIST and src.size >= LIST)


def _entry(ctx, lists, k):
    """List entry ``k``: (its tensor's address, bytes) and its block's UB byte offset."""
    raise NotImplementedError  # compiled only


@overload(_entry, jit_options=OVERLOAD_OPTIONS)
def _ov_entry(ctx, lists, k):
    if isinstance(lists, types.BaseTuple):
        def of_tensor(ctx, lists, k):
            t = lists[k]
            return np.int64(_address(t)), np.int64(t.nbytes), np.int64(_address(t)) - ctx.ub_addr
        return of_tensor

    def of_address(ctx, lists, k):  # the UB from the address on is the "tensor"
        at = np.int64(lists[k])
        return np.int64(ctx.ub_addr) + at, np.int64(ctx.ub_size) - at, at
    return of_address


def _trans_data_to_5hd(ctx, dst, src, params=TransDataTo5HDParams(), dtype=None):
    # dst, src: the destination and source lists (16 tensors, or a uint64 tensor of 16 addresses).
    dst_list, src_list = dst, src
    width = _width_of(dst_list, src_list, dtype)
    dst_high, src_high = bool(params[0]), bool(params[1])
    d_rep, s_rep = np.int64(params[3]) & 0xFFFF, np.int64(params[4]) & 0xFFFF
    if not check_5hd_call(ctx, np.int64(params[2]), np.int64(params[3]), np.int64(params[4]), width,
                          np.int64(dst_high) + np.int64(src_high)):
        return
    nrep = np.int64(params[2]) & MAX_REPEAT
    if not _lists_ok(ctx, dst_list, src_list):
        return
    sh, dh = (16 if src_high else 0, 16 if dst_high else 0) if width == 1 else (-1, -1)
    for r in range(nrep):
        step = r if nrep > 1 else 1
        for k in range(LIST):
            sa, sn, _ = _entry(ctx, src_list, k)
            if not check_5hd_block(ctx, False, sa, sn, step * s_rep * BLOCK_BYTES, sh):
                return
        for k in range(LIST):
            da, dn, _ = _entry(ctx, dst_list, k)
            if not check_5hd_block(ctx, True, da, dn, step * d_rep * BLOCK_BYTES, dh):
                return
    if tracing(ctx):
        n = nrep * LIST * BLOCK_BYTES
        trace_event(ctx, _CODE, DIR_VECTOR, n, n // width, ctx.ub_addr, ctx.ub_addr + ctx.ub_size, ctx.ub_addr,
                    ctx.ub_addr + ctx.ub_size, 0, 0)
    advance_preload(ctx)
    _vnchwconv(ctx, dst_list, src_list, width, dst_high, src_high, nrep, d_rep, s_rep)


trans_data_to_5hd = declared(_trans_data_to_5hd, PRIMITIVES["trans_data_to_5hd"], __name__)
