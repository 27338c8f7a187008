"""TTRANS: the tile transpose primitive and the transpose / format-conversion kernels (SPEC §6, seed 004).

The kernels work on unsigned-int views of the element width (one specialization
per width, not per dtype).  Each moves UB tiles with DataCopyPad (rows padded to
the 32-byte block on the UB side) and transposes them with :func:`ttrans`.
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ._jit import jit
from .launch import kernel
from .check import check_ttrans
from .lane import _address
from .primitives import (
    ERR_TMP_TOO_SMALL, STATE_TTRANS_SCALAR, STATE_TTRANS_VECTOR, _copy_bytes, alloc_buffer, contiguous_lane_range,
    count_event, data_copy, data_copy_pad, duplicate, lane_error, trace_work,
)


@jit(always_inline=True)
def _align_up(n, unit):
    return (n + unit - 1) // unit * unit


@jit
def ttrans(ctx, dst, dst_stride, src, src_stride, rows, cols, tmp):
    """TTRANS: ``dst[j*dst_stride + i] = src[i*src_stride + j]`` for ``i < rows, j < cols``.

    The vector path (when ``dst_stride % RowStride == 0``, ``src_stride % ElemPerBlock == 0``
    and ``src_stride / ElemPerBlock <= 255``) transposes block by block into ``tmp``, laid out
    ``[cols, ceil(rows/RowStride)*RowStride]``, then copies its rows to ``dst``; a smaller
    ``tmp`` is a lane error.  Otherwise the scalar path moves element by element.  Both
    give the same bytes; the lane counts which one ran.
    """
    itemsize = src.itemsize
    if not check_ttrans(ctx, _address(dst), dst.nbytes, dst_stride, _address(src), src.nbytes, src_stride,
                        _address(tmp), itemsize, rows, cols):
        return
    rs = 32 if itemsize == 1 else 16
    epb = ctx.block_bytes // itemsize
    if dst_stride % rs == 0 and src_stride % epb == 0 and src_stride // epb <= 255:
        tmp_stride = _align_up(rows, rs)
        if tmp.size < cols * tmp_stride:
            lane_error(ctx, ERR_TMP_TOO_SMALL, cols * tmp_stride)
            return
        count_event(ctx, STATE_TTRANS_VECTOR)
        _blocked_transpose(tmp, tmp_stride, src, src_stride, rows, cols)
        # tmp -> dst inside the instruction: no DataCopy of its own.
        if rows == tmp_stride and dst_stride == tmp_stride:  # rows fill both pitches: one copy
            _copy_bytes(dst, 0, tmp, 0, cols * rows * itemsize)
        else:
            for j in range(cols):
                _copy_bytes(dst, j * dst_stride * itemsize, tmp, j * tmp_stride * itemsize, rows * itemsize)
    else:
        count_event(ctx, STATE_TTRANS_SCALAR)
        ds = np.uint64(dst_stride)
        ss = np.uint64(src_stride)
        for i in range(np.uint64(rows)):
            for j in range(np.uint64(cols)):
                dst[j * ds + i] = src[i * ss + j]


@intrinsic
def _transpose_square(typingctx, dst, dst_off, dst_stride, src, src_off, src_stride):
    """Transpose one square block of 32-byte rows (8x8 fp32, 16x16 fp16, 32x32 int8, 4x4 fp64)
    in registers: load its rows as vectors, log2(B) rounds of interleaves, store the columns.
    Offsets and strides in elements; the caller keeps the block inside both arrays."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype):
        return None
    itemsize = src.dtype.bitwidth // 8
    side = 32 // itemsize
    sig = types.void(dst, types.int64, types.int64, src, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        d, d_off, d_stride, s, s_off, s_stride = args
        elem = ir.IntType(8 * itemsize)
        row_type = ir.VectorType(elem, side)
        d_base = builder.bitcast(context.make_array(signature.args[0])(context, builder, d).data, elem.as_pointer())
        s_base = builder.bitcast(context.make_array(signature.args[3])(context, builder, s).data, elem.as_pointer())

        def row_pointer(base, off, stride, r):
            index = builder.add(off, builder.mul(stride, ir.Constant(ir.IntType(64), r)))
            return builder.bitcast(builder.gep(base, [index]), row_type.as_pointer())

        rows = [builder.load(row_pointer(s_base, s_off, s_stride, r), align=1) for r in range(side)]
        # Interleaving row i with row i + side/2, low and high halves, log2(side) times transposes.
        half = side // 2
        mask_type = ir.VectorType(ir.IntType(32), side)
        low = ir.Constant(mask_type, [k for i in range(half) for k in (i, side + i)])
        high = ir.Constant(mask_type, [k for i in range(half, side) for k in (i, side + i)])
        for _ in range(side.bit_length() - 1):
            rows = [v for i in range(half) for v in (builder.shuffle_vector(rows[i], rows[i + half], low),
                                                     builder.shuffle_vector(rows[i], rows[i + half], high))]
        for c in range(side):
            builder.store(rows[c], row_pointer(d_base, d_off, d_stride, c), align=1)
        return context.get_dummy_value()

    return sig, codegen


@jit(always_inline=True)
def _blocked_transpose(tmp, ts, src, ss, rows, cols):
    """``tmp[j*ts + i] = src[i*ss + j]``: whole 32-byte square blocks in registers, the edges
    element by element (unsigned indices skip the negative-index test on every access)."""
    side = 32 // src.itemsize
    full_rows = rows // side * side
    full_cols = cols // side * side
    for i0 in range(0, full_rows, side):
        for j0 in range(0, full_cols, side):
            _transpose_square(tmp, j0 * ts + i0, ts, src, i0 * ss + j0, ss)
    uts, uss = np.uint64(ts), np.uint64(ss)
    for i in range(np.uint64(rows)):  # the columns past the last whole block
        for j in range(np.uint64(full_cols), np.uint64(cols)):
            tmp[j * uts + i] = src[i * uss + j]
    for i in range(np.uint64(full_rows), np.uint64(rows)):  # the rows past the last whole block
        for j in range(np.uint64(full_cols)):
            tmp[j * uts + i] = src[i * uss + j]


@kernel(nrt=False)
def transpose_kernel(ctx, x, y, t):
    """Blocks ``src[rows, cols] -> dst[cols, outRows]`` (see TransposeTilingData), tiled through UB."""
    itemsize = x.itemsize
    bb = ctx.block_bytes
    src_tile = alloc_buffer(ctx, t.tileRows * t.tileCols, x.dtype)
    dst_tile = alloc_buffer(ctx, t.tileCols * _align_up(t.tileRows, 32 if itemsize == 1 else 16), x.dtype)
    tmp = alloc_buffer(ctx, t.tmpElems, x.dtype)
    tiles = t.rowTiles * t.colTiles
    total = t.outerCount * t.innerCount * tiles
    task, end = contiguous_lane_range(ctx, total)
    while task < end:
        block, tile = task // tiles, task % tiles
        outer, inner = block // t.innerCount, block % t.innerCount
        r0 = (tile // t.colTiles) * t.tileRows
        c0 = (tile % t.colTiles) * t.tileCols
        vrows = min(t.rows, t.totalRows - inner * t.rows)
        vcols = min(t.cols, t.totalCols - inner * t.cols)
        r = max(0, min(t.tileRows, vrows - r0))                       # valid source rows here
        tr = max(0, min(t.tileRows, max(vrows, t.outRows) - r0))      # dst row length (with padding)
        c = max(0, min(t.tileCols, vcols - c0))
        task += 1
        if tr == 0 or c == 0:
            continue
        src_pitch = _align_up(c * itemsize, bb) // itemsize
        dst_pitch = _align_up(tr * itemsize, bb) // itemsize
        src_base = outer * t.srcOuter + inner * t.srcInner + r0 * t.srcRowStride + c0
        dst_base = outer * t.dstOuter + inner * t.dstInner + c0 * t.dstRowStride + r0
        if tr > r:  # channel padding: zero rows past the valid ones
            duplicate(ctx, dst_tile, 0, c * dst_pitch)
        if r > 0:
            data_copy_pad(ctx, src_tile, 0, x, src_base, r, c * itemsize, (t.srcRowStride - c) * itemsize, 0)
            ttrans(ctx, dst_tile, dst_pitch, src_tile, src_pitch, r, c, tmp)
        data_copy_pad(ctx, y, dst_base, dst_tile, 0, c, tr * itemsize, 0, (t.dstRowStride - tr) * itemsize)
        trace_work(ctx, 1)


@kernel(nrt=False)
def fractal_z_kernel(ctx, x, y, t):
    """[G, N, K, C0] -> [G*K, N1*N0, C0]: per (g, K chunk) gather the C0 blocks of every n, zero n >= N."""
    itemsize = x.itemsize
    bb = ctx.block_bytes
    row = t.nPadded * t.c0                    # elements of one dst row (all n for one k)
    out = alloc_buffer(ctx, t.kChunk * row, x.dtype)
    total = t.groups * t.kChunks
    task, end = contiguous_lane_range(ctx, total)
    blocks_per_row = t.nPadded * t.c0 * itemsize // bb
    while task < end:
        g, chunk = task // t.kChunks, task % t.kChunks
        k0 = chunk * t.kChunk
        kc = min(t.kChunk, t.k - k0)
        if t.n < t.nPadded:
            duplicate(ctx, out, 0, kc * row)
        for n in range(t.n):
            # kc blocks contiguous in GM -> UB with a gap of (N1*N0 - 1) blocks between them.
            data_copy_pad(ctx, out, n * t.c0, x, ((g * t.n + n) * t.k + k0) * t.c0, kc, t.c0 * itemsize, 0,
                          blocks_per_row - 1)
        data_copy(ctx, y, (g * t.k + k0) * row, out, 0, kc * row)
        trace_work(ctx, 1)
        task += 1


@kernel(nrt=False)
def fractal_z_3d_kernel(ctx, x, y, t):
    """[N, C, D, HW] -> [D*C1*HW, N1*N0, C0]: per (d, c1, HW chunk), each n's [C0, chunk] plane
    is transposed straight into its place in the output tile."""
    itemsize = x.itemsize
    bb = ctx.block_bytes
    row = t.nPadded * t.c0
    out = alloc_buffer(ctx, t.hwChunk * row, x.dtype)
    plane = alloc_buffer(ctx, t.c0 * t.hwChunk, x.dtype)
    tmp = alloc_buffer(ctx, t.tmpElems, x.dtype)
    total = t.d * t.c1 * t.hwChunks
    task, end = contiguous_lane_range(ctx, total)
    while task < end:
        d = task // (t.c1 * t.hwChunks)
        c1 = (task // t.hwChunks) % t.c1
        hw0 = (task % t.hwChunks) * t.hwChunk
        hwc = min(t.hwChunk, t.hw - hw0)
        channels = min(t.c0, t.c - c1 * t.c0)
        duplicate(ctx, out, 0, hwc * row)  # padded n and padded channels stay zero
        pitch = _align_up(hwc * itemsize, bb) // itemsize
        for n in range(t.n):
            src = ((n * t.c + c1 * t.c0) * t.d + d) * t.hw + hw0
            data_copy_pad(ctx, plane, 0, x, src, channels, hwc * itemsize, (t.d * t.hw - hwc) * itemsize, 0)
            ttrans(ctx, out[n * t.c0:], row, plane, pitch, channels, hwc, tmp)
        data_copy(ctx, y, ((d * t.c1 + c1) * t.hw + hw0) * row, out, 0, hwc * row)
        trace_work(ctx, 1)
        task += 1
