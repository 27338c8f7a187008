"""TilingKey: compile-time kernel specializations, packed into a 64-bit key (SPEC §2, seed 001).

A key class declares its fields as ``TilingKeyField(bits=..., values=[...])``
class attributes, in order, and may define ``is_valid(self, key_tuple)``::

    class AddKey:
        UseScale = TilingKeyField(bits=1, values=[0, 1])
        BlockM = TilingKeyField(bits=2, values=[64, 128])

        def is_valid(self, key):
            use_scale, block_m = key
            return use_scale == 0 or block_m == 128

The packed key stores each value's *index* in its field's ``values``.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Any, Iterator

from .errors import InvalidArgument, InvalidType, InvalidVal

__all__ = ["TilingKeyField", "TilingKeySchema", "tiling_key_schema", "MAX_TOTAL_BITS"]

MAX_TOTAL_BITS = 64


@dataclass
class TilingKeyField:
    """One key field: its bit width and candidate values; ``offset`` is assigned by the schema."""

    bits: int
    values: list
    offset: int = field(default=-1, compare=False)


class TilingKeySchema:
    """The validated schema of a key class: field order, bit offsets, packing and validation."""

    def __init__(self, key_cls: type):
        self.key_cls = key_cls
        self.fields: dict[str, TilingKeyField] = {
            name: value for name, value in vars(key_cls).items() if isinstance(value, TilingKeyField)
        }
        self._validate_and_assign_offsets()
        self._instance = key_cls()
        self._has_is_valid = callable(getattr(key_cls, "is_valid", None))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.fields)

    def _validate_and_assign_offsets(self) -> None:
        name = self.key_cls.__name__
        if not self.fields:
            raise InvalidType(f"{name}: a TilingKey needs at least one TilingKeyField")
        offset = 0
        for fname, f in self.fields.items():
            where = f"{name}.{fname}"
            if not isinstance(f.bits, int) or isinstance(f.bits, bool) or f.bits <= 0:
                raise InvalidVal(f"{where}: bits must be a positive int, got {f.bits!r}")
            if not isinstance(f.values, (list, tuple)) or not f.values:
                raise InvalidVal(f"{where}: values must be a non-empty list")
            for v in f.values:
                if isinstance(v, bool) or not isinstance(v, int):
                    raise InvalidType(f"{where}: values must be ints (bool rejected), got {v!r}")
            if len(set(f.values)) != len(f.values):
                raise InvalidVal(f"{where}: values must be unique, got {list(f.values)}")
            if len(f.values) > (1 << f.bits):
                raise InvalidVal(f"{where}: {len(f.values)} values do not fit in {f.bits} bits")
            f.offset = offset
            offset += f.bits
        if offset > MAX_TOTAL_BITS:
            raise InvalidVal(f"{name}: {offset} key bits exceed {MAX_TOTAL_BITS}")

    def _key_tuple(self, key: dict) -> tuple:
        return tuple(key[n] for n in self.fields)

    def is_valid(self, key_tuple: tuple) -> bool:
        """The key class's own ``is_valid`` (every combination is valid without one)."""
        return bool(self._instance.is_valid(key_tuple)) if self._has_is_valid else True

    def validate_concrete(self, key: Any) -> dict:
        """Check a launch-time key dict; returns it, or raises InvalidType/InvalidArgument/InvalidVal."""
        name = self.key_cls.__name__
        if not isinstance(key, dict):
            raise InvalidType(f"{name}: a tiling key must be a dict, got {type(key).__name__}")
        missing = [n for n in self.fields if n not in key]
        extra = [n for n in key if n not in self.fields]
        if missing or extra:
            raise InvalidArgument(f"{name}: key fields do not match the schema (missing {missing}, extra {extra})")
        for fname, f in self.fields.items():
            v = key[fname]
            if isinstance(v, bool) or v not in f.values:
                raise InvalidVal(f"{name}.{fname}: {v!r} is not one of {list(f.values)}")
        if not self.is_valid(self._key_tuple(key)):
            raise InvalidVal(f"{name}: combination {key} rejected by is_valid")
        return key

    def pack(self, key: dict) -> int:
        """Pack a valid key dict: ``packed |= index(value) << offset`` per field."""
        self.validate_concrete(key)
        packed = 0
        for fname, f in self.fields.items():
            packed |= f.values.index(key[fname]) << f.offset
        return packed

    def unpack(self, packed: int) -> dict:
        """The key dict a packed integer encodes (raises InvalidVal for an index out of range)."""
        if isinstance(packed, bool) or not isinstance(packed, int) or packed < 0:
            raise InvalidType(f"{self.key_cls.__name__}: a packed key must be a non-negative int")
        key = {}
        for fname, f in self.fields.items():
            index = (packed >> f.offset) & ((1 << f.bits) - 1)
            if index >= len(f.values):
                raise InvalidVal(f"{self.key_cls.__name__}.{fname}: index {index} out of range")
            key[fname] = f.values[index]
        return key

    def enumerate_valid(self) -> Iterator[dict]:
        """Every field combination that passes ``is_valid``, in field-major order."""
        for combo in itertools.product(*(f.values for f in self.fields.values())):
            if self.is_valid(combo):
                yield dict(zip(self.fields, combo))


@functools.cache
def tiling_key_schema(key_cls: type) -> TilingKeySchema:
    """The (cached) validated schema of a key class."""
    return TilingKeySchema(key_cls)
