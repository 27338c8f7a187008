"""Two ported samples as the user's own ops: ``golden``, ``msopst gen``, the pytest fixture and the
benchmarks see them once this module is registered (``ascend-numba --ops ascendc_ops ...`` with
this directory on ``PYTHONPATH``, or ``ASCEND_NUMBA_OPS=ascendc_ops``).

* ``ascendc_add``: ``add_custom_tiling.run`` (fp16, any size the sample's tiling splits: 2048s).
* ``ascendc_leaky_relu``: ``leaky_relu_custom.run`` (fp32, 2048s; attribute ``negative_slope``).

Each with its sample's gen_data.py expression as the reference.
"""

from __future__ import annotations

import numpy as np

import add_custom_tiling
import leaky_relu_custom
from ascend_numba.ops.registry import Case, OpEntry, number, same_shape_as

SPLIT = 2048  # both samples: 8 cores x their tiles x 2 buffers of whole 32-byte blocks


def _splits(name):
    def check(shapes, attrs):
        size = int(np.prod(shapes[name], dtype=np.int64))
        return None if size and size % SPLIT == 0 else (name, f"the sample's tiling splits {SPLIT}s: {size} elements")
    return check


def _tile_num(size: int, tiles_in_ub: int, itemsize: int) -> int:
    """The samples' 8 tiles per core, doubled until ``tiles_in_ub`` tiles fit the A2's UB (the host
    tiling a 16M golden needs: at the samples' own sizes it is theirs)."""
    tile_num = 8
    while tiles_in_ub * (size // 8 // tile_num // 2) * itemsize > 196608:
        tile_num *= 2
    return tile_num


def add(x, y):
    return add_custom_tiling.run(x, y, tile_num=_tile_num(x.size, 6, 2))


def add_reference(x, y):
    return (x + y).astype(np.float16)


def leaky_relu(x, *, negative_slope=0.0):
    return leaky_relu_custom.run(x, negative_slope, tile_num=max(16, _tile_num(x.size, 6, 4)))


def leaky_relu_reference(x, *, negative_slope=0.0):
    return np.where(x > 0, x, x * np.float32(negative_slope)).astype(np.float32)


def _call_add(function, inputs, attrs, options):
    return {"z": function(inputs["x"], inputs["y"])}


def _uniform(low, high):
    def draw(shapes, dtype, rng):
        return {n: rng.uniform(low, high, s).astype(dtype) for n, s in shapes.items()}
    return draw


ENTRIES = (
    OpEntry("ascendc_add", add, add_reference, ("float16",), same_shape_as("x", "z"), inputs=("x", "y"),
            outputs=("z",), check_shapes=_splits("x"), call=_call_add, test_inputs=_uniform(1, 100),
            bench_cases={"add 16M": (Case("16M", {"x": (1 << 24,), "y": (1 << 24,)}),)}),
    OpEntry("ascendc_leaky_relu", leaky_relu, leaky_relu_reference, ("float32",), same_shape_as("x", "y"),
            attrs={"negative_slope": (number, 0.0)}, check_shapes=_splits("x"), test_inputs=_uniform(-100, 100),
            bench_cases={"leaky_relu 16M": (Case("16M", {"x": (1 << 24,)}, {"negative_slope": 0.01}),)}),
)
