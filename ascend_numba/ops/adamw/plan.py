"""Host tiling of ApplyAdamW (SPEC §5, seed 002 §3.2.1).

Elementwise over the flattened tensors: 32-byte blocks split big/small over
lanes, and ``tileDataNum`` the largest block-aligned tile for which every UB
buffer the kernel binds fits the Unified Buffer.  ``amsgrad`` x ``maximize``
select one of four compiled specializations through :class:`AdamWKey`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ...host.platform import Platform, UBPlanError, check_block_dim
from ...host.split import big_small_split, ceil_div
from ...host.tiling import to_array
from ...host.tiling_key import TilingKeyField

INT64_MAX = (1 << 63) - 1

__all__ = ["AdamWTilingData", "AdamWKey", "AdamWPlan", "DTYPE_CODES", "VARIANTS", "adamw_ub_buffers",
           "plan_adamw"]

DTYPE_CODES = {"float32": 0, "float16": 1, "bfloat16": 2}
VARIANTS = ("seed", "a2")
IN_QUEUES = ("var", "m", "v", "grad")
OUT_QUEUES = ("var", "m", "v")
BUFFER_NUM = 2  # double buffering


@dataclass
class AdamWTilingData:
    totalLength: int     # elements of var (and of every tensor)
    blockElems: int      # elements per 32-byte block
    bigCores: int        # lanes 0 .. bigCores-1 take smallBlocks + 1 blocks
    smallBlocks: int
    tileDataNum: int     # elements per UB tile


class AdamWKey:
    """The four compiled specializations: no per-element branch on amsgrad or maximize."""

    Amsgrad = TilingKeyField(bits=1, values=[0, 1])
    Maximize = TilingKeyField(bits=1, values=[0, 1])


def computes_in_fp32(dtype_name: str, variant: str) -> bool:
    """bf16 always, fp16 in the A2 variant: inputs cast to fp32 work tiles, results rounded once."""
    return dtype_name == "bfloat16" or (dtype_name == "float16" and variant == "a2")


def adamw_ub_buffers(dtype_name: str, variant: str, amsgrad: bool, tile: int) -> dict[str, int]:
    """Every UB buffer the kernel binds at Init, in its order, with bytes for ``tile`` elements."""
    io = 4 if dtype_name == "float32" else 2
    cast = computes_in_fp32(dtype_name, variant)
    compute = 4 if cast or dtype_name == "float32" else 2
    inputs = IN_QUEUES + (("max_grad_norm",) if amsgrad else ())
    buffers = {f"in_{n}": BUFFER_NUM * tile * io for n in inputs}
    buffers.update({f"out_{n}": BUFFER_NUM * tile * io for n in OUT_QUEUES})
    if cast:
        buffers.update({f"fp32_{n}": tile * 4 for n in inputs})
    buffers.update({"tmp1": tile * compute, "tmp2": tile * compute})
    return buffers


@dataclass(frozen=True)
class AdamWPlan:
    dtype_name: str
    variant: str
    amsgrad: bool
    maximize: bool
    total: int
    block_dim: int
    platform: Platform
    tiling: AdamWTilingData
    buffers: dict

    @property
    def key(self) -> dict:
        return {"Amsgrad": int(self.amsgrad), "Maximize": int(self.maximize)}

    @property
    def ub_bytes(self) -> int:
        return self.platform.check_ub_plan(self.buffers)

    @functools.cached_property
    def tiling_array(self):
        return to_array(self.tiling)

    def core_ranges(self) -> list[tuple[int, int]]:
        """Each lane's element range."""
        t = self.tiling
        split = big_small_split(ceil_div(self.total, t.blockElems), self.block_dim)
        return [(min(s * t.blockElems, self.total), min(e * t.blockElems, self.total)) for s, e in split.ranges()]


def plan_adamw(total: int, dtype_name: str, variant: str, amsgrad: bool, maximize: bool,
               block_dim: int | None, platform: Platform) -> AdamWPlan:
    """Plan an update of ``total`` elements; ``block_dim`` defaults to ``min(ceil(n/1024), AIV cores)``."""
    if dtype_name not in DTYPE_CODES:
        raise ValueError(f"ApplyAdamW takes {sorted(DTYPE_CODES)}, got {dtype_name}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if isinstance(total, bool) or not isinstance(total, int) or not 0 <= total <= INT64_MAX:
        raise ValueError(f"total must be a non-negative int, got {total!r}")
    if block_dim is None:
        block_dim = max(1, min(ceil_div(total, 1024), platform.aiv_num))
    block_dim = check_block_dim(block_dim)
    io = 4 if dtype_name == "float32" else 2
    block_elems = platform.block_bytes // io
    per_elem = sum(adamw_ub_buffers(dtype_name, variant, amsgrad, 1).values())
    tile = platform.ub_size // per_elem // block_elems * block_elems
    # Rounding each buffer up to a block can overshoot; step down until the plan fits.
    while tile > 0:
        try:
            platform.check_ub_plan(adamw_ub_buffers(dtype_name, variant, amsgrad, tile))
            break
        except UBPlanError:
            tile -= block_elems
    if tile <= 0:
        raise UBPlanError(f"ApplyAdamW: no tile fits ub_size {platform.ub_size}")
    split = big_small_split(ceil_div(total, block_elems), block_dim)
    tiling = AdamWTilingData(total, block_elems, split.big_cores, split.small_blocks, tile)
    return AdamWPlan(dtype_name, variant, amsgrad, maximize, total, block_dim, platform, tiling,
                     adamw_ub_buffers(dtype_name, variant, amsgrad, tile))
