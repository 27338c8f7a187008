"""TTRANS kernels: the 2-D transpose and the format conversions (SPEC §6, seed 004).

The kernels work on unsigned-int views of the element width (one specialization
per width, not per dtype).  Each moves UB tiles with DataCopyPad (rows padded to
the 32-byte block on the UB side) and transposes them with the :func:`ttrans`
primitive (``kernels/primitives/ttrans.py``).
"""


from ..._numba_compat.jit import jit
from ...kernels import (
    alloc_buffer, contiguous_lane_range, data_copy, data_copy_pad, duplicate, kernel, trace_work, ttrans,
)
from ...kernels.primitives.ttrans import align_up


@jit(always_inline=True)
def transpose_tile(t, task, itemsize, block_bytes):
    """Task ``task`` of a TransposeTilingData launch (one tile of one block): its valid source rows,
    its dst row length (channel padding included), its columns, the GM elements its source and
    destination start at, and the pitches (elements) of its UB source and destination tiles."""
    tiles = t.rowTiles * t.colTiles
    block, tile = task // tiles, task % tiles
    outer, inner = block // t.innerCount, block % t.innerCount
    r0 = (tile // t.colTiles) * t.tileRows
    c0 = (tile % t.colTiles) * t.tileCols
    vrows = min(t.rows, t.totalRows - inner * t.rows)
    vcols = min(t.cols, t.totalCols - inner * t.cols)
    r = max(0, min(t.tileRows, vrows - r0))                       # valid source rows here
    tr = max(0, min(t.tileRows, max(vrows, t.outRows) - r0))      # dst row length (with padding)
    c = max(0, min(t.tileCols, vcols - c0))
    src_base = outer * t.srcOuter + inner * t.srcInner + r0 * t.srcRowStride + c0
    dst_base = outer * t.dstOuter + inner * t.dstInner + c0 * t.dstRowStride + r0
    src_pitch = align_up(c * itemsize, block_bytes) // itemsize
    dst_pitch = align_up(tr * itemsize, block_bytes) // itemsize
    return r, tr, c, src_base, dst_base, src_pitch, dst_pitch


@kernel(nrt=False, outputs=("y",))
def transpose_kernel(ctx, x, y, t):
    """Blocks ``src[rows, cols] -> dst[cols, outRows]`` (see TransposeTilingData), tiled through UB."""
    itemsize = x.itemsize
    src_tile = alloc_buffer(ctx, t.tileRows * t.tileCols, x.dtype)
    dst_tile = alloc_buffer(ctx, t.tileCols * align_up(t.tileRows, 32 if itemsize == 1 else 16), x.dtype)
    tmp = alloc_buffer(ctx, t.tmpElems, x.dtype)
    task, end = contiguous_lane_range(ctx, t.outerCount * t.innerCount * t.rowTiles * t.colTiles)
    while task < end:
        r, tr, c, src_base, dst_base, src_pitch, dst_pitch = transpose_tile(t, task, itemsize, ctx.block_bytes)
        task += 1
        if tr == 0 or c == 0:
            continue
        if tr > r:  # channel padding: zero rows past the valid ones
            duplicate(ctx, dst_tile, 0, c * dst_pitch)
        if r > 0:
            data_copy_pad(ctx, src_tile, 0, x, src_base, r, c * itemsize, (t.srcRowStride - c) * itemsize, 0)
            ttrans(ctx, dst_tile, dst_pitch, src_tile, src_pitch, r, c, tmp)
        data_copy_pad(ctx, y, dst_base, dst_tile, 0, c, tr * itemsize, 0, (t.dstRowStride - tr) * itemsize)
        trace_work(ctx, 1)


@kernel(nrt=False, outputs=("y",))
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


@jit(always_inline=True)
def fractal_z_3d_chunk(t, task, itemsize, block_bytes):
    """Task ``task`` of a FractalZ3DTilingData launch (one (d, c1, HW chunk)): its HW length, its
    valid channels, the pitch (elements) of its planes in UB, the GM element its n = 0 plane starts
    at (n's: ``n * c * d * hw`` further) and the one its out tile goes to."""
    d = task // (t.c1 * t.hwChunks)
    c1 = (task // t.hwChunks) % t.c1
    hw0 = (task % t.hwChunks) * t.hwChunk
    hwc = min(t.hwChunk, t.hw - hw0)
    channels = min(t.c0, t.c - c1 * t.c0)
    pitch = align_up(hwc * itemsize, block_bytes) // itemsize
    src_base = (c1 * t.c0 * t.d + d) * t.hw + hw0
    out_base = ((d * t.c1 + c1) * t.hw + hw0) * t.nPadded * t.c0
    return hwc, channels, pitch, src_base, out_base


@kernel(nrt=False, outputs=("y",))
def fractal_z_3d_kernel(ctx, x, y, t):
    """[N, C, D, HW] -> [D*C1*HW, N1*N0, C0]: per (d, c1, HW chunk), the [C0, chunk] planes of
    nGroup consecutive n are copied one under the other and one TTRANS puts them in their columns
    of the out tile; padded n and channels are zeros."""
    itemsize = x.itemsize
    row = t.nPadded * t.c0
    out = alloc_buffer(ctx, t.hwChunk * row, x.dtype)
    planes = alloc_buffer(ctx, t.nGroup * t.c0 * t.hwChunk, x.dtype)
    tmp = alloc_buffer(ctx, t.tmpElems, x.dtype)
    task, end = contiguous_lane_range(ctx, t.d * t.c1 * t.hwChunks)
    while task < end:
        hwc, channels, pitch, src_base, out_base = fractal_z_3d_chunk(t, task, itemsize, ctx.block_bytes)
        if t.n < t.nPadded:  # the padded n's columns stay zero
            duplicate(ctx, out, 0, hwc * row)
        for g0 in range(0, t.n, t.nGroup):
            group = min(t.nGroup, t.n - g0)
            if channels < t.c0:  # and so do the padded channels' rows
                duplicate(ctx, planes, 0, group * t.c0 * pitch)
            for n in range(g0, g0 + group):
                data_copy_pad(ctx, planes, (n - g0) * t.c0 * pitch, x, src_base + n * t.c * t.d * t.hw, channels,
                              hwc * itemsize, (t.d * t.hw - hwc) * itemsize, 0)
            ttrans(ctx, out[g0 * t.c0:], row, planes, pitch, group * t.c0, hwc, tmp)
        data_copy(ctx, y, out_base, out, 0, hwc * row)
        trace_work(ctx, 1)
        task += 1
