"""TTRANS, the tile transpose: ``dst[j*dst_stride + i] = src[i*src_stride + j]`` in UB.

The vector path transposes 32-byte square blocks in registers straight into the destination
(the temporary tile it requires is checked for size, its bytes left as they were); the scalar
path moves element by element.  Both give the same bytes; the lane counts which ran.

Checked-mode rule beside the primitive: :func:`check_ttrans`.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ...checked.auto import enter
from ...checked.dispatch import COLS, ROWS, checked_rule, count_ok
from ...checked.rules import OPERAND_DST, OPERAND_SRC, OPERAND_TMP, PRIMITIVE
from ...checked.ub_shadow import (
    first_garbage, is_local_operand, mark_epoch, mark_written, set_garbage, ub_aligned, ub_range_ok, ub_read_ok,
)
from ..._numba_compat.extending import python_twin
from ..._numba_compat.jit import jit
from ..lane import ERR_TMP_TOO_SMALL, STATE_TTRANS_SCALAR, STATE_TTRANS_VECTOR, _address
from ...host.trace import DIR_VECTOR, EVENT_TTRANS
from .context import address, count_event, lane_error, rows_inside, trace_event, tracing

__all__ = ["ttrans", "align_up"]

PRIM_TTRANS = PRIMITIVE["TTRANS"]


@checked_rule
@jit
def check_ttrans(ctx, dst_addr, dst_nbytes, dst_stride, src_addr, src_nbytes, src_stride, tmp_addr, tmp_nbytes,
                 tmp_used, itemsize, rows, cols):
    """TTRANS: three aligned UB tiles, the source rows read and the destination rows written in bounds;
    the ``tmp_used`` bytes of tmp the vector path takes are garbage after it (the device computes in
    them), so a kernel that reads them as a result is told where its garbage came from."""
    enter(ctx, PRIM_TTRANS)
    if not (count_ok(ctx, PRIM_TTRANS, OPERAND_SRC, rows, ROWS, 0)
            and count_ok(ctx, PRIM_TTRANS, OPERAND_SRC, cols, COLS, 0)):
        return False
    if rows == 0 or cols == 0:
        return True
    p = PRIM_TTRANS
    for operand, addr in ((OPERAND_DST, dst_addr), (OPERAND_SRC, src_addr), (OPERAND_TMP, tmp_addr)):
        if not (is_local_operand(ctx, p, operand, addr) and ub_aligned(ctx, p, operand, addr, 0)):
            return False
    if not ub_range_ok(ctx, p, OPERAND_SRC, src_addr, src_nbytes, 0, _span_bytes(rows, src_stride, cols, itemsize)):
        return False
    for i in range(rows):
        if not ub_read_ok(ctx, p, OPERAND_SRC, src_addr, i * src_stride * itemsize, cols * itemsize):
            return False
    if not ub_range_ok(ctx, p, OPERAND_DST, dst_addr, dst_nbytes, 0, _span_bytes(cols, dst_stride, rows, itemsize)):
        return False
    # UB offsets as int64, as every primitive passes them: a uint64 one compiles each shadow helper again.
    ub = np.int64(ctx.ub_addr)
    s0, d0, t0 = np.int64(src_addr) - ub, np.int64(dst_addr) - ub, np.int64(tmp_addr) - ub
    dirty = False
    for i in range(rows):
        dirty = dirty or first_garbage(ctx, s0 + i * src_stride * itemsize, cols * itemsize) >= 0
    if 0 < tmp_used <= tmp_nbytes:
        set_garbage(ctx, t0, tmp_used, 1)
        mark_epoch(ctx, t0, tmp_used)
    for j in range(cols):
        if dirty:  # garbage moves with its element: dst[j, i] from src[i, j]
            for i in range(rows):
                garbage = first_garbage(ctx, s0 + (i * src_stride + j) * itemsize, itemsize) >= 0
                set_garbage(ctx, d0 + (j * dst_stride + i) * itemsize, itemsize, 1 if garbage else 0)
            mark_epoch(ctx, d0 + j * dst_stride * itemsize, rows * itemsize)
        else:
            mark_written(ctx, d0 + j * dst_stride * itemsize, rows * itemsize)
    return True


@jit(always_inline=True)
def _span_bytes(count, stride, length, itemsize):
    """Bytes from the first of ``count`` rows of ``length`` elements, ``stride`` apart, to the end of
    the last; 2^62 (past any UB) where a stride that large would overflow the product."""
    if count > 1 and (stride > (1 << 62) // itemsize // (count - 1) or stride < -((1 << 62) // itemsize)):
        return np.int64(1 << 62)
    return ((count - 1) * stride + length) * itemsize


@jit(always_inline=True)
def align_up(n, unit):
    return (n + unit - 1) // unit * unit


@jit
def ttrans(ctx, dst, dst_stride, src, src_stride, rows, cols, tmp):
    """TTRANS: ``dst[j*dst_stride + i] = src[i*src_stride + j]`` for ``i < rows, j < cols``.

    The vector path (when ``dst_stride % RowStride == 0``, ``src_stride % ElemPerBlock == 0``
    and ``src_stride / ElemPerBlock <= 255``) needs ``tmp`` of ``cols * ceil(rows/RowStride)*RowStride``
    elements (a smaller one is a lane error) and transposes 32-byte square blocks in registers,
    a strip of columns at a time; otherwise the scalar path moves element by element.  Both give
    the same bytes; the lane counts which one ran.  The device's use of ``tmp`` is its own
    (seed 004: an implementation-defined temporary tile); here its bytes are left as they were,
    and checked mode marks the ones the vector path takes as garbage.  An element whose place lies
    past ``dst`` or ``src`` is skipped, as in a vector op (checked mode reports it).
    """
    itemsize = src.itemsize
    rs = 32 if itemsize == 1 else 16
    epb = ctx.block_bytes // itemsize
    vector = dst_stride % rs == 0 and src_stride % epb == 0 and src_stride // epb <= 255
    tmp_need = cols * align_up(rows, rs) if vector else 0  # elements of tmp the vector path takes
    if not check_ttrans(ctx, _address(dst), dst.nbytes, dst_stride, _address(src), src.nbytes, src_stride,
                        _address(tmp), tmp.nbytes, tmp_need * itemsize, itemsize, rows, cols):
        return
    if tracing(ctx):
        d, sr, t = address(dst), address(src), address(tmp)
        trace_event(ctx, EVENT_TTRANS, DIR_VECTOR, rows * cols * itemsize, rows * cols, d,
                    d + ((cols - 1) * dst_stride + rows) * itemsize, sr,
                    sr + ((rows - 1) * src_stride + cols) * itemsize, t, t + tmp.nbytes)
    if vector:
        if tmp.size < tmp_need:
            lane_error(ctx, ERR_TMP_TOO_SMALL, tmp_need)
            return
        count_event(ctx, STATE_TTRANS_VECTOR)
    else:
        count_event(ctx, STATE_TTRANS_SCALAR)
    if rows <= 0 or cols <= 0:
        return
    if not (rows_inside(0, cols, dst_stride, rows, dst.size) and rows_inside(0, rows, src_stride, cols, src.size)):
        _transpose_clamped(dst, dst_stride, src, src_stride, rows, cols)
    elif vector:
        _transpose_strips(dst, dst_stride, src, src_stride, rows, cols)
    else:
        ds = np.uint64(dst_stride)
        ss = np.uint64(src_stride)
        for i in range(np.uint64(rows)):
            for j in range(np.uint64(cols)):
                dst[j * ds + i] = src[i * ss + j]


@jit(never_inline=True)
def _transpose_clamped(dst, ds, src, ss, rows, cols):
    # Operands too small for their rows (checked mode has reported it): as for a vector op, an
    # element past either tensor is skipped, so no store leaves the destination.  A cold path:
    # not inlined, so TTRANS's own code stays as it was.
    for i in range(rows):
        for j in range(cols):
            d, s = _place(j, ds, i, dst.size), _place(i, ss, j, src.size)
            if d >= 0 and s >= 0:
                dst[d] = src[s]


@jit(always_inline=True)
def _place(k, stride, offset, size):
    """``k * stride + offset`` when it lies in ``[0, size)``, else -1, for ``k, offset >= 0``: the
    product is formed only where it cannot overflow."""
    if offset >= size:
        return -1
    if k == 0 or stride == 0:
        return offset
    if stride > 0:
        return -1 if stride > (size - 1 - offset) // k else k * stride + offset
    return -1 if stride < -(offset // k) else k * stride + offset


@intrinsic
def _transpose_blocks(typingctx, dst, dst_off, dst_stride, src, src_off, src_stride, blocks):
    """Transpose ``blocks`` (a literal 1 or 2) side-by-side square blocks of 32-byte rows (8x8 fp32,
    16x16 fp16, 32x32 int8, 4x4 fp64) in registers: block ``b`` starts ``b * side`` elements right
    of ``src_off`` and its transpose ``b * side`` rows below ``dst_off``.  Each source row of all
    the blocks is one vector (two blocks: 64 bytes, a whole line, and each shuffle works on both),
    log2(side) rounds of interleaves within each block, then each block's columns are stored.
    Offsets and strides in elements; the caller keeps the blocks inside both arrays."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype
            and isinstance(blocks, types.IntegerLiteral) and blocks.literal_value in (1, 2)):
        return None
    itemsize = src.dtype.bitwidth // 8
    side = 32 // itemsize
    count = blocks.literal_value
    width = count * side
    sig = types.void(dst, types.int64, types.int64, src, types.int64, types.int64, blocks)

    def codegen(context, builder, signature, args):
        d, d_off, d_stride, s, s_off, s_stride, _ = args
        elem = ir.IntType(8 * itemsize)
        i64 = ir.IntType(64)
        d_base = builder.bitcast(context.make_array(signature.args[0])(context, builder, d).data, elem.as_pointer())
        s_base = builder.bitcast(context.make_array(signature.args[3])(context, builder, s).data, elem.as_pointer())

        def pointer(base, off, stride, r, vector):
            index = builder.add(off, builder.mul(stride, ir.Constant(i64, r)))
            return builder.bitcast(builder.gep(base, [index]), vector.as_pointer())

        rows = [builder.load(pointer(s_base, s_off, s_stride, r, ir.VectorType(elem, width)), align=1)
                for r in range(side)]
        # Round k pairs the rows whose indices differ in bit k and interleaves runs of 2^k elements
        # from the low halves (and from the high halves) of the pair: the halves of each 16-byte
        # lane while a lane holds two runs or more, x86's in-lane unpack (one uop; a 16-bit
        # vpermt2w is three), else of each block.  Runs that double each round let every round but
        # the first move whole 32-, 64- or 128-bit words.  Which row then holds which column:
        # :func:`_columns_after_rounds`.
        rounds = side.bit_length() - 1
        mask_type = ir.VectorType(ir.IntType(32), width)
        for k in range(rounds):
            low, high = (ir.Constant(mask_type, m) for m in _round_masks(itemsize, count, k))
            paired = list(rows)
            for v in range(side):
                if not v >> k & 1:
                    paired[v] = builder.shuffle_vector(rows[v], rows[v | 1 << k], low)
                    paired[v | 1 << k] = builder.shuffle_vector(rows[v], rows[v | 1 << k], high)
            rows = paired
        held = _columns_after_rounds(itemsize, count)
        rows = [rows[held.index(c)] for c in range(side)]
        column = ir.VectorType(elem, side)
        for b in range(count):
            pick = ir.Constant(ir.VectorType(ir.IntType(32), side), list(range(b * side, (b + 1) * side)))
            b_off = builder.add(d_off, builder.mul(d_stride, ir.Constant(i64, b * side)))
            for c in range(side):
                part = rows[c] if count == 1 else builder.shuffle_vector(rows[c], rows[c], pick)
                builder.store(part, pointer(d_base, b_off, d_stride, c, column), align=1)
        return context.get_dummy_value()

    return sig, codegen


def _round_masks(itemsize: int, count: int, k: int) -> tuple[list[int], list[int]]:
    """Shuffle masks (low, high) of round ``k`` over two rows of ``count`` blocks (indices past
    the first row's ``width`` pick from the second)."""
    side = 32 // itemsize
    width, run, lane = count * side, 1 << k, 16 // itemsize
    unit = lane if 2 * run <= lane else side  # the span whose halves are interleaved
    return tuple([base + h * unit // 2 + p + other + e for base in range(0, width, unit)
                  for p in range(0, unit // 2, run) for other in (0, width) for e in range(run)]
                 for h in (0, 1))


def _columns_after_rounds(itemsize: int, count: int) -> list[int]:
    """The block column each row register holds after the rounds of :func:`_round_masks`."""
    side = 32 // itemsize
    rows = [[c for _ in range(count) for c in range(side)] for _ in range(side)]
    for k in range(side.bit_length() - 1):
        low, high = _round_masks(itemsize, count, k)
        for v in range(side):
            if not v >> k & 1:
                both = rows[v] + rows[v | 1 << k]
                rows[v], rows[v | 1 << k] = [both[i] for i in low], [both[i] for i in high]
    return [r[0] for r in rows]


@python_twin(_transpose_blocks)
def _transpose_blocks_py(dst, dst_off, dst_stride, src, src_off, src_stride, blocks):
    side = 32 // src.itemsize
    k = np.arange(side)
    for b in range(int(blocks)):
        block = src[src_off + b * side + k[:, None] * src_stride + k[None, :]]
        dst[dst_off + (b * side + k[:, None]) * dst_stride + k[None, :]] = block.T


@jit(always_inline=True)
def _transpose_strips(dst, ds, src, ss, rows, cols):
    """``dst[j*ds + i] = src[i*ss + j]``, a strip of up to two blocks' columns at a time: the
    strip's whole 32-byte squares in registers, the edges element by element (unsigned indices
    skipping the negative-index test)."""
    side = 32 // src.itemsize
    full_rows = rows // side * side
    uds, uss = np.uint64(ds), np.uint64(ss)
    for j0 in range(0, cols, 2 * side):
        j1 = min(j0 + 2 * side, cols)
        blocked = j0 + (j1 - j0) // side * side  # the strip's columns before this are whole blocks
        if blocked - j0 == 2 * side:
            for i0 in range(0, full_rows, side):
                _transpose_blocks(dst, j0 * ds + i0, ds, src, i0 * ss + j0, ss, 2)
        elif blocked > j0:
            for i0 in range(0, full_rows, side):
                _transpose_blocks(dst, j0 * ds + i0, ds, src, i0 * ss + j0, ss, 1)
        for i in range(np.uint64(rows)):  # the columns past the last whole block
            for j in range(np.uint64(blocked), np.uint64(j1)):
                dst[j * uds + i] = src[i * uss + j]
        for i in range(np.uint64(full_rows), np.uint64(rows)):  # the rows past the last whole block
            for j in range(np.uint64(j0), np.uint64(blocked)):
                dst[j * uds + i] = src[i * uss + j]
