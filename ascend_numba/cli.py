"""``ascend-numba``: golden generation, verification and ahead-of-time compilation."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click
import numpy as np

from .benchtrack import (
    DEFAULT_THRESHOLD, load_runs, path_choice_table, plot, seed_launch_floor_us, seed_order_disagreements,
    seed_table,
)
from .benchtrack import compare as compare_runs
from .config import OPS_ENV
from .golden import CaseError, compare, default_cache_dir, load_cases, run_suite
from .golden.cases import DTYPES
from .golden.chunked import DEFAULT_MEMORY_LIMIT, parse_memory_limit
from .golden.run import Interrupted, SchedulerError
from .ops import load_ops
from .ops.tile.plan import PATHS
from .warmup import specializations
from .warmup import warmup as run_warmup


class _OneLineErrors(click.Group):
    """Every subcommand's unexpected failure is one ``Error:`` line and exit 1, as its expected
    ones are (``ASCEND_NUMBA_TRACEBACK=1`` shows the traceback instead)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - the point: no raw traceback for a user
            if os.environ.get("ASCEND_NUMBA_TRACEBACK"):
                raise
            raise click.ClickException(f"{type(e).__name__}: {e}") from None


@click.group(cls=_OneLineErrors)
@click.version_option(package_name="ascend-numba")
@click.option("--ops", "op_modules", multiple=True, metavar="MODULE",
              help="Your own op module (ENTRIES of OpEntry), beside $ASCEND_NUMBA_OPS and the ascend_numba.ops entry "
                   "points; repeatable.")
def main(op_modules):
    """CPU twin of Ascend C kernels: goldens with the kernels' exact bits."""
    if op_modules:  # the golden workers inherit the environment
        os.environ[OPS_ENV] = ",".join([*op_modules, *filter(None, os.environ.get(OPS_ENV, "").split(","))])
    if os.environ.get(OPS_ENV) and os.getcwd() not in sys.path:  # a module beside the user, as `python -m` finds
        sys.path.append(os.getcwd())
    try:
        load_ops()
    except (ImportError, TypeError, ValueError) as e:
        raise click.ClickException(str(e)) from None


def _golden_options(command):
    """The options every golden-writing command shares (golden, msopst gen)."""
    for option in reversed((
            click.option("--workers", default=1, show_default=True, type=click.IntRange(1),
                         help="Local processes running cases."),
            click.option("--scheduler", default=None, metavar="ADDRESS", help="Run cases on this Dask scheduler."),
            click.option("--scheduler-timeout", default=30.0, show_default=True, type=click.FloatRange(0.1),
                         help="Seconds to reach --scheduler before giving up."),
            click.option("--no-cache", is_flag=True,
                         help="Compute every golden, neither reading nor filling the cache."),
            click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                         help="Golden cache location [default: $ASCEND_NUMBA_CACHE or ~/.cache/ascend_numba/golden]."),
            click.option("--memory-limit", default=DEFAULT_MEMORY_LIMIT, show_default=True, metavar="SIZE",
                         help="A case whose inputs and outputs exceed this (e.g. 50%, 8GiB, 512MB) is written in "
                              "chunks."),
            click.option("--strict", is_flag=True,
                         help="Exit 1 when a golden holds NaN or infinities its inputs do not."))):
        command = option(command)
    return command


def _run_goldens(cases, out_dir: Path, workers, scheduler, scheduler_timeout, no_cache, cache_dir, memory_limit):
    """Run golden cases into ``out_dir`` with the shared options: one-line errors, Ctrl-C safe.
    The summary's warnings list the cases whose goldens hold NaN or infinities their inputs do not."""
    cache = None if no_cache else (cache_dir or default_cache_dir())
    for what, path in (("--out", out_dir), ("--cache-dir", cache)):
        if path is not None:
            try:
                Path(path).mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise click.ClickException(f"{what} {path}: cannot create the directory ({e.strerror})") from None
    try:
        return run_suite(cases, out_dir, cache_dir=cache, workers=workers, scheduler=scheduler,
                         scheduler_timeout=scheduler_timeout, memory_limit=memory_limit)
    except (KeyboardInterrupt, Interrupted):
        click.echo("stopped; the cases written so far are complete, no partial case was left", err=True)
        sys.exit(130)
    except SchedulerError as e:
        raise click.ClickException(str(e)) from None


def _report_health(summary, strict: bool) -> None:
    if not summary.warnings:
        return
    names = ", ".join(name for name, _ in summary.warnings)
    line = f"{len(summary.warnings)} case(s) with NaN or infinities in goldens their inputs do not hold: {names}"
    if strict:
        raise click.ClickException(f"{line} (--strict)")
    click.echo(f"WARNING: {line}", err=True)


def _explain(suite) -> None:
    from .golden.cases import REGISTRY as GOLDEN_OPS

    for case in suite:
        click.echo(f"{case.name} ({case.op}, {case.dtype}, seed {case.seed}):")
        for name, spec in case.inputs.items():
            drawn = f"{spec.dist} {list(spec.params) if spec.dist != 'file' else spec.params[0]}"
            default = GOLDEN_OPS[case.op].default_for(name)
            origin = " (the op's default)" if {spec.dist: list(spec.params)} == default else ""
            convert = f", {spec.convert}" if spec.convert != "round" else ""
            click.echo(f"  {name} {list(spec.shape)}: {drawn}{convert}{origin}")


@main.command()
@click.argument("cases", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Directory that receives one folder per case (required unless --explain).")
@click.option("--explain", is_flag=True, help="Print each input's distribution as it will be drawn, and stop.")
@_golden_options
def golden(cases, out_dir, explain, workers, scheduler, scheduler_timeout, no_cache, cache_dir, memory_limit, strict):
    """Generate inputs and goldens for every case in CASES (YAML or JSON)."""
    try:
        limit = parse_memory_limit(memory_limit)
        suite = load_cases(cases)
    except (CaseError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    if explain:
        _explain(suite)
        return
    if out_dir is None:
        raise click.UsageError("Missing option '--out'.")
    summary = _run_goldens(suite, out_dir, workers, scheduler, scheduler_timeout, no_cache, cache_dir, limit)
    click.echo(f"golden: {summary.line()} -> {out_dir}")
    _report_health(summary, strict)


@main.group()
def msopst():
    """msOpST case files in, msOpST's data layout out, the twin as the expected-data function."""


@msopst.command("expect-func")
@click.argument("op")
def msopst_expect_func(op):
    """Print the calc_expect_func_file string for OP (Tile, TileD, ApplyAdamW, TransData, Transpose)."""
    from .msopst import MsOpstError, expect_func

    try:
        click.echo(expect_func(op))
    except MsOpstError as e:
        raise click.ClickException(str(e)) from None


@msopst.command("gen")
@click.argument("cases", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory that receives <op>/data/ and <op>/manifest.json.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="Seeds every subcase's draws.")
@_golden_options
def msopst_gen(cases, out_dir, seed, workers, scheduler, scheduler_timeout, no_cache, cache_dir, memory_limit,
               strict):
    """Expand the msOpST case files CASES (files or directories), draw their inputs and write them
    with the twin's expected outputs in msOpST's data layout."""
    from .golden.msopst_cases import gen_msopst, load_msopst

    try:
        limit = parse_memory_limit(memory_limit)
        subcases = load_msopst(cases, seed)
    except (CaseError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    summary = gen_msopst(subcases, out_dir, seed=seed, run=lambda golden_cases, staging: _run_goldens(
        golden_cases, staging, workers, scheduler, scheduler_timeout, no_cache, cache_dir, limit))
    ops = sorted({s.op.lower() for s in subcases})
    click.echo(f"msopst gen: {len(subcases)} subcases ({summary.line()}) -> {', '.join(str(out_dir / o) for o in ops)}")
    _report_health(summary, strict)


@msopst.command("compare")
@click.argument("cases", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The directory msopst gen wrote the goldens to.")
@click.option("--actual", "actual_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Directory holding the device outputs (<subcase>_output<i>_<type>.bin, anywhere below it).")
@click.option("--error-threshold", default=None, metavar="T1,T2",
              help="Override every case's error_threshold [default: the case's, else 0.01,0.05].")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="The seed gen used.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="JSON report file [default: ACTUAL/msopst_compare.json].")
def msopst_compare(cases, out_dir, actual_dir, error_threshold, seed, report_path):
    """Compare device outputs with the goldens by msOpST's precision standard; exit 1 when a
    subcase fails."""
    import json

    from .golden.msopst_cases import load_msopst
    from .golden.msopst_compare import compare_msopst

    threshold = None
    if error_threshold is not None:
        try:
            threshold = tuple(float(t) for t in error_threshold.split(","))
            if len(threshold) != 2 or min(threshold) < 0:
                raise ValueError
        except ValueError:
            raise click.ClickException(f"--error-threshold {error_threshold!r}: two numbers >= 0, e.g. 0.01,0.05") \
                from None
    try:
        subcases = load_msopst(cases, seed)
    except CaseError as e:
        raise click.ClickException(str(e)) from None
    report = compare_msopst(subcases, out_dir, actual_dir, threshold)
    report_path = report_path or actual_dir / "msopst_compare.json"
    report_path.write_text(json.dumps(report, indent=2))
    for name, sub in report["subcases"].items():
        if sub["status"] != "pass":
            why = next((o.get("problem") or f"error ratio {o['error_ratio']:.4%}, max error {o['max_error']:.4g}, "
                        f"first at {o['first_mismatch']}" for o in sub["outputs"] if o["status"] != "pass"), "")
            click.echo(f"FAIL {name}: {why}")
    s = report["summary"]
    click.echo(f"msopst compare: {s['passed']} passed, {s['failed']} failed of {s['subcases']} subcases -> "
               f"{report_path}")
    sys.exit(1 if s["failed"] else 0)


@main.command()
@click.argument("golden_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("actual_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dtype", required=True, type=click.Choice(sorted(DTYPES)), help="Element type of both files.")
def verify(golden_file, actual_file, dtype):
    """Compare ACTUAL_FILE with GOLDEN_FILE (raw little-endian) by the CANN precision rules."""
    dt = DTYPES[dtype].newbyteorder("<") if DTYPES[dtype].itemsize > 1 else DTYPES[dtype]
    sizes = {f: f.stat().st_size for f in (golden_file, actual_file)}
    for f, size in sizes.items():
        if size % dt.itemsize:
            raise click.ClickException(f"{f}: {size} bytes is not a whole number of {dtype} elements "
                                       f"({dt.itemsize} bytes each)")
    if sizes[golden_file] != sizes[actual_file]:
        raise click.ClickException(f"{actual_file} has {sizes[actual_file] // dt.itemsize} {dtype} elements, "
                                   f"the golden {golden_file} has {sizes[golden_file] // dt.itemsize}")
    golden_arr = np.fromfile(golden_file, dtype=dt)
    actual_arr = np.fromfile(actual_file, dtype=dt)
    try:
        report = compare(golden_arr, actual_arr, dtype)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    for line in report.lines():
        click.echo(line)
    sys.exit(0 if report.passed else 1)


@main.command("lint")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--mode", type=click.Choice(["auto", "manual"]), default=None,
              help="Lint every kernel in this mode [default: each kernel's own, manual unless @kernel(mode=...)].")
def lint_command(files, mode):
    """Check the kernels in FILES (or in the .py files under a directory) against the rules of
    their mode (an AUTO kernel all of seed 003's, a manual one the two of both modes: 3.2, 4.2);
    prints path:line:col: CODE message, exits 1 on any finding."""
    from .lint import lint

    paths = [p for f in files for p in (sorted(f.rglob("*.py")) if f.is_dir() else [f])]
    findings = [finding for p in paths for finding in lint(p, mode)]
    for finding in findings:
        click.echo(str(finding))
    sys.exit(1 if findings else 0)


@main.command()
@click.option("--ops", default=None, help="Comma-separated ops to compile (default: every op, the user's too).")
@click.option("--modes", default="plain", show_default=True,
              help="Comma-separated modes: plain, traced, checked.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1),
              help="Processes compiling in parallel.")
def warmup(ops, modes, workers):
    """Compile every kernel specialization of OPS ahead of time into Numba's on-disk cache, so
    the first call of each op in a new process (CI, a container) loads instead of compiling."""
    try:
        specs = specializations(None if ops is None else [o.strip() for o in ops.split(",") if o.strip()],
                                [m.strip() for m in modes.split(",") if m.strip()])
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"warmup: {len(specs)} specializations on {workers} worker(s)", err=True)
    done = []
    start = time.perf_counter()

    def report(spec, seconds):
        done.append(spec)
        click.echo(f"[{len(done)}/{len(specs)}] {spec}: {seconds:.1f} s", err=True)

    run_warmup(specs, workers, report)
    click.echo(f"warmup: {len(specs)} specializations ready in {time.perf_counter() - start:.1f} s")


@main.command("bench-compare")
@click.option("--storage", default=".benchmarks", show_default=True, type=click.Path(path_type=Path),
              help="pytest-benchmark storage holding the saved runs.")
@click.option("--baseline", default=None, metavar="RUN",
              help="Run number (e.g. 0003) or file name to compare with [default: the runs before the newest].")
@click.option("--window", default=3, show_default=True, type=click.IntRange(1),
              help="Without --baseline: how many runs before the new one form the baseline (one run is "
                   "no baseline: machines are noisy).")
@click.option("--new", "newest", default=None, metavar="RUN", help="The run to check [default: the newest].")
@click.option("--threshold", default=DEFAULT_THRESHOLD, show_default=True, type=click.FloatRange(0, 1),
              help="A ratio falling by more than this fraction below the baseline's lowest is a regression.")
@click.option("--all", "everything", is_flag=True, help="List every ratio, not only those that moved.")
def bench_compare(storage, baseline, window, newest, threshold, everything):
    """Compare the in-run ratios of a saved benchmark run with earlier ones; exit 1 when one fell
    past the threshold."""
    runs = load_runs(storage)
    if len(runs) < 2 and baseline is None:
        raise click.ClickException(f"{storage}: {len(runs)} saved run(s); make bench saves one per run, "
                                   "two are needed to compare")
    new = _pick_run(runs, newest, runs[-1] if runs else None)
    earlier = runs[:runs.index(new)]
    if baseline is not None:
        base = [_pick_run(runs, baseline, None)]
    elif earlier:
        base = earlier[-window:]
    else:
        raise click.ClickException(f"no saved run before {new.label} to compare with")
    result = compare_runs(base, new, threshold)
    click.echo(result.table(everything))
    sys.exit(1 if result.regressions else 0)


@main.command("bench-report")
@click.option("--storage", default=".benchmarks", show_default=True, type=click.Path(path_type=Path),
              help="pytest-benchmark storage holding the saved runs.")
@click.option("--out", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Chart file (.png or .svg) of every tracked ratio across the runs.")
@click.option("--match", multiple=True, help="Draw only ratios whose key contains this text (repeatable; "
                                             "e.g. --match 'vs per_row' --match 'vs numpy').")
@click.option("--page", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Markdown page of the newest run's tables (docs/performance.md).")
def bench_report(storage, out, match, page):
    """Report the saved runs: a chart of every tracked ratio across them (matplotlib), and/or a
    Markdown page of the newest run's tables."""
    from .benchtrack import performance_page

    runs = load_runs(storage)
    if not runs:
        raise click.ClickException(f"{storage}: no saved runs (make bench saves them)")
    if out is None and page is None:
        raise click.UsageError("give --out CHART, --page PAGE or both")
    if out is not None:
        try:
            keys = plot(runs, out, match)
        except RuntimeError as e:
            raise click.ClickException(str(e)) from None
        click.echo(f"bench-report: {len(keys)} ratios over {len(runs)} runs -> {out}")
    if page is not None:
        chart = os.path.relpath(out, page.parent) if out is not None else None
        page.write_text(performance_page(runs[-1], chart))
        click.echo(f"bench-report: run {runs[-1].label} -> {page}")


@main.command("seed-table")
@click.option("--platform", default="A2", show_default=True, help="Platform preset whose device model to use.")
def seed_table_command(platform):
    """The seed's 24 measured AscendC Tile times (Atlas A2, blockDim 24) beside the modelled
    device time of the same cases, then each seed shape's modelled time on every Tile path beside
    the planner's choice: how far to trust a modelled speedup."""
    rows = seed_table(platform)
    click.echo(f"{'dtype':<8} {'case':<10} {'path':<10} {'seed AC us':>10} {'model us':>9} {'error':>7}")
    for r in rows:
        click.echo(f"{r['dtype']:<8} {r['case']:<10} {r['path']:<10} {r['measured_us']:>10.1f} "
                   f"{r['modelled_us']:>9.1f} {r['error']:>+7.0%}")
    errors = sorted(abs(r["error"]) for r in rows)
    median = (errors[(len(errors) - 1) // 2] + errors[len(errors) // 2]) / 2
    click.echo(f"|error|: median {median:.0%}, max {errors[-1]:.0%} over {len(rows)} cases; launch floor "
               f"{rows[0]['floor_us']:.2f} us (the floor-bound rows imply {seed_launch_floor_us(rows):.2f})")
    disagreements = seed_order_disagreements(rows)
    click.echo("dtype order within each case: " + ("as the seed's (5% ties)" if not disagreements else
                                                   "differs: " + "; ".join(disagreements)))
    click.echo("")
    click.echo(f"{'dtype':<8} {'case':<10} {'planner':<10} {'model':<10} " +
               " ".join(f"{p:>10}" for p in PATHS) + "   (modelled us; - : the path cannot serve the case)")
    for r in path_choice_table(platform):
        times = " ".join(f"{r['modelled_us'][p]:>10.1f}" if p in r["modelled_us"] else f"{'-':>10}" for p in PATHS)
        flag = "" if r["model"] == r["planner"] else "  <- differs (docs/benchmarks.md)"
        click.echo(f"{r['dtype']:<8} {r['case']:<10} {r['planner']:<10} {r['model']:<10} {times}{flag}")


def _pick_run(runs, wanted, default):
    if wanted is None:
        if default is None:
            raise click.ClickException("no run to compare with")
        return default
    for run in runs:
        if wanted in (run.number, run.path.name, run.path.stem):
            return run
    raise click.ClickException(f"no saved run {wanted!r}; runs: {', '.join(r.number for r in runs)}")


if __name__ == "__main__":
    main()
