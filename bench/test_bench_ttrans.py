"""TTRANS: 2-D transposes next to np.ascontiguousarray(a.T), torch .t().contiguous() and a same-size
parallel copy; the format conversions next to NumPy pad + reshape + transpose and a parallel copy;
the fp32 tiled transpose next to pto-isa's CPU simulator (when a checkout and a clang >= 17 are
there).  Targets (issue #54): the parallel copy takes >= 0.5 of the op's time, 2-D and
conversions; fp32 2-D >= 15x NumPy, >= 8x torch and >= 3x pto-isa's simulator.

pto-isa: ``ASCEND_NUMBA_PTO_ISA`` names a checkout (its ``include/pto/pto-inst.hpp``) and
``ASCEND_NUMBA_PTO_CXX`` the compiler command (default ``clang++``; e.g. ``python -m ziglang c++``);
``bench/pto_isa_ttrans.cpp`` (ours: it only includes pto-isa's headers) is built into a temporary
directory with ``-D__CPU_SIM -O2``, twice: "pto-isa" with ``-DPTO_CPU_MAX_THREADS=1u``, one thread
per simulated block as the twin has one lane per block, and "pto-isa default" with pto-isa's own
defaults, under which every TLOAD and TSTORE of a tile of 16384 elements or more
(``PTO_CPU_PARALLEL_THRESHOLD_ELEMS``, ``include/pto/cpu/parallel.hpp``) starts its own
threads, one per CPU, inside each block's thread.  Without both the cases are skipped.
"""

import ctypes
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.ops import REGISTRY
from ascend_numba.ops.ttrans import reference as R

from conftest import HAVE_TORCH, output_pool, paired, parallel_copy, record, ref

TRANSPOSES = [(c.shapes["x"], c.dtype) for c in REGISTRY["transpose2d"].bench_cases["transpose"]]
CONVERSIONS = {c.name: c for c in REGISTRY["convert_format"].bench_cases["convert"]}
CASES = ["ascend_numba", "ascend_numba no pool", "ascend_numba out=", "numpy", "torch", "parallel copy"]
# "no pool": a fresh result with the output pool off (page faults on every call, as NumPy pays).


REFERENCES = {"numpy": "numpy", "parallel copy": "copy", "torch": "torch"}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape, dtype", TRANSPOSES, ids=[f"{s[0]}x{s[1]}-{d}" for s, d in TRANSPOSES])
def test_transpose2d(benchmark, shape, dtype, case):
    a = (np.arange(shape[0] * shape[1]) % 97).astype(dtype).reshape(shape)
    out = np.empty(shape[::-1], dtype)
    benchmark.group = f"transpose2d {shape[0]}x{shape[1]} {dtype}"
    refs = {"numpy": lambda: np.ascontiguousarray(a.T), "copy": lambda: parallel_copy(out, a)}
    if HAVE_TORCH:
        import torch
        ta = torch.from_numpy(a)
        refs["torch"] = lambda: ta.t().contiguous()
    if case.startswith("ascend_numba"):
        record(benchmark, "transpose2d", 2 * a.nbytes, lambda: an.transpose2d(a, trace=True))
    if case in ("ascend_numba", "ascend_numba no pool"):
        fn = lambda: an.transpose2d(a)  # noqa: E731
    elif case == "ascend_numba out=":
        fn = lambda: an.transpose2d(a, out=out)  # noqa: E731
    elif REFERENCES[case] in refs:
        ref(benchmark, REFERENCES[case])
        fn = refs[REFERENCES[case]]
    else:
        pytest.skip("torch not installed")
    with output_pool(case != "ascend_numba no pool"):
        fn()
        benchmark(fn)
        if case == "ascend_numba":
            paired(benchmark, fn, refs)
    benchmark.extra_info["GBps"] = 2 * a.nbytes / benchmark.stats.stats.median / 1e9


@pytest.mark.parametrize("case", ["ascend_numba", "ascend_numba no pool", "numpy", "parallel copy"])
@pytest.mark.parametrize("conversion", list(CONVERSIONS))
def test_conversions(benchmark, conversion, case):
    spec = CONVERSIONS[conversion]
    shape = spec.shapes["x"]
    x = (np.arange(int(np.prod(shape))) % 97).astype(spec.dtype).reshape(shape)
    src, dst = spec.attrs["src"], spec.attrs["dst"]
    benchmark.group = f"convert_format {conversion} {x.shape} {spec.dtype}"
    out = np.empty_like(x)
    refs = {"numpy": lambda: R.convert_format_reference(x, src, dst), "copy": lambda: parallel_copy(out, x)}
    if case in REFERENCES:
        ref(benchmark, REFERENCES[case])
        fn = refs[REFERENCES[case]]
    else:
        fn = lambda: an.convert_format(x, src, dst)  # noqa: E731
        record(benchmark, "convert_format", 2 * x.nbytes, lambda: an.convert_format(x, src, dst, trace=True))
    with output_pool(case != "ascend_numba no pool"):
        fn()
        benchmark(fn)
        if case == "ascend_numba":
            paired(benchmark, fn, refs)
    benchmark.extra_info["GBps"] = 2 * x.nbytes / benchmark.stats.stats.median / 1e9


# ---- pto-isa's CPU simulator ---------------------------------------------------------------------

PTO_ISA_ENV, PTO_CXX_ENV = "ASCEND_NUMBA_PTO_ISA", "ASCEND_NUMBA_PTO_CXX"
DRIVER = os.path.join(os.path.dirname(__file__), "pto_isa_ttrans.cpp")
# The table: (shape, blocks); the simulator's tiles are 128x128 fp32.
PTO_CASES = [((4096, 4096), 2), ((4096, 4096), 8), ((1024, 1024), 2)]


def _clang_major(cxx: list[str]) -> int | None:
    try:
        done = subprocess.run([*cxx, "--version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"clang version (\d+)", done.stdout)
    return int(found.group(1)) if found else None


# Simulator builds: the name and the extra compile flags.
PTO_BUILDS = {"pto-isa": ["-DPTO_CPU_MAX_THREADS=1u"], "pto-isa default": []}


@pytest.fixture(scope="session")
def pto_isa(tmp_path_factory):
    """The simulator's ``pto_ttrans_f32(out, in, h, w, blocks)`` for each of PTO_BUILDS, built once
    per session, or a skip."""
    checkout = os.environ.get(PTO_ISA_ENV)
    if not checkout or not os.path.isfile(os.path.join(checkout, "include", "pto", "pto-inst.hpp")):
        pytest.skip(f"{PTO_ISA_ENV} does not name a pto-isa checkout")
    cxx = shlex.split(os.environ.get(PTO_CXX_ENV, "clang++"))
    major = _clang_major(cxx)
    if major is None or major < 17:
        pytest.skip(f"pto-isa's CPU simulator needs clang >= 17 ({PTO_CXX_ENV}={' '.join(cxx)}: {major})")
    built = {}
    for name, flags in PTO_BUILDS.items():
        lib = tmp_path_factory.mktemp("pto_isa") / "pto_ttrans.so"
        subprocess.run([*cxx, "-std=c++20", "-O2", "-D__CPU_SIM", *flags, "-shared", "-fPIC", "-include", "stdint.h",
                        "-include", "stddef.h", "-Wno-macro-redefined", "-Wno-ignored-attributes",
                        "-I", os.path.join(checkout, "include"), DRIVER, "-o", str(lib)], check=True)
        _smoke_test(lib, checkout)
        fn = ctypes.CDLL(str(lib)).pto_ttrans_f32
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        fn.restype = None
        built[name] = fn
    return built


# A 256x256 transpose by the built library in a process of its own, so a checkout whose API the
# driver no longer fits (pto-isa 3186c381 segfaulted on tiles it had not been TASSIGNed) skips
# these cases instead of crashing the bench run.
_SMOKE = """import ctypes, sys, numpy as np
fn = ctypes.CDLL(sys.argv[1]).pto_ttrans_f32
a = np.arange(256 * 256, dtype=np.float32).reshape(256, 256); out = np.zeros_like(a)
fn(ctypes.c_void_p(out.ctypes.data), ctypes.c_void_p(a.ctypes.data), 256, 256, 2)
sys.exit(0 if np.array_equal(out, a.T) else 3)"""


def _smoke_test(lib, checkout: str) -> None:
    try:
        code = subprocess.run([sys.executable, "-c", _SMOKE, str(lib)], capture_output=True, timeout=300).returncode
    except subprocess.TimeoutExpired:
        code = "timed out after 300 s"
    if code != 0:
        pytest.skip(f"the simulator built from {checkout} failed a 256x256 transpose in a child process (exit "
                    f"{code}): bench/pto_isa_ttrans.cpp may not fit this pto-isa version")


@pytest.mark.parametrize("case", ["ascend_numba", *PTO_BUILDS])
@pytest.mark.parametrize("shape, blocks", PTO_CASES, ids=[f"{s[0]}x{s[1]}-{b}blocks" for s, b in PTO_CASES])
def test_pto_isa_simulator(benchmark, pto_isa, shape, blocks, case):
    """The same fp32 transpose on ``blocks`` cores: the twin's tiling (its UB tiles) and the
    simulator's 128x128 tiles, each TLOAD -> TTRANS -> TSTORE; both results checked."""
    h, w = shape
    a = (np.arange(h * w) % 97).astype(np.float32).reshape(shape)
    sim_out = np.empty((w, h), np.float32)
    benchmark.group = f"transpose2d {h}x{w} float32 {blocks} blocks vs pto-isa"
    sims = {name: (lambda fn=fn: fn(sim_out.ctypes.data, a.ctypes.data, h, w, blocks)) for name, fn in pto_isa.items()}
    twin = lambda: an.transpose2d(a, block_dim=blocks)  # noqa: E731
    for sim in sims.values():
        sim_out.fill(0)
        sim()
        assert np.array_equal(sim_out, a.T)
    assert np.array_equal(twin(), a.T)
    if case in sims:
        ref(benchmark, case)
        benchmark(sims[case])
        return
    record(benchmark, "transpose2d", 2 * a.nbytes)
    benchmark(twin)
    paired(benchmark, twin, {**sims, "copy": lambda: parallel_copy(sim_out, a)})
