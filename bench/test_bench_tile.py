"""Tile: each case next to np.tile, torch.repeat (when installed) and a same-size parallel copy.

Groups: the seed's four shapes x six dtypes; big_2D and small_inner fresh (output
pool on, the default), fresh with the pool off ("no pool") and into a preallocated
``out``; each fast path against forced PerRow on a shape that picks it.  Read the ratio table
printed at the end of the run.
"""

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.ops import REGISTRY
from ascend_numba.ops.tile import SEED_DTYPES

from conftest import HAVE_TORCH, output_pool, paired, parallel_copy, record, ref

# The cases are the registry's (ascend_numba/ops/tile/__init__.py).
TILE = REGISTRY["tile"]
SEED = {c.name: (c.shapes["x"], c.attrs["reps"]) for c in TILE.bench_cases["seed"]}
LARGE = {c.name: (c.shapes["x"], c.attrs["reps"], c.dtype) for c in TILE.bench_cases["large"]}
# A shape that picks each fast path (checked below), float32.
PATH_SHAPES = {c.name: (c.shapes["x"], c.attrs["reps"]) for c in TILE.bench_cases["paths"]}


def _case(shape, reps, dtype):
    x = (np.arange(int(np.prod(shape))) % 101).astype(dtype).reshape(shape)
    out = np.tile(x, reps)
    an.tile(x, reps)  # compile / load the cache outside the timing
    return x, out


def _traffic(x, out):
    return x.nbytes + out.nbytes


def _record(benchmark, nbytes):
    benchmark.extra_info["GBps"] = nbytes / benchmark.stats.stats.median / 1e9


def _group_cases(group, x, reps, out, *, with_out=False):
    """The benchmark functions of one group, keyed by case name."""
    cases = {
        "ascend_numba.tile": lambda: an.tile(x, reps),
        "np.tile": lambda: np.tile(x, reps),
        "parallel copy (same bytes)": lambda: parallel_copy(out, out_src),
    }
    out_src = np.empty_like(out)
    if with_out:
        cases["ascend_numba.tile out="] = lambda: an.tile(x, reps, out=out)
        cases["ascend_numba.tile no pool"] = cases["ascend_numba.tile"]
    if HAVE_TORCH:
        import torch
        tx = torch.from_numpy(x.copy())
        cases["torch.repeat"] = lambda: tx.repeat(*reps)
    return cases


def _ref_name(name):
    return name.split(" ")[0] if name.startswith("parallel") else name


REFERENCES = ("np.tile", "torch.repeat", "parallel copy (same bytes)")


def _bench(benchmark, name, cases, nbytes, x, reps):
    fn = cases[name]
    if name in REFERENCES:
        ref(benchmark, _ref_name(name))
    else:
        record(benchmark, "tile", nbytes, lambda: an.tile(x, reps, trace=True),
               path=an.plan_tile(x.shape, reps, x.itemsize).path)
    with output_pool(not name.endswith("no pool")):
        fn()
        benchmark(fn)
        if name == "ascend_numba.tile":
            paired(benchmark, fn, {_ref_name(r): cases[r] for r in REFERENCES if r in cases})
    _record(benchmark, nbytes)


SEED_PARAMS = [(n, d) for n in SEED for d in SEED_DTYPES]
CASE_NAMES = ["ascend_numba.tile", "np.tile", "parallel copy (same bytes)", "torch.repeat"]


@pytest.mark.parametrize("case", CASE_NAMES)
@pytest.mark.parametrize("name, dtype", SEED_PARAMS, ids=[f"{n}-{d}" for n, d in SEED_PARAMS])
def test_seed_shapes(benchmark, name, dtype, case):
    shape, reps = SEED[name]
    x, out = _case(shape, reps, dtype)
    benchmark.group = f"tile {name} {dtype} (path {an.plan_tile(shape, reps, x.itemsize).path})"
    cases = _group_cases(benchmark.group, x, reps, out)
    if case not in cases:
        pytest.skip("torch not installed")
    _bench(benchmark, case, cases, _traffic(x, out), x, reps)


@pytest.mark.parametrize("case", CASE_NAMES + ["ascend_numba.tile out=", "ascend_numba.tile no pool"])
@pytest.mark.parametrize("name", list(LARGE))
def test_large(benchmark, name, case):
    shape, reps, dtype = LARGE[name]
    x, out = _case(shape, reps, dtype)
    benchmark.group = f"tile {name} {dtype} (path {an.plan_tile(shape, reps, x.itemsize).path})"
    cases = _group_cases(benchmark.group, x, reps, out, with_out=True)
    if case not in cases:
        pytest.skip("torch not installed")
    _bench(benchmark, case, cases, _traffic(x, out), x, reps)


@pytest.mark.parametrize("forced", ["auto", "per_row"])
@pytest.mark.parametrize("path", list(PATH_SHAPES))
def test_fast_path_vs_per_row(benchmark, path, forced):
    shape, reps = PATH_SHAPES[path]
    x, out = _case(shape, reps, "float32")
    assert an.plan_tile(shape, reps, 4).path == path
    benchmark.group = f"path {path} {shape}x{reps} float32 vs forced per_row"
    force = None if forced == "auto" else "per_row"
    an.tile(x, reps, out=out, path=force)
    if forced == "per_row":
        ref(benchmark, "per_row")
    record(benchmark, "tile", _traffic(x, out), lambda: an.tile(x, reps, path=force, trace=True),
           path=path if force is None else "per_row")
    benchmark(lambda: an.tile(x, reps, out=out, path=force))
    if force is None:
        paired(benchmark, lambda: an.tile(x, reps, out=out), {"per_row": lambda: an.tile(x, reps, out=out,
                                                                                         path="per_row")})
    _record(benchmark, _traffic(x, out))
    assert np.array_equal(out, np.tile(x, reps))
