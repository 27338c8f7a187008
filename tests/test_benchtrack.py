"""Tracking benchmark ratios across saved runs: ratios added at save time, regressions caught,
noise within the threshold passed, missing cases reported, the CLI's exit status."""

import json

from click.testing import CliRunner

from ascend_numba.benchtrack import add_ratios, compare, load_runs, tracked_ratios
from ascend_numba.cli import main as cli


def _bench(group, name, median, ref=None, **info):
    extra = dict(info)
    if ref:
        extra["ref"] = ref
    return {"group": group, "name": f"test_x[{name}]", "stats": {"median": median}, "extra_info": extra}


def _run(path_ms: dict, seed_ms: float = 0.02, np_ms: float = 0.03):
    """One run: each Tile path against forced PerRow, and a seed case against np.tile."""
    benches = []
    for path, ms in path_ms.items():
        group = f"path {path} vs forced per_row"
        benches += [_bench(group, f"{path}-auto", ms, modelled_us=10.0),
                    _bench(group, f"{path}-per_row", 10.0, ref="per_row", modelled_us=40.0)]
    benches += [_bench("tile 1D_repeat", "ascend", seed_ms), _bench("tile 1D_repeat", "np", np_ms, ref="np.tile")]
    add_ratios(benches)
    return benches


def _save(storage, number, benches, commit="abc123"):
    folder = storage / "Linux-CPython-3.11-64bit"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"benchmarks": benches, "commit_info": {"id": commit}, "datetime": f"2026-12-01T00:0{number}"}
    (folder / f"{number:04d}_{commit}_20261201_uncommitted-changes.json").write_text(json.dumps(doc))


def test_ratios_are_added_to_cases_not_references():
    benches = _run({"gather": 2.0})
    auto, per_row = benches[0], benches[1]
    assert auto["extra_info"]["ratios"] == {"per_row": 5.0}
    assert auto["extra_info"]["modelled_ratios"] == {"per_row": 4.0}
    assert "ratios" not in per_row["extra_info"]
    keys = tracked_ratios({"benchmarks": benches})
    assert keys["path gather vs forced per_row | gather-auto vs per_row"] == 5.0


def test_paired_ratios_take_precedence_over_medians():
    benches = _run({"gather": 2.0})
    benches[0]["extra_info"]["paired_ratios"] = {"per_row": 4.5}
    assert tracked_ratios({"benchmarks": benches})["path gather vs forced per_row | gather-auto vs per_row"] == 4.5


def test_a_path_that_lost_half_its_speedup_is_a_regression_named_by_path(tmp_path):
    _save(tmp_path, 1, _run({"gather": 1.0, "doubling": 2.0}))
    _save(tmp_path, 2, _run({"gather": 2.0, "doubling": 2.0}))   # gather: 10x -> 5x over per_row
    base, new = load_runs(tmp_path)
    result = compare(base, new, 0.15)
    assert result.regressions == ["path gather vs forced per_row | gather-auto vs per_row"]
    assert "REGRESSION" in result.table() and "gather-auto" in result.table()


def test_noise_within_the_threshold_passes(tmp_path):
    _save(tmp_path, 1, _run({"gather": 1.0}))
    _save(tmp_path, 2, _run({"gather": 1.1}))   # 10x -> 9.1x: -9%
    base, new = load_runs(tmp_path)
    assert compare(base, new, 0.15).regressions == []


def test_a_window_of_runs_absorbs_the_noise_it_has_already_seen(tmp_path):
    # The seed case moved 30% between runs of the same code; the window's lowest carries that.
    for number, np_ms in ((1, 0.03), (2, 0.021), (3, 0.03)):
        _save(tmp_path, number, _run({"gather": 1.0}, np_ms=np_ms))
    _save(tmp_path, 4, _run({"gather": 1.0}, np_ms=0.02))
    runs = load_runs(tmp_path)
    assert compare(runs[2], runs[3], 0.15).regressions == ["tile 1D_repeat | ascend vs np.tile"]
    assert compare(runs[:3], runs[3], 0.15).regressions == []


def test_a_missing_case_is_reported(tmp_path):
    _save(tmp_path, 1, _run({"gather": 1.0, "build": 2.0}))
    _save(tmp_path, 2, _run({"gather": 1.0}))
    base, new = load_runs(tmp_path)
    result = compare(base, new, 0.15)
    assert result.missing == ["path build vs forced per_row | build-auto vs per_row"]
    assert "missing in the new run: path build" in result.table()


def test_cli_exits_non_zero_on_a_regression_and_zero_otherwise(tmp_path):
    _save(tmp_path, 1, _run({"split_mult": 1.0}))
    _save(tmp_path, 2, _run({"split_mult": 1.05}))
    ok = CliRunner().invoke(cli, ["bench-compare", "--storage", str(tmp_path)])
    assert ok.exit_code == 0, ok.output
    _save(tmp_path, 3, _run({"split_mult": 3.0}))
    bad = CliRunner().invoke(cli, ["bench-compare", "--storage", str(tmp_path)])
    assert bad.exit_code == 1 and "split_mult-auto vs per_row  REGRESSION" in bad.output
    low = CliRunner().invoke(cli, ["bench-compare", "--storage", str(tmp_path), "--threshold", "0.9"])
    assert low.exit_code == 0
    none = CliRunner().invoke(cli, ["bench-compare", "--storage", str(tmp_path / "empty")])
    assert none.exit_code == 1 and "two are needed" in none.output
