"""Running golden cases: one at a time, in local processes, or on a Dask cluster."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from .cases import REGISTRY, Case, generate_inputs, io_pool, parse_cases
from .store import GoldenCache, Hashes, cache_key, sweep_work_dirs, write_case

__all__ = ["CaseResult", "compute_case", "run_case", "run_suite", "Summary", "Interrupted", "SchedulerError"]


@dataclass
class CaseResult:
    name: str
    op: str
    bytes: int
    seconds: float
    cache_hit: bool


def compute_case(case: Case, cache: GoldenCache | None, hashes: Hashes | None = None) -> tuple[dict, dict, bool]:
    """Inputs and golden outputs of a case; outputs come from the cache when it has them."""
    inputs = generate_inputs(case)
    hashes = hashes or Hashes(io_pool())
    for arr in inputs.values():
        hashes.submit(arr)
    key = cache_key(case.op, case.attrs, case.dtype, {n: hashes(a) for n, a in inputs.items()})
    if cache is not None:
        cached = cache.load(key)
        if cached is not None:
            return inputs, cached, True
    spec = REGISTRY[case.op]
    outputs = spec.run(inputs, case.attrs)
    outputs = {name: outputs[name] for name in spec.outputs}
    if cache is not None:
        cache.store(key, outputs)
    return inputs, outputs, False


def run_case(case_doc: dict, out_dir: str, cache_dir: str | None) -> CaseResult:
    """Generate, compute and write one case (a plain function: local processes and Dask run it)."""
    case = parse_cases({"cases": [case_doc]})[0]
    start = time.perf_counter()
    cache = GoldenCache(cache_dir) if cache_dir else None
    hashes = Hashes(io_pool())
    inputs, outputs, hit = compute_case(case, cache, hashes)
    meta = {"name": case.name, "op": case.op, "dtype": case.dtype, "seed": case.seed, "attrs": case.attrs,
            "variant": case.attrs.get("variant"),
            "distributions": {n: {s.dist: list(s.params)} for n, s in case.inputs.items()}}
    nbytes = write_case(Path(out_dir), meta, inputs, outputs, case.dtype, hashes)
    return CaseResult(case.name, case.op, nbytes, time.perf_counter() - start, hit)


@dataclass
class Summary:
    cases: int
    bytes: int
    seconds: float
    cache_hits: int

    @property
    def throughput(self) -> float:
        return self.bytes / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        return (f"{self.cases} cases, {self.bytes / 1e6:.1f} MB written in {self.seconds:.2f} s "
                f"({self.throughput / 1e6:.1f} MB/s), {self.cache_hits} from cache")


def _results(cases: list[Case], out_dir: str, cache_dir: str | None, workers: int,
             scheduler: str | None, scheduler_timeout: float = 30) -> Iterable[CaseResult]:
    docs = [c.to_dict() for c in cases]
    if scheduler:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise RuntimeError("--scheduler needs dask.distributed: pip install 'ascend-numba[dask]'") from None
        try:
            client = Client(scheduler, timeout=scheduler_timeout)
        except (OSError, TimeoutError, ValueError) as e:
            raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler!r} within {scheduler_timeout} s: "
                                 f"{e}") from None
        with client:
            futures = [client.submit(run_case, d, out_dir, cache_dir, pure=False) for d in docs]
            for future in as_completed(futures):
                yield future.result()
        return
    if workers <= 1:
        for d in docs:
            yield run_case(d, out_dir, cache_dir)
        return
    # spawn: forking a process whose OpenMP threads already ran is unsafe.
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=_exit_on_sigterm)
    try:
        futures = [pool.submit(run_case, d, out_dir, cache_dir) for d in docs]
        for future in concurrent.futures.as_completed(futures):
            yield future.result()
    except BaseException:
        _stop(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class SchedulerError(RuntimeError):
    """The Dask scheduler could not be reached."""


class Interrupted(BaseException):
    """The run was stopped by SIGTERM (Ctrl-C raises KeyboardInterrupt)."""


def _raise_interrupted(signum, frame):
    raise Interrupted(f"stopped by signal {signum}")


def _exit_on_sigterm():
    # In a worker: SIGTERM unwinds like Ctrl-C, so a half-written case removes its work directory.
    signal.signal(signal.SIGTERM, _raise_interrupted)


def _stop(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Stop every worker now: pending cases are cancelled, running ones get SIGTERM (and clean up)."""
    processes = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join()


def run_suite(cases: list[Case], out_dir: str | Path, *, cache_dir: str | Path | None, workers: int = 1,
              scheduler: str | None = None, scheduler_timeout: float = 30,
              log: Callable[[str], None] | None = None,
              progress: bool | None = None) -> Summary:
    """Run every case; a progress bar on a terminal, one log line per case otherwise."""
    if progress is None:
        progress = sys.stderr.isatty()
    log = log or (lambda line: print(line, file=sys.stderr))
    sweep_work_dirs(Path(out_dir))
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        return _run_suite(cases, out_dir, cache_dir, workers, scheduler, scheduler_timeout, log, progress)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        # A stopped run leaves no half-written case behind (its workers are gone by now).
        sweep_work_dirs(Path(out_dir), [c.name for c in cases])


def _run_suite(cases, out_dir, cache_dir, workers, scheduler, scheduler_timeout, log, progress) -> Summary:
    start = time.perf_counter()
    total = hits = 0
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(cases), unit="case", file=sys.stderr)
    try:
        for i, result in enumerate(_results(cases, str(out_dir), None if cache_dir is None else str(cache_dir),
                                            workers, scheduler, scheduler_timeout), start=1):
            total += result.bytes
            hits += result.cache_hit
            if bar is not None:
                bar.set_postfix_str(result.name)
                bar.update(1)
            else:
                log(f"[{i}/{len(cases)}] {result.name} ({result.op}): {result.bytes / 1e6:.1f} MB in "
                    f"{result.seconds:.2f} s{' (cache)' if result.cache_hit else ''}")
    finally:
        if bar is not None:
            bar.close()
    return Summary(len(cases), total, time.perf_counter() - start, hits)

