"""Multi-core split helpers (SPEC §2, seed 001 "多核Tiling切分", seed 002 big/small cores).

Plain integer arithmetic shared by the host plans and mirrored by the kernels.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "ceil_div", "align_up", "align_down",
    "contiguous_range", "contiguous_ranges",
    "BigSmallSplit", "big_small_split",
    "mix_core_id", "mix_subblock_rows",
]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align_up(value: int, unit: int) -> int:
    return ceil_div(value, unit) * unit


def align_down(value: int, unit: int) -> int:
    return value // unit * unit


def contiguous_range(total: int, cores: int, core: int) -> tuple[int, int]:
    """Core ``core``'s task range: ``per = ceil(total/cores)``, ``[core*per, min(core*per+per, total))``.

    Cores past the end get an empty range (start == end).
    """
    if cores <= 0:
        raise ValueError(f"cores must be positive, got {cores}")
    per = ceil_div(total, cores)
    start = min(core * per, total)
    return start, min(start + per, total)


def contiguous_ranges(total: int, cores: int) -> list[tuple[int, int]]:
    """:func:`contiguous_range` for every core."""
    return [contiguous_range(total, cores, c) for c in range(cores)]


class BigSmallSplit(NamedTuple):
    """Blocks split so the first ``big_cores`` cores take one block more than the rest."""

    cores: int
    big_cores: int       # == total % cores: these take small_blocks + 1
    small_blocks: int    # == total // cores

    def blocks(self, core: int) -> int:
        return self.small_blocks + (1 if core < self.big_cores else 0)

    def start(self, core: int) -> int:
        return core * self.small_blocks + min(core, self.big_cores)

    def ranges(self) -> list[tuple[int, int]]:
        return [(self.start(c), self.start(c) + self.blocks(c)) for c in range(self.cores)]


def big_small_split(total_blocks: int, cores: int) -> BigSmallSplit:
    """Split ``total_blocks`` over ``cores``: the first ``total % cores`` get one extra block."""
    if cores <= 0:
        raise ValueError(f"cores must be positive, got {cores}")
    return BigSmallSplit(cores, total_blocks % cores, total_blocks // cores)


def mix_core_id(block_idx: int, subblock_num: int) -> int:
    """The AI core a lane belongs to in a MIX kernel: ``block_idx // subblock_num``."""
    return block_idx // subblock_num


def mix_subblock_rows(rows: int, subblock_idx: int) -> tuple[int, int]:
    """(start, count) of a Cube task's rows for vector sub-block 0 or 1: the first takes ``(rows+1)//2``."""
    first = (rows + 1) // 2
    if subblock_idx == 0:
        return 0, first
    if subblock_idx == 1:
        return first, rows - first
    raise ValueError(f"subblock_idx must be 0 or 1, got {subblock_idx}")
