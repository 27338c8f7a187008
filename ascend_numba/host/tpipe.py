"""The names of Ascend C's programming model: positions, pipes, hardware events, buffer states.

Numbered as the device numbers them (asc-devkit at 0da921b: ``TPosition`` in
``impl/basic_api/common_types.h``, ``HardEvent`` in ``impl/basic_api/kernel_event.h``, ``pipe_t``
in ``tools/build/asc_op_compile_base/c_api/asc_platform.h``), so a port reads ``TPosition.VECIN``
and ``HardEvent.MTE2_V`` where the C++ does.  The kernel side is
``kernels/primitives/tpipe.py``; checked mode's pipeline rules read the names here.

The twin tracks the four pipes a vector kernel drives: the scalar unit (S), the vector unit (V),
GM -> UB copies (MTE2) and UB -> GM copies (MTE3).  Events between other pipes (the cube's) are
accepted and order nothing.

Plain Python: no Numba here.
"""

from __future__ import annotations

import enum

__all__ = ["TPosition", "HardEvent", "PIPE", "PIPE_NAMES", "EVENT_PIPES", "POSITION_NAMES",
           "BUFFER_STATES", "QUE_FREE", "QUE_OCCUPIED", "QUE_ENQUE", "QUE_DEQUE", "HANDLE_KINDS",
           "MAX_HANDLES", "ST_OK", "ST_FULL", "ST_DEPTH", "ST_FOREIGN", "ST_EMPTY", "ST_FREED", "ST_SETUP",
           "pipe_error"]


class TPosition(enum.IntEnum):
    """Where a buffer lives (the vector core's: VECIN, VECOUT, VECCALC; GM)."""

    GM = 0
    VECIN = 9
    VECOUT = 10
    VECCALC = 11


class PIPE(enum.IntEnum):
    """The device's pipes (``pipe_t``) a PipeBarrier names."""

    PIPE_S = 1
    PIPE_V = 2
    PIPE_MTE2 = 5
    PIPE_MTE3 = 6
    PIPE_ALL = 10


class HardEvent(enum.IntEnum):
    """SetFlag / WaitFlag's events, named source_destination."""

    MTE2_MTE1 = 0
    MTE1_MTE2 = 1
    MTE1_M = 2
    M_MTE1 = 3
    MTE2_V = 4
    V_MTE2 = 5
    MTE3_V = 6
    V_MTE3 = 7
    M_V = 8
    V_M = 9
    V_V = 10
    MTE3_MTE1 = 11
    MTE1_MTE3 = 12
    MTE1_V = 13
    MTE2_M = 14
    M_MTE2 = 15
    V_MTE1 = 16
    M_FIX = 17
    FIX_M = 18
    MTE3_MTE2 = 19
    MTE2_MTE3 = 20
    S_V = 21
    V_S = 22
    S_MTE2 = 23
    MTE2_S = 24
    S_MTE3 = 25
    MTE3_S = 26
    MTE2_FIX = 27
    FIX_MTE2 = 28
    FIX_S = 29
    M_S = 30
    FIX_MTE3 = 31
    MTE1_FIX = 32
    FIX_MTE1 = 33
    FIX_FIX = 34


# The pipes the twin orders, by their index in the pipe table (kernels/pipe_table.py).
PIPE_NAMES = ("S", "V", "MTE2", "MTE3")
# HardEvent -> (source pipe index, destination pipe index), for the events between tracked pipes.
EVENT_PIPES = {e: (PIPE_NAMES.index(e.name.split("_")[0]), PIPE_NAMES.index(e.name.split("_")[1]))
               for e in HardEvent if all(p in PIPE_NAMES for p in e.name.split("_"))}

# A detail's value in checked mode's pipeline messages: an index into these.
POSITION_NAMES = ("GM", "VECIN", "VECOUT", "VECCALC")
# A queue buffer's state, as the device's TQue keeps it (impl/basic_api/kernel_tensor_base.h).
BUFFER_STATES = ("FREE", "OCCUPIED", "ENQUE", "DEQUE")
QUE_FREE, QUE_OCCUPIED, QUE_ENQUE, QUE_DEQUE = range(4)
HANDLE_KINDS = ("", "TQue", "TBuf", "TBufPool")
MAX_HANDLES = 32  # the handles a lane's pipe table holds
# What a TPipe / TQue call found (kernels/primitives/tpipe.py; checked mode's rule for each:
# checked/pipeline.py): a lane error's detail is ``status * MAX_HANDLES + handle``.
ST_OK, ST_FULL, ST_DEPTH, ST_FOREIGN, ST_EMPTY, ST_FREED, ST_SETUP = range(7)
_STATUS_TEXT = {
    ST_FULL: "AllocTensor with every buffer of the queue allocated (the device hangs)",
    ST_DEPTH: "EnQue past the queue's depth (the device's EnQue fails)",
    ST_FOREIGN: "EnQue / FreeTensor of a tensor that is not one of the queue's buffers",
    ST_EMPTY: "DeQue of an empty queue (the device hangs)",
    ST_FREED: "EnQue or FreeTensor of a tensor already freed",
    ST_SETUP: "a TPipe call the device refuses (a queue before its InitBuffer, a position it does not take, too "
              "many handles or buffers, a TBuf Get past its buffer, an event id outside 0..7)",
}


def pipe_error(detail: int) -> str:
    """A lane error's text for a TPipe / TQue call (``ERR_PIPE``'s detail)."""
    status, handle = divmod(detail, MAX_HANDLES)
    return (f"{_STATUS_TEXT.get(status, f'TPipe status {status}')} on handle {handle} (the lane's TQue / TBuf "
            "handles count from 0 in the order it built them); run checked=True for the rule and the call")
