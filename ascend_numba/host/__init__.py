"""Host side, plain Python (no Numba): platform presets, the tiling framework, per-op plans."""

from .errors import InvalidArgument, InvalidType, InvalidVal, TilingError
from .gm import gm_alloc, gm_copy, gm_tiling
from .platform import PRESETS, Platform, UBPlanError, get_platform
from .split import big_small_split, ceil_div, contiguous_range, contiguous_ranges, mix_core_id, mix_subblock_rows
from .tiling import (
    float32, from_bytes, int32, int64, is_tiling_class, numpy_dtype, ctype_struct, tiling_layout, to_array,
    to_bytes, uint32, uint64,
)
from .tiling_key import TilingKeyField, TilingKeySchema, tiling_key_schema

__all__ = [
    "InvalidArgument", "InvalidType", "InvalidVal", "TilingError", "gm_alloc", "gm_copy", "gm_tiling",
    "PRESETS", "Platform", "UBPlanError", "get_platform",
    "big_small_split", "ceil_div", "contiguous_range", "contiguous_ranges", "mix_core_id", "mix_subblock_rows",
    "float32", "from_bytes", "int32", "int64", "is_tiling_class", "numpy_dtype", "ctype_struct",
    "tiling_layout", "to_array", "to_bytes", "uint32", "uint64",
    "TilingKeyField", "TilingKeySchema", "tiling_key_schema",
]
