"""Platform presets: the hardware numbers a host tiling reads (SPEC §1).

Kernels never hold these numbers as literals; they reach a kernel through the
tiling the host computes from a :class:`Platform`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .device_rates import CLOCK_MHZ as RATE_TABLES

__all__ = ["Platform", "PRESETS", "get_platform", "UBPlanError", "MAX_CORES", "MIN_UB_BYTES", "BLOCK_BYTES_RANGE",
           "check_block_dim"]

MAX_CORES = 65535  # block_dim is a uint16 on the device
# The smallest UB every shipped kernel can tile into (Tile's three buffers, ApplyAdamW's
# double-buffered fp16 tiles with fp32 work tiles, TTRANS's temporary tile); the device has 192 KiB.
MIN_UB_BYTES = 16384
# The DMA block must hold the widest element (16-byte complex128) and be a power of two.
BLOCK_BYTES_RANGE = (16, 1024)


class UBPlanError(ValueError):
    """A tiling whose UB buffers do not fit the platform's Unified Buffer."""


@dataclass(frozen=True)
class Platform:
    """One chip as the host tiling sees it.

    ``aic_num`` / ``aiv_num`` are the AI (Cube) and vector core counts,
    ``ub_size`` the Unified Buffer bytes per core, ``block_bytes`` the DMA
    block (the alignment unit of ``DataCopy``).
    """

    name: str
    chip: str
    aic_num: int
    aiv_num: int
    ub_size: int
    block_bytes: int = 32
    # The modelled device time (host.timeline; modelled, not measured):
    # the msKPP rate tables of the chip (host.device_rates: "910b" or "91095");
    rates: str = "910b"
    # the GM bandwidth the cores divide: 3.87 TB/s, MTE2 with 94% L2 hits on an Atlas A2 (CANN 7.0
    # large-model guide, "带宽优化" table 1: hiascend.com/document/detail/zh/canncommercial/700/
    # foundmodeldev/foundmodelinfer/atlaslmimog_0048.html);
    shared_gm_bytes_per_ns: float = 3870.0
    # the launch floor, the one figure read from the seed: seed 000 §5.1's floor-bound rows
    # (broadcast and 1D_repeat, all six dtypes: benchtrack.seed_launch_floor_us).
    launch_floor_ns: float = 7050.0

    def __post_init__(self):
        """Reject what no kernel can run on: every problem names the field and the rule."""
        for field_name in ("name", "chip"):
            if not isinstance(getattr(self, field_name), str):
                raise TypeError(f"Platform.{field_name} must be a str, got {getattr(self, field_name)!r}")
        for field_name in ("aic_num", "aiv_num", "ub_size", "block_bytes"):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"Platform.{field_name} must be an int, got {value!r}")
        for field_name in ("aic_num", "aiv_num"):
            if not 1 <= getattr(self, field_name) <= MAX_CORES:
                raise ValueError(f"Platform.{field_name} must be in 1..{MAX_CORES}, got {getattr(self, field_name)}")
        lo, hi = BLOCK_BYTES_RANGE
        if not lo <= self.block_bytes <= hi or self.block_bytes & (self.block_bytes - 1):
            raise ValueError(f"Platform.block_bytes must be a power of two in {lo}..{hi}, got {self.block_bytes}")
        if self.ub_size < MIN_UB_BYTES:
            raise ValueError(f"Platform.ub_size must be at least {MIN_UB_BYTES} bytes (the smallest UB the "
                             f"kernels tile into), got {self.ub_size}")
        if self.ub_size % self.block_bytes:
            raise ValueError(
                f"Platform.ub_size ({self.ub_size}) must be a multiple of block_bytes ({self.block_bytes})"
            )
        for field_name in ("launch_floor_ns", "shared_gm_bytes_per_ns"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value < 0 or (value == 0 and field_name != "launch_floor_ns"):
                raise ValueError(f"Platform.{field_name} must be a finite positive number, got {value!r}")
        if self.rates not in RATE_TABLES:
            raise ValueError(f"Platform.rates must be one of {sorted(RATE_TABLES)}, got {self.rates!r}")

    @property
    def subblock_num(self) -> int:
        """Vector cores per AI core (2 on 1:2 chips)."""
        return max(1, self.aiv_num // self.aic_num)

    def check_ub_plan(self, buffers: "dict[str, int]") -> int:
        """Validate a lane's UB plan: each buffer rounded up to the block, the total within ``ub_size``.

        Returns the total bytes; raises UBPlanError naming every buffer otherwise.
        """
        total = 0
        for name, nbytes in buffers.items():
            if nbytes < 0:
                raise UBPlanError(f"UB buffer {name!r} has negative size {nbytes}")
            total += -(-nbytes // self.block_bytes) * self.block_bytes
        if total > self.ub_size:
            listing = ", ".join(f"{n}={b}" for n, b in buffers.items())
            raise UBPlanError(f"UB plan needs {total} bytes > ub_size {self.ub_size} on {self.name} ({listing})")
        return total

    def with_cores(self, aic_num: int, aiv_num: int | None = None) -> "Platform":
        """The same chip with another core count (A5 parts are configurable)."""
        if aiv_num is None:
            aiv_num = 2 * aic_num
        return replace(self, aic_num=aic_num, aiv_num=aiv_num)


PRESETS: dict[str, Platform] = {
    "A2": Platform("A2", "Ascend910B2", aic_num=24, aiv_num=48, ub_size=196608),
    "A2_20": Platform("A2_20", "Ascend910B4", aic_num=20, aiv_num=40, ub_size=196608),
    # Ascend 950 core counts depend on the part; 32:64 is the default here and
    # Platform.with_cores() configures another.
    "A5": Platform("A5", "Ascend950", aic_num=32, aiv_num=64, ub_size=262144, rates="91095"),
}


def get_platform(platform: "str | Platform" = "A2") -> Platform:
    """Resolve a preset name (case-insensitive) or pass a Platform through."""
    if isinstance(platform, Platform):
        return platform
    if isinstance(platform, str):
        key = platform.upper()
        if key in PRESETS:
            return PRESETS[key]
        raise ValueError(f"unknown platform {platform!r}; presets are {sorted(PRESETS)}")
    raise TypeError(f"platform must be a preset name or a Platform, got {type(platform).__name__}")


def check_block_dim(block_dim, default: int | None = None) -> int:
    """``block_dim`` as an int in [1, MAX_CORES] (``default`` when None), else ValueError."""
    if block_dim is None and default is not None:
        return default
    if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)) \
            or not 1 <= block_dim <= MAX_CORES:
        raise ValueError(f"block_dim must be an int in [1, {MAX_CORES}], got {block_dim!r}")
    return int(block_dim)
