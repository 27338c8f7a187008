"""The UB pool: a lane's UB is the UB of the host thread running it, allocated once and reused,
never zeroed -- like the device's.  (Checked launches' shadow and GM maps have their own pool,
:class:`ascend_numba.checked.regions.CheckMaps`.)"""

from __future__ import annotations

import threading

import numba
import numpy as np

from .lane import PIPE_TABLE_BYTES

__all__ = ["UBPool", "UB_POOL"]


class UBPool(threading.local):
    """One UB per host thread, reused by every lane that thread runs (the device's UB is not zeroed either)."""

    def get(self, ub_size: int) -> np.ndarray:
        ub_size += PIPE_TABLE_BYTES  # each row: the UB, then the lane's pipe table
        pool = getattr(self, "pool", None)
        if pool is None or pool.shape[1] != ub_size:
            # get_thread_id() < NUMBA_NUM_THREADS whatever set_num_threads() says.
            pool = self.pool = np.empty((numba.config.NUMBA_NUM_THREADS, ub_size), np.uint8)
        return pool

    def resident(self, ub_size: int, lanes: int) -> np.ndarray:
        """One UB per lane, for launches whose lanes are all resident (SyncAll)."""
        ub_size += PIPE_TABLE_BYTES
        rows = getattr(self, "rows", None)
        if rows is None or rows.shape[1] != ub_size or rows.shape[0] < lanes:
            rows = self.rows = np.empty((lanes, ub_size), np.uint8)
        return rows


UB_POOL = UBPool()

