"""Staged copy kernel: each lane moves its block range GM -> UB -> GM with DataCopy."""

import numpy as np

from ...kernels import alloc_buffer, big_small_lane_range, data_copy, data_copy_pad, kernel, vector_program


# The buffer is a temp: free once its bytes are out, so a fused pass moves them through registers.
@vector_program(temps=("buf",))
def stage(src, dst, buf, whole, nbytes):
    """Whole blocks in (the tail's last block reads GM padding), exactly ``nbytes`` out."""
    buf = data_copy(src)
    if whole:
        dst = data_copy(buf)
    else:  # the tensor's last bytes: exact write
        dst = data_copy_pad(buf, nbytes)


@kernel(nrt=False, outputs=("dst",), gm_padding="read")
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
        # One stage of CopyIn and CopyOut (fused: one pass, see kernels.vector_program).
        stage(ctx, (n + tiling.blockBytes - 1) // tiling.blockBytes * tiling.blockBytes, True, src[pos:], dst[pos:],
              buf, n % tiling.blockBytes == 0, n)
        pos += n
        step += 1
