"""Staged copy kernel: each lane moves its block range GM -> UB -> GM with DataCopy."""

import numpy as np

from ...kernels import alloc_buffer, big_small_lane_range, data_copy, data_copy_pad, kernel


@kernel(nrt=False, outputs=("dst",))
def copy_kernel(ctx, src, dst, tiling):
    start, end = big_small_lane_range(ctx, tiling.bigCores, tiling.smallBlocks, tiling.blockBytes,
                                      tiling.totalBytes)
    ping = alloc_buffer(ctx, tiling.bufBytes, np.uint8)
    pong = alloc_buffer(ctx, tiling.bufBytes, np.uint8)
    pos = start
    step = 0
    while pos < end:
        buf = ping if step % 2 == 0 else pong
        n = min(tiling.bufBytes, end - pos)
        # Whole blocks in (the tail's last block reads GM padding), exactly n bytes out.
        data_copy(ctx, buf, 0, src, pos, (n + tiling.blockBytes - 1) // tiling.blockBytes * tiling.blockBytes)
        if n % tiling.blockBytes == 0:
            data_copy(ctx, dst, pos, buf, 0, n)
        else:  # the tensor's last bytes: exact write
            data_copy_pad(ctx, dst, pos, buf, 0, 1, n, 0, 0)
        pos += n
        step += 1
