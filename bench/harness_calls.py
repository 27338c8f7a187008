"""A test harness as users write them (issue #50): many small parametrized tests, each making a
few calls of mixed ops and comparing with an expected value.  ``HARNESS_IMPL=numpy`` makes the
same calls with NumPy.  Run by bench/harness_scenario.py under ``pytest -n <CPUs>``."""

from __future__ import annotations

import os

import numpy as np
import pytest

TWIN = os.environ.get("HARNESS_IMPL", "twin") != "numpy"
if TWIN:
    import ascend_numba as an

    tile, transpose = an.tile, an.transpose2d
else:
    tile, transpose = np.tile, lambda a: np.ascontiguousarray(a.T)

SHAPES = [((8,), (2,)), ((4, 6), (2, 3)), ((33, 5), (2, 1)), ((3, 1, 16), (1, 4, 2)), ((128,), (64,))]
CALLS = 50  # per test


@pytest.mark.parametrize("case", range(40))
def test_mixed_calls(case):
    rng = np.random.default_rng(case)
    for k in range(CALLS):
        shape, reps = SHAPES[(case + k) % len(SHAPES)]
        x = rng.normal(size=shape).astype(np.float32)
        assert tile(x, reps).shape == np.tile(x, reps).shape
        m = rng.normal(size=(16, 24)).astype(np.float32)
        assert transpose(m)[3, 5] == m[5, 3]
