"""Compile kernel specializations ahead of time, for CI images, containers and fresh venvs.

Each specialization is compiled by running its op once on a tiny input; Numba's on-disk cache
then holds it for every later process (``NUMBA_CACHE_DIR``, or ``__pycache__`` beside the
package).  With ``workers > 1`` the specializations are spread over worker processes.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import ml_dtypes
import numpy as np

__all__ = ["OPS", "MODES", "Specialization", "specializations", "warm", "warmup", "measure"]

OPS = ("tile", "repeat", "apply_adamw", "transpose2d", "convert_format")
MODES = ("plain", "traced", "checked")

_ADAMW_DTYPES = (np.float32, np.float16, ml_dtypes.bfloat16)
_UINTS = (np.uint8, np.uint16, np.uint32, np.uint64)
# One input per conversion; C0 is the default for the element width, N0 = 16.
_CONVERSIONS = {
    ("NCHW", "NC1HWC0"): lambda c0: (1, 4, 2, 2),
    ("NC1HWC0", "NCHW"): lambda c0: (1, 1, 2, 2, c0),
    ("GNCHW", "GNC1HWC0"): lambda c0: (1, 1, 4, 2, 2),
    ("GNC1HWC0", "GNCHW"): lambda c0: (1, 1, 1, 2, 2, c0),
    ("NC1HWC0", "FRACTAL_Z"): lambda c0: (2, 1, 2, 2, c0),
    ("GNC1HWC0", "FRACTAL_Z"): lambda c0: (1, 2, 1, 2, 2, c0),
    ("NCDHW", "FRACTAL_Z_3D"): lambda c0: (2, 4, 1, 2, 2),
}


# A small problem each Tile path can run (the path is a compile-time key of the Tile kernel).
_TILE_PATHS = {
    "split_mult": ((4, 8), (1, 2), np.uint8),
    "doubling": ((64, 8), (1, 4), np.float32),
    "build": ((64, 48), (2, 3), np.float16),
    "gather": ((64, 3), (1, 4), np.float32),
    "per_row": ((64, 3), (1, 4), np.float32),
}


@dataclass(frozen=True)
class Specialization:
    """One compiled specialization, named by the op call that needs it."""

    op: str
    mode: str
    params: tuple = field(default=())

    def __str__(self) -> str:
        detail = " ".join(f"{k}={getattr(v, '__name__', v)}" for k, v in self.params)
        return f"{self.op} {detail}{' ' if detail else ''}({self.mode})"


def specializations(ops: Iterable[str] = OPS, modes: Iterable[str] = ("plain",)) -> list[Specialization]:
    """Every specialization the given ops can need in the given modes.  ``repeat`` runs the
    Tile kernel (one per path, for every dtype), so it adds nothing beside ``tile``."""
    ops, modes = list(ops), list(modes)
    for name in ops:
        if name not in OPS:
            raise ValueError(f"unknown op {name!r}; ops: {', '.join(OPS)}")
    for mode in modes:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
    specs = []
    for mode in modes:
        if "tile" in ops or "repeat" in ops:
            specs += [Specialization("tile", mode, (("path", path),)) for path in _TILE_PATHS]
        if "apply_adamw" in ops:
            for dtype in _ADAMW_DTYPES:
                for variant in ("seed", "a2"):
                    for amsgrad in (False, True):
                        for maximize in (False, True):
                            specs.append(Specialization("apply_adamw", mode, (
                                ("dtype", dtype), ("variant", variant), ("amsgrad", amsgrad), ("maximize", maximize))))
        if "transpose2d" in ops:
            specs += [Specialization("transpose2d", mode, (("dtype", u),)) for u in _UINTS]
        if "convert_format" in ops:
            specs += [Specialization("convert_format", mode, (("src", src), ("dst", dst), ("dtype", u)))
                      for (src, dst) in _CONVERSIONS for u in _UINTS[:3]]
    return specs


def warm(spec: Specialization) -> float:
    """Run ``spec``'s op once on a tiny input (compiling it, or loading it from the cache);
    returns the wall seconds it took."""
    import ascend_numba as an

    start = time.perf_counter()
    p = dict(spec.params)
    mode = {"trace": spec.mode == "traced", "checked": spec.mode == "checked"}
    if spec.op == "tile":
        shape, reps, dtype = _TILE_PATHS[p.get("path", "split_mult")]
        an.tile(np.zeros(shape, dtype), reps, path=p.get("path"), **mode)
    elif spec.op == "repeat":
        an.repeat(np.zeros((4, 8), np.uint8), (1, 1, 2), **mode)
    elif spec.op == "apply_adamw":
        var, m, v, grad = (np.full(64, 0.5, p["dtype"]) for _ in range(4))
        mgn = np.full(64, 0.5, p["dtype"]) if p["amsgrad"] else None
        an.apply_adamw(var, m, v, 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, grad, mgn, amsgrad=p["amsgrad"],
                       maximize=p["maximize"], variant=p["variant"], **mode)
    elif spec.op == "transpose2d":
        an.transpose2d(np.zeros((8, 8), p["dtype"]), **mode)
    else:
        c0 = 32 // np.dtype(p["dtype"]).itemsize
        shape = _CONVERSIONS[(p["src"], p["dst"])](c0)
        an.convert_format(np.zeros(shape, p["dtype"]), p["src"], p["dst"], **mode)
    return time.perf_counter() - start


def measure(specs: list[Specialization]) -> list[dict]:
    """Run each specialization's op once, one after another, in this process; for each, the
    CPU seconds (user + system, getrusage) and wall seconds of that first call and the number
    of functions Numba compiled for it (0 when everything came from the on-disk cache)."""
    import resource

    from numba.core import event

    compiles = []

    class _Count(event.Listener):
        def on_start(self, ev):
            compiles.append(1)

        def on_end(self, ev):
            pass

    listener = _Count()
    event.register("numba:compile", listener)
    rows = []
    try:
        for spec in specs:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            before, n = usage.ru_utime + usage.ru_stime, len(compiles)
            wall = warm(spec)
            usage = resource.getrusage(resource.RUSAGE_SELF)
            rows.append({"spec": str(spec), "cpu": usage.ru_utime + usage.ru_stime - before, "wall": wall,
                         "compiled": len(compiles) - n})
    finally:
        event.unregister("numba:compile", listener)
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
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {pool.submit(_warm_all, share): share for share in shares if share}
        for future in concurrent.futures.as_completed(futures):
            for spec, seconds in zip(futures[future], future.result()):
                if report:
                    report(spec, seconds)


def _main(argv: list[str]) -> None:
    """``python -m ascend_numba.warmup OP:MODE[:key=value,...] ...``: :func:`measure` the
    specializations, in order, in this process; prints one JSON row per specialization."""
    import json

    specs = []
    for arg in argv:
        op, mode, *rest = arg.split(":")
        params = []
        for item in (rest[0].split(",") if rest and rest[0] else []):
            key, value = item.split("=")
            parsed = {"True": True, "False": False}.get(value, value)
            if key == "dtype":
                parsed = np.dtype(value).type if value != "bfloat16" else ml_dtypes.bfloat16
            params.append((key, parsed))
        specs.append(Specialization(op, mode, tuple(params)))
    for row in measure(specs):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
