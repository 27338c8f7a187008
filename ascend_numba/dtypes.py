"""The device's element types by name: what GM tensors can hold (aclnn's 15 dtypes).

ml_dtypes (bfloat16, the float8 types) is imported only when one of its types is asked for by
name: its import costs more than the rest of ``import ascend_numba`` (0.5-0.9 s for 0.7.0), and a
user who has a bfloat16 array has imported it already.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["DEVICE_DTYPES", "HALF_AND_FLOAT", "ML_DTYPES_NAMES", "FLOAT8_NAMES", "dtype_by_name", "device_dtype_name",
           "bfloat16"]

_NUMPY_NAMES = ("float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "bool", "complex64", "complex128")
FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
ML_DTYPES_NAMES = ("bfloat16", *FLOAT8_NAMES)  # the types ml_dtypes defines that the device has

HALF_AND_FLOAT = ("float32", "float16", "bfloat16")  # the vector unit's floating types


def dtype_by_name(name: str) -> np.dtype:
    """A dtype from its name, ml_dtypes' (bfloat16, float8_*) included."""
    if name in ML_DTYPES_NAMES:
        import ml_dtypes

        if hasattr(ml_dtypes, name):
            return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def device_dtype_name(dtype: np.dtype) -> str:
    """The name a device type goes by: NumPy's, or ml_dtypes' for its types (told apart from a
    structured dtype of the same name by the scalar type's module), without importing ml_dtypes."""
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        return dtype.str
    if dtype.kind == "V":
        return dtype.name if dtype.type.__module__.split(".")[0] == "ml_dtypes" else str(dtype)
    return dtype.name


class _DeviceDtypes(Mapping):
    """name -> dtype of the device's 15 element types; bfloat16's entry imports ml_dtypes."""

    _NAMES = ("float32", "float16", "bfloat16", *_NUMPY_NAMES[2:])

    def __getitem__(self, name: str) -> np.dtype:
        if name not in self._NAMES:
            raise KeyError(name)
        return dtype_by_name(name)

    def __iter__(self):
        return iter(self._NAMES)

    def __len__(self) -> int:
        return len(self._NAMES)

    def __contains__(self, name) -> bool:
        return name in self._NAMES


DEVICE_DTYPES: Mapping[str, np.dtype] = _DeviceDtypes()


def __getattr__(name: str):
    if name == "bfloat16":  # ascend_numba.bfloat16: ml_dtypes' scalar type
        import ml_dtypes

        return ml_dtypes.bfloat16
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
