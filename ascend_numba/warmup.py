"""Compile kernel specializations ahead of time, for CI images, containers and fresh venvs.

Each specialization is compiled by running its op once on a tiny input; Numba's on-disk cache
then holds it for every later process (``NUMBA_CACHE_DIR``, or ``__pycache__`` beside the
package).  With ``workers > 1`` the specializations are spread over worker processes.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import time
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from .dtypes import dtype_by_name
from .ops import REGISTRY, load_ops
from .ops.user import loaded_modules

__all__ = ["MODES", "Specialization", "specializations", "warm", "warmup", "measure"]

MODES = ("plain", "traced", "checked")


@dataclass(frozen=True)
class Specialization:
    """One compiled specialization, named by the op and its warmup case (see
    :attr:`ascend_numba.ops.OpEntry.warmup_cases`) that needs it."""

    op: str
    mode: str
    case: str

    def __str__(self) -> str:
        return f"{self.op} {self.case} ({self.mode})"


def specializations(ops: Iterable[str] | None = None, modes: Iterable[str] = ("plain",)) -> list[Specialization]:
    """Every specialization the given ops (None: every registered op, the user's too) can need in
    the given modes."""
    ops, modes = list(REGISTRY if ops is None else ops), list(modes)
    for name in ops:
        if name not in REGISTRY:
            raise ValueError(f"unknown op {name!r}; ops: {', '.join(REGISTRY)}")
    for mode in modes:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
    return [Specialization(op, mode, case.name) for mode in modes for op in ops
            for case in REGISTRY[op].warmup_cases]


def warm(spec: Specialization) -> float:
    """Run ``spec``'s op once on its tiny input (compiling it, or loading it from the cache);
    returns the wall seconds it took."""
    entry, case = REGISTRY[spec.op], _case(spec)
    inputs = {name: np.zeros(shape, dtype_by_name(case.dtype)) for name, shape in case.shapes.items()}
    start = time.perf_counter()
    entry.run(inputs, case.attrs, trace=spec.mode == "traced", checked=spec.mode == "checked")
    return time.perf_counter() - start


def _case(spec: Specialization):
    cases = {c.name: c for c in REGISTRY[spec.op].warmup_cases}
    if spec.case not in cases:
        raise ValueError(f"{spec.op} has no warmup case {spec.case!r}; cases: {', '.join(cases)}")
    return cases[spec.case]


def measure(specs: list[Specialization]) -> list[dict]:
    """Run each specialization's op once, one after another, in this process; for each, the
    CPU seconds (user + system, getrusage) and wall seconds of that first call and the number
    of functions Numba compiled for it (0 when everything came from the on-disk cache)."""
    import resource

    from ._numba_compat.extending import CompileCounter

    rows = []
    with CompileCounter() as compiles:
        for spec in specs:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            before, n = usage.ru_utime + usage.ru_stime, compiles.count
            wall = warm(spec)
            usage = resource.getrusage(resource.RUSAGE_SELF)
            rows.append({"spec": str(spec), "cpu": usage.ru_utime + usage.ru_stime - before, "wall": wall,
                         "compiled": compiles.count - n})
    return rows


def _warm_all(specs: list[Specialization]) -> list[float]:
    return [warm(s) for s in specs]


def warmup(specs: list[Specialization], workers: int = 1,
           report: Callable[[Specialization, float], None] | None = None) -> None:
    """Compile ``specs``, in this process or spread over ``workers`` processes (each takes every
    ``workers``-th specialization, so those of one kernel are shared out).  ``report`` gets each
    specialization with its seconds as it finishes (a worker's after its whole share)."""
    if workers <= 1:
        for spec in specs:
            seconds = warm(spec)
            if report:
                report(spec, seconds)
        return
    shares = [specs[i::workers] for i in range(workers)]
    # spawn: a fork of a process whose Numba thread pool has started can deadlock.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context, initializer=load_ops,
                                                initargs=(loaded_modules(),)) as pool:  # the user's ops too
        futures = {pool.submit(_warm_all, share): share for share in shares if share}
        for future in concurrent.futures.as_completed(futures):
            for spec, seconds in zip(futures[future], future.result()):
                if report:
                    report(spec, seconds)


def _parse(arg: str) -> Specialization:
    """``OP:MODE:CASE`` as a :class:`Specialization`; a ValueError names what is wrong."""
    parts = arg.split(":", 2)
    if len(parts) != 3:
        raise ValueError(f"{arg!r} is not OP:MODE:CASE")
    spec = Specialization(*parts)
    specializations([spec.op], [spec.mode])  # validates the op and the mode
    _case(spec)
    return spec


def _main(argv: list[str]) -> None:
    """``python -m ascend_numba.warmup OP:MODE:CASE ...``: :func:`measure` the specializations,
    in order, in this process; prints one JSON row per specialization."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m ascend_numba.warmup", description=(
        "Measure each specialization's first call in this process (CPU and wall seconds, functions "
        "compiled), in order; one JSON row each. `ascend-numba warmup` compiles them ahead of time."))
    parser.add_argument("specs", nargs="+", metavar="OP:MODE:CASE",
                        help=f"an op, a mode ({', '.join(MODES)}) and one of the op's warmup cases")
    args = parser.parse_args(argv)
    try:
        specs = [_parse(arg) for arg in args.specs]
    except ValueError as error:
        parser.error(str(error))
    for row in measure(specs):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
