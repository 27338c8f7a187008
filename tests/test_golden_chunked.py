"""Golden cases larger than memory: chunked runs equal in-memory runs byte for byte, with any
number of workers or on Dask, and an interrupted chunked case never looks complete."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_numba.cli import main
from ascend_numba.golden import parse_cases
from ascend_numba.golden.cases import INPUT_BLOCK, case_bytes, generate_inputs, generate_range, physical_memory
from ascend_numba.golden.chunked import (DIRECT_ALIGN, DIRECT_MIN_BYTES, MAX_CHUNK_BYTES, PrefixHash, chunk_budget,
                                         needs_chunks, parse_memory_limit, plan_tasks, write_pieces)
from ascend_numba.golden.run import _InlineRunner, run_chunked_case
from ascend_numba.ops import REGISTRY

ADAMW = {"beta1_power": 0.9, "beta2_power": 0.99, "lr": 1e-3, "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.99,
         "epsilon": 1e-8}


def _adamw(name, dtype, n, **attrs):
    inputs = {k: {"shape": [n], "dist": {"normal": [0, 1]}} for k in ("var", "m", "grad")}
    inputs["v"] = {"shape": [n], "dist": {"uniform": [0, 0.01]}}
    if attrs.get("amsgrad"):
        inputs["max_grad_norm"] = {"shape": [n], "dist": {"uniform": [0, 0.02]}}
    return {"name": name, "op": "apply_adamw", "dtype": dtype, "seed": 3, "inputs": inputs, "attrs": ADAMW | attrs}


def _convert(name, dtype, shape, **attrs):
    return {"name": name, "op": "convert_format", "dtype": dtype, "seed": 6, "inputs": {"x": {"shape": shape}},
            "attrs": attrs}


# Every op and conversion, every element width each takes, each case a few hundred KB at most:
# with a 64 KB limit every one of them runs in chunks (16 KB each).
SUITE = {"cases": [
    {"name": "tile_f32", "op": "tile", "dtype": "float32", "seed": 1,
     "inputs": {"x": {"shape": [37, 100]}}, "attrs": {"reps": [3, 2]}},
    {"name": "tile_i8_3d", "op": "tile", "dtype": "int8", "seed": 1,
     "inputs": {"x": {"shape": [5, 70, 3], "dist": {"integers": [-128, 127]}}}, "attrs": {"reps": [2, 3, 40]}},
    {"name": "tile_1d_long", "op": "tile", "dtype": "float16", "seed": 1,
     "inputs": {"x": {"shape": [9]}}, "attrs": {"reps": [9000]}},
    {"name": "tile_c128", "op": "tile", "dtype": "complex128", "seed": 1,
     "inputs": {"x": {"shape": [30, 20]}}, "attrs": {"reps": [2, 3]}},
    {"name": "tile_bool", "op": "tile", "dtype": "bool", "seed": 1,
     "inputs": {"x": {"shape": [64, 33], "dist": {"integers": [0, 1]}}}, "attrs": {"reps": [5, 7]}},
    {"name": "repeat_i64", "op": "repeat", "dtype": "int64", "seed": 2,
     "inputs": {"x": {"shape": [7, 30], "dist": {"integers": [-1000, 1000]}}}, "attrs": {"repeats": [4, 3, 5]}},
    _adamw("adamw_f32", "float32", 9000),
    _adamw("adamw_f16_ams", "float16", 9000, amsgrad=True, maximize=True),
    _adamw("adamw_bf16_a2", "bfloat16", 9000, variant="a2"),
    {"name": "transpose_u8", "op": "transpose2d", "dtype": "uint8", "seed": 5,
     "inputs": {"x": {"shape": [300, 700], "dist": {"integers": [0, 255]}}}},
    {"name": "transpose_f32_tall", "op": "transpose2d", "dtype": "float32", "seed": 5,
     "inputs": {"x": {"shape": [20000, 3]}}},
    _convert("nchw_5hd_f16", "float16", [3, 19, 20, 21], src="NCHW", dst="NC1HWC0"),
    _convert("gnchw_5hd_f32", "float32", [2, 3, 11, 15, 16], src="GNCHW", dst="GNC1HWC0"),
    _convert("5hd_nchw_i8", "int8", [3, 2, 20, 20, 32], src="NC1HWC0", dst="NCHW", c=40),
    _convert("g5hd_gnchw_bf16", "bfloat16", [2, 2, 3, 16, 16, 16], src="GNC1HWC0", dst="GNCHW"),
    _convert("5hd_fz_f16", "float16", [20, 2, 5, 5, 16], src="NC1HWC0", dst="FRACTAL_Z"),
    _convert("g5hd_fz_i8", "int8", [3, 5, 2, 12, 12, 32], src="GNC1HWC0", dst="FRACTAL_Z", n0=8),
    _convert("fz3d_f32", "float32", [5, 20, 2, 6, 6], src="NCDHW", dst="FRACTAL_Z_3D"),
]}
LIMIT = "64KB"


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _bins(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.bin"))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The suite in memory and chunked (one worker), shared by the comparisons below."""
    root = tmp_path_factory.mktemp("chunked")
    path = root / "cases.yaml"
    path.write_text(yaml.safe_dump(SUITE))
    _run("golden", path, "--out", root / "memory", "--no-cache")
    _run("golden", path, "--out", root / "chunked", "--no-cache", "--memory-limit", LIMIT)
    return path, root


def test_every_case_of_the_suite_chunks_under_the_limit():
    for case in parse_cases(SUITE):
        assert needs_chunks(case, parse_memory_limit(LIMIT)), case.name
        assert len(plan_tasks(case, Path("unused"), parse_memory_limit(LIMIT))[-1]) > 2, case.name


def test_chunked_files_equal_the_in_memory_run_byte_for_byte(runs):
    _, root = runs
    memory, chunked = _bins(root / "memory"), _bins(root / "chunked")
    assert len(memory) == sum(len(c["inputs"]) + len(REGISTRY[c["op"]].outputs) for c in SUITE["cases"])
    assert memory.keys() == chunked.keys()
    assert [name for name in memory if memory[name] != chunked[name]] == []


def test_chunked_case_json_lists_the_same_files_and_says_it_was_chunked(runs):
    _, root = runs
    for case in SUITE["cases"]:
        whole = json.loads((root / "memory" / case["name"] / "case.json").read_text())
        meta = json.loads((root / "chunked" / case["name"] / "case.json").read_text())
        assert "chunked" not in whole
        assert meta["chunked"]["chunks"] > 2 and "not cached" in meta["chunked"]["cache"]
        assert meta["chunked"]["memory_limit"] == 64 << 10
        assert {k: v for k, v in meta.items() if k != "chunked"} == whole
        for info in (*meta["inputs"].values(), *meta["outputs"].values()):
            data = (root / "chunked" / case["name"] / info["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == info["sha256"]


def test_two_workers_and_a_dask_cluster_write_the_same_bytes(runs, tmp_path):
    distributed = pytest.importorskip("distributed")
    path, root = runs
    _run("golden", path, "--out", tmp_path / "two", "--no-cache", "--memory-limit", LIMIT, "--workers", "2")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        _run("golden", path, "--out", tmp_path / "dask", "--no-cache", "--memory-limit", LIMIT,
             "--scheduler", cluster.scheduler_address)
    expected = _bins(root / "memory")
    assert _bins(tmp_path / "two") == expected
    assert _bins(tmp_path / "dask") == expected


def test_progress_hears_every_byte_of_a_chunked_case(tmp_path):
    for doc in (SUITE["cases"][1], SUITE["cases"][7], SUITE["cases"][13]):
        case = parse_cases({"cases": [doc]})[0]
        heard = []
        result = run_chunked_case(_InlineRunner(), case, tmp_path, 1 << 16, heard.append)
        assert len(heard) > 2 and sum(heard) == case_bytes(case) == result.bytes


@pytest.mark.parametrize("op", ["tile", "transpose2d"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_chunks_cover_the_output_exactly_once(op, data):
    """Any shape, any budget: the chunks' ranges tile the output, and their bytes are the op's."""
    entry = REGISTRY[op]
    if op == "tile":
        shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
        attrs = {"reps": data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))}
    else:
        shape, attrs = tuple(data.draw(st.lists(st.integers(1, 40), min_size=2, max_size=2))), {}
    dtype = np.dtype(data.draw(st.sampled_from(["uint8", "float16", "int32", "float64"])))
    budget = data.draw(st.integers(1, 4096))
    x = np.random.default_rng(0).integers(0, 120, shape).astype(dtype)
    expected = entry.run({"x": x}, attrs)["y"].reshape(-1)
    got, seen = np.zeros_like(expected), np.zeros(expected.size, np.int64)
    for chunk in entry.chunking.plan(entry, {"x": shape}, attrs, dtype.itemsize, budget, INPUT_BLOCK):
        (offset, values), = entry.chunking.compute(entry, {"x": x}, attrs, chunk).values()
        got[offset:offset + values.size] = values
        seen[offset:offset + values.size] += 1
    assert (seen == 1).all() and got.tobytes() == expected.tobytes()


def test_inputs_do_not_depend_on_the_range_they_are_drawn_in():
    case = parse_cases({"cases": [_adamw("a", "bfloat16", 2 * INPUT_BLOCK + 12345)]})[0]
    whole = generate_inputs(case)["grad"]
    for start, count in ((0, 10), (INPUT_BLOCK - 3, 7), (INPUT_BLOCK + 5, INPUT_BLOCK + 12000), (12, 0)):
        part = generate_range(case, "grad", start, count)
        assert part.tobytes() == whole[start:start + count].tobytes()


def test_memory_limit_takes_shares_and_units():
    assert parse_memory_limit("64KB") == 64 << 10
    assert parse_memory_limit("2GiB") == 2 << 30
    assert parse_memory_limit("100%") == physical_memory()
    assert parse_memory_limit("12.5%") == int(physical_memory() * 0.125)
    assert chunk_budget(64 << 10) == 16 << 10 and chunk_budget(1 << 40) == MAX_CHUNK_BYTES
    for bad in ("0", "0%", "150%", "lots", "-5MB"):
        with pytest.raises(ValueError, match="--memory-limit"):
            parse_memory_limit(bad)
    result = CliRunner().invoke(main, ["golden", os.devnull, "--out", "unused", "--memory-limit", "lots"])
    assert result.exit_code != 0 and "--memory-limit" in result.output


def _work_dirs(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.startswith(".")] if out.exists() else []


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_chunked_run_never_leaves_a_complete_looking_case(tmp_path, how):
    doc = {"name": "big", "op": "tile", "dtype": "float32", "seed": 1, "inputs": {"x": {"shape": [2048, 1024]}},
           "attrs": {"reps": [8, 4]}}  # 264 MB in 1 MB chunks: about 2 s
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"cases": [doc]}))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "ascend_numba.cli", "golden", str(path), "--out", str(out), "--no-cache",
               "--memory-limit", "4MB"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    # Killed once its first output chunks are on disk.
    while time.monotonic() < deadline and not any(_starts_written(d / "output" / "golden.bin")
                                                  for d in _work_dirs(out)):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    proc.send_signal(how)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert not [p for p in out.iterdir() if not p.name.startswith(".")], "a case looks complete"
    if how == signal.SIGTERM:
        assert _work_dirs(out) == []  # cleaned up on the way out
    # The next run sweeps what a killed one left and writes the case whole.
    subprocess.run(command, check=True, capture_output=True)
    assert _work_dirs(out) == [] and (out / "big" / "case.json").exists()
    meta = json.loads((out / "big" / "case.json").read_text())
    y = out / "big" / "output" / "golden.bin"
    assert meta["outputs"]["y"]["sha256"] == hashlib.sha256(y.read_bytes()).hexdigest()
    x = np.fromfile(out / "big" / "input" / "x.bin", np.float32).reshape(2048, 1024)
    assert np.array_equal(np.fromfile(y, np.float32).reshape(8 * 2048, 4 * 1024), np.tile(x, (8, 4)))


def _starts_written(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return any(f.read(4096))
    except OSError:
        return False


def test_prefix_hash_takes_pieces_in_any_order_read_back_or_kept(tmp_path):
    data = np.random.default_rng(1).integers(0, 256, 5_000_003, dtype=np.uint8).tobytes()
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    cuts = [0, 1, 4096, 1_000_000, 1_000_000, 3_333_333, len(data)]
    pieces = list(zip(cuts[:-1], cuts[1:]))
    for order in (pieces, pieces[::-1], pieces[2:] + pieces[:2]):
        for kept in ("none", "all", "odd"):
            # A tiny bound on kept bytes: the writer waits for the hash instead of holding them.
            h = PrefixHash(path, len(data), max_waiting=1000)
            for i, (lo, hi) in enumerate(order):
                keep = kept == "all" or (kept == "odd" and i % 2)
                h.written(lo, hi - lo, memoryview(data)[lo:hi] if keep else None)
            assert h.hexdigest() == hashlib.sha256(data).hexdigest(), (order, kept)
    # Kept bytes are what is hashed: the file is not read back for them.
    h = PrefixHash(tmp_path / "absent.bin", 10)
    h.written(0, 10, b"0123456789")
    assert h.hexdigest() == hashlib.sha256(b"0123456789").hexdigest()
    h = PrefixHash(path, len(data))
    h.written(0, 10)
    with pytest.raises(RuntimeError, match="10 of 5000003 bytes"):
        h.hexdigest()


@pytest.mark.parametrize("where", ["disk", "tmpfs"])
def test_pieces_written_past_the_page_cache_land_byte_for_byte(tmp_path, where):
    """Large pieces at unaligned offsets: their aligned middles go O_DIRECT, their ends (sharing
    pages with the neighbours) through the page cache; a file system without O_DIRECT (tmpfs)
    takes everything through the page cache."""
    root = tmp_path
    if where == "tmpfs":
        if not Path("/dev/shm").is_dir():
            pytest.skip("no /dev/shm")
        root = Path(__import__("tempfile").mkdtemp(dir="/dev/shm"))
    try:
        rng = np.random.default_rng(5)
        total = 3 * DIRECT_MIN_BYTES + 12345
        expected = rng.integers(0, 256, total, dtype=np.uint8)
        (root / "f.bin").write_bytes(b"\0" * total)
        cuts = [0, 17, DIRECT_MIN_BYTES + 5, DIRECT_MIN_BYTES + DIRECT_ALIGN + 5 + DIRECT_MIN_BYTES, total]
        pieces = [("f.bin", lo, expected[lo:hi]) for lo, hi in zip(cuts[:-1], cuts[1:])]
        for piece in pieces[::-1]:  # any order, neighbours sharing pages
            (rel, offset, nbytes, data), = write_pieces(root, [piece], keep=True)
            assert (rel, offset, nbytes) == (piece[0], piece[1], piece[2].nbytes)
            assert bytes(data) == piece[2].tobytes()
        assert (root / "f.bin").read_bytes() == expected.tobytes()
    finally:
        if where == "tmpfs":
            __import__("shutil").rmtree(root)


def test_chunks_of_megabytes_at_unaligned_offsets_equal_the_in_memory_run(tmp_path):
    """Chunks big enough to be written direct, their boundaries off the 4 KB blocks."""
    case = _adamw("adamw_direct", "float16", 3 * INPUT_BLOCK + 777, amsgrad=True)
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump({"cases": [case]}))
    _run("golden", path, "--out", tmp_path / "memory", "--no-cache")
    _run("golden", path, "--out", tmp_path / "chunked", "--no-cache", "--memory-limit", "40MB")
    meta = json.loads((tmp_path / "chunked" / "adamw_direct" / "case.json").read_text())
    assert meta["chunked"]["chunks"] >= 3
    assert _bins(tmp_path / "chunked") == _bins(tmp_path / "memory")


# sha256 prefixes of inputs as every earlier version drew them (before draws went into reused
# buffers): an input's bytes for a given seed do not change from version to version.
PINNED_INPUTS = {
    "float32": ({"uniform": [-2, 3]}, "56dd7a0dede741e3", "3a97db62635b8840"),
    "bfloat16": ({"normal": [0.5, 2]}, "14a261d11c5d4ee6", "2abcde5d5d2db8dd"),
    "int8": ({"integers": [-100, 100]}, "e4d85b799d9f1145", "66111fd333cbc3cb"),
    "float16": ({"special": [0.0, 1.0, "inf", "nan"]}, "cc36bcecc991e05e", "13bfe1a569951234"),
    "complex64": ({"normal": [0, 1]}, "c89b74d821bf4ddf", "57371d2a9069ef23"),
    "bool": ({"integers": [0, 1]}, "cf1eb653a1899bf6", "a4e3a9d1c3e458ce"),
    "float64": ({"uniform": [0, 1]}, "147579c173a5441a", "82b20264b17055a1"),
}


@pytest.mark.parametrize("dtype", list(PINNED_INPUTS))
def test_input_bytes_are_pinned(dtype):
    dist, whole, edge = PINNED_INPUTS[dtype]
    shape = [3, INPUT_BLOCK // 2 + 77]  # three streams
    case = parse_cases({"cases": [{"name": "p", "op": "tile", "dtype": dtype, "seed": 11, "attrs": {"reps": [1]},
                                   "inputs": {"x": {"shape": shape, "dist": dist}}}]})[0]
    digest = lambda a: hashlib.sha256(a.tobytes()).hexdigest()[:16]  # noqa: E731
    assert digest(generate_range(case, "x", 0, shape[0] * shape[1])) == whole
    assert digest(generate_range(case, "x", INPUT_BLOCK - 5, 100)) == edge  # across a stream boundary
