"""Host side of TTRANS (SPEC §6, seed 004): tmp-tile sizes, platform checks, tilings.

Every op here is a batch of 2-D transposes (or 32-byte block scatters for
FRACTAL_Z) of UB tiles.  The general transpose tiling describes blocks
``src[rows, cols] -> dst[cols, rows]`` indexed by (outer, inner) with strides,
so one kernel serves the 2-D transpose and the NCHW <-> NC1HWC0 families.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...dtypes import FLOAT8_NAMES, device_dtype_name
from ...host.platform import Platform
from ...host.split import align_down, align_up, ceil_div

__all__ = [
    "TTransRuleError", "TTRANS_DTYPES", "CONVERSIONS", "A5_CONVERSIONS", "FORMAT_NDIM", "conversion_output_shape",
    "resolve_c0",
    "check_given_c0", "row_stride", "elem_per_block", "ttrans_tmp_bytes",
    "check_ttrans_dtype", "default_c0", "TransposeTilingData", "FractalZTilingData", "FractalZ3DTilingData",
    "plan_transpose_blocks", "plan_fractal_z", "plan_fractal_z_3d", "transpose_tile_paths",
]


class TTransRuleError(ValueError):
    """A TTRANS platform rule is violated; the message names the rule."""


CONVERSIONS = {
    ("NCHW", "NC1HWC0"), ("NC1HWC0", "NCHW"), ("GNCHW", "GNC1HWC0"), ("GNC1HWC0", "GNCHW"),
    ("NC1HWC0", "FRACTAL_Z"), ("GNC1HWC0", "FRACTAL_Z"), ("NCDHW", "FRACTAL_Z_3D"),
}
A5_CONVERSIONS = {("NCHW", "NC1HWC0"), ("GNCHW", "GNC1HWC0"), ("NC1HWC0", "FRACTAL_Z"), ("GNC1HWC0", "FRACTAL_Z")}
FORMAT_NDIM = {"NCHW": 4, "GNCHW": 5, "NC1HWC0": 5, "GNC1HWC0": 6, "NCDHW": 5}

# Element types the Ascend TTRANS takes, by width (A2/A3 and A5 alike); float8 on A5 only, as raw bytes.
# The device's TTRANS element types by name (what the golden CLI and the registry offer).
TTRANS_DTYPES = ("float32", "int32", "uint32", "float16", "bfloat16", "int16", "uint16", "int8", "uint8")
_TYPES_BY_WIDTH = {4: {"uint32", "int32", "float32"}, 2: {"uint16", "int16", "float16", "bfloat16"},
                   1: {"uint8", "int8"}}
_FLOAT8 = set(FLOAT8_NAMES)
# The CPU twin also transposes 8-byte elements (2-D only).
_TWIN_8BYTE = {"uint64", "int64", "float64"}


def row_stride(elem_bytes: int) -> int:
    """RowStride: 32 for 1-byte elements, 16 otherwise."""
    return 32 if elem_bytes == 1 else 16


def elem_per_block(elem_bytes: int, block_bytes: int = 32) -> int:
    return block_bytes // elem_bytes


def default_c0(elem_bytes: int) -> int:
    """C0 = 32 / sizeof(T): 8 for 4-byte, 16 for 2-byte, 32 for 1-byte elements."""
    return 32 // elem_bytes


def check_ttrans_dtype(dtype, platform: Platform, *, two_d: bool) -> np.dtype:
    """Reject element types the platform's TTRANS does not take, naming the rule."""
    dtype = np.dtype(dtype)
    allowed = set().union(*_TYPES_BY_WIDTH.values())
    if platform.name == "A5":
        allowed |= _FLOAT8
    if two_d:
        allowed |= _TWIN_8BYTE
    if device_dtype_name(dtype) not in allowed:
        widths = "; ".join(f"{w}-byte: {', '.join(sorted(ds))}" for w, ds in _TYPES_BY_WIDTH.items())
        extra = " (A5 also takes float8 as raw bytes)" if platform.name != "A5" else ""
        raise TTransRuleError(f"TTRANS on {platform.name}: element type {dtype} not supported; {widths}{extra}"
                              + ("; 2-D transposes also take 8-byte types" if two_d else ""))
    return dtype


def check_a5_alignment(platform: Platform, in_row_bytes: int, out_row_bytes: int) -> None:
    """A5: the leading dimension of input and output must be 32-byte aligned."""
    if platform.name == "A5":
        for what, nbytes in (("input", in_row_bytes), ("output", out_row_bytes)):
            if nbytes % platform.block_bytes:
                raise TTransRuleError(f"TTRANS on A5: the {what} leading dimension ({nbytes} bytes) must be "
                                      f"{platform.block_bytes}-byte aligned")


def ttrans_tmp_bytes(shape, dtype, src: str = "ND", dst: str = "ND", *, c0: int | None = None,
                     n0: int = 16) -> int:
    """Bytes of the temporary tile TTRANS needs for ``src`` of ``shape`` converted to ``dst`` (seed 004).

    ``src="ND", dst="ND"`` is the 2-D transpose ``[H, W] -> [W, H]``.
    """
    size = np.dtype(dtype).itemsize
    if size not in (1, 2, 4):
        raise TTransRuleError(f"TTRANS takes 1-, 2- or 4-byte elements, got {np.dtype(dtype)}")
    rs = row_stride(size)
    if not isinstance(src, str) or not isinstance(dst, str):
        raise TypeError(f"src and dst must be format names (str), got {src!r} and {dst!r}")
    src, dst = src.upper(), dst.upper()
    if (src, dst) != ("ND", "ND") and (src, dst) not in CONVERSIONS:
        raise ValueError(f"unknown conversion {src} -> {dst}")
    ndim = 2 if (src, dst) == ("ND", "ND") else FORMAT_NDIM[src]
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of ints, got {shape!r}") from None
    if len(shape) != ndim:
        raise ValueError(f"shape of a {src} tensor must have {ndim} dims, got {len(shape)}: {shape}")
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"shape must hold non-negative ints, got {shape}")
    shape = tuple(int(s) for s in shape)
    if (src, dst) == ("ND", "ND"):
        h, w = shape
        return w * align_up(h, rs) * size
    if c0 is not None and (isinstance(c0, bool) or not isinstance(c0, int)):
        raise TypeError(f"c0 must be an int, got {c0!r}")
    if src in ("NCHW", "GNCHW", "NCDHW"):
        c0 = resolve_c0(c0, size, allow_four=src != "NCDHW")  # the rule convert_format applies
    else:
        check_given_c0(c0, shape[-1])
    if (src, dst) in {("NCHW", "NC1HWC0"), ("GNCHW", "GNC1HWC0")}:
        h, w = shape[-2:]
        return h * w * align_up(c0, rs) * size
    if (src, dst) in {("NC1HWC0", "NCHW"), ("GNC1HWC0", "GNCHW")}:
        h, w, c0 = shape[-3:]
        return c0 * align_up(h * w, rs) * size
    if dst == "FRACTAL_Z":
        return 0
    n, c, _d, h, w = shape
    c1 = ceil_div(c, c0)
    plane = n * c1 * c0 * h * w
    return (plane + max(plane, h * w * align_up(c0, rs))) * size


def resolve_c0(c0, elem_bytes: int, *, allow_four: bool) -> int:
    """The C0 of a conversion from NCHW/GNCHW (``allow_four``) or NCDHW: 32 / sizeof by default;
    a given ``c0`` must be that (or 4 where allowed), else TTransRuleError."""
    default = default_c0(elem_bytes)
    if c0 is None:
        return default
    if c0 == default or (allow_four and c0 == 4):
        return c0
    raise TTransRuleError(f"C0 must be {default} for {elem_bytes}-byte elements" + (" (or 4)" if allow_four else "")
                          + f", got c0={c0}")


def check_given_c0(c0, actual: int) -> None:
    """A ``c0`` given for an NC1HWC0 input must be its C0 dim."""
    if c0 is not None and c0 != actual:
        raise ValueError(f"c0={c0} does not match the input's C0 dim {actual}")


def conversion_output_shape(shape: tuple, elem_bytes: int, src: str, dst: str, *, c0: int | None = None,
                            n0: int = 16, c: int | None = None) -> tuple:
    """The shape ``convert_format`` returns for an input of ``shape`` (formats as in CONVERSIONS)."""
    if src in ("NCHW", "GNCHW"):
        *gn, ch, h, w = shape
        c0 = c0 or default_c0(elem_bytes)
        return tuple(gn) + (ceil_div(ch, c0), h, w, c0)
    if dst in ("NCHW", "GNCHW"):
        *gn, c1, h, w, cc0 = shape
        return tuple(gn) + (c1 * cc0 if c is None else c, h, w)
    if dst == "FRACTAL_Z":
        *g, n, c1, h, w, cc0 = shape
        return (math.prod(g) * c1 * h * w, ceil_div(n, n0), n0, cc0)
    n, ch, d, h, w = shape
    c0 = c0 or default_c0(elem_bytes)
    return (d * ceil_div(ch, c0) * h * w, ceil_div(n, n0), n0, c0)


@dataclass
class TransposeTilingData:
    """Blocks ``src[rows, cols] -> dst[cols, outRows]`` for (outer, inner) in outerCount x innerCount.

    Block (o, i) starts at ``o*srcOuter + i*srcInner`` in src (row stride srcRowStride) and at
    ``o*dstOuter + i*dstInner`` in dst (row stride dstRowStride).  Its valid source rows are
    ``min(rows, totalRows - i*rows)`` and valid columns ``min(cols, totalCols - i*cols)``; dst rows
    are ``outRows`` elements, zero past the valid rows (channel padding).
    UB tiles are ``tileRows x tileCols`` source elements.
    """

    outerCount: int
    innerCount: int
    rows: int
    cols: int
    totalRows: int
    totalCols: int
    outRows: int
    srcOuter: int
    srcInner: int
    srcRowStride: int
    dstOuter: int
    dstInner: int
    dstRowStride: int
    tileRows: int
    tileCols: int
    rowTiles: int
    colTiles: int
    tmpElems: int


# A tile's rows are whole 64-byte lines of the host CPU: rows of 176 fp16 elements (5.5 lines)
# shared a line with the next tile's, and fp16 4096^2 took 3.3 ms at 176^2 and 2.8 at 160^2 (#54).
CACHE_LINE_BYTES = 64


def _tile_unit(elem_bytes: int, block_bytes: int) -> int:
    """Elements a tile's rows and columns come in: RowStride, a 32-byte block and a host cache line."""
    return max(row_stride(elem_bytes), block_bytes // elem_bytes, CACHE_LINE_BYTES // elem_bytes)


def _tile_side(ub_size: int, elem_bytes: int, block_bytes: int) -> int:
    """Square UB tile side: src tile, dst tile and tmp tile (t x t each) fit in the UB; a multiple
    of :func:`_tile_unit`."""
    unit = _tile_unit(elem_bytes, block_bytes)
    side = int((ub_size // (3 * elem_bytes)) ** 0.5)
    while side > unit and 3 * align_up(side * side * elem_bytes, block_bytes) > ub_size:
        side -= 1
    return max(unit, align_down(side, unit))


def plan_transpose_blocks(outer: int, inner: int, rows: int, cols: int, total_rows: int, total_cols: int,
                          out_rows: int, src_outer: int, src_inner: int, src_row_stride: int, dst_outer: int,
                          dst_inner: int, dst_row_stride: int, elem_bytes: int,
                          platform: Platform) -> TransposeTilingData:
    side = _tile_side(platform.ub_size, elem_bytes, platform.block_bytes)
    rs = row_stride(elem_bytes)
    epb = elem_per_block(elem_bytes, platform.block_bytes)
    # A tile's rows become dst rows of up to outRows (padding) elements: keep the dst tile within bounds.
    tile_rows = min(side, align_up(max(rows, out_rows), rs))
    # Short blocks (C0 rows) get wide tiles: fill the UB, but keep srcStride/ElemPerBlock <= 255.
    widest = platform.ub_size // (elem_bytes * (tile_rows + 2 * align_up(tile_rows, rs))) - epb
    tile_cols = min(max(side, align_down(widest, epb)), 255 * epb, align_up(cols, epb))
    if tile_cols < side:  # narrow blocks (C0 columns) get tall tiles: fill the UB as well
        unit = _tile_unit(elem_bytes, platform.block_bytes)
        tallest = align_down(platform.ub_size // (3 * tile_cols * elem_bytes) - unit, unit)
        tile_rows = max(tile_rows, min(tallest, align_up(max(rows, out_rows), rs)))
    tmp_elems = tile_cols * align_up(tile_rows, rs)
    platform.check_ub_plan({"src_tile": tile_rows * tile_cols * elem_bytes,
                            "dst_tile": tile_cols * align_up(tile_rows, row_stride(elem_bytes)) * elem_bytes,
                            "tmp_tile": tmp_elems * elem_bytes})
    return TransposeTilingData(outer, inner, rows, cols, total_rows, total_cols, out_rows, src_outer, src_inner,
                               src_row_stride, dst_outer, dst_inner, dst_row_stride, tile_rows, tile_cols,
                               ceil_div(max(rows, out_rows), tile_rows), ceil_div(cols, tile_cols), tmp_elems)


def transpose_tile_paths(t: TransposeTilingData, elem_bytes: int, block_bytes: int = 32) -> dict[str, int]:
    """How many UB tiles take the vector and the scalar TTRANS path (what the lanes will count)."""
    counts = {"vector": 0, "scalar": 0}
    epb = elem_per_block(elem_bytes, block_bytes)
    for inner in range(t.innerCount):
        vrows = max(0, min(t.rows, t.totalRows - inner * t.rows))
        vcols = max(0, min(t.cols, t.totalCols - inner * t.cols))
        for rt in range(t.rowTiles):
            tr = max(0, min(t.tileRows, max(vrows, t.outRows) - rt * t.tileRows))
            r = max(0, min(t.tileRows, vrows - rt * t.tileRows))
            for ct in range(t.colTiles):
                c = max(0, min(t.tileCols, vcols - ct * t.tileCols))
                if tr == 0 or c == 0:
                    continue
                src_pitch = align_up(c * elem_bytes, block_bytes) // elem_bytes
                dst_pitch = align_up(tr * elem_bytes, block_bytes) // elem_bytes
                vector = dst_pitch % row_stride(elem_bytes) == 0 and src_pitch % epb == 0 and src_pitch // epb <= 255
                if r > 0:
                    counts["vector" if vector else "scalar"] += t.outerCount
    return counts


@dataclass
class FractalZTilingData:
    """[G, N, K, C0] (K = C1*H*W blocks of C0 elements) -> [G*K, N1*N0, C0], zero rows for n >= N."""

    groups: int
    n: int
    k: int
    c0: int
    nPadded: int       # N1 * N0
    kChunk: int        # rows of K per UB tile
    kChunks: int


def plan_fractal_z(groups: int, n: int, k: int, c0: int, n_padded: int, elem_bytes: int,
                   platform: Platform) -> FractalZTilingData:
    row_bytes = n_padded * c0 * elem_bytes
    k_chunk = max(1, min(k, platform.ub_size // row_bytes))
    platform.check_ub_plan({"out_tile": k_chunk * row_bytes})
    return FractalZTilingData(groups, n, k, c0, n_padded, k_chunk, ceil_div(k, k_chunk))


@dataclass
class FractalZ3DTilingData:
    """[N, C, D, HW] -> [D*C1*HW, N1*N0, C0]: per (d, c1, hw chunk), the [C0, chunk] planes of
    ``nGroup`` consecutive n stacked in UB and transposed by one TTRANS into their columns of the
    out tile."""

    n: int
    c: int
    d: int
    hw: int
    c0: int
    c1: int
    nPadded: int
    nGroup: int        # n planes per TTRANS
    hwChunk: int
    hwChunks: int
    tmpElems: int


# The least HW chunk a plane group may leave (elements): NCDHW -> FRACTAL_Z_3D (32, 64, 8, 28, 28)
# fp16 on one thread, CPU ms: one plane a TTRANS (chunk 160) 6.4, 8 planes (128) 4.7, 16 (96)
# 3.8, 32 (48) 4.0 (#54).
MIN_FZ3D_CHUNK = 64


def plan_fractal_z_3d(n: int, c: int, d: int, hw: int, c0: int, n_padded: int, elem_bytes: int,
                      platform: Platform) -> FractalZ3DTilingData:
    rs = row_stride(elem_bytes)
    epb = elem_per_block(elem_bytes, platform.block_bytes)

    def chunk_for(group: int) -> int:
        # UB: out tile [chunk, N1N0, C0] + the group's planes [group*C0, chunk] + tmp [chunk, align(group*C0, rs)].
        per_hw = n_padded * c0 + group * c0 + align_up(group * c0, rs)
        return min(align_down(platform.ub_size // (per_hw * elem_bytes) - epb, epb), align_up(hw, epb))

    group = n_padded
    while group > 1 and chunk_for(group) < min(MIN_FZ3D_CHUNK, align_up(hw, epb)):
        group = (group + 1) // 2
    chunk = max(epb, chunk_for(group))
    tmp = chunk * align_up(group * c0, rs)
    platform.check_ub_plan({"out_tile": chunk * n_padded * c0 * elem_bytes,
                            "planes": group * c0 * chunk * elem_bytes, "tmp_tile": tmp * elem_bytes})
    c1 = ceil_div(c, c0)
    return FractalZ3DTilingData(n, c, d, hw, c0, c1, n_padded, group, chunk, ceil_div(hw, chunk), tmp)
