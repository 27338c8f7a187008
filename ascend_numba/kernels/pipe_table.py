"""A lane's pipe table: what the device's TPipe object holds, as int64 slots past the lane's UB.

``TPipe(ctx)`` zeroes it and sets ``STATE_PIPE`` in the lane's state row (a lane that built no
TPipe never reads it).  It holds the handles (TQue, TQueBind, TBuf, TBufPool) in the order the
lane built them, the buffers InitBuffer bound, and for checked mode the pipe order: a count of
the UB writes each tracked pipe made, how far each pipe has waited for each other
(``SYNCED[src][dst]``), and the flags SetFlag raised and WaitFlag has not yet taken (which pipe
wrote each 32-byte block, and when, is checked mode's: ``checked/pipeline.py``).

Read by ``kernels/primitives/tpipe.py`` (the model) and ``checked/pipeline.py`` (its rules).
"""

from __future__ import annotations

from .._numba_compat.jit import jit
from ..host.tpipe import HANDLE_KINDS, MAX_HANDLES, PIPE_NAMES
from .lane import PIPE_TABLE_BYTES, STATE_PIPE, _load_i64, _store_i64

__all__ = ["T_HANDLES", "T_BUFFERS", "T_PIPE_NOW", "T_SEQ", "T_SYNCED", "T_FLAGS", "EVENT_IDS", "MAX_HANDLES",
           "MAX_BUFFERS", "H_KIND", "H_SRC", "H_DST", "H_DEPTH", "H_NUM", "H_LEN", "H_FIRST", "H_NEXT", "H_USED",
           "H_ORDER", "B_ADDR", "B_LEN", "B_HANDLE", "B_STATE", "B_ORDER", "B_FREED", "B_ENQUED", "DEAD_HANDLE",
           "PIPE_TABLE_SLOTS", "KIND_QUE", "KIND_BUF", "KIND_POOL", "PIPE_S", "PIPE_V", "PIPE_MTE2", "PIPE_MTE3",
           "TRACKED", "t_load", "t_store", "h_load", "h_store", "b_load", "b_store", "synced_upto", "pipe_on"]

TRACKED = len(PIPE_NAMES)  # the pipes the twin orders, by their index in host.tpipe.PIPE_NAMES
PIPE_S, PIPE_V, PIPE_MTE2, PIPE_MTE3 = (PIPE_NAMES.index(n) for n in ("S", "V", "MTE2", "MTE3"))
EVENT_IDS = 8  # SetFlag's event ids, 0..7

T_HANDLES, T_BUFFERS, T_PIPE_NOW = 0, 1, 2    # handles built, buffers bound, the pipe of the access checked now
T_SEQ = 4                                      # UB writes per pipe
T_SYNCED = T_SEQ + TRACKED                     # [src * TRACKED + dst]: src's writes dst has waited for
T_FLAGS = T_SYNCED + TRACKED * TRACKED         # [(src * TRACKED + dst) * EVENT_IDS + id]: src's count + 1 at SetFlag
T_HANDLE = T_FLAGS + TRACKED * TRACKED * EVENT_IDS
H_FIELDS = 10
DEAD_HANDLE = MAX_HANDLES  # what a handle past the table gets: a slot no InitBuffer binds
# A handle: its kind, source and destination positions (index into host.tpipe.POSITION_NAMES), depth,
# buffer count, bytes per buffer, first buffer (a pool: its first byte), next buffer AllocTensor
# tries (a pool: its next free byte), tensors enqueued, enqueues so far (the FIFO's order).
H_KIND, H_SRC, H_DST, H_DEPTH, H_NUM, H_LEN, H_FIRST, H_NEXT, H_USED, H_ORDER = range(H_FIELDS)
T_BUFFER = T_HANDLE + (MAX_HANDLES + 1) * H_FIELDS
MAX_BUFFERS, B_FIELDS = 64, 7
# A buffer: its UB offset and bytes, its handle, its state (host.tpipe.BUFFER_STATES), its place in
# the queue's FIFO (0: not in it), whether a FreeTensor freed it, and the source pipe's count + 1
# at its EnQue (the queue's own SetFlag; its DeQue waits for it).
B_ADDR, B_LEN, B_HANDLE, B_STATE, B_ORDER, B_FREED, B_ENQUED = range(B_FIELDS)
PIPE_TABLE_SLOTS = T_BUFFER + MAX_BUFFERS * B_FIELDS
assert PIPE_TABLE_SLOTS * 8 <= PIPE_TABLE_BYTES
KIND_QUE, KIND_BUF, KIND_POOL = (HANDLE_KINDS.index(n) for n in ("TQue", "TBuf", "TBufPool"))


@jit(always_inline=True)
def _table(ctx):
    return ctx.ub_addr + ctx.ub_size


@jit(always_inline=True)
def t_load(ctx, slot):
    return _load_i64(_table(ctx), slot)


@jit(always_inline=True)
def t_store(ctx, slot, value):
    _store_i64(_table(ctx), slot, value)


@jit(always_inline=True)
def h_load(ctx, h, field):
    return _load_i64(_table(ctx), T_HANDLE + h * H_FIELDS + field)


@jit(always_inline=True)
def h_store(ctx, h, field, value):
    _store_i64(_table(ctx), T_HANDLE + h * H_FIELDS + field, value)


@jit(always_inline=True)
def b_load(ctx, b, field):
    return _load_i64(_table(ctx), T_BUFFER + b * B_FIELDS + field)


@jit(always_inline=True)
def b_store(ctx, b, field, value):
    _store_i64(_table(ctx), T_BUFFER + b * B_FIELDS + field, value)


@jit(always_inline=True)
def synced_upto(ctx, src, dst, seq):
    """A wait: pipe ``dst`` may now read what pipe ``src`` wrote up to its write ``seq``."""
    slot = T_SYNCED + src * TRACKED + dst
    _store_i64(_table(ctx), slot, max(_load_i64(_table(ctx), slot), seq))


@jit(always_inline=True)
def pipe_on(ctx):
    """Whether the lane built a TPipe (its table is live)."""
    return _load_i64(ctx.state_addr, STATE_PIPE) != 0

