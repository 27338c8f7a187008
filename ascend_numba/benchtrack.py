"""Tracking what the kernels buy across benchmark runs: the in-run ratios, not absolute times.

Each benchmark group of ``bench/`` holds an ascend_numba case next to its references (cases
whose ``extra_info["ref"]`` names them: ``np.tile``, ``torch``, ``copy``, ``per_row``,
``numpy``, ...).  Absolute times move with the machine; a ratio measured within one run does
not.  :func:`add_ratios` writes each case's ratios against its group's references into its
``extra_info`` when pytest-benchmark saves a run (``bench/conftest.py``); :func:`compare`
compares two saved runs ratio by ratio; :func:`plot` draws every tracked ratio across runs.

Runs live in pytest-benchmark's storage (``.benchmarks/<machine>/NNNN_<commit>_<date>.json``,
written by ``make bench``); each carries its commit and machine.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["add_ratios", "tracked_ratios", "load_runs", "Run", "Comparison", "compare", "plot",
           "performance_page", "DEFAULT_THRESHOLD"]

DEFAULT_THRESHOLD = 0.15


def add_ratios(benchmarks: list[dict]) -> None:
    """Give every case that is not a reference ``extra_info["ratios"]``: for each reference of
    its group, ``reference median / case median`` (> 1: the case is faster); and
    ``extra_info["modelled_ratios"]`` where both have a modelled device time."""
    groups: dict[str, list[dict]] = {}
    for bench in benchmarks:
        groups.setdefault(bench.get("group") or "", []).append(bench)
    for cases in groups.values():
        refs = {b["extra_info"]["ref"]: b for b in cases if "ref" in b.get("extra_info", {})}
        for b in cases:
            info = b.setdefault("extra_info", {})
            if "ref" in info or not refs:
                continue
            info["ratios"] = {name: r["stats"]["median"] / b["stats"]["median"] for name, r in refs.items()}
            # The same ratio under the trace's cost model, where the reference has one (a path
            # against forced PerRow): the modelled device speedup beside the CPU one.
            modelled = {name: r["extra_info"]["modelled_us"] / info["modelled_us"] for name, r in refs.items()
                        if "modelled_us" in r["extra_info"] and info.get("modelled_us")}
            if modelled:
                info["modelled_ratios"] = modelled


def tracked_ratios(run: dict) -> dict[str, float]:
    """The run's tracked ratios by key ``"<group> | <case> vs <reference>"``: the paired ratio
    (case and reference timed alternately) where the case measured one, else the ratio of the
    two benchmarks' medians."""
    out = {}
    for b in run["benchmarks"]:
        info = b.get("extra_info", {})
        for ref, ratio in {**info.get("ratios", {}), **info.get("paired_ratios", {})}.items():
            out[f"{b.get('group') or ''} | {_case_name(b)} vs {ref}"] = ratio
    return out


def _case_name(bench: dict) -> str:
    name = bench["name"]
    return name[name.index("[") + 1:-1] if "[" in name else name


@dataclass
class Run:
    """One saved run: where it is, its number, commit and date, its tracked ratios."""

    path: Path
    number: str
    commit: str
    date: str
    ratios: dict[str, float]

    @property
    def label(self) -> str:
        return f"{self.number} {self.commit[:8]}"


def load_runs(storage: str | Path) -> list[Run]:
    """Every run saved under ``storage`` (any machine folder), oldest first."""
    runs = []
    for path in sorted(Path(storage).glob("*/*.json"), key=lambda p: p.name):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        commit = doc.get("commit_info", {})
        runs.append(Run(path, path.name.split("_", 1)[0], commit.get("id") or "unknown",
                        doc.get("datetime", ""), tracked_ratios(doc)))
    return runs


@dataclass
class Comparison:
    """``new`` against a baseline window of earlier runs: every ratio both have, and what only
    one side has.  A ratio regresses when it falls more than ``threshold`` below the lowest
    value it had in the window: a window of several runs carries its own noise, so a ratio that
    already moved that much between runs of the same code does not raise an alarm."""

    base: list[Run]
    new: Run
    threshold: float
    changes: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # key -> (median, low, new)
    missing: list[str] = field(default_factory=list)                                # in the window, not in new
    added: list[str] = field(default_factory=list)                                  # in new, not in the window

    def change(self, key: str) -> float:
        """The new ratio against the window's median (-0.2: 20% lower)."""
        median, _, new = self.changes[key]
        return new / median - 1

    def fell(self, key: str) -> bool:
        _, low, new = self.changes[key]
        return new < low * (1 - self.threshold)

    @property
    def regressions(self) -> list[str]:
        """The ratios that fell past the threshold below the window's lowest, worst first."""
        return sorted((k for k in self.changes if self.fell(k)), key=self.change)

    def table(self, everything: bool = False) -> str:
        """What moved past the threshold (or every ratio), then what is missing."""
        window = ", ".join(r.label for r in self.base)
        lines = [f"baseline {window} -> new {self.new.label} ({self.new.path.name}), threshold {self.threshold:.0%}"]
        keys = sorted(self.changes, key=self.change)
        shown = keys if everything else [k for k in keys if abs(self.change(k)) > self.threshold]
        if shown:
            lines.append(f"{'change':>8} {'median':>9} {'lowest':>9} {'new':>9}  ratio")
            for key in shown:
                median, low, new = self.changes[key]
                mark = "  REGRESSION" if self.fell(key) else ""
                lines.append(f"{self.change(key):>+8.0%} {median:>8.2f}x {low:>8.2f}x {new:>8.2f}x  {key}{mark}")
        lines.append(f"{len(self.changes)} ratios compared, {len(shown)} moved past {self.threshold:.0%} of the "
                     f"baseline median, {len(self.regressions)} fell past it below the baseline's lowest")
        for key in self.missing:
            lines.append(f"missing in the new run: {key}")
        for key in self.added:
            lines.append(f"new in this run: {key}")
        return "\n".join(lines)


def compare(base: Run | list[Run], new: Run, threshold: float = DEFAULT_THRESHOLD) -> Comparison:
    """Compare every ratio ``new`` tracked with the same ratio in ``base`` (one run or a window
    of runs; a key counts when any run of the window has it)."""
    window = base if isinstance(base, list) else [base]
    result = Comparison(window, new, threshold)
    known = {}
    for run in window:
        for key, value in run.ratios.items():
            known.setdefault(key, []).append(value)
    for key, value in new.ratios.items():
        if key in known:
            result.changes[key] = (statistics.median(known[key]), min(known[key]), value)
        else:
            result.added.append(key)
    result.missing = sorted(k for k in known if k not in new.ratios)
    return result


def plot(runs: list[Run], out: str | Path, match: tuple[str, ...] = ()) -> list[str]:
    """Draw each tracked ratio whose key contains one of ``match`` (every ratio when empty)
    across ``runs`` (x: run and commit) to ``out`` (PNG or SVG, by suffix); returns the keys
    drawn.  Needs matplotlib (``pip install 'ascend-numba[report]'``)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("bench-report draws with matplotlib: pip install 'ascend-numba[report]'") from None
    keys = sorted({k for r in runs for k in r.ratios if not match or any(m in k for m in match)})
    fig, ax = plt.subplots(figsize=(11, 0.28 * len(keys) + 4))
    x = list(range(len(runs)))
    for key in keys:
        ax.plot(x, [r.ratios.get(key, float("nan")) for r in runs], marker="o", label=key)
    ax.set_xticks(x, [r.label for r in runs], rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("speed ratio within the run (x)")
    ax.set_title("tracked in-run ratios across saved runs")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return keys


_SHOWN_FACTS = ("path", "GBps", "MBps", "cpu_s", "budget_s", "compiled")  # extra_info worth a column


def performance_page(run: Run, chart: str | None = None) -> str:
    """A Markdown page of one saved run: its machine, commit and date, the chart of every tracked
    ratio across runs (``chart``, a path relative to the page), then a table per benchmark group
    (every case's median, IQR and rounds, its in-run ratios against the group's references, and
    what it recorded: path, GB/s, first-call CPU s against its budget)."""
    doc = json.loads(run.path.read_text())
    machine = doc.get("machine_info", {})
    cpu = machine.get("cpu", {})
    commit = doc.get("commit_info", {})
    lines = ["# Performance", "",
             "Generated by `make bench-report` from one saved run of `bench/` (`make bench`); ratios are taken "
             "within that run only: a reference's median over the case's (above 1: faster than the reference), "
             "the paired ratio where the case timed itself alternately with the reference. Machines are noisy: read "
             "small cases' ratios as +-30% and compare runs with `make bench-compare`.", "",
             f"* run: `{run.path.name}`, {doc.get('datetime', '?')}",
             f"* commit: `{(commit.get('id') or 'unknown')[:12]}`{' (uncommitted changes)' if commit.get('dirty') else ''}",
             f"* machine: {cpu.get('brand_raw', machine.get('processor', '?'))}, {cpu.get('count', '?')} cores, "
             f"Python {machine.get('python_version', '?')}", ""]
    if chart is not None:
        lines += [f"![every tracked ratio across the saved runs]({chart})", ""]
    groups: dict[str, list[dict]] = {}
    for bench in doc.get("benchmarks", []):
        groups.setdefault(bench.get("group") or "(no group)", []).append(bench)
    for group in sorted(groups):
        cases = sorted(groups[group], key=lambda b: b["name"])
        facts = [f for f in _SHOWN_FACTS if any(f in b.get("extra_info", {}) for b in cases)]
        lines += [f"## {group}", "", "| case | median | IQR | rounds | ratios | " + " | ".join(facts) + " |",
                  "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in facts) + " |"]
        for b in cases:
            info, stats = b.get("extra_info", {}), b["stats"]
            ratios = {**info.get("ratios", {}), **info.get("paired_ratios", {})}
            shown = ", ".join(f"{v:.2f}x vs {k}" for k, v in sorted(ratios.items())) or (
                f"reference ({info['ref']})" if "ref" in info else "")
            row = [_case_name(b), _duration(stats["median"]), _duration(stats["iqr"]), str(stats["rounds"]), shown]
            row += [_fact(info.get(f)) for f in facts]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _fact(value) -> str:
    if value is None:
        return ""
    return f"{value:.2f}" if isinstance(value, float) else str(value)


# Seed 000 §5.1: the AscendC Tile kernel measured on Atlas A2, blockDim 24 (warmup 50, repeat 200), in us,
# by dtype, in the order of ascend_numba.ops.tile.SEED_CASES (large_2D, large_3D, broadcast, 1D_repeat).
SEED_MEASURED_US = {
    "float32": (16.8, 19.4, 7.9, 7.9),
    "float16": (12.1, 18.9, 7.9, 7.9),
    "int32": (16.7, 19.3, 7.9, 8.0),
    "int16": (11.9, 18.6, 8.2, 8.1),
    "int8": (9.5, 8.3, 7.9, 7.9),
    "uint8": (9.8, 8.6, 7.9, 7.8),
}


# The floor-bound rows: their work is a few percent of the time, the same for every dtype.
LAUNCH_FLOOR_CASES = ("broadcast", "1D_repeat")
TIE = 0.05  # times within 5% of each other are a tie when ordering dtypes


def seed_table(platform="A2", block_dim: int = 24) -> list[dict]:
    """The seed's 24 measured AscendC times beside the modelled device time of the same cases
    (``LaunchTrace.modelled_us``: the launch floor plus the slowest core's pipe timeline), with
    the error.  Every model parameter is a published figure except the launch floor, read from the
    :data:`LAUNCH_FLOOR_CASES` rows (:func:`seed_launch_floor_us`)."""
    import numpy as np

    from .ops.tile import SEED_CASES, tile

    rows = []
    for dtype, measured in SEED_MEASURED_US.items():
        for seed_case, us in zip(SEED_CASES, measured):
            x = np.zeros(seed_case.shapes["x"], dtype)
            _, trace = tile(x, seed_case.attrs["reps"], block_dim=block_dim, platform=platform, trace=True)
            modelled = trace.modelled_us
            rows.append({"dtype": dtype, "case": seed_case.name, "path": trace.info["path"], "measured_us": us,
                         "modelled_us": modelled, "floor_us": trace.platform.launch_floor_ns / 1e3,
                         "error": modelled / us - 1})
    return rows


def seed_launch_floor_us(rows: list[dict]) -> float:
    """The launch floor the seed's floor-bound rows imply: the median over them of the measured
    time less the modelled time without the floor."""
    import numpy as np

    return float(np.median([r["measured_us"] - (r["modelled_us"] - r["floor_us"]) for r in rows
                            if r["case"] in LAUNCH_FLOOR_CASES]))


def _order(a: float, b: float) -> int:
    """-1, 0 (within :data:`TIE`) or 1."""
    if abs(a - b) <= TIE * max(a, b):
        return 0
    return 1 if a > b else -1


def seed_order_disagreements(rows: list[dict]) -> list[str]:
    """Within each scenario, the pairs of dtypes the seed's table orders (more than 5% apart) that
    the model does not order the same way (a model tie counts as a disagreement; a seed tie asks
    nothing of the model)."""
    out = []
    for case in dict.fromkeys(r["case"] for r in rows):
        these = [r for r in rows if r["case"] == case]
        for i, a in enumerate(these):
            for b in these[i + 1:]:
                seed = _order(a["measured_us"], b["measured_us"])
                if seed and _order(a["modelled_us"], b["modelled_us"]) != seed:
                    out.append(f"{case}: seed {a['dtype']} {a['measured_us']:.1f} vs {b['dtype']} "
                               f"{b['measured_us']:.1f} us, model {a['modelled_us']:.1f} vs {b['modelled_us']:.1f}")
    return out


def path_choice_table(platform="A2", block_dim: int = 24) -> list[dict]:
    """For each seed shape and dtype, the modelled time of every Tile path the case can take (a
    path forced on a case it cannot serve is left out), the model's choice and the planner's."""
    import numpy as np

    from .ops.tile import SEED_CASES, SEED_DTYPES, tile
    from .ops.tile.plan import PATHS, plan_tile

    rows = []
    for dtype in SEED_DTYPES:
        for seed_case in SEED_CASES:
            x = np.zeros(seed_case.shapes["x"], dtype)
            reps = seed_case.attrs["reps"]
            planned = plan_tile(x.shape, reps, x.itemsize, block_dim=block_dim, platform=platform).path
            times = {}
            for path in PATHS:
                try:
                    _, trace = tile(x, reps, block_dim=block_dim, platform=platform, trace=True, path=path)
                except ValueError:
                    continue
                times[path] = trace.modelled_us
            rows.append({"dtype": dtype, "case": seed_case.name, "planner": planned,
                         "model": min(times, key=times.get), "modelled_us": times})
    return rows
