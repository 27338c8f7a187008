"""msOpST interoperability: the expected-data functions in both calling styles, case files
expanded by msOpST's rules, every distribution, the data layout, compare, and bad case files."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

import ascend_numba as an
from ascend_numba import msopst
from ascend_numba.cli import main
from ascend_numba.golden.msopst_cases import MsopstCaseError, expect_file, input_file, load_msopst
from ascend_numba.golden.msopst_compare import compare_output

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "msopst"


def _run(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


def _write(tmp_path, cases, name="case.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(cases))
    return path


# ---- the expected-data functions -----------------------------------------------------------

def test_expect_func_names_this_file_and_msopst_can_import_it():
    result = _run("msopst", "expect-func", "ApplyAdamW")
    assert result.exit_code == 0
    path, func = result.output.strip().rsplit(":", 1)
    assert func == "ApplyAdamW" and Path(path) == Path(msopst.__file__).resolve()
    sys.path.append(os.path.dirname(path))  # as msOpST's data generator does
    try:
        module = importlib.import_module("msopst")
        assert callable(module.ApplyAdamW)
    finally:
        sys.path.remove(os.path.dirname(path))
        sys.modules.pop("msopst", None)
    bad = _run("msopst", "expect-func", "Conv2D")
    assert bad.exit_code == 1 and "Tile, TileD, ApplyAdamW, TransData, Transpose" in bad.output


def _desc(arr):
    return {"value": arr, "shape": list(arr.shape), "dtype": str(arr.dtype), "format": "ND", "ori_shape": list(arr.shape),
            "ori_format": "ND"}


def test_tile_and_tiled_in_both_calling_styles():
    x = np.arange(35, dtype=np.float16).reshape(5, 7)
    want = np.tile(x, (2, 3))
    y = {"shape": [10, 21], "dtype": "float16", "format": "ND"}
    for got in (msopst.Tile(_desc(x), _desc(np.array([2, 3])), y),
                msopst.Tile(x=_desc(x), multiples=_desc(np.array([2, 3])), y=y),
                msopst.Tile(x, np.array([2, 3])),
                msopst.TileD(_desc(x), y, [2, 3]), msopst.TileD(x=_desc(x), y=y, multiples=[2, 3]),
                msopst.TileD(_desc(x), {"value": [2, 3]})):
        assert len(got) == 1 and got[0].tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_apply_adamw_in_both_calling_styles_has_the_kernels_bits(dtype):
    rng = np.random.default_rng(3)
    var, m, v, grad = (rng.random(300).astype(dtype) for _ in range(4))
    scalars = [np.array([s], dtype) for s in (0.729, 0.970299, 1e-3, 0.01, 0.9, 0.99, 1e-4)]
    want = an.apply_adamw(var.copy(), m.copy(), v.copy(), *scalars, grad, inplace=False)
    names = ("beta1_power", "beta2_power", "lr", "weight_decay", "beta1", "beta2", "epsilon")
    outs = [{"shape": [300], "dtype": np.dtype(dtype).name}] * 3
    positional = msopst.ApplyAdamW(*map(_desc, (var, m, v, *scalars, grad)), *outs, False, False)
    keywords = msopst.ApplyAdamW(var=_desc(var), m=_desc(m), v=_desc(v), grad=_desc(grad),
                                 **{n: _desc(s) for n, s in zip(names, scalars)}, amsgrad=False, maximize=False)
    for got in (positional, keywords):
        assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    # bf16 as its uint16 bits, the dtype named by the description
    if dtype is ml_dtypes.bfloat16:
        raw = [{"value": a.view(np.uint16), "dtype": "bfloat16"} for a in (var, m, v, *scalars, grad)]
        assert [g.tobytes() for g in msopst.ApplyAdamW(*raw)] == [w.tobytes() for w in want]


def test_an_absent_optional_input_may_be_none_a_required_one_may_not():
    # op_test_frame's call: max_grad_norm absent as None, then the outputs, then amsgrad, maximize.
    rng = np.random.default_rng(4)
    var, m, v, grad = (rng.random(64).astype(np.float32) for _ in range(4))
    scalars = [np.array([s], np.float32) for s in (0.729, 0.970299, 1e-3, 0.01, 0.9, 0.99, 1e-4)]
    want = [w.tobytes() for w in an.apply_adamw(var, m, v, *scalars, grad, inplace=False)]
    outs = [{"shape": [64], "dtype": "float32"}] * 3
    inputs = list(map(_desc, (var, m, v, *scalars, grad)))
    for got in (msopst.ApplyAdamW(*inputs, None, *outs, False, False), msopst.ApplyAdamW(*inputs, None),
                msopst.ApplyAdamW(*inputs, max_grad_norm=None, amsgrad=False)):
        assert [g.tobytes() for g in got] == want
    required = "input 'grad' is None, but it is required; optional inputs: max_grad_norm"
    with pytest.raises(msopst.MsOpstError, match=required):
        msopst.ApplyAdamW(*inputs[:-1], None, None, *outs, False, False)
    with pytest.raises(msopst.MsOpstError, match="Tile: input 'multiples' is None, but it is required; it has no"):
        msopst.Tile(_desc(var), None)
    for op, kwargs in (("Tile", {"x": None, "multiples": _desc(np.array([2]))}), ("TileD", {"x": None}),
                       ("Transpose", {"x": _desc(var), "perm": None}), ("TransData", {"src": None}),
                       ("ApplyAdamW", {"var": None})):  # var also names an output: still the input
        with pytest.raises(msopst.MsOpstError, match=f"{op}: input '(x|perm|src|var)' is None, but it is required"):
            getattr(msopst, op)(**kwargs)


def test_trans_data_and_transpose():
    x = np.arange(2 * 19 * 5 * 7, dtype=np.float16).reshape(2, 19, 5, 7)
    (five,) = msopst.TransData(_desc(x), {"shape": [2, 2, 5, 7, 16]}, "NCHW", "NC1HWC0")
    assert five.tobytes() == an.convert_format(x, "NCHW", "NC1HWC0").tobytes()
    (back,) = msopst.TransData(src=_desc(five), dst={"shape": [2, 19, 5, 7]}, src_format="NC1HWC0", dst_format="NCHW")
    assert back.tobytes() == x.tobytes()  # the output description's 19 channels crop the padding
    a = np.arange(12, dtype=np.int8).reshape(3, 4)
    assert msopst.Transpose(_desc(a), _desc(np.array([1, 0])))[0].tobytes() == a.T.copy().tobytes()
    with pytest.raises(msopst.MsOpstError, match=r"perm \[0, 2, 1\] on a 3-D x.*perm \[1, 0\] only"):
        msopst.Transpose(_desc(np.zeros((2, 3, 4))), _desc(np.array([0, 2, 1])))
    with pytest.raises(msopst.MsOpstError, match="groups=2"):
        msopst.TransData(_desc(x), {"shape": [2, 2, 5, 7, 16]}, "NCHW", "NC1HWC0", 0, 0, 2)
    with pytest.raises(msopst.MsOpstError, match="unknown argument 'bias'"):
        msopst.Tile(x=_desc(a), multiples=_desc(np.array([1, 1])), bias=1)


# ---- subcases ----------------------------------------------------------------------------------

def test_the_issue_example_expands_to_two_subcases_lined_up_by_index():
    subs = [s for s in load_msopst([EXAMPLES / "tile_case.json"]) if s.case_name == "Test_Tile_001"]
    assert [s.name for s in subs] == ["test_tile_001_subcase_0", "test_tile_001_subcase_1"]
    assert [(s.inputs[0]["type"], s.inputs[0]["shape"], s.outputs[0]["shape"]) for s in subs] == [
        ("float16", [64, 48], [128, 144]), ("int8", [128], [2, 384])]


def test_cross_list_crosses_groups_with_the_first_varying_fastest():
    subs = load_msopst([EXAMPLES / "tiled_case.json"])
    assert [(s.inputs[0]["shape"], s.inputs[0]["data_distribute"]) for s in subs] == [
        ([7, 33], "normal"), ([1, 5], "normal"), ([7, 33], "tanh"), ([1, 5], "tanh")]


def test_names_are_lower_case_with_dots_as_underscores(tmp_path):
    case = json.loads((EXAMPLES / "tile_case.json").read_text())[0]
    case["case_name"] = "Test.Tile.V2"
    assert load_msopst([_write(tmp_path, [case])])[0].name == "test_tile_v2_subcase_0"


# ---- every distribution -----------------------------------------------------------------------

def _drawn(tmp_path, dtype, kind, value_range, shape=(4000,)):
    case = {"case_name": f"d_{kind}_{dtype}", "op": "TileD",
            "input_desc": [{"name": "x", "format": "ND", "type": dtype, "shape": list(shape), "data_distribute": kind,
                            "value_range": value_range}],
            "output_desc": [{"name": "y", "format": "ND", "type": dtype, "shape": list(shape)}],
            "attr": [{"name": "multiples", "type": "list_int", "value": [1]}]}
    sub = load_msopst([_write(tmp_path, [case], f"{kind}_{dtype}.json")])[0]
    from ascend_numba.golden import generate_inputs

    return generate_inputs(sub.golden)["x"].astype(np.float64)


@pytest.mark.parametrize("kind, value_range, check", [
    ("uniform", [-2.0, 3.0], lambda x: x.min() >= -2 and x.max() < 3 and abs(x.mean() - 0.5) < 0.1),
    ("normal", [1.0, 0.5], lambda x: abs(x.mean() - 1) < 0.05 and abs(x.std() - 0.5) < 0.05),
    ("beta", [2.0, 5.0], lambda x: x.min() > 0 and x.max() < 1 and abs(x.mean() - 2 / 7) < 0.02),
    ("laplace", [0.0, 1.0], lambda x: abs(x.mean()) < 0.1 and abs(x.std() - 2 ** 0.5) < 0.15),
    ("triangular", [-1.0, 1.0], lambda x: x.min() >= -1 and x.max() <= 1),
    ("relu", [-1.0, 1.0], lambda x: x.min() == 0 and (x == 0).mean() > 0.4 and x.max() < 1),
    ("sigmoid", [-4.0, 4.0], lambda x: x.min() > 0 and x.max() < 1 and abs(x.mean() - 0.5) < 0.05),
    ("softmax", [0.0, 1.0], lambda x: x.min() > 0 and abs(x.sum() - 1) < 1e-4),
    ("tanh", [-3.0, 3.0], lambda x: x.min() > -1 and x.max() < 1),
])
def test_every_distribution_has_msopsts_meaning(tmp_path, kind, value_range, check):
    assert check(_drawn(tmp_path, "float32", kind, value_range))


def test_integers_truncate_and_bool_is_half_true(tmp_path):
    ints = _drawn(tmp_path, "int8", "uniform", [-5, 5])
    assert ints.min() == -4 and ints.max() == 4 and (ints == 0).mean() > 0.15  # (-1, 1) truncates to 0
    flags = _drawn(tmp_path, "bool", "uniform", [0.1, 1.0])
    assert 0.45 < flags.mean() < 0.55


# ---- gen: msOpST's layout ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("msopst")
    result = _run("msopst", "gen", EXAMPLES, "--out", out / "gen", "--no-cache", "--seed", "7")
    assert result.exit_code == 0, result.output
    return out / "gen", load_msopst([EXAMPLES], 7)


def test_gen_writes_msopsts_layout_with_a_manifest(generated):
    out, subs = generated
    assert sorted(p.name for p in out.iterdir()) == ["applyadamw", "tile", "tiled", "transdata", "transpose"]
    assert sorted(p.name for p in EXAMPLES.glob("*.json")) == ["apply_adamw_case.json", "tile_case.json",
                                                               "tiled_case.json", "trans_data_case.json",
                                                               "transpose_case.json"]
    for op_dir in out.iterdir():
        manifest = json.loads((op_dir / "manifest.json").read_text())
        assert manifest["seed"] == 7
        for entry in manifest["subcases"]:
            for f in entry["files"]:
                assert hashlib.sha256((op_dir / f["file"]).read_bytes()).hexdigest() == f["sha256"]
    sub = next(s for s in subs if s.name == "test_tile_001_subcase_1")
    assert input_file(sub, 0) == "test_tile_001_subcase_1_input0_int8.bin"
    assert expect_file(sub, 0) == "test_tile_001_subcase_1_expect_np_output0_int8.bin"


def _read(out, sub, k, dtype):
    return np.fromfile(out / sub.op.lower() / "data" / input_file(sub, k), dtype)


@pytest.mark.parametrize("name", ["test_tile_001_subcase_0", "test_applyadamw_001_subcase_2",
                                  "test_transdata_001_subcase_1", "test_transpose_001_subcase_2"])
def test_expected_outputs_are_the_expect_functions_on_the_written_inputs(generated, name):
    out, subs = generated
    sub = next(s for s in subs if s.name == name)
    from ascend_numba.dtypes import dtype_by_name
    from ascend_numba.golden.msopst_cases import TYPES

    inputs = [{"value": _read(out, sub, k, dtype_by_name(TYPES[d["type"]])).reshape(d["shape"]), "shape": d["shape"],
               "dtype": TYPES[d["type"]]} for k, d in enumerate(sub.inputs)]
    outputs = [{"shape": d["shape"], "dtype": TYPES[d["type"]]} for d in sub.outputs]
    got = getattr(msopst, sub.op)(*inputs, *outputs, *sub.attrs.values())
    for k, arr in enumerate(got):
        assert (out / sub.op.lower() / "data" / expect_file(sub, k)).read_bytes() == arr.tobytes()


def test_gen_is_deterministic_and_seeded(generated, tmp_path):
    out, _ = generated
    again = tmp_path / "again"
    assert _run("msopst", "gen", EXAMPLES / "tile_case.json", "--out", again, "--no-cache", "--seed", "7").exit_code == 0
    other = tmp_path / "other"
    assert _run("msopst", "gen", EXAMPLES / "tile_case.json", "--out", other, "--no-cache", "--seed", "8").exit_code == 0
    name = "tile/data/test_tile_001_subcase_0_input0_float16.bin"
    assert (again / name).read_bytes() == (out / name).read_bytes() != (other / name).read_bytes()


# ---- compare --------------------------------------------------------------------------------

def test_compare_passes_device_outputs_equal_to_the_goldens_and_fails_a_perturbed_one(generated, tmp_path):
    out, subs = generated
    actual = tmp_path / "device"
    actual.mkdir()
    for path in out.rglob("*_expect_np_output*.bin"):
        shutil.copy(path, actual / path.name.replace("_expect_np_output", "_output"))
    result = _run("msopst", "compare", EXAMPLES, "--out", out, "--actual", actual, "--seed", "7")
    assert result.exit_code == 0 and "15 passed, 0 failed of 15 subcases" in result.output
    bad = actual / "test_transdata_001_subcase_1_output0_float32.bin"
    data = np.fromfile(bad, np.float32)
    data[10:20] *= 1.5
    data.tofile(bad)
    (actual / "test_tile_001_subcase_1_output0_int8.bin").unlink()
    result = _run("msopst", "compare", EXAMPLES, "--out", out, "--actual", actual, "--seed", "7")
    assert result.exit_code == 1 and "13 passed, 2 failed of 15 subcases" in result.output
    report = json.loads((actual / "msopst_compare.json").read_text())["subcases"]
    assert report["test_transdata_001_subcase_1"]["first_mismatch"] == 10
    assert "no device output" in report["test_tile_001_subcase_1"]["outputs"][0]["problem"]
    loose = _run("msopst", "compare", EXAMPLES / "trans_data_case.json", "--out", out, "--actual", actual, "--seed",
                 "7", "--error-threshold", "0.01,0.5")
    assert "FAIL test_transdata_001_subcase_1" in loose.output  # an error >= 0.1 fails whatever the share


def test_the_precision_standard():
    g = np.ones(1000, np.float32)
    a = g.copy()
    a[:40] = 1.005  # relative error 0.005: within 0.01
    assert compare_output(a, g, (0.01, 0.05))["status"] == "pass"
    a[:40] = 1.02  # 4% of elements err by 0.02: within a 5% share, below the 0.1 cap
    assert compare_output(a, g, (0.01, 0.05))["status"] == "pass"
    a[:60] = 1.02
    assert compare_output(a, g, (0.01, 0.05))["status"] == "fail"
    a = g.copy()
    a[0] = 1.2  # one element off by 0.17 relative: the cap fails it
    assert compare_output(a, g, (0.01, 0.05))["status"] == "fail"
    a = g.copy()
    a[0] = np.nan
    assert compare_output(a, g, (0.01, 0.0))["status"] == "fail"
    i = np.arange(10, dtype=np.int32)
    assert compare_output(i, i, (0.01, 0.05))["status"] == "pass"
    assert compare_output(i + (i == 3), i, (0.5, 0.5))["status"] == "fail"


# ---- bad case files: every problem, before anything runs ----------------------------------

def test_bad_case_files_name_the_file_case_and_field(tmp_path):
    good = json.loads((EXAMPLES / "tile_case.json").read_text())[0]

    def variant(**changes):
        case = json.loads(json.dumps(good))
        for key, value in changes.items():
            if value is None:
                case.pop(key)
            else:
                case[key] = value
        return case

    cases = [
        variant(case_name="A", op="Conv2D", calc_expect_func_file=None),
        variant(case_name="B", input_desc=None),
        variant(case_name="C", fuzz_impl="fuzz.py:fuzz_branch"),
        variant(case_name="D", output_desc=[{"name": "y", "format": "ND", "type": ["float16", "int8"],
                                             "shape": [[1, 1], [2, 384]]}]),
        variant(case_name="E", input_desc=[{**good["input_desc"][0], "type": ["float16", "int8", "int16"]},
                                           good["input_desc"][1]]),
        variant(case_name="F", input_desc=[{**good["input_desc"][0], "shape": "64x48"}, good["input_desc"][1]]),
        variant(case_name="G", input_desc=[good["input_desc"][0], {**good["input_desc"][1], "value": "missing.bin"}]),
        variant(case_name="H", input_desc=[{**good["input_desc"][0], "data_distribute": "gauss"},
                                           good["input_desc"][1]]),
        variant(case_name="I", input_desc=[{**good["input_desc"][0], "value_range": [[0, 1000]]},
                                           good["input_desc"][1]]),
    ]
    path = _write(tmp_path, cases)
    with pytest.raises(MsopstCaseError) as caught:
        load_msopst([path])
    text = str(caught.value)
    where = f"case file {path}: case"
    for expected in (
        f"{where} 'A': field 'op': op type 'Conv2D' is not one the twin implements (op types: Tile, TileD, "
        "ApplyAdamW, TransData, Transpose, and yours registered): name its expected-data function in "
        "calc_expect_func_file",
        f"{where} 'B': field 'input_desc': missing",
        f"{where} 'C': field 'fuzz_impl': fuzz cases (fuzz_impl, fuzz_case_num) are not supported",
        f"{where} 'D' subcase 0: field 'output_desc[0].shape': [1, 1]: Tile gives [128, 144]",
        f"{where} 'E': field 'input_desc[0]': fields that line up have lists of different lengths: format (2), "
        "type (3), shape (2)",
        f"{where} 'F': field 'input_desc[0].shape': must be a shape",
        f"{where} 'H': field 'input_desc[0].data_distribute': unknown distribution 'gauss'",
        f"{where} 'I' subcase 1: field 'input_desc[0]': uniform value_range: [0.0, 1000.0] is outside int8",
    ):
        assert expected in text, (expected, text)
    assert f"{where} 'G'" in text and "missing.bin: No such file or directory" in text
    result = _run("msopst", "gen", path, "--out", tmp_path / "out", "--no-cache")
    assert result.exit_code == 1 and result.output.startswith("Error: ") and not (tmp_path / "out").exists()


def test_value_files_are_read_relative_to_the_case_file(tmp_path):
    case = json.loads((EXAMPLES / "tile_case.json").read_text())[0]
    x = (np.arange(64 * 48) % 7).astype(np.float16)
    x.tofile(tmp_path / "x.bin")
    case["input_desc"][0] = {**case["input_desc"][0], "type": "float16", "format": "ND", "shape": [64, 48],
                             "value": "x.bin"}
    case["output_desc"][0] = {**case["output_desc"][0], "type": "float16", "format": "ND", "shape": [128, 144]}
    path = _write(tmp_path, [case])
    out = tmp_path / "out"
    assert _run("msopst", "gen", path, "--out", out, "--no-cache").exit_code == 0
    data = out / "tile" / "data"
    assert (data / "test_tile_001_subcase_0_input0_float16.bin").read_bytes() == x.tobytes()
    expect = np.fromfile(data / "test_tile_001_subcase_0_expect_np_output0_float16.bin", np.float16)
    assert expect.tobytes() == np.tile(x.reshape(64, 48), (2, 3)).tobytes()


# ---- an op the twin does not implement: the case's own expected-data function ---------------------

ADD_CUSTOM = {"case_name": "Test_AddCustom_001", "op": "AddCustom",
              "calc_expect_func_file": "test_add_custom.py:calc_expect_func",
              "input_desc": [{"name": "x", "format": ["ND"], "type": ["float16", "float32"], "shape": [8, 64],
                              "data_distribute": ["uniform"], "value_range": [[0.1, 1.0]]},
                             {"name": "y", "format": ["ND"], "type": ["float16", "float32"], "shape": [8, 64],
                              "data_distribute": ["uniform"], "value_range": [[0.1, 1.0]]}],
              "output_desc": [{"name": "z", "format": ["ND"], "type": ["float16", "float32"], "shape": [8, 64]}],
              "attr": [{"name": "alpha", "type": "float", "value": 2.0}]}
EXPECT_FUNC = '''
import numpy as np

CALLS = []


def calc_expect_func(x, y, z, alpha):
    CALLS.append(sorted(z))
    return [x["value"] + alpha * y["value"]]


def with_kwargs(**kwargs):
    return kwargs["x"]["value"] * 2


def AddCustom(x, y, z, alpha):  # noqa: N802 - named as the op type: "file.py" alone finds it
    raise KeyError("nope")
'''


def test_a_case_files_own_expected_data_function_computes_an_op_the_twin_does_not_ship(tmp_path):
    (tmp_path / "test_add_custom.py").write_text(EXPECT_FUNC)
    case_file = _write(tmp_path, [ADD_CUSTOM, {**ADD_CUSTOM, "case_name": "Test_AddCustom_002",
                                               "calc_expect_func_file": "test_add_custom.py:with_kwargs"}])
    result = _run("msopst", "gen", case_file, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    module = next(m for n, m in sys.modules.items() if n.startswith("ascend_numba_expect_"))
    assert sorted(map(tuple, module.CALLS)) == [("dtype", "format", "shape")] * 2  # once a subcase: fp16, fp32
    subs = load_msopst([case_file])
    data = tmp_path / "out" / "addcustom" / "data"
    for sub in subs:
        dtype = np.float16 if sub.inputs[0]["type"] == "float16" else np.float32
        x, y = (np.fromfile(data / input_file(sub, k), dtype) for k in range(2))
        got = np.fromfile(data / expect_file(sub, 0), dtype)
        want = x * 2 if sub.case_name.endswith("002") else x + dtype(2.0) * y
        assert got.tobytes() == want.astype(dtype).tobytes() and not np.array_equal(x, y), sub.name


def test_a_missing_expected_data_function_is_named_before_anything_runs(tmp_path):
    (tmp_path / "test_add_custom.py").write_text(EXPECT_FUNC)
    case_file = _write(tmp_path, [{**ADD_CUSTOM, "calc_expect_func_file": "test_add_custom.py:nowhere"},
                                  {**ADD_CUSTOM, "case_name": "no_func", "calc_expect_func_file": None}])
    with pytest.raises(MsopstCaseError, match=r"field 'calc_expect_func_file': .* has no function 'nowhere'"):
        load_msopst([case_file])
    bare = _write(tmp_path, [{k: v for k, v in ADD_CUSTOM.items() if k != "calc_expect_func_file"}], "bare.json")
    with pytest.raises(MsopstCaseError, match=r"'AddCustom' is not one the twin implements .* calc_expect_func_file"):
        load_msopst([bare])


def test_an_expected_data_function_that_raises_is_named(tmp_path):
    (tmp_path / "test_add_custom.py").write_text(EXPECT_FUNC)
    case_file = _write(tmp_path, [{**ADD_CUSTOM, "calc_expect_func_file": "test_add_custom.py"}])  # the op's name
    result = _run("msopst", "gen", case_file, "--out", tmp_path / "out")
    assert result.exit_code == 1 and "case 'Test_AddCustom_001': AddCustom(x, y, z, alpha) raised KeyError" in \
        result.output
