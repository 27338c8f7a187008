"""Hostile input across the public entry points: a clear error naming the argument, nothing
changed, no crash, no hang, no wrong answer, no lost directory."""

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

import ascend_numba as an
from ascend_numba import aclnn
from ascend_numba.cli import main as cli
from ascend_numba.host.platform import MIN_UB_BYTES
from ascend_numba.ops.adamw.reference import apply_adamw_reference

import hostile_cases

HERE = Path(__file__).resolve().parent


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))  # a runaway allocation fails, not the machine


def test_every_entry_point_rejects_bad_input_clearly_and_changes_nothing():
    done = subprocess.run([sys.executable, str(HERE / "hostile_cases.py")], capture_output=True, text=True,
                          timeout=900, preexec_fn=_limited, cwd=HERE)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    started = [r["start"] for r in rows if "start" in r]
    results = {r["case"]: r for r in rows if "case" in r}
    assert done.returncode == 0, f"crashed in case {started[-1]!r}: {done.stderr[-2000:]}"
    assert set(results) == {c.name for c in hostile_cases.CASES}
    for name, r in results.items():
        assert r["raised"], f"{name}: no error"
        assert r["expected"] in r["raised"], f"{name}: raised {r['raised'][0]}: {r['message']}"
        assert r["names"] in r["message"], f"{name}: message does not name {r['names']!r}: {r['message']}"
        assert r["unchanged"], f"{name}: an array changed"


# ---- overlapping arguments: a defined result, or a clear error ------------------------------------

def test_transpose2d_into_its_own_input_gives_the_transpose_of_the_input():
    x = np.arange(256 * 256, dtype=np.float32).reshape(256, 256)
    expected = x.T.copy()
    assert np.array_equal(an.transpose2d(x, out=x), expected)


def test_staged_copy_between_overlapping_views_copies_the_source_as_it_was():
    b = np.arange(20000, dtype=np.float64)
    expected = b[:-1000].copy()
    an.staged_copy(b[:-1000], out=b[1000:])
    assert np.array_equal(b[1000:], expected)


def test_tile_into_an_overlapping_out_tiles_the_input_as_it_was():
    b = np.arange(64, dtype=np.int16)
    expected = np.tile(b[:32], 2)
    out = b.reshape(1, 64)[0]
    an.tile(b[:32], 2, out=out)
    assert np.array_equal(out, expected)


@pytest.mark.parametrize("alias", ["grad", "max_grad_norm"])
def test_apply_adamw_exact_alias_of_a_read_tensor_is_well_defined(alias):
    rng = np.random.default_rng(1)
    var, m, v = (rng.random(1000).astype(np.float32) for _ in range(3))
    other = rng.random(1000).astype(np.float32)
    kw = dict(amsgrad=True)
    grad, mgn = (var, other) if alias == "grad" else (other, var)
    expected = apply_adamw_reference(var.copy(), m.copy(), v.copy(), 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8,
                                     grad.copy(), mgn.copy(), **kw)
    got = an.apply_adamw(var, m, v, 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, grad, mgn, **kw)
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)


@pytest.mark.parametrize("pair", [("var", "grad"), ("grad", "var"), ("m", "grad")])
def test_apply_adamw_partial_overlap_is_an_error_and_changes_nothing(pair):
    b = np.random.default_rng(2).random(100001).astype(np.float32)
    tensors = {n: np.zeros(100000, np.float32) for n in ("var", "m", "v", "grad")}
    tensors[pair[0]], tensors[pair[1]] = b[1:], b[:-1]
    before = b.copy()
    with pytest.raises(an.ParamInvalidError, match="overlap"):
        an.apply_adamw(tensors["var"], tensors["m"], tensors["v"], 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8,
                       tensors["grad"])
    assert np.array_equal(b, before)


# ---- platforms -----------------------------------------------------------------------------------

def test_every_op_runs_on_the_smallest_platform_accepted():
    plat = an.Platform("T", "t", 2, 4, ub_size=MIN_UB_BYTES)
    rng = np.random.default_rng(3)
    for shape, reps in [((64, 48), (2, 3)), ((5,), (3000,)), ((300, 8), (1, 5)), ((100, 3), (2, 4)),
                        ((4, 4, 3), (1, 2, 4))]:
        for dtype in (np.int8, np.float32, np.complex128):
            x = rng.integers(0, 100, shape).astype(dtype)
            assert np.array_equal(an.tile(x, reps, platform=plat), np.tile(x, reps))
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        a = [rng.random(3000).astype(dtype) for _ in range(5)]
        expected = apply_adamw_reference(*[t.copy() for t in a[:3]], 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, a[3],
                                         a[4], amsgrad=True)
        got = an.apply_adamw(*a[:3], 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, a[3], a[4], amsgrad=True,
                             platform=plat)
        assert all(np.array_equal(e.view(np.uint8), g.view(np.uint8)) for e, g in zip(expected, got))
    x = rng.integers(0, 100, (300, 257)).astype(np.float16)
    assert np.array_equal(an.transpose2d(x, platform=plat), x.T)
    x = rng.random((2, 40, 9, 9)).astype(np.float16)
    y = an.convert_format(x, "NCHW", "NC1HWC0", platform=plat)
    assert np.array_equal(an.convert_format(y, "NC1HWC0", "NCHW", c=40, platform=plat), x)
    b = rng.random(10000)
    assert np.array_equal(an.staged_copy(b, platform=plat), b)


def test_output_pool_size_takes_units(tmp_path):
    code = "import ascend_numba as an; print(an.output_pool_info()['limit'])"
    for text, expected in (("64MB", 64 << 20), ("2GiB", 2 << 30), ("1048576", 1 << 20)):
        out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, ASCEND_NUMBA_OUTPUT_POOL=text),
                             capture_output=True, text=True, check=True)
        assert int(out.stdout) == expected
    bad = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, ASCEND_NUMBA_OUTPUT_POOL="lots"),
                         capture_output=True, text=True, check=True)
    assert int(bad.stdout) == 512 << 20 and "ASCEND_NUMBA_OUTPUT_POOL" in bad.stderr


# ---- aclnn: statuses, never exceptions -----------------------------------------------------------

def test_aclnn_returns_a_status_when_a_tensor_changed_after_get_workspace_size():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.zeros((4, 3), np.float32)
    status, _, executor = aclnn.aclnnRepeatGetWorkspaceSize(x, (2, 1), out)
    assert status == 0
    out.flags.writeable = False
    assert aclnn.aclnnRepeat(None, 0, executor) == aclnn.ACLNN_ERR_PARAM_INVALID
    assert "writeable" in aclnn.aclGetRecentErrMsg()
    assert not out.any()
    var, m, v, g = (np.ones(10, np.float32) for _ in range(4))
    status, _, executor = aclnn.aclnnApplyAdamWGetWorkspaceSize(var, m, v, .9, .99, 1e-3, .01, .9, .99, 1e-8, g,
                                                                None, False, False)
    var.resize(5, refcheck=False)
    assert aclnn.aclnnApplyAdamW(None, 0, executor) == aclnn.ACLNN_ERR_PARAM_INVALID
    assert (m == 1).all() and (v == 1).all()


def test_aclnn_adamw_status_for_a_huge_scalar_and_for_aliases():
    var, m, v, g = (np.ones(10, np.float32) for _ in range(4))
    status, _, _ = aclnn.aclnnApplyAdamWGetWorkspaceSize(var, m, v, 10 ** 400, .99, 1e-3, .01, .9, .99, 1e-8, g,
                                                         None, False, False)
    assert status == aclnn.ACLNN_ERR_PARAM_INVALID and "beta1_power" in aclnn.aclGetRecentErrMsg()
    status, _, _ = aclnn.aclnnApplyAdamWGetWorkspaceSize(var, var, v, .9, .99, 1e-3, .01, .9, .99, 1e-8, g,
                                                         None, False, False)
    assert status == aclnn.ACLNN_ERR_PARAM_INVALID and "share memory" in aclnn.aclGetRecentErrMsg()


# ---- the golden CLI ----------------------------------------------------------------------------

BASE = {"name": "c", "op": "tile", "dtype": "float32", "inputs": {"x": {"shape": [4, 4]}}, "attrs": {"reps": [2, 2]}}
BAD_CASES = {
    "name .": (dict(BASE, name="."), "'name'"),
    "name ..": (dict(BASE, name=".."), "'name'"),
    "name with a slash": (dict(BASE, name="a/b"), "'name'"),
    "hidden name": (dict(BASE, name=".x"), "'name'"),
    "op as a list": (dict(BASE, op=["tile"]), "'op'"),
    "dtype as a list": (dict(BASE, dtype=["float32"]), "'dtype'"),
    "shape past the element limit": (dict(BASE, inputs={"x": {"shape": [10 ** 12]}}), "inputs.x.shape"),
    "shape whose size wraps int64": (dict(BASE, inputs={"x": {"shape": [2 ** 33, 2 ** 31]}}), "inputs.x.shape"),
    "uniform to inf": (dict(BASE, inputs={"x": {"shape": [4], "dist": {"uniform": [0, "inf"]}}}), "uniform"),
    "uniform range past float64": (dict(BASE, inputs={"x": {"shape": [4], "dist": {"uniform": [-1e308, 1e308]}}}),
                                   "high - low"),
    "negative std": (dict(BASE, inputs={"x": {"shape": [4], "dist": {"normal": [0, -1]}}}), "normal"),
    "integers low > high": (dict(BASE, inputs={"x": {"shape": [4], "dist": {"integers": [5, 1]}}}), "integers"),
    "reps past the element limit": (dict(BASE, attrs={"reps": [10 ** 9, 10 ** 9]}), "'attrs'"),
    "convert c0=5": ({"name": "c", "op": "convert_format", "dtype": "float16",
                      "inputs": {"x": {"shape": [1, 16, 2, 2]}},
                      "attrs": {"src": "NCHW", "dst": "NC1HWC0", "c0": 5}}, "attrs.c0"),
}


@pytest.mark.parametrize("label", sorted(BAD_CASES))
def test_golden_rejects_a_bad_case_file_before_running_anything(tmp_path, label):
    case, field = BAD_CASES[label]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"cases": [case]}))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["golden", str(path), "--out", str(out)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and field in result.output
    assert not out.exists() or not any(out.iterdir())


def test_golden_reports_unusable_files_and_directories(tmp_path):
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("cases: [{name: \xe9}]".encode("latin-1"))
    result = CliRunner().invoke(cli, ["golden", str(latin), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "UTF-8" in result.output
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"cases": [dict(BASE, dtype="int8")]}))
    blocker = tmp_path / "file"
    blocker.write_text("")
    for option in ("--out", "--cache-dir"):
        args = ["golden", str(good), "--out", str(tmp_path / "o2"), option, str(blocker / "sub")]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1 and option in result.output and "Traceback" not in result.output


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"cases": [dict(BASE, dtype="int8")]}))
    result = CliRunner().invoke(cli, ["golden", str(good), "--out", str(tmp_path / "o"), "--scheduler",
                                      "tcp://127.0.0.1:9", "--scheduler-timeout", "2"])
    assert result.exit_code == 1 and "cannot reach the Dask scheduler" in result.output
    assert "Traceback" not in result.output


def test_verify_rejects_partial_elements_and_size_mismatch(tmp_path):
    golden, actual = tmp_path / "g.bin", tmp_path / "a.bin"
    np.arange(4, dtype=np.float32).tofile(golden)
    actual.write_bytes(golden.read_bytes() + b"\0\0")
    result = CliRunner().invoke(cli, ["verify", str(golden), str(actual), "--dtype", "float32"])
    assert result.exit_code == 1 and "whole number" in result.output
    golden.write_bytes(b"\0" * 10)
    actual.write_bytes(b"\0" * 10)
    result = CliRunner().invoke(cli, ["verify", str(golden), str(actual), "--dtype", "float32"])
    assert result.exit_code == 1 and "whole number" in result.output
    np.arange(4, dtype=np.float32).tofile(golden)
    np.arange(3, dtype=np.float32).tofile(actual)
    result = CliRunner().invoke(cli, ["verify", str(golden), str(actual), "--dtype", "float32"])
    assert result.exit_code == 1 and "3 float32 elements" in result.output


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                found.add(int(entry.name))
    return found


def test_sigterm_stops_every_worker_and_leaves_no_partial_case(tmp_path):
    cases = [dict(BASE, name=f"case{i}", dtype="float32", inputs={"x": {"shape": [512, 1024]}},
                  attrs={"reps": [4, 4]}) for i in range(40)]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"cases": cases}))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "ascend_numba.cli", "golden", str(path), "--out", str(out),
                             "--workers", "2", "--no-cache"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out.exists() and any(p.is_dir() and not p.name.startswith(".")
                                                                   for p in out.iterdir())):
        time.sleep(0.2)
    workers = _children(proc.pid)
    assert workers, "no worker processes started"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    time.sleep(1)
    assert not any(Path(f"/proc/{w}").exists() and "zombie" not in Path(f"/proc/{w}/status").read_text().lower()
                   for w in workers), "a worker outlived the run"
    written = sorted(p.name for p in out.iterdir())
    assert not [n for n in written if n.startswith(".")], f"work directories left: {written}"
    for name in written:
        assert (out / name / "case.json").exists(), f"{name} looks complete but has no case.json"
    time.sleep(2)
    assert sorted(p.name for p in out.iterdir()) == written, "cases appeared after the run stopped"
