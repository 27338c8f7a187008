"""A user kernel on ascend_numba: z = x + y (optionally scaled), with a tail, PyPTO style.

Run: python examples/vector_add.py
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import ascend_numba as an
from ascend_numba.host import big_small_split, int32
from ascend_numba.kernels import (
    add, alloc_buffer, big_small_lane_range, constant, data_copy, data_copy_pad, muls, trace_work, vector_program,
)


@dataclass
class AddTiling:
    total: int            # elements of x, y, z
    block_elems: int32    # elements per 32-byte block
    tile_elems: int32     # elements per UB tile (a multiple of block_elems)
    big_cores: int32      # the first big_cores lanes take small_blocks + 1 blocks
    small_blocks: int
    scale: float


class AddKey:
    UseScale = an.TilingKeyField(bits=1, values=[0, 1])


# The key's field as the kernel reads it: a compile-time constant, bound by each launch's key.
UseScale = constant("UseScale", "AddKey field: 1 scales z by tiling.scale")


# The UB tiles are temps: free once the tile is out (FreeTensor), so a fused pass keeps each
# element in registers between its copies and ops.
@vector_program(temps=("x_loc", "y_loc", "z_loc"))
def add_tile(x, y, z, x_loc, y_loc, z_loc, whole, nbytes, use_scale, scale):
    """One tile: CopyIn x and y (whole blocks: the tail's last reads GM padding), Compute
    z = x + y (then * scale when use_scale), CopyOut exactly the tile's ``nbytes``."""
    x_loc = data_copy(x)
    y_loc = data_copy(y)
    z_loc = add(x_loc, y_loc)
    if use_scale == 1:  # a compile-time constant at the call: folds away
        z_loc = muls(z_loc, scale)
    if whole:  # known at run time (in whole blocks the two copies are one: no test)
        z = data_copy(z_loc)
    else:
        z = data_copy_pad(z_loc, nbytes)


@an.kernel(tiling_key=AddKey, outputs=("z",), gm_padding="read")
def vector_add(ctx, x, y, z, tiling):
    # The tail is read as whole blocks (its last bytes are GM padding: gm_padding="read"), written
    # back as its exact bytes.
    # Init: this lane's block range (big/small split) and its three UB buffers, bound once.
    start, end = big_small_lane_range(ctx, tiling.big_cores, tiling.small_blocks, tiling.block_elems, tiling.total)
    x_loc = alloc_buffer(ctx, tiling.tile_elems, np.float32)
    y_loc = alloc_buffer(ctx, tiling.tile_elems, np.float32)
    z_loc = alloc_buffer(ctx, tiling.tile_elems, np.float32)
    # Process: a tile program per tile (tile fusion: its CopyIn, Compute and CopyOut in one pass);
    # full tiles move with DataCopy, the tail writes back exactly its bytes with DataCopyPad.
    pos = start
    while pos < end:
        n = min(tiling.tile_elems, end - pos)
        n_aligned = (n + tiling.block_elems - 1) // tiling.block_elems * tiling.block_elems
        add_tile(ctx, n_aligned, True, x[pos:], y[pos:], z[pos:], x_loc, y_loc, z_loc, n == n_aligned, n * 4,
                 UseScale, tiling.scale)
        trace_work(ctx, n)  # elements done, for trace=True (free otherwise)
        pos += n


def plan_add(total: int, block_dim: int, platform: an.Platform, scale: float = 1.0,
             tile_elems: int | None = None) -> AddTiling:
    """Host tiling for vector_add: 32-byte blocks split big/small, three fp32 buffers in UB."""
    block_elems = platform.block_bytes // 4
    split = big_small_split(-(-total // block_elems), block_dim)
    if tile_elems is None:
        tile_elems = platform.ub_size // 3 // platform.block_bytes * platform.block_bytes // 4
    if tile_elems <= 0 or tile_elems % block_elems:
        raise ValueError(f"tile_elems must be a positive multiple of {block_elems}, got {tile_elems}")
    platform.check_ub_plan({"x_loc": tile_elems * 4, "y_loc": tile_elems * 4, "z_loc": tile_elems * 4})
    return AddTiling(total, block_elems, tile_elems, split.big_cores, split.small_blocks, scale)


def add_arrays(x, y, *, scale: float | None = None, block_dim: int = 8, platform="A2",
               tile_elems: int | None = None) -> np.ndarray:
    """The public op: validate, plan, launch.  Returns (x + y) * scale as float32."""
    plat = an.get_platform(platform)
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != np.float32 or y.dtype != np.float32:
        raise TypeError(f"vector_add takes float32, got {x.dtype} and {y.dtype}")
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {x.shape} vs {y.shape}")
    tiling = plan_add(x.size, block_dim, plat, 1.0 if scale is None else scale, tile_elems)
    z = np.empty_like(x)
    key = {"UseScale": 0 if scale is None else 1}
    vector_add.launch(np.ascontiguousarray(x), np.ascontiguousarray(y), z, tiling,
                      block_dim=block_dim, key=key, platform=plat)
    return z


def main() -> None:
    x = np.arange(1000, dtype=np.float32)
    y = np.full(1000, 0.5, dtype=np.float32)
    z = add_arrays(x, y, scale=2.0, block_dim=7)
    assert np.array_equal(z, (x + y) * np.float32(2.0))
    print("vector_add on 7 lanes: z[:4] =", z[:4], "z[-1] =", z[-1])


if __name__ == "__main__":
    main()
