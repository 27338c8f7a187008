"""Copy (vcopy) and TransDataTo5HD, written for clarity (the compiled ones:
``kernels/primitives/ub_copy.py`` and ``trans_data_5hd.py``).

Copy's lane ``k`` of repeat ``r`` is element ``k % per_block`` of block ``r * repeat_size + (k //
per_block) * stride`` on each side; the lanes a mask sets are copied, the others left.

TransDataTo5HD works on the UB's bytes: 16 source and 16 destination block addresses, each repeat
``r`` shifting them by ``r`` repeat strides (one repeat: by one stride), the 16 source blocks read
before the 16 destination blocks are written.
"""

from __future__ import annotations

import numpy as np

__all__ = ["copy", "trans_data_to_5hd", "nd2nz", "nz2nd", "slice_copy"]


def copy(dst: np.ndarray, src: np.ndarray, lane_on, lanes: int, repeat_times: int, dst_stride: int,
         src_stride: int, dst_repeat_size: int, src_repeat_size: int) -> np.ndarray:
    """A copy of ``dst`` after Copy: ``lanes`` lanes a repeat (counter mode: its count), ``lane_on(k)``
    the mask."""
    out = dst.copy()
    per_block = 32 // dst.itemsize
    for r in range(repeat_times):
        for k in range(lanes):
            if lane_on(k):
                block, e = divmod(k, per_block)
                out[(r * dst_repeat_size + block * dst_stride) * per_block + e] = \
                    src[(r * src_repeat_size + block * src_stride) * per_block + e]
    return out


def trans_data_to_5hd(ub: np.ndarray, dst_at, src_at, width: int, dst_high: bool, src_high: bool, repeat_times: int,
                      dst_rep_stride: int, src_rep_stride: int) -> np.ndarray:
    """A copy of the UB bytes ``ub`` after TransDataTo5HD with the lists' byte addresses ``dst_at``
    and ``src_at`` and elements of ``width`` bytes."""
    out = ub.copy()
    for r in range(repeat_times):
        step = r if repeat_times > 1 else 1
        src = [out[a + step * src_rep_stride * 32:][:32].copy() for a in src_at]
        dst = [a + step * dst_rep_stride * 32 for a in dst_at]
        if width == 2:
            matrix = np.stack([block.view(np.uint16) for block in src])  # row k: source block k
            for e in range(16):
                out[dst[e]:dst[e] + 32] = matrix[:, e].copy().view(np.uint8)
        elif width == 4:
            matrix = np.stack([block.view(np.uint32) for block in src])  # 16 x 8
            for j in range(8):
                out[dst[2 * j]:dst[2 * j] + 32] = matrix[:8, j].copy().view(np.uint8)
                out[dst[2 * j + 1]:dst[2 * j + 1] + 32] = matrix[8:, j].copy().view(np.uint8)
        else:
            sh, dh = 16 * src_high, 16 * dst_high
            for e in range(16):
                out[dst[e] + dh:dst[e] + dh + 16] = [src[k][sh + e] for k in range(16)]
    return out


def nd2nz(dst: np.ndarray, src: np.ndarray, nd_num: int, n_value: int, d_value: int, src_nd_matrix_stride: int,
          src_d_value: int, dst_nz_c0_stride: int, dst_nz_n_stride: int, dst_nz_matrix_stride: int) -> np.ndarray:
    """A copy of ``dst`` after DataCopy ND2NZ from ``src`` (the page's formula; a short C0 chunk
    zero-filled to its 32 bytes)."""
    out = dst.copy()
    c0 = 32 // dst.itemsize
    for i in range(nd_num):
        for r in range(n_value):
            for c in range(-(-d_value // c0) * c0):
                at = i * dst_nz_matrix_stride + (c // c0) * dst_nz_c0_stride * c0 + r * dst_nz_n_stride * c0 + c % c0
                out[at] = src[i * src_nd_matrix_stride + r * src_d_value + c] if c < d_value else 0
    return out


def nz2nd(dst: np.ndarray, src: np.ndarray, nd_num: int, n_value: int, d_value: int, src_nd_matrix_stride: int,
          src_n_stride: int, dst_d_stride: int, dst_nd_matrix_stride: int) -> np.ndarray:
    """A copy of ``dst`` after DataCopy NZ2ND from ``src`` (fractals 16 elements wide)."""
    out = dst.copy()
    for k in range(nd_num):
        for i in range(d_value // 16):
            for r in range(n_value):
                for c in range(16):
                    out[k * dst_nd_matrix_stride + r * dst_d_stride + 16 * i + c] = \
                        src[k * src_nd_matrix_stride * 256 + i * src_n_stride * 16 + r * 16 + c]
    return out


def _burst_starts(infos, per_block: int) -> list:
    """Each burst's first element, a row's bursts first: ``infos`` the (start, end, stride, burst_len,
    shape) of each dimension, dimension 0 first."""
    axes, pitch = [], 1
    for d, (start, end, stride, burst_len, shape) in enumerate(infos):
        width = burst_len * per_block if d == 0 else 1
        count = (end - start + 1 + stride) // (width + stride)
        axes.append([(start + m * (width + stride)) * pitch for m in range(count)])
        pitch *= shape
    starts = [0]
    for axis in reversed(axes):  # the highest dimension outermost: dimension 0 varies fastest
        starts = [s + a for s in starts for a in axis]
    return starts


def slice_copy(dst: np.ndarray, src: np.ndarray, dst_infos, src_infos) -> np.ndarray:
    """A copy of ``dst`` after DataCopy's slice form: burst k of ``src`` to burst k of ``dst``."""
    out = dst.copy()
    per_block = 32 // src.itemsize
    n = src_infos[0][3] * per_block
    for s, d in zip(_burst_starts(src_infos, per_block), _burst_starts(dst_infos, per_block)):
        out[d:d + n] = src[s:s + n]
    return out
