"""The device's element types by name: what GM tensors can hold (aclnn's 15 dtypes).

ml_dtypes (bfloat16, the float8 types) is imported only when one of its types is asked for by
name: its import costs more than the rest of ``import ascend_numba`` (0.5-0.9 s for 0.7.0), and a
user who has a bfloat16 array has imported it already.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

__all__ = ["DEVICE_DTYPES", "HALF_AND_FLOAT", "ML_DTYPES_NAMES", "FLOAT8_NAMES", "dtype_by_name", "device_dtype_name",
           "float_bit_layout", "TYPE_ALIASES", "bfloat16", "with_default_nan"]

_NUMPY_NAMES = ("float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "bool", "complex64", "complex128")
FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
ML_DTYPES_NAMES = ("bfloat16", *FLOAT8_NAMES)  # the types ml_dtypes defines that the device has

HALF_AND_FLOAT = ("float32", "float16", "bfloat16")  # the vector unit's floating types
# The other names CANN's tools (msOpST case files, expected-data calls) give device types.
TYPE_ALIASES = {"float": "float32", "double": "float64", "fp16": "float16", "fp32": "float32", "bf16": "bfloat16"}


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
    return _device_dtype_name(dtype if isinstance(dtype, np.dtype) else np.dtype(dtype))


# Memoized: every op call asks it of each of its arrays, and NumPy's ``dtype.name`` is Python code
# (an ApplyAdamW call asks 11 times: a 512-element call's overhead fell from a median 82.5 to 50 us).
@functools.lru_cache(maxsize=256)
def _device_dtype_name(dtype: np.dtype) -> str:
    if not dtype.isnative:
        return dtype.str
    if dtype.kind == "V":
        return dtype.name if dtype.type.__module__.split(".")[0] == "ml_dtypes" else str(dtype)
    return dtype.name


# The sign, exponent and mantissa bits of the floating types whose patterns are read or made
# bit by bit (golden health counts, the golden ``bits`` distribution).
_FLOAT_BITS = {"float16": (0x8000, 0x7C00, 0x03FF), "bfloat16": (0x8000, 0x7F80, 0x007F),
               "float32": (0x80000000, 0x7F800000, 0x007FFFFF),
               "float64": (0x8000000000000000, 0x7FF0000000000000, 0x000FFFFFFFFFFFFF)}


def float_bit_layout(dtype: np.dtype) -> tuple[int, int, int, int] | None:
    """``(width, sign, exponent, mantissa)`` of a floating dtype's bit patterns (a complex's: of
    its components) for fp16, bf16, fp32 and fp64; None for any other dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        dtype = np.dtype(f"f{dtype.itemsize // 2}")
    masks = _FLOAT_BITS.get(device_dtype_name(dtype)) if dtype.kind in "fV" else None
    return None if masks is None else (dtype.itemsize, *masks)


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


def with_default_nan(a: np.ndarray) -> np.ndarray:
    """``a`` with every NaN replaced by the default NaN (positive, quiet, no payload: fp32
    0x7FC00000, fp16 0x7E00, bf16 0x7FC0): the NaN policy of the vector unit's arithmetic (see
    docs/kernels/primitives.md), for references computed with NumPy, whose NaNs are the host CPU's."""
    a = np.asarray(a)
    nan = np.isnan(a)
    return np.where(nan, np.array(np.nan, a.dtype), a) if nan.any() else a

