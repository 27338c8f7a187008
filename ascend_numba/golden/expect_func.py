"""A case file's own expected-data function (msOpST's ``calc_expect_func_file``), for op types
the twin does not implement: loaded and called as msOpST loads and calls it.

``"calc_expect_func_file": "test_add_custom.py:calc_expect_func"`` names a Python file, relative
to the case file's directory, and a function in it (no name after the colon: the op type).  The
function is called with keywords only (MindStudio msopgen at 685d183, ``tools/msopst/st/
interface/data_generator.py``): each named input as ``{"value": array, "dtype": type, "shape":
shape, "format": format}``, each named output as the same without ``value``, each attribute as its
plain value.  It returns the outputs' arrays (a list, a tuple, or one array), each written in its
output's type.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np

__all__ = ["load_expect_func", "call_expect_func", "entry_expect_func"]


def load_expect_func(case_file: Path, spec, op: str):
    """The function ``spec`` names; raises ValueError(problem) when it cannot be loaded."""
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"must be 'file.py:function' (msOpST's form), got {spec!r}")
    path, _, name = spec.rpartition(":")
    file = (Path(case_file).parent / path).resolve()
    if not file.is_file():
        raise ValueError(f"{file} is not a file (the path is relative to the case file's directory)")
    module_name = "ascend_numba_expect_" + hashlib.sha1(str(file).encode()).hexdigest()[:12]
    module_spec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:  # the user's file: any error it raises is the problem to report
        raise ValueError(f"importing {file} raised {type(e).__name__}: {e}") from None
    func = getattr(module, name or op, None)
    if not callable(func):
        raise ValueError(f"{file} has no function {name or op!r}")
    return func


def entry_expect_func(entry):
    """A registered op (:mod:`ascend_numba.ops.user`) as an expected-data function: the case's
    inputs named as the entry's, its attributes by name, its outputs in the entry's order."""
    def expect(**kwargs):
        names = entry.inputs if isinstance(entry.inputs, tuple) else tuple(entry.inputs({}))
        missing = [n for n in names if n not in kwargs]
        if missing:
            raise ValueError(f"op {entry.name!r} takes inputs {list(names)}; the case names none {missing}")
        inputs = {n: kwargs[n]["value"] for n in names}
        attrs = {n: kwargs[n] for n in entry.attrs if n in kwargs}
        outputs = entry.call(entry.function, inputs, attrs, {})
        return [outputs[n] for n in entry.outputs]
    expect.__name__ = entry.name
    return expect


def call_expect_func(func, inputs: list[dict], values: dict, outputs: list[dict], attrs: dict) -> list[np.ndarray]:
    """Call ``func`` as msOpST does with the drawn ``values`` (input index -> array); returns one
    array per output, in the output's NumPy type ``outputs[k]["numpy"]``."""
    kwargs = {}
    for k, desc in enumerate(inputs):
        if desc.get("name"):
            kwargs[desc["name"]] = {"value": values[k], "dtype": desc["type"], "shape": list(values[k].shape),
                                    "format": desc.get("format")}
    for desc in outputs:
        if desc.get("name"):
            kwargs[desc["name"]] = {"dtype": desc["type"], "shape": desc.get("shape"), "format": desc.get("format")}
    kwargs.update(attrs)
    result = func(**kwargs)
    arrays = [result] if isinstance(result, np.ndarray) else list(result)
    if len(arrays) != len(outputs):
        raise ValueError(f"{func.__name__} returned {len(arrays)} arrays for {len(outputs)} outputs")
    return [np.asarray(a).astype(desc["numpy"], copy=False) for a, desc in zip(arrays, outputs)]
