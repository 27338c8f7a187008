"""Goldens that mean something by default: per-op input defaults, and NaN or infinities a user did
not ask for reported in case.json, on the CLI (--strict: an error) and by the fixture."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from ascend_numba.cli import main
from ascend_numba.golden import compute_case, generate_inputs, parse_cases
from ascend_numba.golden.cases import REGISTRY
from ascend_numba.golden.health import case_health, health_warning, value_counts

ADAMW_ATTRS = {"beta1_power": 0.9, "beta2_power": 0.99, "lr": 1e-3, "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.99,
               "epsilon": 1e-8}
SHAPES_ONLY = [
    ("tile", {"x": [37, 21]}, {"reps": [2, 3]}),
    ("repeat", {"x": [5, 9]}, {"repeats": [2, 1, 3]}),
    ("apply_adamw", {n: [1000] for n in ("var", "m", "v", "grad")}, ADAMW_ATTRS),
    ("apply_adamw", {n: [1000] for n in ("var", "m", "v", "grad", "max_grad_norm")},
     {**ADAMW_ATTRS, "amsgrad": True, "maximize": True}),
    ("transpose2d", {"x": [33, 65]}, {}),
    ("convert_format", {"x": [2, 19, 5, 7]}, {"src": "NCHW", "dst": "NC1HWC0"}),
]


def _case(op, shapes, attrs, dtype, dist=None):
    inputs = {n: {"shape": s, **({"dist": dist[n]} if dist and n in dist else {})} for n, s in shapes.items()}
    return parse_cases({"cases": [{"name": "c", "op": op, "dtype": dtype, "inputs": inputs, "attrs": attrs}]})[0]


@pytest.mark.parametrize("op, shapes, attrs", SHAPES_ONLY, ids=[f"{c[0]}-{len(c[1])}" for c in SHAPES_ONLY])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_a_shapes_only_case_of_every_op_has_finite_goldens(op, shapes, attrs, dtype):
    case = _case(op, shapes, attrs, dtype)
    inputs, outputs, _ = compute_case(case, None)
    health = case_health(inputs, outputs)
    assert health_warning(health) is None
    for side in ("inputs", "outputs"):
        for counts in health[side].values():
            assert counts["nan"] == counts["+inf"] == counts["-inf"] == 0, (side, counts)


def test_defaults_come_from_the_registry_entries():
    adamw = REGISTRY["apply_adamw"]
    assert adamw.default_for("v") == {"uniform": [0, 0.01]} and adamw.default_for("grad") == {"normal": [0, 1]}
    assert REGISTRY["tile"].default_for("x") == {"bits": []}
    v = generate_inputs(_case(*SHAPES_ONLY[2], "float32"))["v"]
    assert v.min() >= 0 and v.max() <= 0.01


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "bool", "float16", "complex64"])
def test_data_movement_defaults_cover_the_dtype_and_never_nan(dtype):
    x = generate_inputs(_case("tile", {"x": [200_000]}, {"reps": [1]}, dtype))["x"]
    if dtype in ("int8", "uint16"):
        info = np.iinfo(dtype)
        assert x.min() == info.min and x.max() == info.max
    if dtype == "bool":
        assert 0.45 < x.mean() < 0.55
    counts = value_counts(x)
    if counts:
        assert counts["nan"] == counts["+inf"] == counts["-inf"] == 0
    if dtype == "float16":
        assert counts["subnormal"] > 0  # every finite value, subnormals included


def test_value_counts_read_the_bit_patterns():
    x = np.array([np.nan, np.inf, -np.inf, 1e-40, 0.0, -1.0], np.float32)
    assert value_counts(x) == {"nan": 1, "+inf": 1, "-inf": 1, "subnormal": 1}
    assert value_counts(x.astype(np.float16)) == {"nan": 1, "+inf": 1, "-inf": 1, "subnormal": 0}
    assert value_counts(np.arange(3)) == {}


def test_a_requested_nan_input_is_not_warned_about_its_propagated_nan():
    case = _case("tile", {"x": [16, 16]}, {"reps": [2, 2]}, "float16", {"x": {"special": [1.0, "nan"]}})
    inputs, outputs, _ = compute_case(case, None)
    health = case_health(inputs, outputs)
    assert health["outputs"]["y"]["nan"] > 0 and health_warning(health) is None


CASES = textwrap.dedent("""
    cases:
      - name: adamw_defaults
        op: apply_adamw
        dtype: float32
        inputs: {var: {shape: [1000]}, m: {shape: [1000]}, v: {shape: [1000]}, grad: {shape: [1000]}}
        attrs: {beta1_power: 0.9, beta2_power: 0.99, lr: 0.001, weight_decay: 0.01, beta1: 0.9, beta2: 0.99,
                epsilon: 1.0e-8}
      - name: adamw_negative_v
        op: apply_adamw
        dtype: float32
        inputs: {var: {shape: [1000]}, m: {shape: [1000]}, v: {shape: [1000], dist: {uniform: [-1, 1]}},
                 grad: {shape: [1000]}}
        attrs: {beta1_power: 0.9, beta2_power: 0.99, lr: 0.001, weight_decay: 0.01, beta1: 0.9, beta2: 0.99,
                epsilon: 1.0e-8}
""")


def test_the_cli_reports_nan_a_case_did_not_ask_for_and_strict_fails(tmp_path):
    path = tmp_path / "cases.yaml"
    path.write_text(CASES)
    result = CliRunner().invoke(main, ["golden", str(path), "--out", str(tmp_path / "out"), "--no-cache"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("[2/2] adamw_negative_v") and "WARNING: outputs hold" in line and
               "NaN the inputs do not" in line for line in lines)
    assert not any(line.startswith("[1/2]") and "WARNING" in line for line in lines)
    assert "WARNING: 1 case(s) with NaN or infinities in goldens their inputs do not hold: adamw_negative_v" in lines
    health = json.loads((tmp_path / "out" / "adamw_negative_v" / "case.json").read_text())["health"]
    assert health["outputs"]["var"]["nan"] > 0 and health["inputs"]["v"]["nan"] == 0
    strict = CliRunner().invoke(main, ["golden", str(path), "--out", str(tmp_path / "out"), "--no-cache", "--strict"])
    assert strict.exit_code == 1 and "adamw_negative_v (--strict)" in strict.output


def test_explain_prints_each_inputs_distribution(tmp_path):
    path = tmp_path / "cases.yaml"
    path.write_text(CASES)
    result = CliRunner().invoke(main, ["golden", str(path), "--explain"])
    assert result.exit_code == 0
    assert "  v [1000]: uniform [0, 0.01] (the op's default)" in result.output
    assert "  v [1000]: uniform [-1, 1]\n" in result.output


def test_the_fixture_exposes_the_counts_and_warns(pytester):
    pytester.makepyfile("""
        import pytest

        def test_health(golden):
            case = golden("tile", dtype="float16", inputs={"x": {"shape": [8, 8]}}, attrs={"reps": [2, 2]})
            assert case.health["outputs"]["y"] == {"nan": 0, "+inf": 0, "-inf": 0, "subnormal": case.health[
                "outputs"]["y"]["subnormal"]}
            with pytest.warns(RuntimeWarning, match=r"golden\\('apply_adamw'\\): outputs hold \\d+ NaN"):
                golden("apply_adamw", dtype="float32",
                       inputs={"var": {"shape": [64]}, "m": {"shape": [64]}, "grad": {"shape": [64]},
                               "v": {"shape": [64], "dist": {"uniform": [-1, 1]}}},
                       attrs={"beta1_power": 0.9, "beta2_power": 0.99, "lr": 0.001, "weight_decay": 0.01,
                              "beta1": 0.9, "beta2": 0.99, "epsilon": 1e-8})
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--golden-no-cache")
    result.assert_outcomes(passed=1)
