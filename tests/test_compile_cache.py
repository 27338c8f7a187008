"""Compiled code is cached between processes, and stale code is never loaded."""

import json
import os
import subprocess
import sys

import pytest

from ascend_numba._numba_compat import jit as _jit

# One first call of each kind of compiled code: a plain kernel, one of fused vector programs
# (ApplyAdamW), a traced and a checked one (with its rule table).  The other ops' kernels are
# plain kernels of the same machinery (a cold compile of every op here cost CI 40 s more).
FIRST_CALLS = ["tile:plain:split_mult", "apply_adamw:plain:seed-a0m0-float32", "transpose2d:traced:uint8",
               "transpose2d:checked:uint8"]


def _python(*args: str, env: dict) -> subprocess.CompletedProcess:
    """A new Python process with ``args`` and ``env``, which must succeed."""
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done


def _first_calls() -> tuple[list[dict], str]:
    # The session's cache: what the suite compiles anyway (a fresh cache here cost CI a minute).
    env = dict(os.environ, ASCEND_NUMBA_COMPILE_MESSAGES="1")
    done = _python("-m", "ascend_numba.warmup", *FIRST_CALLS, env=env)
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def test_a_new_process_compiles_nothing_the_last_one_compiled():
    first, _ = _first_calls()  # compiles what no earlier test did
    second, second_err = _first_calls()
    assert {row["spec"]: row["compiled"] for row in second} == {row["spec"]: 0 for row in first}
    assert "compiling" not in second_err


def test_the_cache_tag_covers_subpackages(tmp_path, monkeypatch):
    # A module in a subpackage of kernels/ changes what compiled code may do: it must change the tag.
    sub = tmp_path / "kernels" / "extra"
    sub.mkdir(parents=True)
    (tmp_path / "host").mkdir()
    (sub / "helpers.py").write_text("A = 1\n")
    monkeypatch.setattr(_jit, "_PACKAGE", tmp_path)
    before = _jit.compiled_code_digest.__wrapped__()
    (sub / "helpers.py").write_text("A = 2\n")
    assert _jit.compiled_code_digest.__wrapped__() != before


# A later process compiling a new kernel links the helpers an earlier one cached (their code is
# kept for linking only, see _numba_compat.jit.LinkedLibrary): the result is right and the helpers were loaded.
_NEW_KERNEL_ON_CACHED_HELPERS = """
import numpy as np
import ascend_numba as an
from ascend_numba._numba_compat import jit as _jit

loaded = []
rebuilt = _jit.LinkedLibrary.rebuilt.__func__


def counting(cls, codegen, libdata):
    library = rebuilt(cls, codegen, libdata)
    if library is not None:
        loaded.append(library.name)
    return library


_jit.LinkedLibrary.rebuilt = classmethod(counting)
x = np.arange(4 * 32, dtype=np.uint8).reshape(4, 32)
assert np.array_equal(an.tile(x, (3, 2), path="{path}"), np.tile(x, (3, 2)))
print(len(loaded))
"""


def test_a_new_kernel_links_helpers_an_earlier_process_cached(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), ASCEND_NUMBA_COMPILE_MESSAGES="1")

    def run(path):
        return _python("-c", _NEW_KERNEL_ON_CACHED_HELPERS.format(path=path), env=env)

    first = run("split_mult")  # an empty cache: compiles what it does not load back from its own saves
    assert any(line.startswith("compiling tile kernel") and line.endswith("(first run only)...")
               for line in first.stderr.splitlines())
    assert int(run("doubling").stdout.split()[-1]) > int(first.stdout.split()[-1])


# One kernel, three specializations: each compiles its own Add, Sub or Mul implementation (closures
# of one qualified name and argument types).
_OP_KERNEL = """
import numpy as np

from ascend_numba.kernels import add, alloc_buffer, constant, data_copy, kernel, mul, sub

OP = constant("OP", "0: z = x + y, 1: z = x - y, 2: z = x * y")


@kernel(nrt=False)
def add_sub_or_mul(ctx, x, y, z):
    a = alloc_buffer(ctx, 8, np.float32)
    b = alloc_buffer(ctx, 8, np.float32)
    c = alloc_buffer(ctx, 8, np.float32)
    data_copy(ctx, a, 0, x, 0, 8)
    data_copy(ctx, b, 0, y, 0, 8)
    if OP == 0:
        add(ctx, c, a, b, 8)
    elif OP == 1:
        sub(ctx, c, a, b, 8)
    else:
        mul(ctx, c, a, b, 8)
    data_copy(ctx, z, 0, c, 0, 8)
"""

_RUN_OPS = """
import sys

import pytest
import numpy as np
import op_kernel
out = []
for op in sys.argv[1:]:
    x, y, z = np.full(8, 5, np.float32), np.full(8, 2, np.float32), np.zeros(8, np.float32)
    op_kernel.add_sub_or_mul.launch(x, y, z, block_dim=1, datatype={"OP": int(op)})
    out.append(float(z[0]))
print(out)
"""


def test_two_processes_cached_kernels_run_each_its_own_code_in_a_third(tmp_path):
    # With Numba's per-process id counter, the Add and the Sub kernel, each compiled first by a
    # process that loaded everything else from the cache, got one symbol for their implementations,
    # and a process running both ran Add for Sub (numba/numba#10486).
    (tmp_path / "op_kernel.py").write_text(_OP_KERNEL)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))

    def run(*ops):
        return json.loads(_python("-c", _RUN_OPS, *map(str, ops), env=env).stdout.splitlines()[-1])

    assert run(2) == [10.0]  # compiles the launcher and the helpers: the next two load them
    assert run(0) == [7.0]
    assert run(1) == [3.0]
    assert run(0, 1) == [7.0, 3.0]
    assert run(1, 0) == [3.0, 7.0]


def test_an_index_another_version_wrote_is_started_afresh(tmp_path, monkeypatch):
    # A function's index is keyed by pickled signatures: one naming a type this version lacks
    # (another version of the library wrote it) must not stop the next save.
    import importlib
    import pickle

    (tmp_path / "index_case.py").write_text("class Gone:\n    pass\n\n\ndef f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("index_case")
    disp = _jit.private_dispatcher(module.f, "index-case", python=True)
    assert disp(1) == 2  # compiled and saved: the index exists
    cache_file = disp._cache._cache._cache_file
    with open(cache_file._index_path, "rb") as f:
        version = pickle.load(f)
    with open(cache_file._index_path, "wb") as f:
        pickle.dump(version, f)
        f.write(pickle.dumps((cache_file._source_stamp, {"elsewhere": module.Gone})))
    del module.Gone
    assert disp(1.5) == 2.5  # another signature: saved into a fresh index
    assert len(cache_file._load_index()) == 1
    # An index whose keys no longer pickle (a dispatcher type's object gone) starts afresh too.
    dump = type(cache_file)._dump
    fails = [ReferenceError("underlying object has vanished")]

    def dump_once(self, obj):
        if fails:
            raise fails.pop()
        return dump(self, obj)

    monkeypatch.setattr(type(cache_file), "_dump", dump_once)
    assert disp(True) == 2
    assert not fails and len(cache_file._load_index()) == 1
    # A compile result that fails to save is the caller's error, and the index keeps its entries.
    def unsavable(self, name, data):
        raise TypeError("cannot pickle this result")

    monkeypatch.setattr(type(cache_file), "_save_data", unsavable)
    with pytest.raises(TypeError):
        disp(2j)
    assert len(cache_file._load_index()) == 2  # True's entry and the one Numba adds before writing data


@pytest.mark.parametrize("arg, message", [("tile:plain", "is not OP:MODE:CASE"), ("tilex:plain:x", "unknown op"),
                                          ("tile:fast:split_mult", "unknown mode"),
                                          ("tile:plain:nope", "no warmup case 'nope'")])
def test_the_measuring_command_names_a_bad_specialization(arg, message, capsys):
    from ascend_numba.warmup import _main

    with pytest.raises(SystemExit) as exit_:
        _main([arg])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


# Two checked kernels on the same helpers: the second, compiled by a process that loaded the
# helpers from the cache, must carry their rule functions into its own cache entry.
_CHECKED_KERNELS = """
import numpy as np

from ascend_numba.kernels import alloc_buffer, data_copy, kernel


@kernel(nrt=False)
def copy(ctx, x, z):
    a = alloc_buffer(ctx, 16, np.float32)
    data_copy(ctx, a, 0, x, 0, 8)
    data_copy(ctx, z, 0, a, 0, 8)


@kernel(nrt=False)
def copy_past_end(ctx, x, z):
    a = alloc_buffer(ctx, 16, np.float32)
    data_copy(ctx, a, 0, x, 0, 16)
    data_copy(ctx, z, 0, a, 0, 8)
"""

_RUN_CHECKED = """
import sys

import numpy as np
import ascend_numba as an
import checked_kernels
from ascend_numba.checked import dispatch

x, z = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
try:
    getattr(checked_kernels, sys.argv[1]).launch(x, z, block_dim=1, checked=True)
    found = "none"
except an.KernelCheckError as exc:
    found = exc.rule
compiled = sorted(dispatch._RULE_FUNCTIONS[slot][0].py_func.__name__ for slot in np.flatnonzero(dispatch.rule_table()))
print(found, ",".join(compiled))
"""


def test_a_checked_kernel_compiles_and_loads_only_the_rules_it_reaches(tmp_path):
    if not _jit.carries_reload_hooks():
        pytest.skip("this Numba's code libraries carry no reload hooks: a checked launch compiles every rule")
    (tmp_path / "checked_kernels.py").write_text(_CHECKED_KERNELS)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))

    def run(name):
        found, compiled = _python("-c", _RUN_CHECKED, name, env=env).stdout.split()
        assert "check_transfer" in compiled.split(",") and "check_vector" not in compiled.split(",")
        return found

    assert run("copy") == "none"  # compiles the helpers
    assert run("copy_past_end") == "gm-past-end"  # compiles a kernel on the helpers loaded from the cache
    assert run("copy_past_end") == "gm-past-end"  # loads that kernel: its rule functions come with it


def test_without_reload_hooks_the_first_checked_launch_compiles_every_rule(monkeypatch):
    # Numba 0.60's libraries do not carry reload hooks: a kernel loaded from the cache could not
    # bring its rules, so the table is filled whole.
    from ascend_numba.checked import dispatch

    asked = []
    monkeypatch.setattr(dispatch, "carries_reload_hooks", lambda: False)
    monkeypatch.setattr(dispatch, "_RULE_TABLE", dispatch._RULE_TABLE.copy())
    monkeypatch.setattr(dispatch, "_compile_rule", asked.append)
    dispatch._RULE_TABLE[0] = 0
    dispatch.rule_table()
    assert asked == list(range(len(dispatch._RULE_FUNCTIONS)))
