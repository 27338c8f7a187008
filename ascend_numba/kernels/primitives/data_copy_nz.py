"""DataCopy's ND2NZ (GM -> UB) and NZ2ND (UB -> GM) forms: ``data_copy(ctx, dst, dst_off, src,
src_off, Nd2NzParams(...))`` and ``data_copy(ctx, dst, dst_off, src, src_off, Nz2NdParamsFull(...))``;
its slice form, :func:`data_copy_slice`.

c220 has no instruction for them: its DataCopy runs them as DataCopyPad bursts, and so does the
twin (the trace shows DataCopyPad events; checked mode checks each burst).

* ND2NZ: ``nd_num`` matrices of ``n_value`` rows by ``d_value`` columns, matrix ``i`` from element
  ``i * src_nd_matrix_stride`` of ``src``, rows ``src_d_value`` elements apart; each column chunk
  of C0 = 32 / sizeof elements goes to ``dst`` element ``i * dst_nz_matrix_stride + (c // C0) *
  dst_nz_c0_stride * C0 + r * dst_nz_n_stride * C0 + c % C0`` (the strides in 32-byte blocks but
  the matrix strides and ``src_d_value``, in elements); a chunk short of C0 is zero-filled to
  32 bytes (the page's formula).
* NZ2ND: fractals 16 elements wide (b16 and b32): ``dst[k * dst_nd_matrix_stride + r *
  dst_d_stride + 16 i + c] = src[k * src_nd_matrix_stride * 256 + i * src_n_stride * 16 + r * 16
  + c]`` for ``c < 16`` (``d_value`` a multiple of 16; the matrix stride in fractals of 256
  elements, ``src_n_stride`` in rows of 16 elements).

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运/``
(GMToUB随路转换ND2NZ搬运, UBToGM随路转换NZ2ND搬运), ``include/basic_api/kernel_struct_data_copy.h``
(Nd2NzParams, Nz2NdParamsFull) and ``impl/basic_api/dav_c220/kernel_operator_data_copy_impl.h``
(the DataCopyPad loops).  Where that loop departs from the page (a second matrix at the first's
place, ``dst_nz_n_stride`` below 2 blocks as 1, a short chunk padded with its first element) the
twin follows the page.
"""

from __future__ import annotations

import collections

import numpy as np

from ...checked.auto import enter
from ...checked.dispatch import checked_rule
from ...checked.rules import OPERAND_DST, OPERAND_SRC
from ...checked.ub_shadow import is_local_operand
from ...host.primitives import DataCopyPadExtParams
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..lane import _address
from .context import in_ub
from .dma import PRIM_DATA_COPY, data_copy

__all__ = ["Nd2NzParams", "Nz2NdParamsFull", "nd2nz", "nz2nd", "SliceInfo", "data_copy_slice"]

Nd2NzParams = collections.namedtuple(
    "Nd2NzParams", ("nd_num", "n_value", "d_value", "src_nd_matrix_stride", "src_d_value", "dst_nz_c0_stride",
                    "dst_nz_n_stride", "dst_nz_matrix_stride"), defaults=(0, 0, 0, 0, 0, 0, 0, 0))
Nz2NdParamsFull = collections.namedtuple(
    "Nz2NdParamsFull", ("nd_num", "n_value", "d_value", "src_nd_matrix_stride", "src_n_stride", "dst_d_stride",
                        "dst_nd_matrix_stride"), defaults=(1, 0, 0, 1, 0, 0, 1))
FRACTAL = 16  # NZ2ND's fractal width in elements


@checked_rule
@jit
def check_nz_form(ctx, ub_addr, is_dst):
    """ND2NZ / NZ2ND: the UB side (``dst`` of ND2NZ, ``src`` of NZ2ND) is a UB tensor."""
    enter(ctx, PRIM_DATA_COPY)
    return is_local_operand(ctx, PRIM_DATA_COPY, OPERAND_DST if is_dst else OPERAND_SRC, ub_addr)


def _nz_tile(t):
    raise NotImplementedError  # compiled only


@overload(_nz_tile, jit_options=OVERLOAD_OPTIONS)
def _ov_nz_tile(t):
    if t.dtype.bitwidth not in (16, 32):
        raise TypingError(f"NZ2ND moves 2- or 4-byte elements (its fractals are 16 wide); got {t.dtype}")
    return lambda t: None


@jit(always_inline=True)
def nd2nz(ctx, copy_pad, dst, dst_off, src, src_off, p):
    """ND2NZ through ``copy_pad`` (DataCopyPad): one burst of ``n_value`` rows per matrix and chunk;
    GM -> UB only (checked mode names a ``dst`` outside the UB)."""
    if not check_nz_form(ctx, _address(dst), True) or not in_ub(ctx, dst) or in_ub(ctx, src):
        return
    size = dst.itemsize
    c0 = ctx.block_bytes // size
    nd, n, d = np.int64(p[0]) & 0xFFFF, np.int64(p[1]) & 0xFFFF, np.int64(p[2]) & 0xFFFF
    s_mat, s_d = np.int64(p[3]) & 0xFFFF, np.int64(p[4]) & 0xFFFF
    c0_stride, n_stride, d_mat = np.int64(p[5]) & 0xFFFF, np.int64(p[6]) & 0xFFFF, np.int64(p[7]) & 0xFFFF
    for i in range(nd if n > 0 else 0):  # no rows: no burst (the page takes nValue 0)
        for j in range((d + c0 - 1) // c0):
            cols = min(c0, d - j * c0)
            copy_pad(ctx, dst, dst_off + i * d_mat + j * c0_stride * c0, src, src_off + i * s_mat + j * c0, n,
                     cols * size, s_d * size - cols * size, n_stride - 1,
                     DataCopyPadExtParams(True, 0, c0 - cols, 0))


@jit(always_inline=True)
def nz2nd(ctx, copy_pad, dst, dst_off, src, src_off, p):
    """NZ2ND through ``copy_pad`` (DataCopyPad): one burst of ``n_value`` rows per matrix and fractal;
    UB -> GM only (checked mode names a ``src`` outside the UB); columns past a multiple of 16 are
    not moved (the page requires ``d_value`` a multiple of 16)."""
    _nz_tile(src)
    if not check_nz_form(ctx, _address(src), False) or not in_ub(ctx, src) or in_ub(ctx, dst):
        return
    size = dst.itemsize
    nd, n, d = np.int64(p[0]) & 0xFFFF, np.int64(p[1]) & 0xFFFF, np.int64(p[2]) & 0xFFFF
    s_mat, s_n = np.int64(p[3]) & 0xFFFF, np.int64(p[4]) & 0xFFFF
    d_d, d_mat = np.int64(p[5]) & 0xFFFF, np.int64(p[6]) & 0xFFFF
    row = FRACTAL * size
    for k in range(nd if n > 0 else 0):
        for i in range(d // FRACTAL):
            copy_pad(ctx, dst, dst_off + k * d_mat + FRACTAL * i, src,
                     src_off + k * s_mat * FRACTAL * FRACTAL + i * s_n * FRACTAL, n, row, 0, d_d * size - row)


# ---- the slice form ----------------------------------------------------------------------------------------

SliceInfo = collections.namedtuple("SliceInfo", ("start_index", "end_index", "stride", "burst_len", "shape_value"),
                                   defaults=(0, 31, 0, 32, 0))


@jit(always_inline=True)
def _slices(info, dims, per_block, d):
    """Dimension ``d``'s slice count, and its first index and step (dimension 0: bursts of
    ``burst_len`` blocks ``stride`` elements apart; above: indices ``stride`` apart)."""
    start, end, stride = np.int64(info[d][0]), np.int64(info[d][1]), np.int64(info[d][2])
    width = np.int64(info[d][3]) * per_block if d == 0 else np.int64(1)
    return max((end - start + 1 + stride) // (width + stride), 0), start, width + stride


@jit(always_inline=True)
def _slice_count(info, dims, per_block):
    total = np.int64(1)
    for d in range(dims):
        total *= _slices(info, dims, per_block, d)[0]
    return total


@jit(always_inline=True)
def _slice_offset(info, dims, per_block, size0, k):
    """Burst ``k``'s first element (dimension 0 counting fastest); ``size0``: dimension 0's
    length when ``shape_value`` is 0."""
    offset, pitch = np.int64(0), np.int64(1)
    for d in range(dims):
        count, start, step = _slices(info, dims, per_block, d)
        offset += (start + (k % max(count, 1)) * step) * pitch
        k //= max(count, 1)
        shape = np.int64(info[d][4])
        pitch *= shape if shape > 0 else (size0 if d == 0 else 1)
    return offset


@jit(always_inline=True)
def data_copy_slice(ctx, dst, src, dst_slice_info, src_slice_info, dim_value=1):
    """DataCopy's slice form (GM <-> UB): ``DataCopy(dst, src, dstSliceInfo, srcSliceInfo,
    dimValue)`` with tuples of :class:`SliceInfo` (dimension 0 first; its fields all Python ints or
    all of one NumPy type).  Each side's bursts, a row's bursts first, are paired in order: burst
    ``k`` of ``src`` (``src``'s ``burst_len`` 32-byte blocks) goes to burst ``k`` of ``dst``, as many
    as the side with fewer has.  Dimension 0 takes bursts of ``burst_len`` blocks ``stride``
    elements apart from ``start_index`` through ``end_index``; a higher dimension (``burst_len`` 1)
    takes every ``stride + 1``-th index; ``shape_value`` is a dimension's length (0: dimension 0 is
    the tensor).  c220 runs it as DataCopy bursts, as the twin does (asc-devkit at 0da921b, the page
    ``GM与UB切片数据搬运(DataCopy).md`` and ``impl/basic_api/kernel_operator_data_copy_intf_impl.h``)."""
    per_block = ctx.block_bytes // src.itemsize
    dims = max(min(np.int64(dim_value), len(src_slice_info), len(dst_slice_info)), 1)  # never past a tuple
    burst = np.int64(src_slice_info[0][3]) * per_block
    n = min(_slice_count(src_slice_info, dims, per_block), _slice_count(dst_slice_info, dims, per_block))
    for k in range(n):
        data_copy(ctx, dst, _slice_offset(dst_slice_info, dims, per_block, dst.size, k), src,
                     _slice_offset(src_slice_info, dims, per_block, src.size, k), burst)
