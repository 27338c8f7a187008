"""Copy (vcopy) and TransDataTo5HD, written for clarity (the compiled ones:
``kernels/primitives/ub_copy.py`` and ``trans_data_5hd.py``).

Copy's lane ``k`` of repeat ``r`` is element ``k % per_block`` of block ``r * repeat_size + (k //
per_block) * stride`` on each side; the lanes a mask sets are copied, the others left.
"""

from __future__ import annotations

import numpy as np

__all__ = ["copy"]


def copy(dst: np.ndarray, src: np.ndarray, lane_on, lanes: int, repeat_times: int, dst_stride: int,
         src_stride: int, dst_repeat_size: int, src_repeat_size: int) -> np.ndarray:
    """A copy of ``dst`` after Copy: ``lanes`` lanes a repeat (counter mode: its count), ``lane_on(k)``
    the mask."""
    out = dst.copy()
    per_block = 32 // dst.itemsize
    for r in range(repeat_times):
        for k in range(lanes):
            if lane_on(k):
                block, e = divmod(k, per_block)
                out[(r * dst_repeat_size + block * dst_stride) * per_block + e] = \
                    src[(r * src_repeat_size + block * src_stride) * per_block + e]
    return out
