"""Every registered op against its plain NumPy reference, bit for bit: each test case of its
registry entry, on every dtype it takes, in the modes the case names (plain, checked, traced).

The cases live with the op (``ascend_numba/ops/<op>/__init__.py``): an op added to the registry
is tested here without a line of its own.
"""

from __future__ import annotations

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.dtypes import dtype_by_name
from ascend_numba.golden import REGISTRY as GOLDEN
from ascend_numba.host.trace import F_DST_LO, F_SRC1_LO, F_SRC_LO, TRACE_EVENTS, TRACE_UB_BASE, LaunchTrace
from ascend_numba.ops import REGISTRY
from ascend_numba.ops.registry import REQUIRED

RUNS = [(entry, case, dtype, mode) for entry in REGISTRY.values() for case in entry.test_cases
        for dtype in ((case.dtype,) if case.dtype else entry.dtypes) for mode in case.modes]


def _one_per_width(runs) -> list:
    """The runs of a byte-moving op with one dtype per element width (the others run the same
    code, on the same unsigned view); every run of the other ops."""
    seen, kept = set(), []
    for entry, case, dtype, mode in runs:
        key = (entry.name, case.name, mode, dtype_by_name(dtype).itemsize if entry.moves_bytes else dtype)
        if key not in seen:
            seen.add(key)
            kept.append((entry, case, dtype, mode))
    return kept


# Interpret mode is slow Python: the bits it must match are the compiled code's, one per width.
INTERPRETED_RUNS = _one_per_width(RUNS)


def _inputs(entry, case, dtype):
    return entry.test_inputs(case.shapes, dtype_by_name(dtype), np.random.default_rng(0))


@pytest.mark.parametrize("entry, case, dtype, mode", RUNS,
                         ids=[f"{e.name}-{c.name}-{d}-{m}" for e, c, d, m in RUNS])
def test_matches_reference(entry, case, dtype, mode):
    inputs = _inputs(entry, case, dtype)
    before = {n: a.copy() for n, a in inputs.items()}
    got = entry.run(inputs, case.attrs, trace=mode == "traced", checked=mode == "checked")
    want = entry.reference(inputs, case.attrs)
    assert set(got) == set(entry.outputs) == set(want)
    for name in entry.outputs:
        out = got[name]
        if mode == "traced":
            out, trace = out
            assert trace is None if out.size == 0 else isinstance(trace, LaunchTrace)
        assert out.shape == want[name].shape and out.dtype == want[name].dtype, name
        assert out.tobytes() == want[name].tobytes(), f"{name}: bits differ from the reference"
    for name, a in inputs.items():
        assert a.tobytes() == before[name].tobytes(), f"input {name} changed"


def _same_log(a, b) -> bool:
    """The same counters and the same calls, addresses compared as UB offsets or GM lengths (the two
    runs' arrays live at different addresses)."""
    def normal(trace):
        rows = trace.rows.copy()
        rows[:, TRACE_UB_BASE] = 0
        for lane in range(trace.block_dim):
            ev = trace.events(lane).copy()
            base, size = trace.rows[lane, TRACE_UB_BASE], trace.platform.ub_size
            for lo in (F_DST_LO, F_SRC_LO, F_SRC1_LO):
                in_ub = (ev[:, lo] >= base) & (ev[:, lo + 1] <= base + size)
                ev[:, lo + 1] -= np.where(in_ub, base, ev[:, lo])
                ev[:, lo] = np.where(in_ub, ev[:, lo] - base, 0)
            rows[lane, TRACE_EVENTS:TRACE_EVENTS + ev.size] = ev.ravel()
        return rows
    return np.array_equal(normal(a), normal(b))


@pytest.mark.parametrize("entry, case, dtype, mode", INTERPRETED_RUNS,
                         ids=[f"{e.name}-{c.name}-{d}-{m}" for e, c, d, m in INTERPRETED_RUNS])
def test_interpreted_equals_compiled(entry, case, dtype, mode):
    """Interpret mode runs the same code as Python: the same bits, the same trace counts."""
    inputs = entry.test_inputs(case.small or case.shapes, dtype_by_name(dtype), np.random.default_rng(1))
    options = dict(trace=mode == "traced", checked=mode == "checked")
    compiled = entry.run({n: a.copy() for n, a in inputs.items()}, case.attrs, **options)
    interpreted = entry.run({n: a.copy() for n, a in inputs.items()}, case.attrs, interpret=True, **options)
    for name in entry.outputs:
        want, got = compiled[name], interpreted[name]
        if mode == "traced":
            (want, want_trace), (got, got_trace) = want, got
            assert (got_trace is None) == (want_trace is None)
            if want_trace is not None:
                assert _same_log(got_trace, want_trace), f"{name}: trace counts or logs differ"
                assert got_trace.totals() == want_trace.totals()
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), f"{name}: interpreted bits differ"


@pytest.mark.parametrize("entry", REGISTRY.values(), ids=list(REGISTRY))
def test_entry_is_public_and_its_shapes_are_right(entry):
    assert getattr(an, entry.name) is entry.function and entry.name in an.__all__
    assert (entry.name in GOLDEN) == entry.golden
    defaults = {k: d for k, (_, d) in entry.attrs.items() if d is not REQUIRED}
    for case in entry.test_cases:
        dtype = dtype_by_name(case.dtype or entry.dtypes[0])
        attrs = {**defaults, **case.attrs}
        assert entry.check_shapes(case.shapes, attrs) is None
        want = entry.reference(_inputs(entry, case, dtype.name), case.attrs)
        assert entry.output_shapes(case.shapes, attrs, dtype.itemsize) == {n: a.shape for n, a in want.items()}


@pytest.mark.parametrize("entry", REGISTRY.values(), ids=list(REGISTRY))
def test_warmup_cases_are_calls_of_the_op(entry):
    # Each is a valid call (running them all would compile every specialization: `make warmup`);
    # the first one runs.
    defaults = {k: d for k, (_, d) in entry.attrs.items() if d is not REQUIRED}
    for case in entry.warmup_cases:
        attrs = {k: v for k, v in case.attrs.items() if k in entry.attrs}  # the rest are options (path=)
        assert set(case.shapes) == set(entry.input_names({**defaults, **attrs}))
        assert entry.check_shapes(case.shapes, {**defaults, **attrs}) is None
        entry.output_shapes(case.shapes, {**defaults, **attrs}, dtype_by_name(case.dtype).itemsize)
    if entry.warmup_cases:
        case = entry.warmup_cases[0]
        assert set(entry.run(_inputs(entry, case, case.dtype), case.attrs)) == set(entry.outputs)
