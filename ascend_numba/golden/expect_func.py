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
import sys
from pathlib import Path

import numpy as np

__all__ = ["load_expect_func", "call_expect_func"]


_LOADED: dict = {}  # (file, function name) -> the function: a file is imported once


def load_expect_func(case_file: Path, spec, op: str):
    """The function ``spec`` names (``"file.py:function"``; ``"file.py"`` or an empty name: the op
    type's); raises ValueError(problem) when it cannot be loaded.  As msOpST does, the file's
    directory is on ``sys.path`` while it imports, so it may import its neighbours."""
    path, _, name = spec.rpartition(":") if ":" in spec else (spec, "", "")
    file = (Path(case_file).parent / path).resolve()
    key = (file, name or op)
    if key in _LOADED:
        return _LOADED[key]
    if not file.is_file():
        raise ValueError(f"{file} is not a file (the path is relative to the case file's directory)")
    module_name = "ascend_numba_expect_" + hashlib.sha1(str(file).encode()).hexdigest()[:12]
    module = sys.modules.get(module_name)
    if module is None:
        module_spec = importlib.util.spec_from_file_location(module_name, file)
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, str(file.parent))
        try:
            module_spec.loader.exec_module(module)
        except Exception as e:  # the user's file: any error it raises is the problem to report
            raise ValueError(f"importing {file} raised {type(e).__name__}: {e}") from None
        finally:
            sys.path.remove(str(file.parent))
        sys.modules[module_name] = module
    func = getattr(module, name or op, None)
    if not callable(func):
        raise ValueError(f"{file} has no function {name or op!r}")
    _LOADED[key] = func
    return func


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
    try:
        result = func(**kwargs)
    except Exception as e:  # the user's function: name it and what it raised
        raise ValueError(f"{func.__name__}({', '.join(kwargs)}) raised {type(e).__name__}: {e}") from None
    arrays = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(arrays) != len(outputs):
        raise ValueError(f"{func.__name__} returned {len(arrays)} arrays for {len(outputs)} outputs")
    out = []
    for k, (array, desc) in enumerate(zip(arrays, outputs)):
        array = np.asarray(array).astype(desc["numpy"], copy=False)
        if desc.get("shape") is not None and array.size != int(np.prod(desc["shape"], dtype=np.int64)):
            raise ValueError(f"{func.__name__}'s output {k} has shape {list(array.shape)}, output_desc[{k}] "
                             f"{list(desc['shape'])}")
        out.append(array)
    return out
