"""Checked mode sees the pipeline: the TPipe / TQue rules (SPEC §8; the model is
``kernels/primitives/tpipe.py``, its state ``kernels/pipe_table.py``).

CPU debugging of Ascend C runs a kernel's stages one after another, so a Compute that reads the
CopyIn's tensor before its DeQue, or a vector op that reads a TBuf a copy just filled with no
SetFlag / WaitFlag between, computes the right numbers there and wrong ones on the device,
where MTE2, the vector unit and MTE3 run at once.  A checked lane records, per buffer a TPipe
bound, which pipe wrote it last and where its TQue state stands; every UB read and write a
primitive's rule checks (:mod:`.ub_shadow`'s helpers) passes through :func:`pipe_read` /
:func:`pipe_write`, so every primitive inherits the rules:

* ``pipe-read-before-deque``: a queue buffer read by another pipe than its writer, not DeQue'd;
* ``pipe-use-after-free``: a queue buffer touched while FREE (after FreeTensor, before AllocTensor);
* ``pipe-unsynchronized``: a TBuf read by another pipe than its writer, no WaitFlag of that event
  since the write (an event's SetFlag covers the source pipe's writes so far, as the device's does);
* the queue calls' own (``pipe-alloc-past-depth``, ``pipe-wrong-queue``, ``pipe-setup``), found by
  the model and reported through :func:`check_pipe_call`; ``pipe-never-freed`` at the lane's end.

The pipe of an access is the vector unit's unless the rule checking it says otherwise (a copy:
MTE2 writes UB, MTE3 reads it; GetValue / SetValue: the scalar unit), through :func:`set_pipe`.
"""

from __future__ import annotations

from .._numba_compat.jit import jit
from ..host.tpipe import POSITION_NAMES, QUE_DEQUE, QUE_FREE, ST_DEPTH, ST_EMPTY, ST_FOREIGN, ST_FREED, ST_FULL, ST_OK
from ..kernels.lane import STATE_PRIMITIVE, _load_i64
from ..kernels.pipe_table import (
    B_FREED, B_HANDLE, B_STATE, B_WRITER, B_WSEQ, H_DST, H_FIRST, H_KIND, H_NUM, H_SRC, KIND_QUE, T_BUFFERS,
    T_PIPE_NOW, T_SEQ, T_SYNCED, TRACKED, b_load, b_store, buffer_at, h_load, pipe_on, t_load, t_store,
)
from . import report
from .dispatch import checked_rule
from .rules import OPERAND_DST, OPERAND_SRC, PRIMITIVE

PRIM_FREE_TENSOR = PRIMITIVE["FreeTensor"]  # what a never-freed tensor misses
VECCALC = POSITION_NAMES.index("VECCALC")

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


@jit
def pipe_read(ctx, prim, operand, ub_offset, n):
    """A primitive reads UB bytes ``[ub_offset, +n)``: a TPipe buffer among them must be readable by
    the pipe reading it (see the module doc).  True when it may."""
    if not pipe_on(ctx) or n <= 0:
        return True
    b = buffer_at(ctx, ub_offset)
    if b < 0:
        return True
    h = b_load(ctx, b, B_HANDLE)
    reader = t_load(ctx, T_PIPE_NOW)
    writer = b_load(ctx, b, B_WRITER) - 1
    if h_load(ctx, h, H_KIND) == KIND_QUE:
        state = b_load(ctx, b, B_STATE)
        index = b - h_load(ctx, h, H_FIRST)
        if state == QUE_FREE:
            report.pipe_use_after_free(ctx, prim, operand, queue=h, position=_position(ctx, h), buffer=index,
                                       ub_offset=ub_offset, access=0, freed=b_load(ctx, b, B_FREED))
            return False
        if state == QUE_DEQUE or writer < 0 or writer == reader:
            return True
        if _position(ctx, h) != VECCALC:  # a VECCALC queue's temporaries are never enqueued: a TBuf's rule
            report.pipe_read_before_deque(ctx, prim, operand, queue=h, position=_position(ctx, h), buffer=index,
                                          ub_offset=ub_offset, state=state, pipe=reader)
            return False
    if writer >= 0 and writer != reader and \
            t_load(ctx, T_SYNCED + writer * TRACKED + reader) < b_load(ctx, b, B_WSEQ):
        report.pipe_unsynchronized(ctx, prim, operand, queue=h, buffer=b - h_load(ctx, h, H_FIRST)
                                   if h_load(ctx, h, H_KIND) == KIND_QUE else -1, ub_offset=ub_offset, writer=writer,
                                   reader=reader)
        return False
    return True


@jit
def pipe_write(ctx, ub_offset, n):
    """A primitive writes UB bytes ``[ub_offset, +n)``: the buffer holding them remembers the pipe
    and its write count; a FREE queue buffer is pipe-use-after-free."""
    if not pipe_on(ctx) or n <= 0:
        return
    b = buffer_at(ctx, ub_offset)
    if b < 0:
        return
    h = b_load(ctx, b, B_HANDLE)
    if h_load(ctx, h, H_KIND) == KIND_QUE and b_load(ctx, b, B_STATE) == QUE_FREE:
        report.pipe_use_after_free(ctx, _load_i64(ctx.state_addr, STATE_PRIMITIVE), OPERAND_DST, queue=h,
                                   position=_position(ctx, h), buffer=b - h_load(ctx, h, H_FIRST),
                                   ub_offset=ub_offset, access=1, freed=b_load(ctx, b, B_FREED))
        return
    pipe = t_load(ctx, T_PIPE_NOW)
    seq = t_load(ctx, T_SEQ + pipe) + 1
    t_store(ctx, T_SEQ + pipe, seq)
    b_store(ctx, b, B_WRITER, pipe + 1)
    b_store(ctx, b, B_WSEQ, seq)


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
                                   access=1, freed=1)
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
        if h_load(ctx, h, H_KIND) == KIND_QUE and state != QUE_FREE and h_load(ctx, h, H_NUM) > 0:
            report.pipe_never_freed(ctx, PRIM_FREE_TENSOR, OPERAND_DST, queue=h, position=_position(ctx, h),
                                    buffer=b - h_load(ctx, h, H_FIRST), state=state)
            return False
    return True

