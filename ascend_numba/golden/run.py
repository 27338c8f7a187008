"""Running golden cases: one at a time, in local processes, or on a Dask cluster."""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import math
import multiprocessing
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from ..ops import load_ops
from ..ops.user import loaded_modules
from .cases import DTYPES, REGISTRY, Case, case_bytes, generate_inputs, io_pool, parse_cases
from .chunked import (DEFAULT_MEMORY_LIMIT, CaseFiles, PrefixHash, needs_chunks, parse_memory_limit,
                      plan_tasks, write_pieces)
from .health import case_health, health_warning, value_counts
from .store import GoldenCache, Hashes, cache_key, case_json, replace_dir, sweep_work_dirs, work_dir, write_case

__all__ = ["CaseResult", "compute_case", "run_case", "run_chunked_case", "run_suite", "Summary", "Interrupted",
           "SchedulerError"]


@dataclass
class CaseResult:
    name: str
    op: str
    bytes: int
    seconds: float
    cache_hit: bool
    warning: str | None = None  # outputs holding NaN or infinities the inputs do not (see golden.health)


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
    health = case_health(inputs, outputs)
    nbytes = write_case(Path(out_dir), dict(_case_meta(case), health=health), inputs, outputs, case.dtype, hashes)
    return CaseResult(case.name, case.op, nbytes, time.perf_counter() - start, hit, health_warning(health))


def _case_meta(case: Case) -> dict:
    return {"name": case.name, "op": case.op, "dtype": case.dtype, "seed": case.seed, "attrs": case.attrs,
            "variant": case.attrs.get("variant"),
            "distributions": {n: {s.dist: list(s.params)} for n, s in case.inputs.items()}}


def run_chunked_case(runner, case: Case, out_dir: Path, memory_limit: int,
                     on_bytes: Callable[[int], None] = lambda n: None) -> CaseResult:
    """Compute a case larger than ``memory_limit`` in chunks, on ``runner``'s workers; ``on_bytes``
    hears of every finished task's bytes.  The case appears whole, with case.json, or not at all."""
    start = time.perf_counter()
    files = CaseFiles.of(case)
    itemsize = DTYPES[case.dtype].itemsize
    root = work_dir(out_dir, case.name)
    try:
        files.preallocate(root, itemsize)
        hashes = {rel: PrefixHash(root / rel, math.prod(shape) * itemsize) for rel, shape in files.all().items()}
        phases = plan_tasks(case, root, memory_limit)
        for tasks in phases:
            with contextlib.closing(runner.results(tasks)) as results:
                for pieces in results:
                    for rel, offset, nbytes, data in pieces:
                        hashes[rel].written(offset, nbytes, data)
                        on_bytes(nbytes)
        sums = {rel: h.hexdigest() for rel, h in hashes.items()}
        health = _chunked_health(root, files, case.dtype)
        meta = dict(_case_meta(case), health=health, chunked={
            "chunks": len(phases[-1]), "memory_limit": memory_limit,
            "cache": "not used: a chunked case is computed in pieces and not cached"})
        (root / "case.json").write_text(case_json(meta, files.inputs, files.outputs, case.dtype, sums))
        replace_dir(root, out_dir / case.name)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return CaseResult(case.name, case.op, case_bytes(case), time.perf_counter() - start, False, health_warning(health))


def _chunked_health(root: Path, files, dtype_name: str) -> dict:
    """A chunked case's health, read back from its written files (mapped, block by block)."""
    dtype = DTYPES[dtype_name]
    dtype = dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype

    def counts(rel):
        return value_counts(np.memmap(root / rel, dtype=dtype, mode="r"))

    return {"inputs": {n: counts(rel) for n, (rel, _) in files.inputs.items()},
            "outputs": {n: counts(rel) for n, (rel, _) in files.outputs.items()}}


@dataclass
class Summary:
    cases: int
    bytes: int
    seconds: float
    cache_hits: int
    warnings: list = field(default_factory=list)  # (case name, warning) of cases whose goldens hold NaN/inf

    @property
    def throughput(self) -> float:
        return self.bytes / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        return (f"{self.cases} cases, {self.bytes / 1e6:.1f} MB written in {self.seconds:.2f} s "
                f"({self.throughput / 1e6:.1f} MB/s), {self.cache_hits} from cache")


class _InlineRunner:
    """Tasks run in this process as they are submitted.  A chunk task's writes go to a writer
    thread, so the next chunk is drawn and computed while the disk takes the last one; at most
    two chunks wait to be written, which bounds the memory they hold.  The written bytes are
    handed on as they are, so the hashes need not read them back."""

    def __init__(self):
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ascend-numba-writer")

    def _write_behind(self, root, pieces) -> concurrent.futures.Future:
        return self._writer.submit(write_pieces, root, pieces, True)

    def submit(self, fn, *args):
        return _Deferred(fn, args)

    def results(self, tasks):
        """Each chunk task's pieces, in order, as its writes finish (two behind the compute)."""
        waiting: collections.deque = collections.deque()
        try:
            for fn, *args in tasks:
                waiting.append(fn(*args, write=self._write_behind))
                while len(waiting) > 2:
                    yield waiting.popleft().result()
            while waiting:
                yield waiting.popleft().result()
        finally:
            concurrent.futures.wait(waiting)  # no write lands after the caller moves on

    def cancel(self, futures):
        for future in futures:
            future.cancel()


class _Deferred:
    """An inline task: it runs when its result is first asked for, so cases run (and report) one
    after another in file order."""

    def __init__(self, fn, args):
        self._fn, self._args, self._done = fn, args, None

    def result(self):
        if self._done is None:
            self._done = (self._fn(*self._args),)
        return self._done[0]

    def cancel(self) -> bool:
        self._fn = None
        return True


def _results_as_completed(runner, tasks):
    """Every task submitted at once; results as they finish; the rest cancelled if the caller stops."""
    futures = [runner.submit(*task) for task in tasks]
    try:
        for future in runner.as_completed(futures):
            yield future.result()
    finally:
        runner.cancel(futures)


class _PoolRunner:
    """Tasks on local worker processes."""

    def __init__(self, pool: concurrent.futures.ProcessPoolExecutor):
        self.pool = pool

    def submit(self, fn, *args):
        return self.pool.submit(fn, *args)

    def results(self, tasks):
        return _results_as_completed(self, tasks)

    def as_completed(self, futures):
        return concurrent.futures.as_completed(futures)

    def cancel(self, futures):
        for future in futures:
            future.cancel()


class _DaskRunner:
    """Tasks on a Dask cluster's workers."""

    def __init__(self, client):
        self.client = client

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def results(self, tasks):
        return _results_as_completed(self, tasks)

    def as_completed(self, futures):
        from distributed import as_completed
        return as_completed(futures)

    def cancel(self, futures):
        if futures:
            self.client.cancel(futures)


def _results(cases: list[Case], out_dir: str, cache_dir: str | None, workers: int, scheduler: str | None,
             scheduler_timeout: float, memory_limit: int, chunk_progress) -> Iterable[CaseResult]:
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise RuntimeError("--scheduler needs dask.distributed: pip install 'ascend-numba[dask]'") from None
        try:
            client = Client(scheduler, timeout=scheduler_timeout)
        except (OSError, TimeoutError, ValueError) as e:
            raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler!r} within {scheduler_timeout} s: "
                                 f"{e}") from None
        with client:
            client.run(load_ops, loaded_modules())  # the user's op modules, on every worker
            yield from _run_on(_DaskRunner(client), cases, out_dir, cache_dir, memory_limit, chunk_progress)
        return
    if workers <= 1:
        yield from _run_on(_InlineRunner(), cases, out_dir, cache_dir, memory_limit, chunk_progress)
        return
    # spawn: forking a process whose OpenMP threads already ran is unsafe.
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=_exit_on_sigterm, initargs=(loaded_modules(),))
    try:
        yield from _run_on(_PoolRunner(pool), cases, out_dir, cache_dir, memory_limit, chunk_progress)
    except BaseException:
        _stop(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_on(runner, cases, out_dir, cache_dir, memory_limit, chunk_progress) -> Iterable[CaseResult]:
    """Whole cases as one task each, all submitted first (workers start on them at once); each
    chunked case split into tasks across the workers when its turn comes.  Results in file order."""
    chunked = [needs_chunks(c, memory_limit) for c in cases]
    whole = {i: runner.submit(run_case, c.to_dict(), out_dir, cache_dir)
             for i, (c, big) in enumerate(zip(cases, chunked)) if not big}
    try:
        for i, case in enumerate(cases):
            if i in whole:
                yield whole[i].result()
            else:
                with chunk_progress(case) as on_bytes:
                    yield run_chunked_case(runner, case, Path(out_dir), memory_limit, on_bytes)
    except BaseException:
        runner.cancel(list(whole.values()))
        raise


class SchedulerError(RuntimeError):
    """The Dask scheduler could not be reached."""


class Interrupted(BaseException):
    """The run was stopped by SIGTERM (Ctrl-C raises KeyboardInterrupt)."""


def _raise_interrupted(signum, frame):
    raise Interrupted(f"stopped by signal {signum}")


def _exit_on_sigterm(op_modules=()):
    # In a worker: SIGTERM unwinds like Ctrl-C, so a half-written case removes its work directory;
    # the parent's user op modules registered (and $ASCEND_NUMBA_OPS's, the entry points').
    signal.signal(signal.SIGTERM, _raise_interrupted)
    load_ops(op_modules)


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
              memory_limit: int | str = DEFAULT_MEMORY_LIMIT, log: Callable[[str], None] | None = None,
              progress: bool | None = None) -> Summary:
    """Run every case; a case larger than ``memory_limit`` (bytes, or text such as ``"50%"`` or
    ``"8GiB"``) runs in chunks.  On a terminal a progress bar of cases (and of bytes within a
    chunked case), otherwise one log line per case."""
    if progress is None:
        progress = sys.stderr.isatty()
    if isinstance(memory_limit, str):
        memory_limit = parse_memory_limit(memory_limit)
    log = log or (lambda line: print(line, file=sys.stderr))
    sweep_work_dirs(Path(out_dir))
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        return _run_suite(cases, out_dir, cache_dir, workers, scheduler, scheduler_timeout, memory_limit, log,
                          progress)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        # A stopped run leaves no half-written case behind (its workers are gone by now).
        sweep_work_dirs(Path(out_dir), [c.name for c in cases])


@contextlib.contextmanager
def _bytes_bar(case: Case, enabled: bool):
    """A chunked case's progress in bytes on a terminal: gives the update function."""
    if not enabled:
        yield lambda n: None
        return
    from tqdm import tqdm
    with tqdm(total=case_bytes(case), unit="B", unit_scale=True, unit_divisor=1024, desc=f"{case.name} (chunked)",
              leave=False, file=sys.stderr) as bar:
        yield bar.update


def _run_suite(cases, out_dir, cache_dir, workers, scheduler, scheduler_timeout, memory_limit, log,
               progress) -> Summary:
    start = time.perf_counter()
    total = hits = 0
    warned = []
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(cases), unit="case", file=sys.stderr)
    try:
        for i, result in enumerate(_results(cases, str(out_dir), None if cache_dir is None else str(cache_dir),
                                            workers, scheduler, scheduler_timeout, memory_limit,
                                            functools.partial(_bytes_bar, enabled=progress)), start=1):
            total += result.bytes
            hits += result.cache_hit
            if result.warning:
                warned.append((result.name, result.warning))
            if bar is not None:
                bar.set_postfix_str(result.name)
                bar.update(1)
                if result.warning:
                    bar.write(f"{result.name}: WARNING: {result.warning}", file=sys.stderr)
            else:
                log(f"[{i}/{len(cases)}] {result.name} ({result.op}): {result.bytes / 1e6:.1f} MB in "
                    f"{result.seconds:.2f} s{' (cache)' if result.cache_hit else ''}"
                    f"{f'  WARNING: {result.warning}' if result.warning else ''}")
    finally:
        if bar is not None:
            bar.close()
    return Summary(len(cases), total, time.perf_counter() - start, hits, warned)
