"""The device's element types by name: what GM tensors can hold (aclnn's 15 dtypes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = ["DEVICE_DTYPES", "HALF_AND_FLOAT", "dtype_by_name"]

DEVICE_DTYPES: dict[str, np.dtype] = {name: np.dtype(t) for name, t in {
    "float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float64": np.float64,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
    "complex64": np.complex64, "complex128": np.complex128,
}.items()}

HALF_AND_FLOAT = ("float32", "float16", "bfloat16")  # the vector unit's floating types


def dtype_by_name(name: str) -> np.dtype:
    """A dtype from its name, ml_dtypes' (bfloat16, float8_*) included."""
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)
