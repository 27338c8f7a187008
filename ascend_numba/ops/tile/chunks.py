"""Tile and Repeat goldens in pieces.

With the input and the repetitions brought to the same rank (leading 1s), output index ``o`` reads
input index ``o % shape`` on every axis.  A chunk is a range of rows of the output, a row being
one index of its first ``axes`` axes (flattened): the input rows those output rows read are
gathered, and the kernel tiles them over the remaining axes.  The output of the rows is one
contiguous range of the output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..registry import Chunking


@dataclass(frozen=True)
class TileRows:
    """Output rows ``[start, start + count)``, a row being one index of the first ``axes`` axes."""

    axes: int
    start: int
    count: int


def _reps_name(attrs: dict) -> str:
    return "reps" if "reps" in attrs else "repeats"


def _ranked(shape: tuple, reps: tuple) -> tuple[tuple, tuple]:
    n = max(len(shape), len(reps))
    return (1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(reps)) + tuple(reps)


def plan_chunks(entry, shapes: dict, attrs: dict, itemsize: int, budget: int, align: int) -> list[TileRows]:
    shape, reps = _ranked(tuple(shapes["x"]), tuple(attrs[_reps_name(attrs)]))
    out = tuple(s * r for s, r in zip(shape, reps))
    # The fewest leading axes whose row (its output, its input rows and a gather index) fits.
    for axes in range(len(out) + 1):
        row = itemsize * (math.prod(out[axes:]) + math.prod(shape[axes:])) + 8
        if row <= budget:
            break
    rows = math.prod(out[:axes])
    if math.prod(out) == 0:
        return []
    per = max(1, budget // row)
    return [TileRows(axes, start, min(per, rows - start)) for start in range(0, rows, per)]


def compute_chunk(entry, inputs: dict, attrs: dict, chunk: TileRows) -> dict:
    name = _reps_name(attrs)
    shape, reps = _ranked(inputs["x"].shape, tuple(attrs[name]))
    out = tuple(s * r for s, r in zip(shape, reps))
    k = chunk.axes
    x = inputs["x"].reshape((math.prod(shape[:k]),) + shape[k:])
    rows = np.arange(chunk.start, chunk.start + chunk.count)
    if k:
        source = np.ravel_multi_index(tuple(o % s for o, s in zip(np.unravel_index(rows, out[:k]), shape[:k])),
                                      shape[:k])
    else:
        source = np.zeros_like(rows)
    sub = np.ascontiguousarray(x[source])
    y = entry.run({"x": sub}, {name: [1, *reps[k:]]})["y"]
    return {"y": (chunk.start * math.prod(out[k:]), y.reshape(-1))}


CHUNKING = Chunking(plan_chunks, compute_chunk)
