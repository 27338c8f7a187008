"""``ascend-numba``: golden generation, verification and ahead-of-time compilation."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
import numpy as np

from .golden import CaseError, compare, default_cache_dir, load_cases, run_suite
from .golden.cases import DTYPES
from .golden.run import Interrupted, SchedulerError
from .warmup import OPS, specializations
from .warmup import warmup as run_warmup


@click.group()
@click.version_option(package_name="ascend-numba")
def main():
    """CPU twin of Ascend C kernels: goldens with the kernels' exact bits."""


@main.command()
@click.argument("cases", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory that receives one folder per case.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1),
              help="Local processes running cases.")
@click.option("--scheduler", default=None, metavar="ADDRESS", help="Run cases on this Dask scheduler.")
@click.option("--no-cache", is_flag=True, help="Compute every golden, neither reading nor filling the cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Golden cache location [default: $ASCEND_NUMBA_CACHE or ~/.cache/ascend_numba/golden].")
def golden(cases, out_dir, workers, scheduler, no_cache, cache_dir):
    """Generate inputs and goldens for every case in CASES (YAML or JSON)."""
    try:
        suite = load_cases(cases)
    except CaseError as e:
        raise click.ClickException(str(e)) from None
    cache = None if no_cache else (cache_dir or default_cache_dir())
    for what, path in (("--out", out_dir), ("--cache-dir", cache)):
        if path is not None:
            try:
                Path(path).mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise click.ClickException(f"{what} {path}: cannot create the directory ({e.strerror})") from None
    try:
        summary = run_suite(suite, out_dir, cache_dir=cache, workers=workers, scheduler=scheduler)
    except (KeyboardInterrupt, Interrupted):
        click.echo("golden: stopped; the cases written so far are complete, no partial case was left", err=True)
        sys.exit(130)
    except SchedulerError as e:
        raise click.ClickException(str(e)) from None
    except Exception as e:  # a failure while running: one line, not a traceback
        raise click.ClickException(f"{type(e).__name__}: {e}") from None
    click.echo(f"golden: {summary.line()} -> {out_dir}")


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


@main.command()
@click.option("--ops", default=",".join(OPS), show_default=True,
              help="Comma-separated ops to compile.")
@click.option("--modes", default="plain", show_default=True,
              help="Comma-separated modes: plain, traced, checked.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1),
              help="Processes compiling in parallel.")
def warmup(ops, modes, workers):
    """Compile every kernel specialization of OPS ahead of time into Numba's on-disk cache, so
    the first call of each op in a new process (CI, a container) loads instead of compiling."""
    try:
        specs = specializations([o.strip() for o in ops.split(",") if o.strip()],
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


if __name__ == "__main__":
    main()
