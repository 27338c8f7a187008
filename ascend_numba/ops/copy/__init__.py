"""Staged copy: an array GM -> UB -> GM through every lane, the memory-bandwidth reference."""

from ...dtypes import DEVICE_DTYPES
from ..registry import Case, OpEntry, same_shape_as
from .api import staged_copy
from .reference import staged_copy_reference

ENTRIES = (
    OpEntry("staged_copy", staged_copy, staged_copy_reference, tuple(DEVICE_DTYPES), same_shape_as("x"),
            test_cases=(Case("empty", {"x": (0,)}), Case("one", {"x": (1,)}), Case("tail", {"x": (1000, 3)}),
                        Case("several_buffers", {"x": (70001,)}, dtype="float64"),
                        Case("traced", {"x": (1000, 3)}, dtype="int16", modes=("traced",))),
            bench_cases={"copy 256MB": (Case("256MB", {"x": (256 << 20,)}, dtype="uint8"),)},
            warmup_cases=(Case("bytes", {"x": (100,)}, dtype="uint8"),), golden=False,
            moves_bytes=True),
)
