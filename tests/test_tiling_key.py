"""TilingKey schema: declaration checks, packing, launch-time validation, enumeration."""

import pytest

from ascend_numba.host import InvalidArgument, InvalidType, InvalidVal, TilingKeyField, tiling_key_schema
from ascend_numba.host.tiling_key import TilingKeySchema


class AddKey:
    UseScale = TilingKeyField(bits=1, values=[0, 1])
    BlockM = TilingKeyField(bits=2, values=[64, 128])

    def is_valid(self, key):
        use_scale, block_m = key
        return use_scale == 0 or block_m == 128


class BlockKey:
    BlockM = TilingKeyField(bits=2, values=[32, 64, 128])
    Mode = TilingKeyField(bits=3, values=[5, 1, 7, 0])


def test_offsets_follow_definition_order():
    s = tiling_key_schema(BlockKey)
    assert s.names == ("BlockM", "Mode")
    assert s.fields["BlockM"].offset == 0 and s.fields["Mode"].offset == 2


def test_pack_stores_value_indices():
    s = tiling_key_schema(BlockKey)
    assert s.pack({"BlockM": 32, "Mode": 5}) == 0
    assert s.pack({"BlockM": 128, "Mode": 5}) == 2
    assert s.pack({"BlockM": 64, "Mode": 0}) == 1 | (3 << 2)


def test_pack_unpack_round_trip_over_all_combinations():
    s = tiling_key_schema(BlockKey)
    keys = list(s.enumerate_valid())
    assert len(keys) == 12
    assert len({s.pack(k) for k in keys}) == 12
    for k in keys:
        assert s.unpack(s.pack(k)) == k


def test_enumerate_valid_honours_is_valid():
    keys = list(tiling_key_schema(AddKey).enumerate_valid())
    assert keys == [{"UseScale": 0, "BlockM": 64}, {"UseScale": 0, "BlockM": 128}, {"UseScale": 1, "BlockM": 128}]


@pytest.mark.parametrize("key, exc", [
    ([0], InvalidType),
    ({}, InvalidArgument),
    ({"UseScale": 0}, InvalidArgument),
    ({"UseScale": 0, "BlockM": 64, "ExtraField": 1}, InvalidArgument),
    ({"UseScale": 99, "BlockM": 64}, InvalidVal),
    ({"UseScale": True, "BlockM": 64}, InvalidVal),
    ({"UseScale": 1, "BlockM": 64}, InvalidVal),  # rejected by is_valid
])
def test_validate_concrete_rejects(key, exc):
    with pytest.raises(exc):
        tiling_key_schema(AddKey).validate_concrete(key)


def test_unpack_rejects_out_of_range_index():
    with pytest.raises(InvalidVal):
        tiling_key_schema(BlockKey).unpack(3)  # BlockM index 3 of 3 values


def _schema(**fields):
    return TilingKeySchema(type("K", (), fields))


@pytest.mark.parametrize("fields, exc", [
    ({"A": TilingKeyField(bits=0, values=[0])}, InvalidVal),
    ({"A": TilingKeyField(bits=-1, values=[0])}, InvalidVal),
    ({"A": TilingKeyField(bits=1, values=[])}, InvalidVal),
    ({"A": TilingKeyField(bits=1, values=[True, False])}, InvalidType),
    ({"A": TilingKeyField(bits=1, values=[1.5])}, InvalidType),
    ({"A": TilingKeyField(bits=2, values=[1, 1])}, InvalidVal),
    ({"A": TilingKeyField(bits=1, values=[1, 2, 3])}, InvalidVal),
    ({"A": TilingKeyField(bits=40, values=[0]), "B": TilingKeyField(bits=25, values=[0])}, InvalidVal),
    ({}, InvalidType),
])
def test_schema_rules(fields, exc):
    with pytest.raises(exc):
        _schema(**fields)


def test_64_bits_allowed():
    s = _schema(A=TilingKeyField(bits=32, values=[0, 1]), B=TilingKeyField(bits=32, values=[3]))
    assert s.pack({"A": 1, "B": 3}) == 1
