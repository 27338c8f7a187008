"""What a new user hit in one afternoon, each fixed at its root: values a case file's dtype cannot
hold, a kernel launched with the wrong element type, lost lane exceptions, scalars a half type
rounds into another meaning, honest verify statistics, one-line CLI errors, every case-file problem
in one run, the linter's imported programs, file order, the fixture's messages and assert_golden.
(Unwritten outputs and the DataCopy message are in tests/test_checked.py's corpus.)"""

from __future__ import annotations

import json
import sys
import textwrap
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

import ascend_numba as an
from ascend_numba.cli import main
from ascend_numba.golden import CaseError, compare, generate_inputs, load_cases, parse_cases
from ascend_numba.kernels import alloc_buffer, data_copy, kernel

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _case(name, dtype, dist, op="tile", shape=(64,)):
    return {"name": name, "op": op, "dtype": dtype, "inputs": {"x": {"shape": list(shape), "dist": dist}},
            "attrs": {"reps": [2]}}


def _one_problem(doc) -> str:
    with pytest.raises(CaseError) as caught:
        parse_cases(doc)
    return str(caught.value)


# ---- 1. a case file's values must fit its dtype ----------------------------------------------

@pytest.mark.parametrize("dtype, dist, words", [
    ("int8", {"integers": [0, 1000]}, "[0, 1000] is outside int8 (integers -128 to 127)"),
    ("uint8", {"integers": [-5, 5]}, "[-5, 5] is outside uint8 (integers 0 to 255)"),
    ("float16", {"uniform": [0, 1.0e6]}, "[0, 1000000.0] is outside float16 (finite values up to 65504"),
    ("int16", {"special": [1, 70000]}, "holds values int16 cannot: [70000]"),
    ("int32", {"special": ["nan"]}, "holds values int32 cannot: [nan]"),
    ("bfloat16", {"normal": [0, 1.0e38]}, "reaches past bfloat16"),
    ("float16", {"normal": [0, 20000]}, "reaches past float16"),
    ("uint16", {"normal": [-10, 1]}, "has a mean outside uint16"),
])
def test_a_range_the_dtype_cannot_hold_is_an_error_naming_case_input_range_and_dtype(dtype, dist, words):
    message = _one_problem({"cases": [_case("c1", dtype, dist)]})
    kind = next(iter(dist))
    assert message.startswith(f"case 'c1': field 'inputs.x.dist.{kind}': ") and words in message, message


def test_ranges_the_dtype_holds_keep_their_bytes_and_normal_integers_are_clipped():
    edge = parse_cases({"cases": [_case("e", "int8", {"integers": [-128, 127]}),
                                  _case("f", "float16", {"uniform": [-65504, 65504]}),
                                  _case("n", "uint8", {"normal": [0, 100]}, shape=(4096,))]})
    assert generate_inputs(edge[0])["x"].dtype == np.int8
    clipped = generate_inputs(edge[2])["x"]
    assert clipped.min() == 0 and (clipped == 0).sum() > 1000 and clipped.max() <= 255  # clipped, not wrapped


# ---- 6. every problem of a case file in one run, the file named ------------------------------

def test_every_problem_is_reported_in_one_run_with_the_file_and_unknown_keys_named(tmp_path):
    doc = {"cases": [
        _case("a", "int9", {"uniform": [-1, 1]}),
        _case("a", "float32", {"uniform": [-1, 1]}),
        _case("c", "float32", {"uniform": [1]}),
        {"name": "d", "op": "transpose2d", "dtype": "float32", "inputs": {"x": {"shape": [2, 3, 4]}}},
        {"name": "h", "op": "tile", "dtype": "float32", "inputs": {"input": {"shape": [4]}}, "attrs": {"reps": [2]}},
    ]}
    path = tmp_path / "four.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CaseError) as caught:
        load_cases(path)
    lines = str(caught.value).splitlines()
    assert lines[0] == f"case file {path}: 6 problems:"
    assert lines[1:] == [
        "  case 'a': field 'dtype': 'int9' is not a dtype of tile; use one of ['bfloat16', 'bool', 'complex128', "
        "'complex64', 'float16', 'float32', 'float64', 'int16', 'int32', 'int64', 'int8', 'uint16', 'uint32', "
        "'uint64', 'uint8']",
        "  case 'a': field 'name': duplicate case name",
        "  case 'c': field 'inputs.x.dist.uniform': needs [a, b]",
        "  case 'd': field 'inputs.x.shape': must have 2 dims, got 3",
        "  case 'h': field 'inputs.x': missing",
        "  case 'h': field 'inputs.input': not an input of tile (inputs: ['x'])",
    ]


def test_a_file_without_cases_is_named(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("case: []\n")
    with pytest.raises(CaseError, match=rf"^case file {path}: top level must be a mapping with a 'cases' list$"):
        load_cases(path)


# ---- 2. a kernel launched with the wrong element type -----------------------------------------

@kernel(outputs=("y",))
def scale_f32(ctx, x, y, n):
    buf = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, buf, 0, x, 0, 64)
    data_copy(ctx, y, 0, buf, 0, 64)


@kernel(dtypes={"x": np.float32})
def declared_f32(ctx, x, y, n):
    buf = alloc_buffer(ctx, 256, np.uint8)
    data_copy(ctx, buf, 0, x, 0, 64)
    data_copy(ctx, y, 0, buf, 0, 256)


def test_an_argument_of_another_dtype_than_its_buffers_is_refused_by_name_before_compiling():
    x = np.arange(64) * 0.5  # float64: the easy slip
    y = np.zeros(64, np.float32)
    with pytest.raises(TypeError, match=r"kernel scale_f32: argument x is float64, but the kernel copies it into "
                                        r"buf, a UB buffer of float32: pass a float32 array"):
        scale_f32.launch(x, y, 64, block_dim=1)
    assert not scale_f32._bodies  # nothing compiled
    with pytest.raises(TypeError, match=r"argument y is float64, but the kernel copies it from buf"):
        scale_f32.launch(x.astype(np.float32), y.astype(np.float64), 64, block_dim=1)
    with pytest.raises(TypeError, match=r"kernel declared_f32: argument x is int32, but the kernel declares it "
                                        r"float32"):
        declared_f32.launch(np.zeros(64, np.int32), np.zeros(64, np.float32), 64, block_dim=1)


def test_byte_buffers_and_unsigned_views_move_any_element_of_their_width():
    from ascend_numba.kernels.arguments import accepts

    assert accepts(np.dtype(np.uint8), np.dtype(np.float64))
    assert accepts(np.dtype(np.uint16), np.dtype(np.int16)) and accepts(np.dtype(np.uint16), np.dtype(np.float16))
    assert accepts(np.dtype(np.uint16), np.dtype(ml_dtypes.bfloat16))
    assert not accepts(np.dtype(np.uint16), np.dtype(np.float32))
    assert not accepts(np.dtype(np.float32), np.dtype(np.int32))


def test_an_unknown_name_in_outputs_or_dtypes_is_an_error():
    def k(ctx, x, y):
        pass

    with pytest.raises(TypeError, match=r"'z' is not one of its arguments \(x, y\)"):
        kernel(outputs=("z",))(k)


# ---- 5. a lane's exception keeps its type and message ------------------------------------------

@kernel
def raises_in_lane_2(ctx, x):
    if ctx.block_idx == 2:
        raise ValueError("boom")


def test_a_lane_exception_carries_its_type_and_message():
    with pytest.raises(an.KernelError, match=r"^lane 2: the kernel raised ValueError: boom$") as caught:
        raises_in_lane_2.launch(np.zeros(8, np.float32), block_dim=4)
    assert isinstance(caught.value.__cause__, ValueError) and caught.value.__cause__.args == ("boom",)


# ---- 4. half scalars that round into another meaning -------------------------------------------

def _adamw(dtype, **scalars):
    s = dict(beta1_power=0.9, beta2_power=0.99, lr=1e-3, weight_decay=0.01, beta1=0.9, beta2=0.999, epsilon=1e-6)
    s.update(scalars)
    t = [np.full(64, 0.5, dtype) for _ in range(4)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        an.apply_adamw(t[0], t[1], t[2], s["beta1_power"], s["beta2_power"], s["lr"], s["weight_decay"], s["beta1"],
                       s["beta2"], s["epsilon"], t[3], variant="a2")
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def test_a_bf16_beta2_of_0_999_warns_that_v_never_updates():
    (message,) = _adamw(ml_dtypes.bfloat16)
    assert message.startswith("ApplyAdamW: beta2=0.999 rounds to 1.0 in bfloat16") and "v is never updated" in message
    assert _adamw(np.float32) == []
    assert _adamw(np.float16, beta2=0.99) == []
    (eps,) = _adamw(np.float16, epsilon=1e-8, beta2=0.99)
    assert eps.startswith("ApplyAdamW: epsilon=1e-08 rounds to 0.0 in float16")


# ---- 7. verify's statistics ---------------------------------------------------------------------

def test_verify_statistics_are_honest():
    g = np.array([100, 106, 5], np.int16)
    report = compare(g, g + np.array([0, 1, 0], np.int16), "int16")
    assert not report.passed and report.max_abs_error == 1 and report.max_rel_error == pytest.approx(1 / 106)
    f = np.array([np.nan] * 5 + [1.0, 2.0], np.float32)
    zeroed = np.where(np.isnan(f), np.float32(0), f)
    report = compare(f, zeroed, "float32")
    assert report.nan_mismatches == 5 and report.within == 2
    assert "5 NaN mismatches (NaN on one side only)" in "\n".join(report.lines())
    h = np.ones(4, np.float16)
    assert compare(h, h + np.float16(0.001), "float16").max_ulp == 1


def test_assert_golden():
    g = np.linspace(0, 1, 100, dtype=np.float32)
    assert an.assert_golden(g.copy(), g).passed
    with pytest.raises(AssertionError, match=r"FAIL: 99/100 elements within tolerance"):
        an.assert_golden(np.where(g == g[3], np.float32(2), g), g)
    with pytest.raises(AssertionError, match="shapes differ"):
        an.assert_golden(g[:10], g)


# ---- 8. one-line CLI errors ----------------------------------------------------------------------

def test_every_subcommand_fails_in_one_line():
    result = CliRunner().invoke(main, ["seed-table", "--platform", "B9"])
    assert result.exit_code == 1
    assert result.output == "Error: ValueError: unknown platform 'B9'; presets are ['A2', 'A2_20', 'A5']\n"


def test_bench_compare_window_defaults_to_three():
    result = CliRunner().invoke(main, ["bench-compare", "--help"])
    assert "[default: 3;" in " ".join(result.output.split())


# ---- 10. the linter reads programs wherever they are defined -----------------------------------

def test_lint_file_and_kernel_agree_on_an_imported_program(tmp_path, monkeypatch):
    (tmp_path / "progs_for_lint.py").write_text(textwrap.dedent("""
        from ascend_numba.kernels import add, vector_program


        @vector_program
        def add_into(x, y, z):
            z = add(x, y)
    """))
    (tmp_path / "k_imported_for_lint.py").write_text(textwrap.dedent("""
        import numpy as np

        import ascend_numba as an
        from ascend_numba.kernels import alloc_buffer, data_copy
        from progs_for_lint import add_into


        @an.kernel(mode="auto")
        def k(ctx, x, y, z):
            x_loc = alloc_buffer(ctx, 64, np.float32)
            y_loc = alloc_buffer(ctx, 64, np.float32)
            z_loc = alloc_buffer(ctx, 64, np.float32)
            data_copy(ctx, x_loc, 0, x, 0, 64)
            data_copy(ctx, y_loc, 0, y, 0, 64)
            add_into(ctx, 64, True, x_loc, y_loc, z_loc)
            data_copy(ctx, z, 0, z_loc, 0, 64)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import k_imported_for_lint

    assert an.lint(tmp_path / "k_imported_for_lint.py") == [] == an.lint(k_imported_for_lint.k)
    sys.modules.pop("k_imported_for_lint", None)
    sys.modules.pop("progs_for_lint", None)


# ---- 11. golden reports cases in file order -------------------------------------------------------

def test_golden_reports_cases_in_file_order(tmp_path):
    names = [f"c{i}" for i in range(6)]
    doc = {"cases": [_case(n, "float32", {"uniform": [-1, 1]}, shape=(64 * (6 - i),)) for i, n in enumerate(names)]}
    path = tmp_path / "order.json"
    path.write_text(json.dumps(doc))
    for _ in range(2):
        result = CliRunner().invoke(main, ["golden", str(path), "--out", str(tmp_path / "out"), "--no-cache"])
        assert result.exit_code == 0, result.output
        printed = [line.split()[1] for line in result.output.splitlines() if line.startswith("[")]
        assert printed == names


# ---- 12. the fixture's messages name the user's call ----------------------------------------------

def test_the_fixture_names_the_users_call(pytester):
    pytester.makepyfile("""
        import pytest
        from ascend_numba.golden import CaseError

        def test_typo(golden):
            with pytest.raises(CaseError) as caught:
                golden("tile", dtype="float32", inputs={"x": {"shape": [4]}}, attrs={"rep": [2]})
            message = str(caught.value)
            assert "golden('tile'): field 'attrs.rep': unknown attribute of tile" in message, message
            assert "'golden'" not in message and "fixture" not in message
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--golden-no-cache")
    result.assert_outcomes(passed=1)
