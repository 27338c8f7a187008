"""TilingData: dataclass declarations serialized to the device struct's bytes (SPEC §2, seed 001).

A tiling class is a ``@dataclass`` whose fields are annotated with a scalar
type -- ``int`` (int64), ``float`` (fp32), ``bool``, or an explicit width
``int32``, ``uint32``, ``int64``, ``uint64``, ``float32`` -- or a fixed array
``T[N]`` with a literal ``1 <= N <= 2048`` (write ``from __future__ import
annotations`` so that ``int[8]`` is not evaluated).  Field order fixes the
struct layout with native C alignment, exactly as a ``ctypes.Structure`` of
the same fields lays it out; compiled kernels read the bytes through the
equivalent NumPy structured dtype.

Example::

    from __future__ import annotations
    from dataclasses import dataclass
    from ascend_numba.host.tiling import int32, to_bytes

    @dataclass
    class AddTiling:
        rows: int
        scale: float
        strides: int32[2]

    to_bytes(AddTiling(rows=3, scale=1.0, strides=[4, 1]))
"""

from __future__ import annotations

import ast
import ctypes
import dataclasses
import functools
import gc
import inspect
import os
import struct
from typing import Any, NamedTuple

import numpy as np

from .errors import InvalidArgument, InvalidType, InvalidVal

__all__ = [
    "int32", "uint32", "int64", "uint64", "float32",
    "MAX_ARRAY_SIZE", "FieldSpec", "TilingLayout",
    "tiling_layout", "is_tiling_class", "ctype_struct", "numpy_dtype",
    "to_bytes", "to_array", "tiling_bytes", "from_bytes",
]

MAX_ARRAY_SIZE = 2048


class _ArrayAnnotation(NamedTuple):
    base: str
    length: Any


class _ScalarMarker(type):
    """Metaclass so that ``int32[8]`` also works when annotations are evaluated."""

    def __getitem__(cls, length):
        return _ArrayAnnotation(cls.__name__, length)


class int32(metaclass=_ScalarMarker):
    """Annotation marker: a 32-bit signed field (``int32_t``)."""


class uint32(metaclass=_ScalarMarker):
    """Annotation marker: a 32-bit unsigned field (``uint32_t``)."""


class int64(metaclass=_ScalarMarker):
    """Annotation marker: a 64-bit signed field (``int64_t``)."""


class uint64(metaclass=_ScalarMarker):
    """Annotation marker: a 64-bit unsigned field (``uint64_t``)."""


class float32(metaclass=_ScalarMarker):
    """Annotation marker: a 32-bit float field."""


class _Scalar(NamedTuple):
    ctype: Any
    dtype: np.dtype
    kind: str  # "int", "float" or "bool"


_SCALARS: dict[str, _Scalar] = {
    "int": _Scalar(ctypes.c_int64, np.dtype(np.int64), "int"),
    "float": _Scalar(ctypes.c_float, np.dtype(np.float32), "float"),
    "bool": _Scalar(ctypes.c_bool, np.dtype(np.bool_), "bool"),
    "int32": _Scalar(ctypes.c_int32, np.dtype(np.int32), "int"),
    "uint32": _Scalar(ctypes.c_uint32, np.dtype(np.uint32), "int"),
    "int64": _Scalar(ctypes.c_int64, np.dtype(np.int64), "int"),
    "uint64": _Scalar(ctypes.c_uint64, np.dtype(np.uint64), "int"),
    "float32": _Scalar(ctypes.c_float, np.dtype(np.float32), "float"),
}
_PY_SCALARS = {int: "int", float: "float", bool: "bool"}


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """One parsed field: its name, scalar base type and array length (None for a scalar)."""

    name: str
    base: str
    length: int | None

    @property
    def scalar(self) -> _Scalar:
        return _SCALARS[self.base]


@dataclasses.dataclass(frozen=True)
class TilingLayout:
    """Everything derived from one tiling class: fields, ctypes struct, NumPy dtype."""

    cls: type
    fields: tuple[FieldSpec, ...]
    ctype: type
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize


def _annotation_name(node: ast.expr, where: str) -> str:
    if isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Attribute):  # e.g. ``tiling.int32``
        name = node.attr
    else:
        raise InvalidType(f"{where}: unsupported annotation {ast.unparse(node)!r}")
    if name not in _SCALARS:
        raise InvalidType(f"{where}: unsupported type {name!r}; allowed: {', '.join(_SCALARS)}")
    return name


def _check_length(length: Any, where: str) -> int:
    if not isinstance(length, int) or isinstance(length, bool):
        raise InvalidType(f"{where}: array length must be an integer literal, got {length!r}")
    if not 1 <= length <= MAX_ARRAY_SIZE:
        raise InvalidVal(f"{where}: array length {length} outside 1..{MAX_ARRAY_SIZE}")
    return length


def _parse_annotation(name: str, annotation: Any, cls: type) -> FieldSpec:
    where = f"{cls.__name__}.{name}"
    if isinstance(annotation, str):
        try:
            node = ast.parse(annotation, mode="eval").body
        except SyntaxError:
            raise InvalidType(f"{where}: cannot parse annotation {annotation!r}") from None
        if isinstance(node, ast.Subscript):
            base = _annotation_name(node.value, where)
            if not isinstance(node.slice, ast.Constant):
                raise InvalidType(f"{where}: array length must be an integer literal, got {ast.unparse(node.slice)!r}")
            return FieldSpec(name, base, _check_length(node.slice.value, where))
        return FieldSpec(name, _annotation_name(node, where), None)
    if isinstance(annotation, _ArrayAnnotation):
        return FieldSpec(name, annotation.base, _check_length(annotation.length, where))
    if annotation in _PY_SCALARS:
        return FieldSpec(name, _PY_SCALARS[annotation], None)
    if isinstance(annotation, _ScalarMarker):
        return FieldSpec(name, annotation.__name__, None)
    raise InvalidType(f"{where}: unsupported annotation {annotation!r} "
                      "(arrays need 'from __future__ import annotations')")


@functools.lru_cache(maxsize=64)
def _class_defs(filename: str, mtime: float) -> dict[str, list[ast.ClassDef]]:
    """Every class statement of a source file by qualified name (``f.<locals>.C`` inside a function):
    one parse per file, where ``inspect.getsource`` of a class parses the whole file each time."""
    found: dict[str, list[ast.ClassDef]] = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                qualname = prefix + child.name
                found.setdefault(qualname, []).append(child)
                visit(child, qualname + ".")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, prefix + child.name + ".<locals>.")
            else:
                visit(child, prefix)

    with open(filename, "rb") as f:
        source = f.read()
    # The parse allocates one object per node: with Numba loaded, the collections it triggers
    # cost 10x the parse itself.
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = ast.parse(source, filename)
    finally:
        if collecting:
            gc.enable()
    visit(tree, "")
    return found


def _check_duplicate_annotations(cls: type) -> None:
    """Python's ``__annotations__`` keeps only the last of two same-named fields; the source shows both."""
    try:
        filename = inspect.getsourcefile(cls)
        candidates = _class_defs(filename, os.stat(filename).st_mtime) if filename else {}
    except (OSError, TypeError, SyntaxError):
        return  # no source (REPL, exec): nothing more to check
    fields = {f.name for f in dataclasses.fields(cls)}
    for class_def in candidates.get(cls.__qualname__, ()):
        names = [stmt.target.id for stmt in class_def.body
                 if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)]
        # Same-named classes in one scope (branches of an if): only the one declaring these fields counts.
        if set(names) == fields and len(names) != len(fields):
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    raise InvalidArgument(f"{cls.__name__}: duplicate field {name!r}")
                seen.add(name)


@functools.cache
def tiling_layout(cls: type) -> TilingLayout:
    """Validate a tiling class and derive its layout; raises InvalidType/InvalidVal/InvalidArgument."""
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
        raise InvalidType(f"{cls!r} is not a dataclass; a TilingData must be declared with @dataclass")
    fields = dataclasses.fields(cls)
    if not fields:
        raise InvalidType(f"{cls.__name__}: a TilingData needs at least one field")
    _check_duplicate_annotations(cls)
    specs = tuple(_parse_annotation(f.name, f.type, cls) for f in fields)
    c_fields = []
    for spec in specs:
        ctype = spec.scalar.ctype if spec.length is None else spec.scalar.ctype * spec.length
        c_fields.append((spec.name, ctype))
    struct = type(f"{cls.__name__}_C", (ctypes.Structure,), {"_fields_": c_fields})
    dtype = np.dtype({
        "names": [s.name for s in specs],
        "formats": [s.scalar.dtype if s.length is None else (s.scalar.dtype, (s.length,)) for s in specs],
        "offsets": [getattr(struct, s.name).offset for s in specs],
        "itemsize": ctypes.sizeof(struct),
    })
    return TilingLayout(cls, specs, struct, dtype)


def is_tiling_class(cls: Any) -> bool:
    """True when ``cls`` is a valid TilingData declaration."""
    try:
        tiling_layout(cls)
    except (InvalidType, InvalidVal, InvalidArgument, TypeError):
        return False
    return True


def ctype_struct(cls: type) -> type:
    """The ``ctypes.Structure`` subclass with the same fields, order and alignment."""
    return tiling_layout(cls).ctype


def numpy_dtype(cls: type) -> np.dtype:
    """The NumPy structured dtype with the struct's offsets and size; kernels view tiling bytes with it."""
    return tiling_layout(cls).dtype


@functools.lru_cache(maxsize=None)
def _int_bounds(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)  # ~1 us to build: once per field type, not per field per launch
    return int(info.min), int(info.max)


def _checked_scalar(value: Any, scalar: _Scalar, owner: str, name: str, index: int | None = None):
    if type(value) is int and scalar.kind == "int":  # the common case, checked without the detour
        low, high = _int_bounds(scalar.dtype)
        if low <= value <= high:
            return value
    where = f"{owner}.{name}" if index is None else f"{owner}.{name}[{index}]"
    if scalar.kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise InvalidType(f"{where}: expected bool, got {type(value).__name__}")
        return bool(value)
    if isinstance(value, (bool, np.bool_)):
        raise InvalidType(f"{where}: expected {scalar.kind}, got bool")
    if scalar.kind == "float":
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise InvalidType(f"{where}: expected float, got {type(value).__name__}")
        return float(value)
    if not isinstance(value, (int, np.integer)):
        raise InvalidType(f"{where}: expected int, got {type(value).__name__}")
    low, high = _int_bounds(scalar.dtype)
    if not low <= int(value) <= high:
        raise InvalidVal(f"{where}: {int(value)} does not fit {scalar.dtype} [{low}, {high}]")
    return int(value)


def _field_values(instance: Any) -> tuple:
    layout = tiling_layout(type(instance))
    owner = layout.cls.__name__
    out = []
    for spec in layout.fields:
        value = getattr(instance, spec.name)
        if spec.length is None:
            out.append(_checked_scalar(value, spec.scalar, owner, spec.name))
            continue
        where = f"{owner}.{spec.name}"
        if isinstance(value, np.ndarray):
            value = value.tolist() if value.ndim == 1 else value
        if not isinstance(value, (list, tuple)):
            raise InvalidType(f"{where}: expected a list of {spec.length}, got {type(value).__name__}")
        if len(value) != spec.length:
            raise InvalidType(f"{where}: expected a list of {spec.length}, got {len(value)} values")
        out.append([_checked_scalar(v, spec.scalar, owner, spec.name, i) for i, v in enumerate(value)])
    return tuple(out)


def to_array(instance: Any) -> np.ndarray:
    """The instance's struct bytes as a read-only ``uint8`` array (what a kernel reads from GM)."""
    layout = tiling_layout(type(instance))
    record = np.zeros(1, dtype=layout.dtype)  # zeroed padding, as ctypes leaves it
    record[0] = _field_values(instance)
    buf = record.view(np.uint8)
    buf.flags.writeable = False
    return buf


def tiling_bytes(instance: Any) -> np.ndarray:
    """:func:`to_array` (a fresh copy), remembered for tilings whose fields are all plain ints and
    floats (most of them): a kernel launched again with an equal tiling does not serialize it
    again.  Fresh, because a kernel can write its tiling record, as device code can."""
    layout = tiling_layout(type(instance))
    key = [layout.cls]
    for spec in layout.fields:
        v = getattr(instance, spec.name)
        if type(v) is int:
            key.append(v)
        elif type(v) is float:
            key.append(struct.pack("<d", v))  # its bits: -0.0 == 0.0 and a NaN's sign differ in bytes
        else:
            return to_array(instance)
    key = tuple(key)
    found = _SERIALIZED.get(key)
    if found is None:
        if len(_SERIALIZED) >= 256:
            _SERIALIZED.clear()
        found = _SERIALIZED[key] = to_array(instance)
    copy = found.copy()
    copy.flags.writeable = False
    return copy


_SERIALIZED: dict = {}  # (tiling class, its field values in layout order) -> to_array's bytes


def to_bytes(instance: Any) -> bytes:
    """Serialize a TilingData instance: equal to ``bytes(ctype_struct(cls)(...))``."""
    return to_array(instance).tobytes()


def from_bytes(cls: type, buf: bytes | bytearray | memoryview | np.ndarray) -> Any:
    """Rebuild an instance from struct bytes (the inverse of :func:`to_bytes`)."""
    layout = tiling_layout(cls)
    raw = np.frombuffer(bytes(buf), dtype=np.uint8)
    if raw.size != layout.nbytes:
        raise InvalidVal(f"{cls.__name__}: expected {layout.nbytes} bytes, got {raw.size}")
    record = raw.view(layout.dtype)[0]
    kwargs = {}
    for spec in layout.fields:
        value = record[spec.name]
        kwargs[spec.name] = value.tolist() if spec.length is not None else value.item()
    return cls(**kwargs)
