"""The wall around Numba's internals, the supported-version checks and their fallbacks, and what
``import ascend_numba`` costs."""

import ast
import gc
import json
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ascend_numba
from ascend_numba import _numba_compat
from ascend_numba._numba_compat import jit as compat_jit

PACKAGE = pathlib.Path(ascend_numba.__file__).parent
WALL = PACKAGE / "_numba_compat"
PRIVATE_MODULES = ("numba.core", "numba.np", "numba.parfors", "numba.misc", "numba.cpython")
PRIVATE_NAMES = ("call_conv", "_get_arg_packer", "get_call_template", "_optimize_final_module", "_index_key")


def _outside_the_wall():
    roots = [PACKAGE, PACKAGE.parent / "examples", PACKAGE.parent / "bench"]
    return [p for root in roots for p in root.rglob("*.py") if WALL not in p.parents]


def test_nothing_outside_the_wall_touches_numba_internals():
    found = []
    for path in _outside_the_wall():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PRIVATE_MODULES):
                found.append(f"{path}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Import):
                found += [f"{path}:{node.lineno} import {a.name}" for a in node.names if a.name.startswith(PRIVATE_MODULES)]
            elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_NAMES:
                found.append(f"{path}:{node.lineno} .{node.attr}")
    assert found == []


def test_the_wall_lists_every_private_symbol_it_checks():
    doc = _numba_compat.__doc__
    for name in compat_jit._PRIVATE_SYMBOLS:
        assert name.split(".")[-1] in doc, name


def test_pyproject_declares_the_tested_range():
    text = (PACKAGE.parent / "pyproject.toml").read_text()
    low, high = _numba_compat.TESTED_NUMBA
    assert f'"numba>={low},<={high}"' in text


@pytest.mark.parametrize("version, warns", [
    ("0.60.0", False), ("0.64.1", False), ("0.68.1", False),
    ("0.69.0", True), ("1.0.0", True), ("0.59.1", True), ("0.69.0.dev0+12.gabc", True), ("0.68.0rc1", True),
])
def test_a_numba_outside_the_tested_range_warns_once(monkeypatch, version, warns):
    monkeypatch.setattr(_numba_compat, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = _numba_compat.check_numba_version(version)
        again = _numba_compat.check_numba_version(version)
    assert (text is not None) == warns and again == text
    assert len(caught) == int(warns)
    if warns:
        low, high = _numba_compat.TESTED_NUMBA
        assert f"numba {low} to {high}" in text and f"numba {version} is installed" in text


def test_a_missing_private_symbol_sends_the_jit_to_public_numba(monkeypatch):
    monkeypatch.setitem(compat_jit._PRIVATE_SYMBOLS, "JITCodeLibrary._gone", (compat_jit.JITCodeLibrary, "_gone"))
    compat_jit.uses_public_jit.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match=r"missing JITCodeLibrary\._gone.*plain numba\.njit"):
            assert compat_jit.uses_public_jit()
    finally:
        compat_jit.uses_public_jit.cache_clear()
    monkeypatch.undo()
    assert not compat_jit.uses_public_jit()


def test_an_untested_numba_runs_the_probe_and_keeps_the_private_path_when_it_passes(monkeypatch):
    monkeypatch.setattr(_numba_compat, "TESTED_NUMBA", ("0.1.0", "0.2.0"))
    monkeypatch.setattr(_numba_compat, "_warned", True)
    compat_jit.uses_public_jit.cache_clear()
    try:
        assert not compat_jit.uses_public_jit()
    finally:
        compat_jit.uses_public_jit.cache_clear()


def test_a_calling_convention_without_the_private_packer_is_one_clear_error(monkeypatch):
    from ascend_numba._numba_compat.call import call_by_address

    class Context:
        class call_conv:
            @staticmethod
            def get_function_type(restype, argtys):
                raise AttributeError("'CPUCallConv' object has no attribute '_get_arg_packer'")

    with pytest.raises(_numba_compat.NumbaCompatError, match=r"call by address.*supports numba .* pip install"):
        call_by_address(Context, None, None, None, (), [])


def _threshold_probe(during: list):
    """A function whose typing, which runs inside a compile, records the collector's thresholds."""
    from ascend_numba._numba_compat.extending import overload

    def probe():
        raise NotImplementedError

    @overload(probe)
    def _ov_probe():
        during.append(gc.get_threshold())
        return lambda: 0

    return compat_jit.jit(lambda: probe(), python=True, cache=False)


@pytest.mark.skipif(compat_jit.uses_public_jit(), reason="plain numba.njit dispatchers compile as Numba does")
def test_a_compile_collects_less_and_gives_the_callers_thresholds_back():
    from numba.core.errors import TypingError

    during = []
    fails = compat_jit.jit(lambda x: x.no_such_attribute, python=True, cache=False)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert _threshold_probe(during)() == 0
        assert during == [compat_jit.COMPILE_GC_THRESHOLDS] and gc.get_threshold() == (700, 10, 10)
        with pytest.raises(TypingError):
            fails(1)
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 5, 5)  # never lowered
        assert _threshold_probe(during)() == 0
        assert during[-1] == (50_000, 10, 10) and gc.get_threshold() == (50_000, 5, 5)
    finally:
        gc.set_threshold(*before)


def _run(code: str, **env) -> subprocess.CompletedProcess:
    import os

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done


# A Numba outside the tested range whose private path fails: warned once, then every op runs on
# plain numba.njit dispatchers with the same bits, plain and traced.  (A checked launch there
# compiles the whole rule table with plain njit: 64 s of CI for a debugging mode; not run here.)
_FALLBACK = """
import warnings
warnings.simplefilter("always")
import numpy as np
import ascend_numba._numba_compat as compat
import ascend_numba._numba_compat.probe as probe
compat.TESTED_NUMBA = ("0.1.0", "0.2.0")
def broken():
    raise RuntimeError("Attribute 'alwaysinline' does not apply to function return values")
probe.run_probe = broken
import ascend_numba as an
from ascend_numba._numba_compat.jit import uses_public_jit
x = (np.arange(5 * 7) % 251).astype(np.uint8).reshape(5, 7)
assert np.array_equal(an.tile(x, (3, 4)), np.tile(x, (3, 4)))
y = np.arange(40 * 24, dtype=np.float32).reshape(40, 24)
out, trace = an.transpose2d(y, trace=True)
assert np.array_equal(out, y.T) and trace.totals()
assert uses_public_jit()
print("ok")
"""


def test_a_failing_private_path_falls_back_to_public_numba_with_the_same_bits(tmp_path):
    done = _run(_FALLBACK, NUMBA_CACHE_DIR=str(tmp_path))
    assert done.stdout.split()[-1] == "ok"
    assert done.stderr.count("is tested with numba") == 1
    assert done.stderr.count("compiling with plain numba.njit") == 1
    assert "LLVM" not in done.stderr and "define " not in done.stderr


# What `import ascend_numba` loads: NumPy and the host package, nothing that launches kernels.
_IMPORT = """
import json, sys
import ascend_numba
print(json.dumps({"modules": sorted(m for m in sys.modules if m.split(".")[0] in
    ("ascend_numba", "numba", "llvmlite", "ml_dtypes", "dask", "distributed", "torch", "matplotlib", "click",
     "yaml", "tqdm", "pytest"))}))
"""

IMPORTED = ["ascend_numba", "ascend_numba._numba_compat", "ascend_numba.config", "ascend_numba.errors",
            "ascend_numba.host", "ascend_numba.host.device_rates", "ascend_numba.host.errors", "ascend_numba.host.gm",
            "ascend_numba.host.platform",
            "ascend_numba.host.primitives", "ascend_numba.host.split", "ascend_numba.host.tiling",
            "ascend_numba.host.tiling_key", "ascend_numba.lint", "ascend_numba.memory"]


def test_import_loads_only_the_host_package():
    # How long it takes is bench/test_bench_compile.py's (test_import).
    assert json.loads(_run(_IMPORT).stdout)["modules"] == IMPORTED


def test_names_load_on_first_use():
    code = ("import sys, ascend_numba as an\n"
            "assert 'numba' not in sys.modules and 'ml_dtypes' not in sys.modules\n"
            "an.bfloat16\n"
            "assert 'ml_dtypes' in sys.modules and 'numba' not in sys.modules\n"
            "assert callable(an.tile) and an.lint.__module__ == 'ascend_numba.lint'\n"
            "assert 'numba' in sys.modules\n"
            "from ascend_numba import *\n"
            "assert callable(apply_adamw) and REGISTRY['tile'].function is an.tile\n"
            "print(sorted(set(an.__all__) - set(dir(an))))\n")
    assert _run(code).stdout.strip() == "[]"


def test_bfloat16_ops_work_without_importing_ml_dtypes_first():
    import ml_dtypes

    x = np.arange(24, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(4, 6)
    assert ascend_numba.bfloat16 is ml_dtypes.bfloat16
    assert np.array_equal(ascend_numba.tile(x, (2, 1)).view(np.uint16), np.tile(x, (2, 1)).view(np.uint16))
