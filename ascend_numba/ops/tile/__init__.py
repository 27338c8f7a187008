"""Tile (numpy.tile) and Repeat (aclnnRepeat, torch.Tensor.repeat): the five paths of the Ascend C
Tile operator."""

from ...dtypes import DEVICE_DTYPES
from ..registry import REQUIRED, Case, OpEntry, int_list
from .api import repeat, tile
from .chunks import CHUNKING
from .plan import PATHS
from .reference import repeat_reference, tile_reference

# The seed's benchmark scenarios (seed 000 §4), in seed order; the seed measured each for six dtypes.
SEED_CASES = (
    Case("large_2D", {"x": (1024, 1024)}, {"reps": (2, 2)}, small={"x": (64, 64)}),
    Case("large_3D", {"x": (256, 256, 4)}, {"reps": (2, 2, 2)}, small={"x": (16, 16, 4)}),
    Case("broadcast", {"x": (1, 1024)}, {"reps": (1024, 1)}, small={"x": (1, 64)}),
    Case("1D_repeat", {"x": (128,)}, {"reps": (8192,)}, small={"x": (8,)}),
)
SEED_DTYPES = ("float32", "float16", "int32", "int16", "int8", "uint8")
# A small shape that picks each path in float32 (other widths pick others: every path runs).
PATH_CASES = (
    Case("split_mult", {"x": (8, 5)}, {"reps": (1, 700)}),
    Case("doubling", {"x": (64, 8)}, {"reps": (1, 4)}),
    Case("build", {"x": (96, 8)}, {"reps": (3, 3)}),
    Case("gather", {"x": (200, 3)}, {"reps": (2, 5)}),
    Case("per_row", {"x": (3, 100)}, {"reps": (2, 3)}),
)


def _tile_out(shapes, attrs, itemsize):
    shape, reps = tuple(shapes["x"]), tuple(attrs["reps"])
    n = max(len(shape), len(reps))
    shape, reps = (1,) * (n - len(shape)) + shape, (1,) * (n - len(reps)) + reps
    return {"y": tuple(s * r for s, r in zip(shape, reps))}


def _repeat_shapes(shapes, attrs):
    if len(attrs["repeats"]) < len(shapes["x"]):
        return "attrs.repeats", "needs at least one entry per dim of x"
    return None


ENTRIES = (
    OpEntry("tile", tile, tile_reference, tuple(DEVICE_DTYPES), _tile_out, attrs={"reps": (int_list, REQUIRED)},
            chunking=CHUNKING, moves_bytes=True,
            test_cases=SEED_CASES + PATH_CASES + (Case("empty", {"x": (0, 3)}, {"reps": (2, 2)}),
                                                  Case("traced", {"x": (64, 8)}, {"reps": (1, 4)}, "float32",
                                                       ("traced",))),
            bench_cases={
                "seed": SEED_CASES,
                "large": (Case("big_2D", {"x": (4096, 4096)}, {"reps": (2, 2)}, "float32"),
                          Case("small_inner", {"x": (4096, 3)}, {"reps": (1, 5000)}, "int8")),
                # Paths pay off where per-copy costs dominate (many short rows); on long rows
                # every path runs at memory bandwidth.
                "paths": (Case("split_mult", {"x": (256,)}, {"reps": (65536,)}, "float32"),
                          Case("doubling", {"x": (65536, 8)}, {"reps": (1, 4)}, "float32"),
                          Case("build", {"x": (131072, 8)}, {"reps": (1, 3)}, "float32"),
                          Case("gather", {"x": (256, 1024, 3)}, {"reps": (1, 2, 4)}, "float32")),
            },
            # One per path (the path is the Tile kernel's TilingKey): every dtype shares them.
            warmup_cases=(Case("split_mult", {"x": (4, 8)}, {"reps": (1, 2), "path": "split_mult"}, "uint8"),
                          Case("doubling", {"x": (64, 8)}, {"reps": (1, 4), "path": "doubling"}, "float32"),
                          Case("build", {"x": (64, 48)}, {"reps": (2, 3), "path": "build"}, "float16"),
                          Case("gather", {"x": (64, 3)}, {"reps": (1, 4), "path": "gather"}, "float32"),
                          Case("per_row", {"x": (64, 3)}, {"reps": (1, 4), "path": "per_row"}, "float32"))),
    OpEntry("repeat", repeat, repeat_reference, tuple(DEVICE_DTYPES),
            lambda shapes, attrs, itemsize: _tile_out(shapes, {"reps": attrs["repeats"]}, itemsize),
            attrs={"repeats": (int_list, REQUIRED)}, check_shapes=_repeat_shapes, chunking=CHUNKING,
            moves_bytes=True,
            test_cases=(Case("leading_dims", {"x": (3, 5)}, {"repeats": (2, 1, 4)}),
                        Case("1d", {"x": (7,)}, {"repeats": (3,)})),
            # The Tile kernel's: nothing new to compile after tile's.
            warmup_cases=(Case("leading_dims", {"x": (4, 8)}, {"repeats": (1, 1, 2)}, "uint8"),)),
)

__all__ = ["ENTRIES", "SEED_CASES", "SEED_DTYPES", "PATH_CASES", "PATHS", "tile", "repeat"]
