"""The UB pool: a lane's UB is the UB of the host thread running it, allocated once and reused,
never zeroed -- like the device's.  (Checked launches' shadow and GM maps have their own pool,
:class:`ascend_numba.checked.regions.CheckMaps`.)

Each UB starts on a host cache line, so what is aligned to the device's 32-byte blocks in UB is
aligned on the host too: TTRANS's 64-byte register rows straddled two lines when the UBs started
48 bytes into one, and a 128x128 fp32 TTRANS took 1.7x as long."""

from __future__ import annotations

import threading

import numba
import numpy as np

from ..memory import aligned_bytes
from .lane import PIPE_TABLE_BYTES

__all__ = ["UBPool", "UB_POOL"]


class UBPool(threading.local):
    """One UB per host thread, reused by every lane that thread runs (the device's UB is not zeroed either)."""

    def get(self, ub_size: int) -> np.ndarray:
        ub_size += PIPE_TABLE_BYTES  # each row: the UB, then the lane's pipe table
        pool = getattr(self, "pool", None)
        if pool is None or pool.shape[1] != ub_size:
            # get_thread_id() < NUMBA_NUM_THREADS whatever set_num_threads() says.
            pool = self.pool = _rows(numba.config.NUMBA_NUM_THREADS, ub_size)
        return pool

    def resident(self, ub_size: int, lanes: int) -> np.ndarray:
        """One UB per lane, for launches whose lanes are all resident (SyncAll)."""
        ub_size += PIPE_TABLE_BYTES
        rows = getattr(self, "rows", None)
        if rows is None or rows.shape[1] != ub_size or rows.shape[0] < lanes:
            rows = self.rows = _rows(lanes, ub_size)
        return rows


def _rows(count: int, row_bytes: int) -> np.ndarray:
    """``count`` UBs of ``row_bytes`` (UB and pipe table), the first on a cache line; the others too
    when ``row_bytes`` is a multiple of 64, as every built-in platform's is."""
    return aligned_bytes(count * row_bytes).reshape(count, row_bytes)


UB_POOL = UBPool()

