"""What keeps a repeated call cheap (issue #50: the per-call floor) never lets a changed argument
through: the remembered tiling bytes, launch keys, argument dtypes, transpose checks and GM views
each answer for exactly what they saw.  (A failing lane named on the serial path:
test_launch.py.)"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.host import tiling as tiling_module
from ascend_numba.host.tiling import tiling_bytes, to_array
from ascend_numba.kernels import as_gm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import vector_add  # noqa: E402


@dataclass
class _Tiling:
    n: int
    scale: float


def test_remembered_tiling_bytes_follow_every_field_and_the_sign_of_zero(monkeypatch):
    serialized = []
    monkeypatch.setattr(tiling_module, "to_array", lambda t: serialized.append(t) or to_array(t))
    t = _Tiling(4, 0.0)
    first = tiling_bytes(t)
    assert np.array_equal(first, to_array(t)) and not first.flags.writeable
    assert np.array_equal(tiling_bytes(_Tiling(4, 0.0)), first) and len(serialized) == 1  # not serialized again
    assert not np.array_equal(tiling_bytes(_Tiling(4, -0.0)), first)
    t.n = 5  # the same instance, changed
    assert np.array_equal(tiling_bytes(t), to_array(t))
    with pytest.raises(an.InvalidVal):
        tiling_bytes(_Tiling(1 << 70, 1.0))
    assert not np.array_equal(tiling_bytes(_Tiling(1, float("nan"))), tiling_bytes(_Tiling(1, -float("nan"))))


def test_remembered_tiling_bytes_are_fresh_and_keyed_by_field_name():
    first, again = tiling_bytes(_Tiling(2, 3.0)), tiling_bytes(_Tiling(2, 3.0))
    assert first is not again and not np.shares_memory(first, again)  # a kernel may write its record
    swapped = object.__new__(_Tiling)  # attributes set in another order than the fields
    swapped.scale, swapped.n = 3.0, 2
    assert np.array_equal(tiling_bytes(swapped), to_array(_Tiling(2, 3.0)))


def _launch(x, y, z, tiling, **key):
    vector_add.vector_add.launch(x, y, z, tiling, block_dim=2, key=key, platform="A2")


def test_a_key_or_argument_dtype_that_passed_once_does_not_let_another_pass():
    plat = an.get_platform("A2")
    x = np.arange(64, dtype=np.float32)
    z = np.empty_like(x)
    tiling = vector_add.plan_add(x.size, 2, plat, 1.0, None)
    _launch(x, x, z, tiling, UseScale=1)
    assert np.array_equal(z, x + x)
    with pytest.raises(an.InvalidVal, match="True"):
        _launch(x, x, z, tiling, UseScale=True)
    with pytest.raises(TypeError, match="argument x is float64"):
        _launch(x.astype(np.float64), x, z, tiling, UseScale=1)
    _launch(x, x, z, tiling, UseScale=1)


def test_transpose_checks_are_remembered_per_argument_type():
    y = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(an.transpose2d(y, block_dim=1), y.T)
    assert np.array_equal(an.transpose2d(y, block_dim=np.int64(1)), y.T)
    for bad in (True, 1.0, [1]):
        with pytest.raises(ValueError, match="block_dim"):
            an.transpose2d(y, block_dim=bad)
    with pytest.raises(an.TTransRuleError):
        an.transpose2d(np.zeros((3, 4), np.complex128))


def test_gm_views_follow_the_dtype_and_refuse_what_they_refused():
    h = np.zeros((2, 3), np.float16)
    assert as_gm(h).dtype == np.uint16 and as_gm(h).shape == (6,)
    assert as_gm(np.zeros(3, np.float16)).dtype == np.uint16
    with pytest.raises(ValueError, match="C-contiguous"):
        as_gm(np.zeros((4, 4), np.float16)[:, ::2])
    with pytest.raises(TypeError, match="fixed-size"):
        as_gm(np.zeros(3, object))
    # Numba's dispatch key does not tell byte orders apart: a big-endian array is refused, not
    # run through the little-endian body.
    as_gm(np.zeros(3, "<u4"))
    with pytest.raises(TypeError, match="byte order"):
        as_gm(np.zeros(3, ">u4"))
