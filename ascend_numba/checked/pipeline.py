"""Checked mode sees the pipeline: the TPipe / TQue rules (SPEC §8; the model is
``kernels/primitives/tpipe.py``, its state ``kernels/pipe_table.py``).

CPU debugging of Ascend C runs a kernel's stages one after another, so a Compute that reads the
CopyIn's tensor before its DeQue, or a vector op that reads a TBuf a copy just filled with no
SetFlag / WaitFlag between, computes the right numbers there and wrong ones on the device,
where MTE2, the vector unit and MTE3 run at once.  A checked lane records, per 32-byte block of
UB, which pipe wrote it last and when (the shadow's pipe part), and per buffer a TPipe bound its
TQue state; every UB read and write a primitive's rule checks (:mod:`.ub_shadow`'s helpers)
passes through :func:`pipe_read` / :func:`pipe_write`, so every primitive inherits the rules:

* ``pipe-read-before-deque``: a queue tensor's block read by another pipe than its writer before
  the tensor's DeQue (a VECCALC queue's tensors, never enqueued, take the TBuf rule);
* ``pipe-use-after-free``: a queue buffer touched while FREE (after FreeTensor, before AllocTensor);
* ``pipe-unsynchronized``: a block read by another pipe than its writer with no wait since the
  write: a WaitFlag of that event, a PipeBarrier<PIPE_ALL>, or the DeQue of an EnQue after it
  (a SetFlag, and a queue's EnQue, covers the source pipe's writes so far, as the device's
  events do: a DeQue orders every earlier write of that pipe, not the tensor's alone);
* the queue calls' own (``pipe-alloc-past-depth``, ``pipe-wrong-queue``, ``pipe-setup``), found by
  the model and reported through :func:`check_pipe_call`; ``pipe-never-freed`` at the lane's end.

Read-after-write is modelled; write-after-read (a copy overwriting a TBuf a vector op still
reads, which the device orders with V_MTE2) is not.  The pipe of an access is the vector unit's
unless the rule checking it says otherwise (a copy: MTE2 writes UB, MTE3 reads it; GetValue /
SetValue: the scalar unit), through :func:`set_pipe`.
"""

from __future__ import annotations

from .._numba_compat.jit import jit
from ..host.tpipe import POSITION_NAMES, QUE_DEQUE, QUE_FREE, ST_DEPTH, ST_EMPTY, ST_FOREIGN, ST_FREED, ST_FULL, ST_OK
from ..kernels.lane import STATE_PRIMITIVE, _load_i64, _store_i64
from ..kernels.pipe_table import (
    B_ADDR, B_FREED, B_HANDLE, B_LEN, B_STATE, H_DST, H_FIRST, H_KIND, H_SRC, KIND_QUE, T_BUFFERS, T_PIPE_NOW,
    T_SEQ, T_SYNCED, TRACKED, b_load, h_load, pipe_on, t_load, t_store,
)
from . import report
from .dispatch import checked_rule
from .rules import OPERAND_DST, OPERAND_SRC, PRIMITIVE

PRIM_FREE_TENSOR = PRIMITIVE["FreeTensor"]  # what a never-freed tensor misses
PRIM_DE_QUE = PRIMITIVE["DeQue"]
VECCALC = POSITION_NAMES.index("VECCALC")
PIPE_PART = 3  # the UB shadow's part this module keeps (see .ub_shadow)
BLOCK = 32  # UB bytes per block the pipe part tracks

__all__ = ["set_pipe", "pipe_read", "pipe_write", "check_pipe_call", "check_pipe_end"]


@jit(always_inline=True)
def set_pipe(ctx, pipe):
    """The accesses checked from here on are ``pipe``'s (until the next rule starts: the vector unit's)."""
    if pipe_on(ctx):
        t_store(ctx, T_PIPE_NOW, pipe)


@jit(always_inline=True)
def _position(ctx, h):
    # A queue's position in the messages: where its tensors are filled (VECIN) or drained (VECOUT).
    src = h_load(ctx, h, H_SRC)
    return src if src != 0 else h_load(ctx, h, H_DST)


@jit(always_inline=True)
def _blocks(ctx):
    # The shadow's pipe part, two int64 per 32-byte UB block: the lane's epoch << 8 | writer pipe + 1,
    # and the writer's count then (a tag of another epoch is another lane's: no writer).
    return ctx.shadow_addr + PIPE_PART * ctx.ub_size


@jit
def _overlap(ctx, b, ub_offset, n):
    """The bytes of ``[ub_offset, +n)`` in buffer ``b``, empty when a buffer bound later holds them all
    (a TBufPool sharing another's bytes binds over that pool's buffers after its Reset)."""
    start = b_load(ctx, b, B_ADDR)
    a0, a1 = max(ub_offset, start), min(ub_offset + n, start + b_load(ctx, b, B_LEN))
    for later in range(b + 1, t_load(ctx, T_BUFFERS)):
        if b_load(ctx, later, B_ADDR) <= a0 and a1 <= b_load(ctx, later, B_ADDR) + b_load(ctx, later, B_LEN):
            return a0, a0
    return a0, a1


@jit
def pipe_read(ctx, prim, operand, ub_offset, n):
    """A primitive reads UB bytes ``[ub_offset, +n)``: each TPipe buffer among them must be
    readable by the pipe reading it (see the module doc).  True when it may."""
    if not pipe_on(ctx) or n <= 0:
        return True
    reader = t_load(ctx, T_PIPE_NOW)
    blocks = _blocks(ctx)
    for b in range(t_load(ctx, T_BUFFERS)):
        a0, a1 = _overlap(ctx, b, ub_offset, n)
        if a0 >= a1:
            continue
        h = b_load(ctx, b, B_HANDLE)
        queue = h_load(ctx, h, H_KIND) == KIND_QUE
        state = b_load(ctx, b, B_STATE)
        index = b - h_load(ctx, h, H_FIRST) if queue else -1
        if queue and state == QUE_FREE:
            report.pipe_use_after_free(ctx, prim, operand, queue=h, position=_position(ctx, h), buffer=index,
                                       ub_offset=a0, access=0, freed=b_load(ctx, b, B_FREED))
            return False
        for blk in range(a0 // BLOCK, (a1 - 1) // BLOCK + 1):
            tag = _load_i64(blocks, 2 * blk)
            writer = (tag & 255) - 1
            if tag >> 8 != ctx.epoch or writer == reader:
                continue
            if queue and state != QUE_DEQUE and _position(ctx, h) != VECCALC:
                report.pipe_read_before_deque(ctx, prim, operand, queue=h, position=_position(ctx, h), buffer=index,
                                              ub_offset=max(a0, blk * BLOCK), state=state, pipe=reader)
                return False
            if t_load(ctx, T_SYNCED + writer * TRACKED + reader) < _load_i64(blocks, 2 * blk + 1):
                report.pipe_unsynchronized(ctx, prim, operand, queue=h, buffer=index, ub_offset=max(a0, blk * BLOCK),
                                           writer=writer, reader=reader)
                return False
    return True


@jit
def pipe_write(ctx, ub_offset, n):
    """A primitive writes UB bytes ``[ub_offset, +n)``: their blocks remember the pipe and its write
    count; a FREE queue buffer among them is pipe-use-after-free."""
    if not pipe_on(ctx) or n <= 0:
        return
    for b in range(t_load(ctx, T_BUFFERS)):
        a0, a1 = _overlap(ctx, b, ub_offset, n)
        h = b_load(ctx, b, B_HANDLE)
        if a0 < a1 and h_load(ctx, h, H_KIND) == KIND_QUE and b_load(ctx, b, B_STATE) == QUE_FREE:
            report.pipe_use_after_free(ctx, _load_i64(ctx.state_addr, STATE_PRIMITIVE), OPERAND_DST, queue=h,
                                       position=_position(ctx, h), buffer=b - h_load(ctx, h, H_FIRST),
                                       ub_offset=a0, access=1, freed=b_load(ctx, b, B_FREED))
            return
    pipe = t_load(ctx, T_PIPE_NOW)
    seq = t_load(ctx, T_SEQ + pipe) + 1
    t_store(ctx, T_SEQ + pipe, seq)
    blocks = _blocks(ctx)
    for blk in range(ub_offset // BLOCK, (ub_offset + n - 1) // BLOCK + 1):
        _store_i64(blocks, 2 * blk, ctx.epoch << 8 | (pipe + 1))
        _store_i64(blocks, 2 * blk + 1, seq)


@checked_rule
@jit
def check_pipe_call(ctx, prim, status, queue, a, b):
    """A TPipe / TQue call found ``status`` (:data:`ST_OK`...) on handle ``queue``, with two values."""
    if status == ST_OK:
        return True
    position = _position(ctx, queue) if queue >= 0 else 0
    if status == ST_FULL:
        report.pipe_alloc_past_depth(ctx, prim, OPERAND_DST, queue=queue, position=position, limit=a, call=0)
    elif status == ST_DEPTH:
        report.pipe_alloc_past_depth(ctx, prim, OPERAND_SRC, queue=queue, position=position, limit=a, call=1)
    elif status == ST_FOREIGN:
        report.pipe_wrong_queue(ctx, prim, OPERAND_SRC, queue=queue, position=position, ub_offset=a, call=b)
    elif status == ST_EMPTY:
        report.pipe_wrong_queue(ctx, prim, OPERAND_SRC, queue=queue, position=position, ub_offset=-1, call=1)
    elif status == ST_FREED:
        report.pipe_use_after_free(ctx, prim, OPERAND_SRC, queue=queue, position=position, buffer=a, ub_offset=b,
                                   access=0 if prim == PRIM_DE_QUE else 1, freed=1)
    else:
        report.pipe_setup(ctx, prim, OPERAND_DST, queue=queue, value=a, what=b)
    return False


@checked_rule
@jit
def check_pipe_end(ctx):
    """The lane ended: every queue tensor it allocated was freed (pipe-never-freed)."""
    if not pipe_on(ctx):
        return True
    for b in range(t_load(ctx, T_BUFFERS)):
        h = b_load(ctx, b, B_HANDLE)
        state = b_load(ctx, b, B_STATE)
        if h_load(ctx, h, H_KIND) == KIND_QUE and state != QUE_FREE:
            report.pipe_never_freed(ctx, PRIM_FREE_TENSOR, OPERAND_DST, queue=h, position=_position(ctx, h),
                                    buffer=b - h_load(ctx, h, H_FIRST), state=state)
            return False
    return True

