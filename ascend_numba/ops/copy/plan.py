"""Host plan of the staged copy: GM -> UB -> GM through every lane, the bandwidth reference."""

from __future__ import annotations

from dataclasses import dataclass

from ...host.platform import Platform
from ...host.split import big_small_split, ceil_div

__all__ = ["CopyTilingData", "plan_copy"]


@dataclass
class CopyTilingData:
    totalBytes: int
    blockBytes: int
    bigCores: int       # the first bigCores lanes copy smallBlocks + 1 blocks
    smallBlocks: int
    bufBytes: int       # bytes per UB staging buffer (two of them: ping-pong)


def plan_copy(nbytes: int, block_dim: int, platform: Platform) -> CopyTilingData:
    """Split ``nbytes`` in 32-byte blocks over lanes (big/small) and stage through half the UB each way."""
    split = big_small_split(ceil_div(nbytes, platform.block_bytes), block_dim)
    buf = platform.ub_size // 2 // platform.block_bytes * platform.block_bytes
    platform.check_ub_plan({"ping": buf, "pong": buf})
    return CopyTilingData(nbytes, platform.block_bytes, split.big_cores, split.small_blocks, buf)
