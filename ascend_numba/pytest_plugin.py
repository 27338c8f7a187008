"""pytest plugin: the ``golden`` fixture gives test harnesses cached goldens.

::

    def test_my_npu_tile(golden):
        case = golden("tile", dtype="float16", inputs={"x": {"shape": [64, 48]}}, attrs={"reps": [2, 3]})
        y = run_on_device(case.inputs["x"])
        ascend_numba.assert_golden(y, case.outputs["y"])   # the CANN precision rules

``case.cache_hit`` says whether the golden came from the cache, which is the CLI's
(``--golden-cache-dir``, else $ASCEND_NUMBA_CACHE or ~/.cache/ascend_numba/golden);
``--golden-no-cache`` turns it off.  A problem with the arguments raises CaseError naming the
call (``golden('tile')``, or ``name=``) and the field.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

# The golden machinery (and Numba, through the ops) is imported by the fixture, not here: pytest
# loads this plugin in every session of an environment that has ascend_numba installed.

@dataclass
class GoldenCase:
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    cache_hit: bool
    health: dict  # per input and output: NaN, +inf, -inf and subnormal counts (see golden.health)


def pytest_configure(config):
    """The user's op modules ($ASCEND_NUMBA_OPS, the ascend_numba.ops entry points), registered
    before collection, so registry-driven tests see them; without any, nothing is imported."""
    import os
    from importlib.metadata import entry_points

    from .config import OPS_ENTRY_POINTS, OPS_ENV

    if os.environ.get(OPS_ENV) or entry_points(group=OPS_ENTRY_POINTS):
        from .ops import load_ops
        load_ops()


def pytest_addoption(parser):
    group = parser.getgroup("ascend_numba")
    group.addoption("--golden-cache-dir", default=None, help="ascend_numba golden cache directory")
    group.addoption("--golden-no-cache", action="store_true", help="compute goldens without the cache")


@pytest.fixture(scope="session")
def golden(request):
    """``golden(op, *, dtype, inputs, attrs=None, seed=0)`` -> GoldenCase (inputs, outputs, cache_hit,
    health); an input given only its shape is drawn by the op's default distribution, and a golden
    holding NaN or infinities its inputs do not warns (RuntimeWarning)."""
    from .golden import CaseError, GoldenCache, compute_case, default_cache_dir, parse_cases
    from .golden.health import case_health, health_warning
    from .ops import load_ops

    load_ops()  # the user's op modules ($ASCEND_NUMBA_OPS, the ascend_numba.ops entry points)

    config = request.config
    cache = None
    if not config.getoption("--golden-no-cache"):
        cache = GoldenCache(config.getoption("--golden-cache-dir") or default_cache_dir())

    def make(op: str, *, dtype: str, inputs: dict, attrs: dict | None = None, seed: int = 0,
             name: str | None = None) -> GoldenCase:
        label = name or f"golden({op!r})"
        try:
            case = parse_cases({"cases": [{"name": name or "golden", "op": op, "dtype": dtype, "seed": seed,
                                           "inputs": inputs, "attrs": attrs or {}}]})[0]
        except CaseError as e:
            raise CaseError(str(e).replace(f"case {name or 'golden'!r}", label)) from None
        ins, outs, hit = compute_case(case, cache)
        health = case_health(ins, outs)
        problem = health_warning(health)
        if problem:
            warnings.warn(f"{label}: {problem}", RuntimeWarning, stacklevel=2)
        return GoldenCase(ins, outs, hit, health)

    return make
