"""Debugging a kernel: a deliberate bug found in interpret mode and with dump_tensor.

``tail_add`` computes z = x + y tile by tile, but its tail tile (the lane's last, partial one)
copies ``x`` into ``y_loc``: a copy-and-paste bug that checked mode cannot see (every access is
in bounds and reads written bytes), so only the answer is wrong.

Run:
    python examples/debugging.py              # compiled, with dump_tensor of each tile's y_loc
    python examples/debugging.py --break      # interpreted, stopping in lane 1's tail tile (pdb)
"""

from __future__ import annotations

import sys

import numpy as np

import ascend_numba as an
from ascend_numba.kernels import add, alloc_buffer, contiguous_lane_range, data_copy, dump_tensor

TILE = 64  # elements per UB tile (two 32-byte blocks of fp32 per 16 elements)
STOP_IN_LANE = -1  # set by --break: the lane whose tail tile calls breakpoint()


@an.kernel(outputs=("z",))
def tail_add(ctx, x, y, z, n):
    start, end = contiguous_lane_range(ctx, n // 8)  # in 8-element (32-byte) blocks
    start, end = start * 8, end * 8
    x_loc = alloc_buffer(ctx, TILE, np.float32)
    y_loc = alloc_buffer(ctx, TILE, np.float32)
    z_loc = alloc_buffer(ctx, TILE, np.float32)
    pos = start
    while pos < end:
        count = min(TILE, end - pos)
        data_copy(ctx, x_loc, 0, x, pos, count)
        if count == TILE:
            data_copy(ctx, y_loc, 0, y, pos, count)
        else:
            data_copy(ctx, y_loc, 0, x, pos, count)  # the bug: x, not y
            if STOP_IN_LANE >= 0:  # a constant: the compiled kernel has no breakpoint
                if ctx.block_idx == STOP_IN_LANE:
                    breakpoint()
        dump_tensor(ctx, y_loc, pos, 4)
        add(ctx, z_loc, x_loc, y_loc, count)
        data_copy(ctx, z, pos, z_loc, 0, count)
        pos += count


def run(interpret: bool) -> np.ndarray:
    n = 320
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 1000.0, dtype=np.float32)
    z = np.zeros(n, dtype=np.float32)
    tail_add.launch(x, y, z, n, block_dim=2, interpret=interpret)
    wrong = np.flatnonzero(z != x + y)
    print(f"{wrong.size} of {n} elements wrong, the first at {wrong[0] if wrong.size else None}")
    return z


if __name__ == "__main__":
    if "--break" in sys.argv:
        STOP_IN_LANE = 1
        an.kernel_prints(False)
        run(interpret=True)
    else:
        run(interpret=False)
