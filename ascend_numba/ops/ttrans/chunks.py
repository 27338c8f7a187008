"""TTRANS goldens in pieces: blocks of output rows, each the transpose or conversion of a slab of
the input.

Every output here is, row by row, ``outer x inner`` units of contiguous output (transpose2d:
output rows x their elements; NC1HWC0 <-> NCHW: (G*)N x C1 channel blocks; FRACTAL_Z: G x
C1*H*W rows; FRACTAL_Z_3D: D x C1 blocks of H*W rows).  A chunk is several whole outer indices, or
a range of units within one: either way one contiguous range of the output, and the slab of the
input it reads converts on its own (channel padding falls only in the last C1 block).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..registry import Chunking


@dataclass(frozen=True)
class Block:
    """Outer indices ``[outer, outer_stop)`` and, within them, units ``[inner, inner_stop)`` (all of
    them when the block spans several outer indices)."""

    outer: int
    outer_stop: int
    inner: int
    inner_stop: int


def _blocks(outer: int, inner: int, unit_bytes: int, budget: int) -> list[Block]:
    if outer * inner == 0:
        return []
    if inner * unit_bytes <= budget:
        per = max(1, budget // (inner * unit_bytes))
        return [Block(o, min(o + per, outer), 0, inner) for o in range(0, outer, per)]
    per = max(1, budget // unit_bytes)
    return [Block(o, o + 1, i, min(i + per, inner)) for o in range(outer) for i in range(0, inner, per)]


def _lead(shape: tuple, ndim: int) -> int:
    """The number of (G,) N indices in front of the ``ndim`` trailing axes."""
    return math.prod(shape[:len(shape) - ndim])


def plan_transpose(entry, shapes: dict, attrs: dict, itemsize: int, budget: int, align: int) -> list[Block]:
    rows, cols = shapes["x"]
    return _blocks(cols, rows, 2 * itemsize, budget)  # output rows are input columns


def compute_transpose(entry, inputs: dict, attrs: dict, b: Block) -> dict:
    x = inputs["x"]
    sub = np.ascontiguousarray(x[b.inner:b.inner_stop, b.outer:b.outer_stop])
    y = entry.run({"x": sub}, attrs)["y"]
    return {"y": (b.outer * x.shape[0] + b.inner, y.reshape(-1))}


def _geometry(shape: tuple, attrs: dict, itemsize: int, out_shape: tuple) -> tuple[int, int, int]:
    """(outer, inner, bytes of input and output per unit) of a conversion."""
    src, dst = attrs["src"], attrs["dst"]
    if src in ("NCHW", "GNCHW"):
        *_, h, w = shape
        return _lead(shape, 3), out_shape[-4], 2 * h * w * out_shape[-1] * itemsize
    if dst in ("NCHW", "GNCHW"):
        *_, c1, h, w, c0 = shape
        return _lead(shape, 4), c1, 2 * h * w * c0 * itemsize
    if dst == "FRACTAL_Z":
        *_, n, c1, h, w, c0 = shape
        return _lead(shape, 5), c1 * h * w, (n * c0 + math.prod(out_shape[1:])) * itemsize
    n, ch, d, h, w = shape
    c0 = out_shape[-1]
    return d, -(-ch // c0), h * w * (n * c0 + math.prod(out_shape[1:])) * itemsize


def plan_conversion(entry, shapes: dict, attrs: dict, itemsize: int, budget: int, align: int) -> list[Block]:
    shape = tuple(shapes["x"])
    out_shape = entry.output_shapes(shapes, attrs, itemsize)["y"]
    if math.prod(shape) == 0 or math.prod(out_shape) == 0:
        return []
    return _blocks(*_geometry(shape, attrs, itemsize, out_shape), budget)


def _slab(x: np.ndarray, attrs: dict, out_shape: tuple, b: Block) -> tuple[np.ndarray, dict, int]:
    """The input slab of a block, flattened to one (G*)N axis in front, the attributes that convert
    it, and the block's element offset in the output (None: the block is cropped away)."""
    src, dst = attrs["src"], attrs["dst"]
    c0 = out_shape[-1]
    if src in ("NCHW", "GNCHW"):
        *_, ch, h, w = x.shape
        sub = x.reshape(-1, ch, h, w)[b.outer:b.outer_stop, b.inner * c0:min(b.inner_stop * c0, ch)]
        return sub, dict(attrs, c0=c0), (b.outer * out_shape[-4] + b.inner) * h * w * c0
    if dst in ("NCHW", "GNCHW"):
        *_, c1, h, w, cc0 = x.shape
        ch = out_shape[-3]
        channels = min(b.inner_stop * cc0, ch) - b.inner * cc0
        sub = x.reshape(-1, c1, h, w, cc0)[b.outer:b.outer_stop, b.inner:b.inner_stop]
        return sub, dict(attrs, c=channels), (b.outer * ch + b.inner * cc0) * h * w if channels > 0 else None
    if dst == "FRACTAL_Z":
        *_, n, c1, h, w, cc0 = x.shape
        k = c1 * h * w
        # The block's C1*H*W rows as W (C1 = H = 1), for every n: a FRACTAL_Z of its own.
        sub = x.reshape(-1, n, k, cc0)[b.outer:b.outer_stop, :, b.inner:b.inner_stop]
        sub = sub.reshape(sub.shape[0] * n, 1, 1, sub.shape[2], cc0)
        return sub, attrs, (b.outer * k + b.inner) * math.prod(out_shape[1:])
    n, ch, d, h, w = x.shape
    sub = x[:, b.inner * c0:min(b.inner_stop * c0, ch), b.outer:b.outer_stop]
    return sub, dict(attrs, c0=c0), (b.outer * -(-ch // c0) + b.inner) * h * w * math.prod(out_shape[1:])


def compute_conversion(entry, inputs: dict, attrs: dict, b: Block) -> dict:
    x = inputs["x"]
    out_shape = entry.output_shapes({"x": x.shape}, attrs, x.itemsize)["y"]
    sub, sub_attrs, offset = _slab(x, attrs, out_shape, b)
    if offset is None:
        return {}
    sub = np.ascontiguousarray(sub)
    if attrs["src"] in ("GNCHW", "GNC1HWC0"):  # the flattened (G*)N axis back as G, N
        groups = b.outer_stop - b.outer if attrs["dst"] == "FRACTAL_Z" else 1
        sub = sub.reshape((groups, -1) + sub.shape[1:])
    y = entry.run({"x": sub}, sub_attrs)["y"]
    return {"y": (offset, y.reshape(-1))}


TRANSPOSE_CHUNKING = Chunking(plan_transpose, compute_transpose)
CONVERSION_CHUNKING = Chunking(plan_conversion, compute_conversion)
