"""Transpose (family ``layout`` of :mod:`ascend_numba.host.primitives`): a 16x16 block of 2-byte
elements, or [N, C, H, W] <-> [N, H, W, C] with a scratch tensor.

``transpose(ctx, dst, src)`` is the device's plain ``Transpose(dst, src)``: ``dst = src.T`` of a
16x16 matrix (int16, uint16, fp16 tiles).  ``transpose(ctx, dst, src, tmp, TransposeParamsExt(n, c,
h, w, transpose_type))`` is the enhanced form: TRANSPOSE_ND2ND_B16 (the 16x16 one, uint16),
TRANSPOSE_NCHW2NHWC and TRANSPOSE_NHWC2NCHW (1, 2 and 4-byte tiles; ``h * w * size`` a multiple of
32 bytes; the scratch ``(c + 2)`` resp. ``(2c + 1)`` blocks of 16 x 32 bytes, 32 x 32 for 1-byte
types, its bytes garbage after).  Bits are moved.  Semantics: cannmirror/asc-devkit at 0da921b,
``docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据排布转换/Transpose.md`` and
``include/basic_api/kernel_struct_transpose.h`` (TransposeType's numbering).
"""

from __future__ import annotations

import collections

import numpy as np

from ...checked import report
from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import MODES, OPERAND_DST, OPERAND_SRC, OPERAND_TMP, PRIMITIVE
from ...checked.ub_shadow import (first_garbage, is_local_operand, mark_epoch, set_garbage, ub_aligned, ub_range_ok,
                                  ub_read_ok)
from ...host.primitives import PRIMITIVES
from ...host.trace import DIR_VECTOR, EVENT
from ..._numba_compat.jit import jit
from ..lane import _address
from .context import address, trace_event, tracing
from .preload import advance_preload
from .vector import declared

__all__ = ["transpose", "TransposeParamsExt", "TRANSPOSE_ND2ND_B16", "TRANSPOSE_NCHW2NHWC", "TRANSPOSE_NHWC2NCHW"]

TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC, TRANSPOSE_NHWC2NCHW = 10, 11, 12  # the device's TransposeType
TransposeParamsExt = collections.namedtuple("TransposeParamsExt", ("n_size", "c_size", "h_size", "w_size",
                                                                   "transpose_type"), defaults=(0, 0, 16, 16, 10))
_PRIM, _CODE = PRIMITIVE["Transpose"], EVENT["transpose"]
_TRANSPOSE_TYPE = MODES.index("TransposeType")


@checked_rule
@jit
def check_transpose(ctx, kind, n, c, hw, size, dst_addr, dst_nbytes, src_addr, src_nbytes, tmp_addr, tmp_nbytes):
    """Transpose: a kind it has, 2-byte tiles for the 16x16 one, ``h * w * size`` on 32 bytes; the
    elements inside ``src`` (written before) and ``dst``, the two apart; the scratch's size."""
    enter(ctx, _PRIM)
    ok = (kind == TRANSPOSE_ND2ND_B16 and size == 2) or (
        (kind == TRANSPOSE_NCHW2NHWC or kind == TRANSPOSE_NHWC2NCHW) and (hw * size) % 32 == 0)
    if not ok:
        report.mode_out_of_range(ctx, _PRIM, OPERAND_SRC, mode=_TRANSPOSE_TYPE, value=kind)
        return False
    total = n * c * hw * size if kind != TRANSPOSE_ND2ND_B16 else 512
    if not (is_local_operand(ctx, _PRIM, OPERAND_SRC, src_addr) and ub_aligned(ctx, _PRIM, OPERAND_SRC, src_addr, 0)
            and is_local_operand(ctx, _PRIM, OPERAND_DST, dst_addr)
            and ub_aligned(ctx, _PRIM, OPERAND_DST, dst_addr, 0)
            and ub_range_ok(ctx, _PRIM, OPERAND_SRC, src_addr, src_nbytes, 0, total)
            and ub_read_ok(ctx, _PRIM, OPERAND_SRC, src_addr, 0, total)
            and ub_range_ok(ctx, _PRIM, OPERAND_DST, dst_addr, dst_nbytes, 0, total)):
        return False
    ub = np.int64(ctx.ub_addr)
    s0, d0 = np.int64(src_addr) - ub, np.int64(dst_addr) - ub
    if total > 0 and s0 < d0 + total and d0 < s0 + total:
        report.vector_partial_overlap(ctx, _PRIM, OPERAND_SRC, src_start=s0, src_end=s0 + total, repeat=0,
                                      written_in=0)
        return False
    if kind != TRANSPOSE_ND2ND_B16:
        block = (32 if size == 1 else 16) * 32
        need = ((c + 2) if kind == TRANSPOSE_NCHW2NHWC else (2 * c + 1)) * block
        if not (is_local_operand(ctx, _PRIM, OPERAND_TMP, tmp_addr)
                and ub_range_ok(ctx, _PRIM, OPERAND_TMP, tmp_addr, tmp_nbytes, 0, need)):
            return False
        set_garbage(ctx, np.int64(tmp_addr) - ub, need, 1)
        mark_epoch(ctx, np.int64(tmp_addr) - ub, need)
    garbage = first_garbage(ctx, s0, total) >= 0
    set_garbage(ctx, d0, total, 1 if garbage else 0)  # one mark for the whole result (a permutation)
    mark_epoch(ctx, d0, total)
    return True


@jit
def _permute(dst, src, kind, n, c, hw):
    if kind == TRANSPOSE_ND2ND_B16:
        for i in range(16):
            for j in range(16):
                if j * 16 + i < dst.size and i * 16 + j < src.size:
                    dst[j * 16 + i] = src[i * 16 + j]
        return
    for b in range(n):
        base = b * c * hw
        for ch in range(c):
            for p in range(hw):
                nchw, nhwc = base + ch * hw + p, base + p * c + ch
                if kind == TRANSPOSE_NCHW2NHWC:
                    if nhwc < dst.size and nchw < src.size:
                        dst[nhwc] = src[nchw]
                elif nchw < dst.size and nhwc < src.size:
                    dst[nchw] = src[nhwc]


def _transpose(ctx, dst, src, tmp=None, params=None):
    if tmp is None:
        kind, n, c, hw, tmp_addr, tmp_nbytes = np.int64(TRANSPOSE_ND2ND_B16), 1, 1, 256, _address(src), 0
    else:
        kind = np.int64(params[4])
        n, c, hw = np.int64(params[0]) & 0xFFFF, np.int64(params[1]) & 0xFFFF, \
            (np.int64(params[2]) & 0xFFFF) * (np.int64(params[3]) & 0xFFFF)
        tmp_addr, tmp_nbytes = _address(tmp), tmp.nbytes
    if not check_transpose(ctx, kind, n, c, hw, src.itemsize, _address(dst), dst.nbytes, _address(src), src.nbytes,
                           tmp_addr, tmp_nbytes):
        return
    if tracing(ctx):
        total = (n * c * hw if kind != TRANSPOSE_ND2ND_B16 else 256) * src.itemsize
        d, s = address(dst), address(src)
        trace_event(ctx, _CODE, DIR_VECTOR, total, total // src.itemsize, d, d + total, s, s + total, s, s)
    advance_preload(ctx)
    _permute(dst, src, kind, n, c, hw)


transpose = declared(_transpose, PRIMITIVES["transpose"], __name__)
