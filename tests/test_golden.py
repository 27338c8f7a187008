"""Golden generation: CLI end to end, determinism, workers, Dask, cache, verify, bad case files, fixture."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from ascend_numba.cli import main
from ascend_numba.golden import REGISTRY, CaseError, compare, compute_case, load_cases, parse_cases
from ascend_numba.dtypes import dtype_by_name

SUITE = {"cases": [
    {"name": "tile_f16", "op": "tile", "dtype": "float16", "seed": 1,
     "inputs": {"x": {"shape": [33, 5], "dist": {"uniform": [-2, 2]}}}, "attrs": {"reps": [2, 3]}},
    {"name": "repeat_i8", "op": "repeat", "dtype": "int8", "seed": 2,
     "inputs": {"x": {"shape": [7, 3], "dist": {"integers": [-100, 100]}}}, "attrs": {"repeats": [2, 1, 4]}},
    {"name": "adamw_bf16", "op": "apply_adamw", "dtype": "bfloat16", "seed": 3,
     "inputs": {n: {"shape": [1000], "dist": {"normal": [0, 1]}} for n in ("var", "m", "grad")}
     | {"v": {"shape": [1000], "dist": {"uniform": [0, 0.01]}},
        "max_grad_norm": {"shape": [1000], "dist": {"uniform": [0, 0.02]}}},
     "attrs": {"beta1_power": 0.9, "beta2_power": 0.99, "lr": 1e-3, "weight_decay": 0.01, "beta1": 0.9,
               "beta2": 0.99, "epsilon": 1e-8, "amsgrad": True}},
    {"name": "adamw_f16_a2", "op": "apply_adamw", "dtype": "float16", "seed": 4,
     "inputs": {n: {"shape": [10, 30], "dist": {"special": [0, 0.5, -0.5, "inf", 1e-7]}}
                for n in ("var", "m", "v", "grad")},
     "attrs": {"beta1_power": 0.9, "beta2_power": 0.999, "lr": 1e-3, "weight_decay": 0.0, "beta1": 0.9,
               "beta2": 0.999, "epsilon": 1e-4, "variant": "a2"}},
    {"name": "transpose_u8", "op": "transpose2d", "dtype": "uint8", "seed": 5,
     "inputs": {"x": {"shape": [50, 70], "dist": {"integers": [0, 255]}}}},
    {"name": "to_5hd", "op": "convert_format", "dtype": "float32", "seed": 6,
     "inputs": {"x": {"shape": [2, 11, 3, 4]}}, "attrs": {"src": "NCHW", "dst": "NC1HWC0"}},
    {"name": "to_fz3d", "op": "convert_format", "dtype": "int16", "seed": 7,
     "inputs": {"x": {"shape": [3, 20, 2, 3, 3]}}, "attrs": {"src": "NCDHW", "dst": "FRACTAL_Z_3D", "n0": 4}},
]}


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(SUITE))
    return path


def _run(args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.bin"))}


def test_cli_end_to_end_layout_and_sha256(suite_file, tmp_path):
    out = tmp_path / "out"
    result = _run(["golden", suite_file, "--out", out, "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "7 cases" in result.output and "MB/s" in result.output
    for case in SUITE["cases"]:
        root = out / case["name"]
        meta = json.loads((root / "case.json").read_text())
        assert meta["seed"] == case["seed"] and meta["op"] == case["op"] and meta["version"]
        for group in ("inputs", "outputs"):
            for name, info in meta[group].items():
                data = (root / info["file"]).read_bytes()
                assert hashlib.sha256(data).hexdigest() == info["sha256"], (case["name"], name)
                assert len(data) == int(np.prod(info["shape"])) * dtype_by_name(info["dtype"]).itemsize
        assert sorted(p.name for p in (root / "input").iterdir()) == sorted(f"{n}.bin" for n in case["inputs"])
        assert (root / "output" / "golden.bin").exists()
    adamw = out / "adamw_bf16" / "output"
    assert sorted(p.name for p in adamw.iterdir()) == ["golden.bin", "golden_m.bin", "golden_v.bin"]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_goldens_equal_the_numpy_references():
    for case in parse_cases(SUITE):
        inputs, outputs, _ = compute_case(case, None)
        ref = REGISTRY[case.op].reference(inputs, case.attrs)
        for name, arr in outputs.items():
            assert arr.dtype == ref[name].dtype and arr.tobytes() == ref[name].tobytes(), (case.name, name)


def test_deterministic_across_runs_and_workers(suite_file, tmp_path):
    _run(["golden", suite_file, "--out", tmp_path / "a", "--no-cache"])
    _run(["golden", suite_file, "--out", tmp_path / "b", "--no-cache"])
    _run(["golden", suite_file, "--out", tmp_path / "c", "--no-cache", "--workers", "2"])
    a, b, c = (_tree(tmp_path / d) for d in "abc")
    assert a == b == c and len(a) == 14 + 11  # every input and output file


def test_dask_local_cluster_same_bytes(suite_file, tmp_path):
    distributed = pytest.importorskip("distributed")
    _run(["golden", suite_file, "--out", tmp_path / "local", "--no-cache"])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        result = _run(["golden", suite_file, "--out", tmp_path / "dask", "--no-cache",
                       "--scheduler", cluster.scheduler_address])
    assert result.exit_code == 0, result.output
    assert _tree(tmp_path / "local") == _tree(tmp_path / "dask")


def test_cache_hit_on_second_run(suite_file, tmp_path):
    cache = tmp_path / "cache"
    first = _run(["golden", suite_file, "--out", tmp_path / "o1", "--cache-dir", cache])
    second = _run(["golden", suite_file, "--out", tmp_path / "o2", "--cache-dir", cache])
    assert "0 from cache" in first.output and "7 from cache" in second.output
    assert _tree(tmp_path / "o1") == _tree(tmp_path / "o2")
    # A corrupted entry is a miss, not a wrong golden.
    for f in cache.rglob("*.bin"):
        f.write_bytes(b"\0" * f.stat().st_size)
    third = _run(["golden", suite_file, "--out", tmp_path / "o3", "--cache-dir", cache])
    assert "0 from cache" in third.output and _tree(tmp_path / "o3") == _tree(tmp_path / "o1")


def test_verify_pass_and_fail(suite_file, tmp_path):
    _run(["golden", suite_file, "--out", tmp_path / "out", "--no-cache"])
    golden = tmp_path / "out" / "tile_f16" / "output" / "golden.bin"
    ok = _run(["verify", golden, golden, "--dtype", "float16"])
    assert ok.exit_code == 0 and "PASS" in ok.output
    data = np.fromfile(golden, np.float16)
    bad = data.copy()
    bad[[3, 17]] += np.float16(1.0)
    perturbed = tmp_path / "bad.bin"
    bad.tofile(perturbed)
    report = _run(["verify", golden, perturbed, "--dtype", "float16"])
    assert report.exit_code == 1 and "FAIL" in report.output
    assert f"{data.size - 2}/{data.size} elements within tolerance" in report.output
    assert "first mismatches (index: golden vs actual): 3:" in report.output and "17:" in report.output
    assert "max abs error 1" in report.output
    # int8: exact rule
    g8 = tmp_path / "out" / "repeat_i8" / "output" / "golden.bin"
    assert _run(["verify", g8, g8, "--dtype", "int8"]).exit_code == 0


def test_precision_rules():
    g = np.ones(10000, np.float32)
    a = g.copy()
    a[0] = 1.001  # 1 of 10000 outside 1e-4: 99.99% within -> pass
    assert compare(g, a, "float32").passed
    a[1] = 1.001
    assert not compare(g, a, "float32").passed
    h = np.ones(1000, np.float16)
    b = h.copy()
    b[0] = np.float16(1.01)
    assert compare(h, b, "float16").passed and not compare(h, b * np.float16(1.01), "float16").passed
    i = np.arange(10, dtype=np.int32)
    assert compare(i, i, "int32").passed and not compare(i, i + (i == 5), "int32").passed
    n = np.array([np.nan, np.inf, 1.0], np.float32)
    assert compare(n, n.copy(), "float32").passed


BAD = [
    ({"cases": [{"name": "a", "op": "tile", "dtype": "float32", "inputs": {"x": {"shape": [2]}},
                 "attrs": {"reps": 2}}] * 2}, "case 'a': field 'name': duplicate case name"),
    ({"cases": [{"name": "i", "op": "tile", "dtype": "float32", "attrs": {"reps": 2}}]},
     "case 'i': field 'inputs.x': missing"),
    ({"cases": [{"name": "u", "op": "gemm", "dtype": "float32"}]}, "case 'u': field 'op': unknown op 'gemm'"),
    ({"cases": [{"name": "d", "op": "apply_adamw", "dtype": "int8"}]}, "case 'd': field 'dtype'"),
    ({"cases": [{"name": "m", "op": "tile", "dtype": "float32", "inputs": {"x": {"shape": [2]}}}]},
     "case 'm': field 'attrs.reps': missing"),
    ({"cases": [{"name": "s", "op": "transpose2d", "dtype": "float32", "inputs": {"x": {"shape": [2, 3, 4]}}}]},
     "case 's': field 'inputs.x.shape': must have 2 dims"),
    ({"cases": [{"name": "n", "op": "tile", "dtype": "float32", "inputs": {"x": {"shape": [-1]}},
                 "attrs": {"reps": 2}}]}, "case 'n': field 'inputs.x.shape'"),
    ({"cases": [{"op": "tile", "dtype": "float32"}]}, "case '#0': field 'name': missing"),
    ({"cases": [{"name": "w", "op": "apply_adamw", "dtype": "float32",
                 "inputs": {n: {"shape": [4]} for n in ("var", "m", "v")} | {"grad": {"shape": [5]}},
                 "attrs": {k: 0.5 for k in ("beta1_power", "beta2_power", "lr", "weight_decay", "beta1", "beta2",
                                            "epsilon")}}]}, "case 'w': field 'inputs.grad.shape'"),
    ({"cases": [{"name": "x", "op": "tile", "dtype": "float32", "inputs": {"x": {"shape": [2],
                 "dist": {"gauss": [0, 1]}}}, "attrs": {"reps": 2}}]}, "case 'x': field 'inputs.x.dist'"),
    ({"cases": [{"name": "y", "op": "tile", "dtype": "float32", "inputs": {"x": {"shape": [2]}},
                 "attrs": {"reps": 2, "speed": 3}}]}, "case 'y': field 'attrs.speed': unknown attribute"),
    ({"cases": [{"name": "z", "op": "convert_format", "dtype": "float32", "inputs": {"x": {"shape": [1, 2, 3, 4]}},
                 "attrs": {"src": "NCHW", "dst": "FRACTAL_Z"}}]}, "case 'z': field 'attrs.dst'"),
]


@pytest.mark.parametrize("doc, message", BAD, ids=[m.split(":")[0] + str(i) for i, (_, m) in enumerate(BAD)])
def test_bad_case_files_rejected_naming_case_and_field(tmp_path, doc, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CaseError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_cases(path)
    result = _run(["golden", path, "--out", tmp_path / "out", "--no-cache"])
    assert result.exit_code != 0 and message.split(":")[0] in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing half-written


def test_unparseable_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("cases: [unclosed")
    with pytest.raises(CaseError, match="not valid YAML"):
        load_cases(path)


def test_pytest_fixture(pytester, tmp_path):
    pytester.makepyfile("""
        import numpy as np

        def test_uses_golden(golden):
            case = golden("tile", dtype="float16", inputs={"x": {"shape": [6, 4]}}, attrs={"reps": [2, 3]}, seed=9)
            assert np.array_equal(case.outputs["y"], np.tile(case.inputs["x"], (2, 3)))
            again = golden("tile", dtype="float16", inputs={"x": {"shape": [6, 4]}}, attrs={"reps": [2, 3]}, seed=9)
            assert again.cache_hit and again.outputs["y"].tobytes() == case.outputs["y"].tobytes()
    """)
    result = pytester.runpytest_subprocess("--golden-cache-dir", str(tmp_path / "cache"), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
