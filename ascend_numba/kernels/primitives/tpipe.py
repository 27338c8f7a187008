"""Ascend C's programming model: TPipe, TQue, TQueBind, TBuf, TBufPool, their tensors and events.

A port keeps the C++'s calls in the C++'s order::

    pipe = TPipe(ctx)                                   # TPipe pipe;
    in_queue_x = TQue(pipe, TPosition.VECIN, BUFFER_NUM)  # TQue<TPosition::VECIN, BUFFER_NUM> inQueueX;
    pipe.init_buffer(in_queue_x, BUFFER_NUM, TILE_LENGTH * 2)
    x_local = in_queue_x.alloc_tensor(half)             # inQueueX.AllocTensor<half>()
    data_copy(ctx, x_local, 0, x_gm, i * TILE_LENGTH, TILE_LENGTH)
    in_queue_x.en_que(x_local)
    x_local = in_queue_x.de_que(half)
    in_queue_x.free_tensor(x_local)

The handles are small named tuples (the lane and a slot), and their state is the device's
TPipe object's, kept in the lane's pipe table (``kernels/pipe_table.py``): a handle passes
between stage functions for free and Numba compiles the whole kernel-class shape as functions of
them (see ``docs/kernels/ascendc.md``).  A tensor is a typed view of the UB bytes of its buffer,
as every primitive takes; a call finds its buffer by address.

The device's semantics (asc-devkit at 0da921b: ``impl/basic_api/kernel_tquebind_impl.h``,
``kernel_tbuf_impl.h``, ``kernel_tbufpool_impl.h``; the ``TQue``, ``TBuf``, ``TPipe``, ``TBufPool``
and ``SetFlag-WaitFlag`` pages): AllocTensor takes the queue's next FREE buffer round-robin,
EnQue needs an allocated (or dequeued) tensor of this queue and fewer than ``depth`` enqueued,
DeQue takes the oldest enqueued, FreeTensor a tensor not free.  What the device would hang on
(AllocTensor with every buffer out, DeQue of an empty queue) or refuse is a lane error in any
lane, as Ascend C's CPU debugging stops there; checked mode names the rule
(``checked/pipeline.py``, which also sees the pipeline hazards the stages' order hides).
"""

from __future__ import annotations

import collections

import numpy as np
from numba import carray, types
from numba.extending import overload_method

from ...checked.pipeline import check_pipe_call
from ...checked.rules import PRIMITIVE
from ...host.tpipe import (
    EVENT_PIPES, MAX_HANDLES, PIPE, POSITION_NAMES, QUE_DEQUE, QUE_ENQUE, QUE_FREE, QUE_OCCUPIED, ST_DEPTH, ST_EMPTY,
    ST_FOREIGN, ST_FREED, ST_FULL, ST_SETUP, HardEvent, TPosition,
)
from ..._numba_compat.extending import TypingError
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..interpret import python_function
from ..lane import ERR_PIPE, STATE_PIPE, _address, _store_i64, _voidptr
from ..pipe_table import (
    B_ADDR, B_ENQUED, B_FREED, B_HANDLE, B_LEN, B_ORDER, B_STATE, DEAD_HANDLE, EVENT_IDS, H_DEPTH, H_DST, H_FIRST,
    H_KIND, H_LEN, H_NEXT, H_NUM, H_ORDER, H_SRC, H_USED, KIND_BUF, KIND_POOL, KIND_QUE, MAX_BUFFERS, PIPE_MTE2,
    PIPE_MTE3, PIPE_TABLE_SLOTS, PIPE_V, T_BUFFERS, T_FLAGS, T_HANDLES, T_SEQ, TRACKED, b_load, b_store, h_load,
    h_store, pipe_on, synced_upto, t_load, t_store,
)
from .context import lane_error
from .memory import _itemsize, take_ub

__all__ = ["aicore", "TPipe", "TQue", "TQueBind", "TBuf", "TBufPool", "TPosition", "HardEvent", "PIPE", "init_buffer",
           "init_buf_pool", "alloc_tensor", "en_que", "de_que", "free_tensor", "tbuf_get", "set_flag", "wait_flag",
           "pipe_barrier"]

PRIM_INIT_BUFFER, PRIM_ALLOC_TENSOR, PRIM_EN_QUE, PRIM_DE_QUE, PRIM_FREE_TENSOR, PRIM_GET, PRIM_SET_FLAG, PRIM_GM = (
    PRIMITIVE[n] for n in ("InitBuffer", "AllocTensor", "EnQue", "DeQue", "FreeTensor", "Get", "SetFlag",
                           "SetGlobalBuffer"))
# pipe-setup's cases (checked.rules.PIPE_SETUP's choices).
(SETUP_NOT_INIT, SETUP_POSITION, SETUP_HANDLES, SETUP_BUFFERS, SETUP_POOL, SETUP_GET_LEN, SETUP_GET_BLOCKS,
 SETUP_EVENT_ID, SETUP_NUM, SETUP_LENGTH, SETUP_DEPTH, SETUP_GM) = range(12)
# A position's index in host.tpipe.POSITION_NAMES (what the pipe table and the messages keep).
_GM, _VECIN, _VECOUT, _VECCALC = (POSITION_NAMES.index(n) for n in ("GM", "VECIN", "VECOUT", "VECCALC"))
# HardEvent -> its (source, destination) pipe index (-1: an event between pipes the twin does not order).
_EVENT_SRC = np.full(len(HardEvent), -1, np.int64)
_EVENT_DST = np.full(len(HardEvent), -1, np.int64)
for _event, (_src, _dst) in EVENT_PIPES.items():
    _EVENT_SRC[_event], _EVENT_DST[_event] = _src, _dst


def aicore(func):
    """``__aicore__ inline``: one of the kernel's own functions (its class's Init, Process, a stage),
    compiled with the house's options; it may take and return tensors and handles."""
    return jit(func, _nrt=True)


def _interpreted(func):
    # A handle's Python method (interpret mode only: compiled code takes the overload_method below).
    return lambda *args: python_function(func.py_func)(*args)


class _BufferOwner:
    """What binds buffers (a TPipe, a TBufPool): ``init_buffer(que, num, len)``, ``init_buffer(tbuf, len)``."""

    __slots__ = ()

    def init_buffer(self, handle, num_or_len, length=None):
        return _interpreted(init_buffer)(self, handle, *_buffer_args(handle, num_or_len, length))


class _Pipe(_BufferOwner, collections.namedtuple("TPipe", ["ctx", "slot"])):
    """The lane's TPipe: ``init_buffer``, ``init_buf_pool``."""

    __slots__ = ()

    def init_buf_pool(self, pool, length, share=None):
        return _interpreted(init_buf_pool)(self, pool, length, -1 if share is None else share.slot)


class _Que(collections.namedtuple("TQue", ["ctx", "slot"])):
    """A TQue / TQueBind: ``alloc_tensor(dtype)``, ``en_que(t)``, ``de_que(dtype)``, ``free_tensor(t)``."""

    __slots__ = ()

    def alloc_tensor(self, dtype):
        return _interpreted(alloc_tensor)(self, dtype)

    def en_que(self, tensor):
        return _interpreted(en_que)(self, tensor)

    def de_que(self, dtype):
        return _interpreted(de_que)(self, dtype)

    def free_tensor(self, tensor):
        return _interpreted(free_tensor)(self, tensor)


class _Buf(collections.namedtuple("TBuf", ["ctx", "slot"])):
    """A TBuf: ``get(dtype)`` (the whole buffer) or ``get(dtype, count)``."""

    __slots__ = ()

    def get(self, dtype, count=None):
        return _interpreted(tbuf_get)(self, dtype, -1 if count is None else count, count is None)


class _Pool(_BufferOwner, collections.namedtuple("TBufPool", ["ctx", "slot"])):
    """A TBufPool: ``init_buffer`` as the TPipe's, inside the pool's bytes; ``reset()``."""

    __slots__ = ()

    def reset(self):
        return _interpreted(pool_reset)(self)


def _buffer_args(handle, num_or_len, length):
    """InitBuffer(que, num, len) or InitBuffer(tbuf, len): (num, len)."""
    if isinstance(handle, _Buf) != (length is None):
        raise TypeError("InitBuffer takes (TQue, num, len) or (TBuf, len)")
    return (1, num_or_len) if length is None else (num_or_len, length)


# ---- building the handles ------------------------------------------------------------------------

@jit
def TPipe(ctx):
    """TPipe: the lane's buffer manager, empty (its queues and buffers bound by ``init_buffer``)."""
    for i in range(PIPE_TABLE_SLOTS):
        t_store(ctx, i, 0)
    _store_i64(ctx.state_addr, STATE_PIPE, 1)
    return _Pipe(ctx, -1)  # slot -1: the TPipe itself, where a TBufPool has its handle


@jit
def _handle(ctx, kind, src, dst, depth):
    h = t_load(ctx, T_HANDLES)
    if h >= MAX_HANDLES:
        _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, DEAD_HANDLE, h, SETUP_HANDLES)
        return DEAD_HANDLE  # past the table's handles: no InitBuffer binds it, every call on it fails
    t_store(ctx, T_HANDLES, h + 1)
    h_store(ctx, h, H_KIND, kind)
    h_store(ctx, h, H_SRC, src)
    h_store(ctx, h, H_DST, dst)
    h_store(ctx, h, H_DEPTH, depth)
    return h


@jit(always_inline=True)
def _fail(ctx, prim, status, queue, a, b):
    """A call the device hangs on or refuses: checked mode names the rule; every lane stops."""
    check_pipe_call(ctx, prim, status, queue, a, b)
    lane_error(ctx, ERR_PIPE, status * MAX_HANDLES + queue)


@jit
def TQueBind(pipe, src, dst, depth):
    """TQueBind<src, dst, depth>: a queue from position ``src`` to ``dst`` (GM -> VECIN, VECOUT -> GM,
    VECIN -> VECOUT), at most ``depth`` tensors enqueued at once."""
    s, d = _position_index(src), _position_index(dst)
    h = _handle(pipe.ctx, KIND_QUE, s, d, depth)
    if not ((s == _GM and d == _VECIN) or (s == _VECOUT and d == _GM) or (s == _VECIN and d == _VECOUT)):
        _fail(pipe.ctx, PRIM_INIT_BUFFER, ST_SETUP, h, src * 256 + dst, SETUP_POSITION)
    _check_depth(pipe.ctx, h, depth)
    return _Que(pipe.ctx, h)


@jit(always_inline=True)
def _check_depth(ctx, h, depth):
    # Depth 0 is the device's in-place forms' (AllocTensor(tensor), DeQue(tensor)), not provided here.
    if depth < 1:
        _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, depth, SETUP_DEPTH)


@jit
def TQue(pipe, position, depth):
    """TQue<position, depth>: VECIN (filled from GM), VECOUT (drained to GM) or VECCALC (temporaries
    the vector unit alone uses: current CANN takes a TBuf there, earlier releases and published
    samples a TQue, so the twin takes both)."""
    p = _position_index(position)
    h = _handle(pipe.ctx, KIND_QUE, _GM if p == _VECIN else p, _GM if p == _VECOUT else p, depth)
    if p == _GM:
        _fail(pipe.ctx, PRIM_INIT_BUFFER, ST_SETUP, h, position, SETUP_POSITION)
    _check_depth(pipe.ctx, h, depth)
    return _Que(pipe.ctx, h)


@jit
def TBuf(pipe, position):
    """TBuf<position>: one buffer with no queue (temporaries; its users order its pipes themselves)."""
    return _Buf(pipe.ctx, _handle(pipe.ctx, KIND_BUF, _position_index(position), 0, 0))


@jit
def TBufPool(pipe, position):
    """TBufPool<position>: a sub-pool of UB its own queues and buffers are bound in (``init_buf_pool``)."""
    return _Pool(pipe.ctx, _handle(pipe.ctx, KIND_POOL, _position_index(position), 0, 0))


@jit(always_inline=True)
def _position_index(position):
    if position == TPosition.VECIN:
        return _VECIN
    if position == TPosition.VECOUT:
        return _VECOUT
    if position == TPosition.VECCALC:
        return _VECCALC
    return _GM


# ---- binding buffers -----------------------------------------------------------------------------

@jit
def _take(owner, nbytes, h):
    """``nbytes`` of UB (whole blocks) from the TPipe (the lane's UB top, as alloc_buffer takes) or
    from a TBufPool's bytes; the UB offset, or -1."""
    ctx = owner.ctx
    if owner.slot >= 0:  # a TBufPool
        pool = owner.slot
        at = h_load(ctx, pool, H_NEXT)
        end = h_load(ctx, pool, H_FIRST) + h_load(ctx, pool, H_LEN)
        if at + nbytes > end:
            _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, at + nbytes, SETUP_POOL)
            return -1
        h_store(ctx, pool, H_NEXT, at + nbytes)
        return at
    return take_ub(ctx, nbytes)


@jit
def init_buffer(owner, handle, num, length):
    """InitBuffer: bind ``num`` buffers of ``length`` bytes (rounded up to the 32-byte block) to a
    queue, or one to a TBuf, from the TPipe's UB (or a TBufPool's); past the UB is ub-over-capacity."""
    ctx = owner.ctx
    h = handle.slot
    if h == DEAD_HANDLE:
        _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, h, SETUP_HANDLES)
        return
    if num < 1 or num > 64:
        _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, num, SETUP_NUM)
        return
    if length <= 0:
        _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, length, SETUP_LENGTH)
        return
    b0 = t_load(ctx, T_BUFFERS)
    if b0 + num > MAX_BUFFERS:
        _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, b0 + num, SETUP_BUFFERS)
        return
    nbytes = (length + ctx.block_bytes - 1) // ctx.block_bytes * ctx.block_bytes
    at = _take(owner, num * nbytes, h)
    if at < 0:
        return
    t_store(ctx, T_BUFFERS, b0 + num)
    for k in range(num):
        b_store(ctx, b0 + k, B_ADDR, at + k * nbytes)
        b_store(ctx, b0 + k, B_LEN, nbytes)
        b_store(ctx, b0 + k, B_HANDLE, h)
    h_store(ctx, h, H_NUM, num)
    h_store(ctx, h, H_LEN, nbytes)
    h_store(ctx, h, H_FIRST, b0)
    if h_load(ctx, h, H_KIND) == KIND_BUF:
        b_store(ctx, b0, B_STATE, QUE_OCCUPIED)  # a TBuf's buffer is always in use


@jit
def init_buf_pool(pipe, pool, length, share):
    """InitBufPool: ``length`` bytes (whole blocks) of the TPipe's UB for the pool's buffers; with
    ``share`` (the slot of a TBufPool, -1: none) the same bytes as that pool, from its start (at most
    its length): the pool a kernel switches to after the first one's Reset."""
    ctx = pipe.ctx
    h = pool.slot
    nbytes = (length + ctx.block_bytes - 1) // ctx.block_bytes * ctx.block_bytes
    if h == DEAD_HANDLE or length <= 0:
        _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, length, SETUP_HANDLES if h == DEAD_HANDLE else SETUP_LENGTH)
        return
    if share >= 0:
        if nbytes > h_load(ctx, share, H_NUM):
            _fail(ctx, PRIM_INIT_BUFFER, ST_SETUP, h, nbytes, SETUP_POOL)
            return
        at = h_load(ctx, share, H_FIRST)
    else:
        at = _take(pipe, nbytes, h)
        if at < 0:
            return
    h_store(ctx, h, H_FIRST, at)
    h_store(ctx, h, H_NUM, nbytes)  # a pool's own bytes (what a pool sharing it may take)
    h_store(ctx, h, H_LEN, nbytes)  # its bytes open to InitBuffer (0 after Reset)
    h_store(ctx, h, H_NEXT, at)


@jit
def pool_reset(pool):
    """TBufPool::Reset: the pool takes no more InitBuffer (its buffers stay as they are); a pool
    made to share its bytes (``init_buf_pool(..., share=pool)``) binds in them next."""
    h_store(pool.ctx, pool.slot, H_LEN, 0)


# ---- the queue's tensors -------------------------------------------------------------------------

@jit(_nrt=True)  # returns an array view (an array value needs the runtime)
def _view(ctx, b, nbytes, dtype):
    if b < 0:
        return carray(_voidptr(ctx.ub_addr), 0, dtype)
    return carray(_voidptr(ctx.ub_addr + b_load(ctx, b, B_ADDR)), nbytes // _itemsize(dtype), dtype)


@jit
def _ready(que, prim):
    """The queue's slot if InitBuffer bound its buffers, else -1 (pipe-setup)."""
    if h_load(que.ctx, que.slot, H_NUM) == 0:
        _fail(que.ctx, prim, ST_SETUP, que.slot, 0, SETUP_NOT_INIT)
        return -1
    return que.slot


@jit(_nrt=True)  # returns an array view
def alloc_tensor(que, dtype):
    """AllocTensor: the queue's next FREE buffer (round-robin) as a tensor of ``dtype``, its bytes
    as they were; with none free the device waits forever (pipe-alloc-past-depth)."""
    ctx = que.ctx
    h = _ready(que, PRIM_ALLOC_TENSOR)
    if h < 0:
        return _view(ctx, -1, 0, dtype)
    num, first, start = h_load(ctx, h, H_NUM), h_load(ctx, h, H_FIRST), h_load(ctx, h, H_NEXT)
    for k in range(num):
        i = (start + k) % num
        if b_load(ctx, first + i, B_STATE) == QUE_FREE:
            b_store(ctx, first + i, B_STATE, QUE_OCCUPIED)
            b_store(ctx, first + i, B_FREED, 0)
            h_store(ctx, h, H_NEXT, (i + 1) % num)
            return _view(ctx, first + i, h_load(ctx, h, H_LEN), dtype)
    _fail(ctx, PRIM_ALLOC_TENSOR, ST_FULL, h, num, 0)
    return _view(ctx, -1, 0, dtype)


@jit
def _own_buffer(que, tensor, prim, call):
    """The buffer of the queue holding the tensor's first byte, or -1 (pipe-wrong-queue)."""
    ctx = que.ctx
    h = _ready(que, prim)
    if h < 0:
        return -1
    at = np.int64(_address(tensor) - ctx.ub_addr)
    first, num, nbytes = h_load(ctx, h, H_FIRST), h_load(ctx, h, H_NUM), h_load(ctx, h, H_LEN)
    base = b_load(ctx, first, B_ADDR)
    if at < base or at >= base + num * nbytes:
        _fail(ctx, prim, ST_FOREIGN, h, at, call)
        return -1
    return first + (at - base) // nbytes


@jit
def en_que(que, tensor):
    """EnQue: the tensor (this queue's, allocated or dequeued) joins the queue, at most ``depth``
    at once; the stage that DeQues it may then use it."""
    ctx = que.ctx
    b = _own_buffer(que, tensor, PRIM_EN_QUE, 0)
    if b < 0:
        return False
    h = que.slot
    state = b_load(ctx, b, B_STATE)
    if state != QUE_OCCUPIED and state != QUE_DEQUE:
        _fail(ctx, PRIM_EN_QUE, ST_FREED, h, b - h_load(ctx, h, H_FIRST), b_load(ctx, b, B_ADDR))
        return False
    depth = h_load(ctx, h, H_DEPTH)
    used = h_load(ctx, h, H_USED)
    if used >= depth:
        _fail(ctx, PRIM_EN_QUE, ST_DEPTH, h, depth, 0)
        return False
    order = h_load(ctx, h, H_ORDER) + 1
    h_store(ctx, h, H_ORDER, order)
    h_store(ctx, h, H_USED, used + 1)
    b_store(ctx, b, B_STATE, QUE_ENQUE)
    b_store(ctx, b, B_ORDER, order)
    src, _ = _queue_pipes(ctx, h)
    if src >= 0:  # the queue's own SetFlag: its source pipe's writes so far
        b_store(ctx, b, B_ENQUED, t_load(ctx, T_SEQ + src) + 1)
    return True


@jit(always_inline=True)
def _queue_pipes(ctx, h):
    """The pipes a queue's EnQue and DeQue stand between (-1, -1: a VECCALC queue's, none): VECIN
    MTE2 -> V, VECOUT V -> MTE3, VECIN -> VECOUT MTE2 -> MTE3."""
    src, dst = h_load(ctx, h, H_SRC), h_load(ctx, h, H_DST)
    if src == _GM:
        return PIPE_MTE2, PIPE_V
    if dst == _GM:
        return PIPE_V, PIPE_MTE3
    if src == _VECIN and dst == _VECOUT:
        return PIPE_MTE2, PIPE_MTE3
    return -1, -1


@jit(_nrt=True)  # returns an array view
def de_que(que, dtype):
    """DeQue: the oldest enqueued tensor of the queue, as ``dtype``; an empty queue is a hang on the
    device (pipe-wrong-queue)."""
    ctx = que.ctx
    h = _ready(que, PRIM_DE_QUE)
    if h < 0:
        return _view(ctx, -1, 0, dtype)
    first, oldest, best = h_load(ctx, h, H_FIRST), -1, 0
    for b in range(first, first + h_load(ctx, h, H_NUM)):
        if b_load(ctx, b, B_ORDER) > 0 and (oldest < 0 or b_load(ctx, b, B_ORDER) < best):
            oldest, best = b, b_load(ctx, b, B_ORDER)
    if oldest < 0:
        _fail(ctx, PRIM_DE_QUE, ST_EMPTY, h, 0, 0)
        return _view(ctx, -1, 0, dtype)
    b_store(ctx, oldest, B_ORDER, 0)
    h_store(ctx, h, H_USED, h_load(ctx, h, H_USED) - 1)
    if b_load(ctx, oldest, B_STATE) != QUE_ENQUE:  # freed while in the queue: the device's queue still held it
        _fail(ctx, PRIM_DE_QUE, ST_FREED, h, oldest - first, b_load(ctx, oldest, B_ADDR))
        return _view(ctx, -1, 0, dtype)
    b_store(ctx, oldest, B_STATE, QUE_DEQUE)
    src, dst = _queue_pipes(ctx, h)
    if src >= 0:  # the queue's own WaitFlag: what the source pipe wrote before the EnQue is readable
        synced_upto(ctx, src, dst, b_load(ctx, oldest, B_ENQUED) - 1)
    return _view(ctx, oldest, h_load(ctx, h, H_LEN), dtype)


@jit
def free_tensor(que, tensor):
    """FreeTensor: the tensor's buffer goes back to the queue for a later AllocTensor; freeing a
    free one is pipe-use-after-free.  An enqueued tensor stays in the queue, as on the device (its
    DeQue is then pipe-use-after-free)."""
    ctx = que.ctx
    b = _own_buffer(que, tensor, PRIM_FREE_TENSOR, 2)
    if b < 0:
        return
    h = que.slot
    if b_load(ctx, b, B_STATE) == QUE_FREE:
        _fail(ctx, PRIM_FREE_TENSOR, ST_FREED, h, b - h_load(ctx, h, H_FIRST), b_load(ctx, b, B_ADDR))
        return
    b_store(ctx, b, B_STATE, QUE_FREE)
    b_store(ctx, b, B_FREED, 1)


@jit(_nrt=True)  # returns an array view
def tbuf_get(buf, dtype, count, whole):
    """Get: the TBuf's buffer as a tensor of ``dtype``, the whole buffer (``whole``) or its first
    ``count`` elements (1 and up, whole 32-byte blocks, inside the buffer); every Get starts at the
    same byte."""
    ctx = buf.ctx
    h = _ready(buf, PRIM_GET)
    if h < 0:
        return _view(ctx, -1, 0, dtype)
    nbytes = h_load(ctx, h, H_LEN)
    if not whole:
        want = count * _itemsize(dtype)
        if count < 1:
            _fail(ctx, PRIM_GET, ST_SETUP, h, count, SETUP_LENGTH)
            return _view(ctx, -1, 0, dtype)
        if want > nbytes:
            _fail(ctx, PRIM_GET, ST_SETUP, h, want, SETUP_GET_LEN)
            return _view(ctx, -1, 0, dtype)
        if want % ctx.block_bytes != 0:
            _fail(ctx, PRIM_GET, ST_SETUP, h, want, SETUP_GET_BLOCKS)
            return _view(ctx, -1, 0, dtype)
        nbytes = want
    return _view(ctx, h_load(ctx, h, H_FIRST), nbytes, dtype)


# ---- events --------------------------------------------------------------------------------------

@jit
def _event(ctx, event, event_id):
    """The source and destination pipes of ``event`` and its flag's slot for ``event_id``; -1s for a
    lane with no TPipe or an event between pipes the twin does not order (an id outside 0..7 is
    pipe-setup)."""
    if not pipe_on(ctx):
        return -1, -1, -1
    if event_id < 0 or event_id >= EVENT_IDS:
        _fail(ctx, PRIM_SET_FLAG, ST_SETUP, -1, event_id, SETUP_EVENT_ID)
        return -1, -1, -1
    src, dst = _EVENT_SRC[np.int64(event)], _EVENT_DST[np.int64(event)]
    if src < 0:
        return -1, -1, -1
    return src, dst, T_FLAGS + (src * TRACKED + dst) * EVENT_IDS + event_id


@jit
def set_flag(ctx, event, event_id):
    """SetFlag<event>(id): the destination pipe may go on once the source pipe's work so far is done."""
    src, _, flag = _event(ctx, event, event_id)
    if flag >= 0:
        t_store(ctx, flag, t_load(ctx, T_SEQ + src) + 1)


@jit
def wait_flag(ctx, event, event_id):
    """WaitFlag<event>(id): the destination pipe waits for the matching SetFlag (the twin runs in order:
    checked mode records what the wait orders)."""
    src, dst, flag = _event(ctx, event, event_id)
    if flag >= 0 and t_load(ctx, flag) > 0:
        synced_upto(ctx, src, dst, t_load(ctx, flag) - 1)
        t_store(ctx, flag, 0)


@jit
def pipe_barrier(ctx, pipe):
    """PipeBarrier<pipe>: PIPE_ALL orders every pipe after everything before it (one pipe's own
    barrier orders nothing the twin tracks: a pipe's instructions already run in order)."""
    if not pipe_on(ctx) or pipe != PIPE.PIPE_ALL:
        return
    for src in range(TRACKED):
        for dst in range(TRACKED):
            synced_upto(ctx, src, dst, t_load(ctx, T_SEQ + src))


# ---- the handles' methods in compiled code (their Python methods above are interpret mode's) -------

_METHOD_OPTIONS = {**OVERLOAD_OPTIONS, "_nrt": True}  # AllocTensor, DeQue, Get return tensors (views)


def _handle_of(self, *classes):
    return isinstance(self, types.BaseNamedTuple) and self.instance_class in classes


def _omitted(t) -> bool:
    return t is None or isinstance(t, (types.Omitted, types.NoneType))


@overload_method(types.BaseNamedTuple, "init_buffer", jit_options=_METHOD_OPTIONS)
def _ov_init_buffer(self, handle, num_or_len, length=None):
    if not _handle_of(self, _Pipe, _Pool):
        return None
    if _handle_of(handle, _Buf) != _omitted(length):
        raise TypingError("InitBuffer takes (TQue, num, len) or (TBuf, len)")
    if _omitted(length):
        return lambda self, handle, num_or_len, length=None: init_buffer(self, handle, 1, num_or_len)
    return lambda self, handle, num_or_len, length=None: init_buffer(self, handle, num_or_len, length)


@overload_method(types.BaseNamedTuple, "init_buf_pool", jit_options=_METHOD_OPTIONS)
def _ov_init_buf_pool(self, pool, length, share=None):
    if not _handle_of(self, _Pipe):
        return None
    if _omitted(share):
        return lambda self, pool, length, share=None: init_buf_pool(self, pool, length, -1)
    return lambda self, pool, length, share=None: init_buf_pool(self, pool, length, share.slot)


@overload_method(types.BaseNamedTuple, "reset", jit_options=_METHOD_OPTIONS)
def _ov_reset(self):
    return (lambda self: pool_reset(self)) if _handle_of(self, _Pool) else None


@overload_method(types.BaseNamedTuple, "alloc_tensor", jit_options=_METHOD_OPTIONS)
def _ov_alloc_tensor(self, dtype):
    return (lambda self, dtype: alloc_tensor(self, dtype)) if _handle_of(self, _Que) else None


@overload_method(types.BaseNamedTuple, "en_que", jit_options=_METHOD_OPTIONS)
def _ov_en_que(self, tensor):
    return (lambda self, tensor: en_que(self, tensor)) if _handle_of(self, _Que) else None


@overload_method(types.BaseNamedTuple, "de_que", jit_options=_METHOD_OPTIONS)
def _ov_de_que(self, dtype):
    return (lambda self, dtype: de_que(self, dtype)) if _handle_of(self, _Que) else None


@overload_method(types.BaseNamedTuple, "free_tensor", jit_options=_METHOD_OPTIONS)
def _ov_free_tensor(self, tensor):
    return (lambda self, tensor: free_tensor(self, tensor)) if _handle_of(self, _Que) else None


@overload_method(types.BaseNamedTuple, "get", jit_options=_METHOD_OPTIONS)
def _ov_get(self, dtype, count=None):
    if not _handle_of(self, _Buf):
        return None
    if _omitted(count):
        return lambda self, dtype, count=None: tbuf_get(self, dtype, -1, True)
    return lambda self, dtype, count=None: tbuf_get(self, dtype, count, False)
