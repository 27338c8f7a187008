"""Host tiling of Tile / Repeat (SPEC §4, seed 000 §3.2.1).

:func:`plan_tile` takes shapes and repeats to everything the kernel needs:
merged dims (rules A and B), the ``TileTilingData`` bytes, the core split and
the kernel path.  The path is decided from the tiling by the five conditions
of the device kernel's ``Process()``, first match wins, and handed to the
lanes with the launch.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Sequence

from ...host.platform import Platform, check_block_dim, get_platform
from ...host.split import align_down, ceil_div
from ...host.tiling import int32, to_array
from ...host.tiling_key import TilingKeyField

__all__ = [
    "TooManyDims", "MAX_DIMS", "PATHS", "TileKey", "TileTilingData", "TileTilingData64", "TilePlan",
    "normalize_tile_reps", "normalize_repeat_reps", "merge_dims", "plan_tile", "plan_tile_normalized",
    "path_preconditions",
]

MAX_DIMS = 8
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

class TooManyDims(ValueError):
    """More than MAX_DIMS dims remain after merging: the device kernel cannot take the problem whole."""


# Path names in the order of the device's selection (ids 1..5 are what lanes receive).
PATHS = ("split_mult", "doubling", "build", "gather", "per_row")


class TileKey:
    """The Tile kernel's TilingKey: the path the host chose from the tiling (1-based, in PATHS
    order).  Each path compiles as its own specialization, so a first call compiles the one
    path it runs."""

    Path = TilingKeyField(bits=3, values=[1, 2, 3, 4, 5])


@dataclass
class TileTilingData:
    """The device struct (all ``int32_t``); ``ubSize`` is the bytes of one of the three UB buffers."""

    numDims: int32
    inputShape: int32[8]
    multiples: int32[8]
    outputShape: int32[8]
    inputStrides: int32[8]
    outputStrides: int32[8]
    totalInputElems: int32
    totalOutputElems: int32
    elemBytes: int32
    blockDim: int32
    ubSize: int32


# The Python API's variant for element counts past int32: same fields, int64.
TileTilingData64 = dataclasses.make_dataclass(
    "TileTilingData64",
    [(f.name, str(f.type).replace("int32", "int64")) for f in dataclasses.fields(TileTilingData)],
)
TileTilingData64.__module__ = __name__
TileTilingData64.__doc__ = "TileTilingData with int64 fields, for shapes past the device's int32 limit."


def _int_tuple(values, what: str) -> tuple[int, ...]:
    """An int or a sequence of them (no bools) as a tuple of Python ints.  Runs on every op call:
    plain ints and tuples of plain ints pass without a generator."""
    if type(values) is int:
        return (values,)
    if hasattr(values, "tolist") and hasattr(values, "ndim"):  # a NumPy array or scalar, as numpy.tile takes
        if values.ndim > 1:
            raise ValueError(f"{what} must be an int or a 1-D sequence of ints, got a {values.ndim}-D array")
        values = values.tolist()
    if hasattr(values, "__index__") and not isinstance(values, bool):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError:
        raise TypeError(f"{what} must be an int or a sequence of ints, got {type(values).__name__}") from None
    for v in values:
        if type(v) is not int:
            break
    else:
        return values
    out = []
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{what} must be integers, got {v!r}")
        out.append(int(v.__index__()))
    return tuple(out)


def normalize_tile_reps(ndim: int, reps) -> tuple[int, ...]:
    """``numpy.tile``'s reps: an int or a sequence; shorter than ndim is left-padded with 1s."""
    reps = _int_tuple(reps, "reps")
    if reps and min(reps) < 0:
        raise ValueError(f"reps must be non-negative, got {reps}")
    return (1,) * (ndim - len(reps)) + reps if len(reps) < ndim else reps


def normalize_repeat_reps(ndim: int, repeats) -> tuple[int, ...]:
    """``torch.Tensor.repeat``'s repeats: at least ndim of them, none negative."""
    repeats = _int_tuple(repeats, "repeats")
    if len(repeats) < ndim:
        raise ValueError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                         f"of input tensor ({len(repeats)} < {ndim})")
    if repeats and min(repeats) < 0:
        raise ValueError(f"repeats must be non-negative, got {repeats}")
    return repeats


def merge_dims(shape: Sequence[int], multiples: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Rules A and B on equal-rank ``shape`` / ``multiples`` (no zeros).

    A: from the innermost dim outward, a dim with multiple 1 merges into its
    outer neighbour (``shape[i-1] *= shape[i]``).  B: dims with shape 1 and
    multiple 1 are dropped.  A fully trivial problem keeps one dim ``[n] x [1]``.
    """
    shape, mult = list(shape), list(multiples)
    for i in range(len(shape) - 1, 0, -1):
        if mult[i] == 1:
            shape[i - 1] *= shape[i]
            del shape[i], mult[i]
    kept = [(s, m) for s, m in zip(shape, mult) if not (s == 1 and m == 1)]
    if not kept:
        total = 1
        for s in shape:
            total *= s
        kept = [(total, 1)]
    return tuple(s for s, _ in kept), tuple(m for _, m in kept)


def _strides(shape: Sequence[int]) -> list[int]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return strides[::-1]


@dataclass(frozen=True)
class TilePlan:
    """Everything about one Tile call: shapes, merged problem, tiling bytes, split and path."""

    input_shape: tuple[int, ...]
    multiples: tuple[int, ...]         # one per output dim (after left-padding)
    output_shape: tuple[int, ...]
    elem_bytes: int
    platform: Platform
    block_dim: int
    merged_shape: tuple[int, ...]
    merged_multiples: tuple[int, ...]
    inner_dim: int
    inner_mult: int
    output_inner_dim: int
    outer_count: int
    buffer_bytes: int                  # each of inQue, outQue, tmpBuf
    buf_elems: int
    c0_count: int                      # "aligned" = a multiple of 32 bytes, in elements when 32 % elemBytes == 0
    path: str
    auto_path: str                     # what the conditions pick; differs from path when forced
    tiling: object                     # TileTilingData or TileTilingData64

    @property
    def empty(self) -> bool:
        return 0 in self.output_shape

    @property
    def path_id(self) -> int:
        return PATHS.index(self.path) + 1

    @property
    def key(self) -> dict:
        """The TileKey: the path, a compile-time constant of the kernel."""
        return {"Path": self.path_id}

    @property
    def split_by_mult(self) -> bool:
        return self.path == "split_mult"

    @property
    def int64(self) -> bool:
        return isinstance(self.tiling, TileTilingData64)

    @functools.cached_property
    def tiling_array(self):
        """The tiling bytes as a read-only uint8 array (what the lanes read)."""
        return to_array(self.tiling)

    @property
    def tiling_bytes(self) -> bytes:
        return self.tiling_array.tobytes()

    def core_ranges(self) -> list[tuple[int, int]]:
        """Each lane's work: output rows, or (row, mult) items when splitting by mult."""
        total = self.outer_count * self.inner_mult if self.split_by_mult else self.outer_count
        per = ceil_div(total, self.block_dim)
        ranges = []
        for core in range(self.block_dim):
            start = min(core * per, total)
            ranges.append((start, min(start + per, total)))
        return ranges


def _aligned(elems: int, elem_bytes: int, block: int) -> bool:
    return (elems * elem_bytes) % block == 0


GATHER_MAX_INNER = 16         # Gather takes rows of at most this many elements...
GATHER_MAX_OUTPUT_INNER = 32  # ...repeated into output rows of at most this many


def gather_takes(inner: int, inner_mult: int, ndim: int, elem_bytes: int) -> bool:
    """The Gather path's test on a row the block does not align: short rows repeated into short
    output rows, and past 2 dims elements of 2 bytes or more.  The kernel compiles this same
    function (its PerRow path leaves such rows to Gather)."""
    return (inner_mult > 1 and inner <= GATHER_MAX_INNER and inner * inner_mult <= GATHER_MAX_OUTPUT_INNER
            and (ndim <= 2 or elem_bytes >= 2))


def _choose_path(shape, mult, elem_bytes, block_dim, buf_elems, block) -> str:
    n = len(shape)
    inner, inner_mult = shape[-1], mult[-1]
    out_inner = inner * inner_mult
    outer = _prod(shape) * _prod(mult) // out_inner
    inner_aligned = _aligned(inner, elem_bytes, block)
    if outer < block_dim and inner_mult > 1:
        return "split_mult"
    if inner_aligned and inner_mult >= 4 and inner * 2 <= buf_elems:
        return "doubling"
    if _aligned(out_inner, elem_bytes, block) and out_inner <= buf_elems and inner_aligned and inner_mult > 2:
        return "build"
    if not inner_aligned and gather_takes(inner, inner_mult, n, elem_bytes):
        return "gather"
    return "per_row"


def path_preconditions(shape, mult, elem_bytes, buf_elems, block) -> dict[str, str | None]:
    """For each path, None when its kernel can run this problem, else the unmet structural need.

    These are what a forced path needs to be correct, looser than the
    selection conditions (which also weigh speed).
    """
    inner, inner_mult = shape[-1], mult[-1]
    out_inner = inner * inner_mult
    inner_aligned = _aligned(inner, elem_bytes, block)
    return {
        "split_mult": None if inner_mult > 1 else "innerMult > 1",
        "doubling": None if inner_aligned and inner * 2 <= buf_elems
        else "innerDim aligned to 32 bytes and innerDim * 2 <= bufElems",
        "build": None if inner_aligned and out_inner <= buf_elems
        else "innerDim aligned to 32 bytes and outputInnerDim <= bufElems",
        "gather": None if inner <= GATHER_MAX_INNER and out_inner <= GATHER_MAX_OUTPUT_INNER
        else f"innerDim <= {GATHER_MAX_INNER} and outputInnerDim <= {GATHER_MAX_OUTPUT_INNER}",
        "per_row": None,
    }


def _prod(values) -> int:
    p = 1
    for v in values:
        p *= v
    return p


@functools.lru_cache(maxsize=4096)
def plan_tile_normalized(input_shape: tuple, multiples: tuple, elem_bytes: int, block_dim: int,
                         platform: Platform, path: str | None) -> TilePlan:
    """:func:`plan_tile` for arguments already normalized (tuples of ints, a Platform); cached."""
    if path is not None and path not in PATHS:
        raise ValueError(f"unknown path {path!r}; paths are {PATHS}")
    ndim = len(multiples)
    padded = (1,) * (ndim - len(input_shape)) + tuple(input_shape)
    output_shape = tuple(s * m for s, m in zip(padded, multiples))
    if _prod(output_shape) * elem_bytes > INT64_MAX:
        raise ValueError(f"multiples {multiples} make an output of shape {output_shape}: "
                         f"{_prod(output_shape) * elem_bytes} bytes, past what an array can hold")
    buffer_bytes = align_down(platform.ub_size // 3, platform.block_bytes)
    platform.check_ub_plan({"inQue": buffer_bytes, "outQue": buffer_bytes, "tmpBuf": buffer_bytes})
    buf_elems = buffer_bytes // elem_bytes
    c0_count = max(1, platform.block_bytes // elem_bytes)
    if 0 in output_shape:
        merged, mults = (0,), (1,)
    else:
        merged, mults = merge_dims(padded, multiples)
    if len(merged) > MAX_DIMS:
        raise TooManyDims(f"{len(merged)} dims remain after merging (at most {MAX_DIMS})")
    total_in, total_out = _prod(merged), _prod(merged) * _prod(mults)
    inner, inner_mult = merged[-1], mults[-1]
    out_inner = inner * inner_mult
    outer = total_out // out_inner if out_inner else 0
    if 0 in output_shape:
        auto = chosen = "per_row"
    else:
        auto = _choose_path(merged, mults, elem_bytes, block_dim, buf_elems, platform.block_bytes)
        chosen = auto if path is None else path
        if path is not None:
            if path not in PATHS:
                raise ValueError(f"unknown path {path!r}; paths are {PATHS}")
            unmet = path_preconditions(merged, mults, elem_bytes, buf_elems, platform.block_bytes)[path]
            if unmet is not None:
                raise ValueError(f"path {path!r} cannot run this shape: it needs {unmet} "
                                 f"(merged shape {merged} x {mults}, {elem_bytes}-byte elements)")
    out_merged = [s * m for s, m in zip(merged, mults)]
    fields = dict(
        numDims=len(merged),
        inputShape=list(merged) + [1] * (MAX_DIMS - len(merged)),
        multiples=list(mults) + [1] * (MAX_DIMS - len(mults)),
        outputShape=out_merged + [1] * (MAX_DIMS - len(out_merged)),
        inputStrides=_strides(merged) + [0] * (MAX_DIMS - len(merged)),
        outputStrides=_strides(out_merged) + [0] * (MAX_DIMS - len(out_merged)),
        totalInputElems=total_in, totalOutputElems=total_out, elemBytes=elem_bytes,
        blockDim=block_dim, ubSize=buffer_bytes,
    )
    fits_int32 = max(total_out, total_in) <= INT32_MAX
    tiling = (TileTilingData if fits_int32 else TileTilingData64)(**fields)
    return TilePlan(
        input_shape=tuple(input_shape), multiples=tuple(multiples), output_shape=output_shape,
        elem_bytes=elem_bytes, platform=platform, block_dim=block_dim, merged_shape=merged,
        merged_multiples=mults, inner_dim=inner, inner_mult=inner_mult, output_inner_dim=out_inner,
        outer_count=outer, buffer_bytes=buffer_bytes, buf_elems=buf_elems, c0_count=c0_count,
        path=chosen, auto_path=auto, tiling=tiling,
    )


def plan_tile(input_shape: Sequence[int], multiples: Sequence[int], elem_bytes: int, *,
              block_dim: int | None = None, platform: "str | Platform" = "A2",
              path: str | None = None) -> TilePlan:
    """Plan ``tile(x, multiples)`` for ``x`` of ``input_shape`` with ``elem_bytes``-byte elements.

    ``multiples`` has one entry per output dim (``len(multiples) >= len(input_shape)``);
    ``block_dim`` defaults to the platform's AI core count.  Plans are cached.
    """
    plat = get_platform(platform)
    if block_dim is None:
        block_dim = plat.aic_num
    input_shape = _int_tuple(input_shape, "input_shape")
    multiples = _int_tuple(multiples, "multiples")
    if len(multiples) < len(input_shape):
        raise ValueError("multiples must have at least one entry per input dim")
    if min(input_shape, default=0) < 0:
        raise ValueError(f"input_shape must be non-negative, got {input_shape}")
    if min(multiples, default=0) < 0:
        raise ValueError(f"multiples must be non-negative, got {multiples}")
    if isinstance(elem_bytes, bool) or not isinstance(elem_bytes, int) or elem_bytes <= 0:
        raise ValueError(f"elem_bytes must be a positive int, got {elem_bytes!r}")
    block_dim = check_block_dim(block_dim)
    if path is not None and not isinstance(path, str):
        raise TypeError(f"path must be a str or None, got {type(path).__name__}")
    return plan_tile_normalized(input_shape, multiples, elem_bytes, block_dim, plat, path)
