"""TilingData framework: layout identical to ctypes, every declaration rule enforced."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import numpy as np
import pytest

from ascend_numba.host import InvalidArgument, InvalidType, InvalidVal
from ascend_numba.host.tiling import (
    ctype_struct, float32, from_bytes, int32, int64, is_tiling_class, numpy_dtype, to_array, to_bytes, uint32,
    uint64,
)


@dataclass
class Int32Arrays:  # the shape of TileTilingData
    numDims: int32
    inputShape: int32[8]
    multiples: int32[8]
    elemBytes: int32


class Int32ArraysC(ctypes.Structure):
    _fields_ = [("numDims", ctypes.c_int32), ("inputShape", ctypes.c_int32 * 8),
                ("multiples", ctypes.c_int32 * 8), ("elemBytes", ctypes.c_int32)]


@dataclass
class Mixed:  # padding after bool and fp32 before int64
    flag: bool
    count: int
    scale: float
    small: uint32
    big: uint64
    weights: float[3]
    flags: bool[5]
    last: float32


class MixedC(ctypes.Structure):
    _fields_ = [("flag", ctypes.c_bool), ("count", ctypes.c_int64), ("scale", ctypes.c_float),
                ("small", ctypes.c_uint32), ("big", ctypes.c_uint64), ("weights", ctypes.c_float * 3),
                ("flags", ctypes.c_bool * 5), ("last", ctypes.c_float)]


@dataclass
class WithDefaults:
    length: int
    scale: float = 1.0
    offsets: int[4] = field(default_factory=lambda: [0, 0, 0, 0])
    tail: int64 = -7


class WithDefaultsC(ctypes.Structure):
    _fields_ = [("length", ctypes.c_int64), ("scale", ctypes.c_float),
                ("offsets", ctypes.c_int64 * 4), ("tail", ctypes.c_int64)]


def _layout_matches(cls, cstruct):
    ours = ctype_struct(cls)
    assert ctypes.sizeof(ours) == ctypes.sizeof(cstruct)
    dt = numpy_dtype(cls)
    assert dt.itemsize == ctypes.sizeof(cstruct)
    for name, _ in cstruct._fields_:
        assert getattr(ours, name).offset == getattr(cstruct, name).offset
        assert dt.fields[name][1] == getattr(cstruct, name).offset


def test_int32_arrays_bytes_equal_ctypes():
    _layout_matches(Int32Arrays, Int32ArraysC)
    t = Int32Arrays(3, [1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, -1], 4)
    ref = Int32ArraysC(3, (ctypes.c_int32 * 8)(*t.inputShape), (ctypes.c_int32 * 8)(*t.multiples), 4)
    assert to_bytes(t) == bytes(ref)
    assert from_bytes(Int32Arrays, bytes(ref)) == t


def test_mixed_fields_with_padding_equal_ctypes():
    _layout_matches(Mixed, MixedC)
    t = Mixed(True, -5, 0.25, 2**32 - 1, 2**64 - 1, [1.5, -2.0, 3.25], [True, False, True, True, False], 9.5)
    ref = MixedC(True, -5, 0.25, 2**32 - 1, 2**64 - 1, (ctypes.c_float * 3)(1.5, -2.0, 3.25),
                 (ctypes.c_bool * 5)(True, False, True, True, False), 9.5)
    assert ctypes.sizeof(MixedC) == 56  # the padding is really there
    assert to_bytes(t) == bytes(ref)
    assert from_bytes(Mixed, to_bytes(t)) == t


def test_defaults_equal_ctypes():
    _layout_matches(WithDefaults, WithDefaultsC)
    t = WithDefaults(length=10)
    assert to_bytes(t) == bytes(WithDefaultsC(10, 1.0, (ctypes.c_int64 * 4)(0, 0, 0, 0), -7))
    t2 = WithDefaults(3, 0.5, [1, 2, 3, 4])
    assert to_bytes(t2) == bytes(WithDefaultsC(3, 0.5, (ctypes.c_int64 * 4)(1, 2, 3, 4), -7))


def test_to_array_is_readonly_uint8_and_viewable():
    t = Int32Arrays(2, list(range(8)), list(range(8)), 2)
    arr = to_array(t)
    assert arr.dtype == np.uint8 and not arr.flags.writeable
    rec = arr.view(numpy_dtype(Int32Arrays))[0]
    assert rec["numDims"] == 2 and list(rec["inputShape"]) == list(range(8))


def test_array_length_mismatch_rejected():
    with pytest.raises(InvalidType, match="expected a list of 8"):
        to_bytes(Int32Arrays(1, [1, 2, 3], [1] * 8, 4))
    with pytest.raises(InvalidType):
        to_bytes(Int32Arrays(1, 5, [1] * 8, 4))


def test_value_out_of_range_rejected():
    with pytest.raises(InvalidVal, match="does not fit"):
        to_bytes(Int32Arrays(2**31, [1] * 8, [1] * 8, 4))
    with pytest.raises(InvalidVal):
        to_bytes(Mixed(True, 0, 0.0, -1, 0, [0.0] * 3, [False] * 5, 0.0))


def test_wrong_scalar_types_rejected():
    with pytest.raises(InvalidType):
        to_bytes(Int32Arrays(True, [1] * 8, [1] * 8, 4))  # bool is not an int here
    with pytest.raises(InvalidType):
        to_bytes(Int32Arrays(1.5, [1] * 8, [1] * 8, 4))
    with pytest.raises(InvalidType):
        to_bytes(Mixed(1, 0, 0.0, 0, 0, [0.0] * 3, [False] * 5, 0.0))  # int is not a bool


def test_no_fields_rejected():
    @dataclass
    class Empty:
        pass
    with pytest.raises(InvalidType, match="at least one field"):
        to_bytes(Empty())
    assert not is_tiling_class(Empty)


def test_not_a_dataclass_rejected():
    class Plain:
        x: int = 1
    with pytest.raises(InvalidType, match="not a dataclass"):
        to_bytes(Plain())


def test_unsupported_field_type_rejected():
    @dataclass
    class BadType:
        name: str
    with pytest.raises(InvalidType, match="unsupported type 'str'"):
        numpy_dtype(BadType)

    @dataclass
    class BadArray:
        names: str[4]
    with pytest.raises(InvalidType):
        numpy_dtype(BadArray)


@pytest.mark.parametrize("length", [0, 2049, -1])
def test_array_length_out_of_range_rejected(length):
    ns = {}
    exec(f"from __future__ import annotations\nfrom dataclasses import dataclass\n"
         f"@dataclass\nclass T:\n    a: int[{length}]\n", ns)
    with pytest.raises((InvalidVal, InvalidType)):
        numpy_dtype(ns["T"])


def test_array_length_bounds_accepted():
    @dataclass
    class Edges:
        one: int32[1]
        most: int32[2048]
    assert numpy_dtype(Edges).itemsize == 4 * 2049


def test_array_length_must_be_literal():
    @dataclass
    class NotLiteral:
        a: int[N]  # noqa: F821 - deliberately not a literal
    with pytest.raises(InvalidType, match="integer literal"):
        numpy_dtype(NotLiteral)


def test_duplicate_field_detected_from_source():
    @dataclass
    class Dup:
        a: int
        b: float
        a: int  # noqa: F811 - the duplicate Python's __annotations__ hides
    with pytest.raises(InvalidArgument, match="duplicate field 'a'"):
        numpy_dtype(Dup)


def test_defaulted_field_before_plain_field_is_a_class_error():
    with pytest.raises(TypeError, match="non-default argument"):
        @dataclass
        class Order:
            a: int = 1
            b: int
