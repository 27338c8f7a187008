"""Tile kernel: the five paths of the Ascend C Tile operator (SPEC §4, seed 000 §3.2.2).

GM tensors arrive as bytes (``uint8``) and every offset below is in bytes, so
one compiled specialization serves all dtypes; the element width only enters
through ``elemBytes`` in the tiling.  Each lane binds its three UB buffers
(``inQue``, ``outQue``, ``tmpBuf``, ``ubSize`` bytes each) at Init and runs the
path the host chose from the tiling:

1. SplitMult -- (row, mult) work items over lanes; a row read once, doubled in
   UB when aligned, written to each assigned segment.
2. Doubling  -- a row read once and doubled in UB (x2, x4, ...) to the buffer,
   then written in big blocks.
3. Build     -- whole output rows assembled in UB, several rows per write.
4. Gather    -- a byte-offset table built once in tmpBuf; many short rows
   rearranged per Gather call from a double-buffered inQue.
5. PerRow    -- each row read and written; a big aligned first write when the
   output row is aligned; a row's repeated segments are copied from output
   already written (GM -> UB -> GM) in doubling blocks; rows shorter than a
   block that Gather cannot take are read in batches and written with strided
   DataCopyPad; consecutive rows with one source offset (isRepeat) are copied
   from the first of them, GM -> UB -> GM in doubling blocks.

Exact-length writes use DataCopyPad; GM reads round up to the block (device
GM padding), never writes.  Reading back output the lane wrote itself needs an
MTE3 -> MTE2 barrier on the device; lanes here run their copies in order.
"""

import numpy as np

from ...config import SPLIT_MULT_DOUBLING_BYTES
from ...kernels import (
    adds, alloc_buffer, constant, contiguous_lane_range, data_copy, data_copy_pad, gather, kernel, set_value,
    trace_work,
)
from ..._numba_compat.jit import jit
from .plan import TileKey, gather_takes

Path = constant("Path", "TileKey field: the path the host chose, 1-5 in PATHS order")
SPLIT_MULT, DOUBLING, BUILD, GATHER, PER_ROW = TileKey.Path.values

_gather_takes = jit(always_inline=True)(gather_takes)  # the host's test, compiled: one definition


@jit(always_inline=True)
def _align_up(n, unit):
    return (n + unit - 1) // unit * unit


@jit(always_inline=True)
def src_offset(t, row):
    """SrcOff: element offset in the input of output row ``row`` (dims N-2 .. 0)."""
    off = 0
    for d in range(t.numDims - 2, -1, -1):
        c = row % t.outputShape[d]
        off += (c % t.inputShape[d]) * t.inputStrides[d]
        row //= t.outputShape[d]
    return off


@jit(always_inline=True)
def _write_exact(ctx, dst, dst_b, src, src_b, n):
    """UB -> GM, exactly ``n`` bytes: DataCopy when block-aligned, else DataCopyPad."""
    if n % ctx.block_bytes == 0:
        data_copy(ctx, dst, dst_b, src, src_b, n)
    else:
        data_copy_pad(ctx, dst, dst_b, src, src_b, 1, n, 0, 0)


@jit
def _replicate_in_gm(ctx, y, base_b, seg_b, count, ub, buf_b):
    """y[base_b : base_b + seg_b] is written; repeat it to ``count`` segments by copying
    written output forward (GM -> UB -> GM), each copy up to twice the last, at most ``buf_b``."""
    done = seg_b
    total = seg_b * count
    while done < total:
        phase = done % seg_b  # the source must start at the same place in the pattern
        n = min(done - phase, total - done, buf_b)
        data_copy_pad(ctx, ub, 0, y, base_b + phase, 1, n, 0, 0)
        _write_exact(ctx, y, base_b + done, ub, 0, n)
        done += n


@jit(always_inline=True)
def _geometry(t):
    """Init: (elemBytes, innerDim bytes, innerMult, output row bytes, outerCount) from the tiling."""
    eb = t.elemBytes
    inner_b = t.inputShape[t.numDims - 1] * eb
    mult = t.multiples[t.numDims - 1]
    return eb, inner_b, mult, inner_b * mult, t.totalOutputElems // (t.inputShape[t.numDims - 1] * mult)


@jit
def _process_split_mult(ctx, x, y, t, geometry, in_q, out_q, buf_b):
    eb, inner_b, mult, out_inner_b, outer = geometry
    bb = ctx.block_bytes
    item, end = contiguous_lane_range(ctx, outer * mult)
    while item < end:
        row = item // mult
        m0 = item % mult
        m1 = min(mult, m0 + (end - item))
        src_b = src_offset(t, row) * eb
        row_b = row * out_inner_b
        if inner_b % bb == 0 and 2 * inner_b <= buf_b:
            data_copy(ctx, out_q, 0, x, src_b, inner_b)
            limit = min(buf_b, (m1 - m0) * inner_b, SPLIT_MULT_DOUBLING_BYTES)
            doubled = inner_b
            while doubled * 2 <= limit:
                data_copy(ctx, out_q, doubled, out_q, 0, doubled)
                doubled *= 2
            m = m0
            while m < m1:
                k = min(doubled // inner_b, m1 - m)
                data_copy(ctx, y, row_b + m * inner_b, out_q, 0, k * inner_b)
                m += k
        elif inner_b <= buf_b:
            data_copy(ctx, in_q, 0, x, src_b, _align_up(inner_b, bb))
            _write_exact(ctx, y, row_b + m0 * inner_b, in_q, 0, inner_b)
            _replicate_in_gm(ctx, y, row_b + m0 * inner_b, inner_b, m1 - m0, out_q, buf_b)
        else:
            c = 0
            while c < inner_b:
                n = min(buf_b, inner_b - c)
                data_copy(ctx, in_q, 0, x, src_b + c, _align_up(n, bb))
                for m in range(m0, m1):
                    _write_exact(ctx, y, row_b + m * inner_b + c, in_q, 0, n)
                c += n
        trace_work(ctx, m1 - m0)
        item += m1 - m0


@jit
def _process_doubling(ctx, x, y, t, geometry, out_q, buf_b):
    eb, inner_b, _, out_inner_b, outer = geometry
    limit = min(buf_b, out_inner_b)
    doubled_b = inner_b
    while doubled_b * 2 <= limit:
        doubled_b *= 2
    row, end = contiguous_lane_range(ctx, outer)
    prev_src = -1
    while row < end:
        src_b = src_offset(t, row) * eb
        if src_b != prev_src:
            data_copy(ctx, out_q, 0, x, src_b, inner_b)
            cur = inner_b
            while cur < doubled_b:
                data_copy(ctx, out_q, cur, out_q, 0, cur)
                cur *= 2
            prev_src = src_b
        row_b = row * out_inner_b
        pos = 0
        while pos < out_inner_b:
            n = min(doubled_b, out_inner_b - pos)
            data_copy(ctx, y, row_b + pos, out_q, 0, n)
            pos += n
        trace_work(ctx, 1)
        row += 1


@jit
def _process_build(ctx, x, y, t, geometry, in_q, out_q, buf_b):
    eb, inner_b, mult, out_inner_b, outer = geometry
    rows_per_batch = max(1, buf_b // out_inner_b)
    row, end = contiguous_lane_range(ctx, outer)
    while row < end:
        k = min(rows_per_batch, end - row)
        for j in range(k):
            data_copy(ctx, in_q, 0, x, src_offset(t, row + j) * eb, inner_b)
            for m in range(mult):
                data_copy(ctx, out_q, j * out_inner_b + m * inner_b, in_q, 0, inner_b)
        data_copy(ctx, y, row * out_inner_b, out_q, 0, k * out_inner_b)
        trace_work(ctx, k)
        row += k


@jit
def _gather_words(ctx, out_q, in_q, slot_b, table, count, word):
    """Gather ``count`` words of ``word`` bytes from the inQue slot at ``slot_b`` into outQue."""
    if word == 8:
        gather(ctx, out_q.view(np.uint64), in_q.view(np.uint64), table, slot_b // 8, count)
    elif word == 4:
        gather(ctx, out_q.view(np.uint32), in_q.view(np.uint32), table, slot_b // 4, count)
    elif word == 2:
        gather(ctx, out_q.view(np.uint16), in_q.view(np.uint16), table, slot_b // 2, count)
    else:
        gather(ctx, out_q, in_q, table, slot_b, count)


@jit
def _process_gather(ctx, x, y, t, geometry, in_q, out_q, tmp, buf_b):
    eb, inner_b, mult, out_inner_b, outer = geometry
    bb = ctx.block_bytes
    # Gather moves words: the widest power of two (up to 8 bytes) dividing the input row, so a
    # row of four fp16 takes one 8-byte word, as the device reinterprets a tensor to gather wider.
    word = 8
    while inner_b % word:
        word //= 2
    in_words = inner_b // word
    row_words = out_inner_b // word
    slot_b = buf_b // 2 // bb * bb  # inQue depth 2: two slots, ping-pong
    # Runs of consecutive output rows whose sources are consecutive input rows: a batch never crosses one.
    run = t.inputShape[t.numDims - 2] if t.numDims >= 2 else 1
    row, end = contiguous_lane_range(ctx, outer)
    # maxBR: what the three buffers hold, and no more than one run or this lane's rows need.
    max_rows = min(buf_b // out_inner_b, buf_b // (row_words * 4), (slot_b - bb) // inner_b, run, end - row)
    if max_rows <= 0:
        return
    # Offset table: the first rows entry by entry (SetValue) up to a block-aligned size, then doubled.
    table = tmp.view(np.uint32)
    unit = 1
    while (unit * row_words * 4) % bb:
        unit += 1
    first = min(unit, max_rows)
    for j in range(first * row_words):
        r, w = j // row_words, j % row_words
        set_value(ctx, table, j, r * inner_b + (w % in_words) * word)
    built = first
    while built < max_rows:
        n = min(built, max_rows - built) // unit * unit
        if n == 0:
            break
        data_copy(ctx, table, built * row_words, table, 0, n * row_words)
        adds(ctx, table[built * row_words:], table[built * row_words:], built * inner_b, n * row_words)
        built += n
    slot = 0
    while row < end:
        k = min(built, end - row, (row // run + 1) * run - row)
        src_b = src_offset(t, row) * eb
        data_copy(ctx, in_q, slot * slot_b, x, src_b, _align_up(k * inner_b, bb))
        _gather_words(ctx, out_q, in_q, slot * slot_b, table, k * row_words, word)
        _write_exact(ctx, y, row * out_inner_b, out_q, 0, k * out_inner_b)
        trace_work(ctx, k)
        slot ^= 1
        row += k


@jit(always_inline=True)
def _same_source_rows(t):
    """isRepeat: consecutive output rows share a source offset exactly within blocks of this many
    rows (the output rows of the innermost outer dims whose input size is 1)."""
    rows = 1
    d = t.numDims - 2
    while d >= 0 and t.inputShape[d] == 1:
        rows *= t.outputShape[d]
        d -= 1
    return rows


STRIDED_ROW_BYTES = 1024


@jit
def _write_batch(ctx, y, row_b, ub, at, k, inner_b, pitch_b, mult):
    """CopyOut of a PerRow batch: ``k`` rows in UB from ``at``, ``pitch_b`` apart, each written
    ``mult`` times from GM byte ``row_b``.  Rows up to ``STRIDED_ROW_BYTES`` go out as one strided
    DataCopyPad per repeat; longer rows row by row, in GM order (strided, the CPU writes them out of
    order: 1.5x slower on 4 KiB rows)."""
    out_inner_b = inner_b * mult
    if inner_b <= STRIDED_ROW_BYTES:
        for m in range(mult):
            data_copy_pad(ctx, y, row_b + m * inner_b, ub, at, k, inner_b, 0, out_inner_b - inner_b)
        return
    for r in range(k):
        for m in range(mult):
            _write_exact(ctx, y, row_b + r * out_inner_b + m * inner_b, ub, at + r * pitch_b, inner_b)


@jit
def _process_per_row(ctx, x, y, t, geometry, in_q, out_q, buf_b):
    eb, inner_b, mult, out_inner_b, outer = geometry
    bb = ctx.block_bytes
    big_write = out_inner_b % bb == 0  # canBigWrite: rounding up stays inside the row
    # Rows that fit half the buffer (and that Gather does not take: the seed keeps 1-byte
    # elements at rank > 2 off Gather), with few repeats, are read in batches, a run of
    # consecutive source rows each from a block boundary, and written ``mult`` times each
    # (_write_batch).  Batches alternate between the buffer's halves (ping-pong), so a batch's
    # CopyIn does not wait for the previous batch's CopyOut.
    inner = inner_b // eb
    gather_takes_it = _gather_takes(inner, mult, t.numDims, eb)
    pitch_b = _align_up(inner_b, bb)
    half_b = buf_b // 2 // bb * bb
    batched = pitch_b <= half_b and mult <= 16 and not gather_takes_it
    run = t.inputShape[t.numDims - 2] if t.numDims >= 2 else 1
    same = _same_source_rows(t)
    row, end = contiguous_lane_range(ctx, outer)
    first = row
    slot = half_b
    while row < end:
        if row % same != 0 and row > first:
            # isRepeat: this row and the rest of its block repeat the row before, which this lane
            # wrote: copy it forward (GM -> UB -> GM) in doubling blocks instead of re-reading.
            n = min(same - row % same, end - row)
            _replicate_in_gm(ctx, y, (row - 1) * out_inner_b, out_inner_b, n + 1, out_q, buf_b)
            trace_work(ctx, n)
            row += n
            continue
        src_b = src_offset(t, row) * eb
        row_b = row * out_inner_b
        if batched:
            k = min(end - row, (row // run + 1) * run - row, half_b // pitch_b)
            slot = half_b - slot
            data_copy_pad(ctx, in_q, slot, x, src_b, k, inner_b, 0, 0)
            _write_batch(ctx, y, row_b, in_q, slot, k, inner_b, pitch_b, mult)
            trace_work(ctx, k)
            row += k
            continue
        c = 0
        while c < inner_b:
            n = min(buf_b, inner_b - c)
            data_copy(ctx, in_q, 0, x, src_b + c, _align_up(n, bb))
            if big_write:
                data_copy(ctx, y, row_b + c, in_q, 0, _align_up(n, bb))
            else:
                _write_exact(ctx, y, row_b + c, in_q, 0, n)
            c += n
        _replicate_in_gm(ctx, y, row_b, inner_b, mult, out_q, buf_b)
        trace_work(ctx, 1)
        row += 1


@kernel(tiling_key=TileKey, nrt=False, outputs=("y",), gm_padding="read")
def tile_kernel(ctx, x, y, t):
    path = Path  # a compile-time constant: the other paths fold away
    # Init: the row geometry, and three UB buffers of ubSize bytes bound for the kernel's life.
    geometry = _geometry(t)
    buf_b = t.ubSize
    in_q = alloc_buffer(ctx, buf_b, np.uint8)
    out_q = alloc_buffer(ctx, buf_b, np.uint8)
    tmp = alloc_buffer(ctx, buf_b, np.uint8)
    # Process: the path the host selected from this tiling.
    if path == SPLIT_MULT:
        _process_split_mult(ctx, x, y, t, geometry, in_q, out_q, buf_b)
    elif path == DOUBLING:
        _process_doubling(ctx, x, y, t, geometry, out_q, buf_b)
    elif path == BUILD:
        _process_build(ctx, x, y, t, geometry, in_q, out_q, buf_b)
    elif path == GATHER:
        _process_gather(ctx, x, y, t, geometry, in_q, out_q, tmp, buf_b)
    else:
        _process_per_row(ctx, x, y, t, geometry, in_q, out_q, buf_b)
