"""What a user kernel expects of its GM arguments, read from its source before anything compiles.

A GM tensor is flat bytes to the kernel: nothing at run time says that ``x`` was meant to hold
float32.  A kernel that copies ``x`` into ``x_loc = alloc_buffer(ctx, n, np.float32)`` does say
it, so a launch with a float64 ``x`` is refused by name instead of computing on half-read
elements.  Declared dtypes (``@kernel(dtypes=...)``) take precedence.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable

import numpy as np

from ..dtypes import FLOAT8_NAMES, device_dtype_name

__all__ = ["as_gm_dtype", "expected_dtypes", "accepts", "RAW_VIEWS"]

# Device element types with no NumPy arithmetic reach kernels as unsigned ints of their width;
# by name, so ml_dtypes need not be imported to recognize its types.
RAW_VIEWS = {"float16": np.dtype(np.uint16), "bfloat16": np.dtype(np.uint16),
             **{name: np.dtype(np.uint8) for name in FLOAT8_NAMES}}
# DataCopy counts elements, so the element type decides the bytes it moves (DataCopyPad counts
# bytes): primitive -> (dst, src) argument positions.
_COPIES = {"data_copy": (1, 3)}


def as_gm_dtype(dtype: np.dtype) -> np.dtype:
    """The element type a GM tensor of ``dtype`` has inside a kernel (fp16, bf16, fp8: uint views)."""
    dtype = np.dtype(dtype)
    return RAW_VIEWS.get(device_dtype_name(dtype), dtype) if dtype.kind in "fV" else dtype


def accepts(expected: np.dtype, given: np.dtype, declared: bool = False) -> bool:
    """Whether a GM array of ``given`` dtype fits ``expected``: a declared dtype or a float or
    signed UB buffer's exactly (fp16/bf16 as their uint16 views); an unsigned buffer moves any
    element of its width (data movement on unsigned views), a uint8 buffer any bytes."""
    raw = as_gm_dtype(given)
    if declared or expected.kind != "u":
        return given == expected or raw == expected
    return expected.itemsize == 1 or raw.itemsize == expected.itemsize


def expected_dtypes(func: Callable) -> dict[str, tuple[np.dtype, str]]:
    """``{argument: (dtype, why)}`` for each GM argument the kernel moves with ``data_copy`` to or
    from UB buffers of one literal dtype (``alloc_buffer(ctx, n, np.float32)`` or ``dtype=``); an
    argument copied with buffers of two dtypes, or of a dtype that is a compile-time constant, is
    left out."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return {}
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return {}
    params = [a.arg for a in fn.args.args][1:]
    buffers: dict[str, np.dtype | None] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and _callee(node.value) == "alloc_buffer":
            name = node.targets[0].id
            dtype = _literal_dtype(node.value, func.__globals__)
            buffers[name] = dtype if buffers.get(name, dtype) == dtype else None
    found: dict[str, set] = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and _callee(node) in _COPIES):
            continue
        d, s = _COPIES[_callee(node)]
        if len(node.args) <= max(d, s):
            continue
        dst, src = (a.id if isinstance(a, ast.Name) else None for a in (node.args[d], node.args[s]))
        for gm, local, way in ((dst, src, "from"), (src, dst, "into")):
            if gm in params and local in buffers and buffers[local] is not None:
                found.setdefault(gm, set()).add((buffers[local], f"copies it {way} {local}, a UB buffer of "
                                                                 f"{buffers[local]}"))
    return {gm: next(iter(whys)) for gm, whys in found.items() if len({d for d, _ in whys}) == 1}


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _literal_dtype(call: ast.Call, scope: dict) -> np.dtype | None:
    """The dtype argument of an ``alloc_buffer`` call when it names a NumPy type (``np.float32``,
    ``"float32"``), not a compile-time constant."""
    expr = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if expr is None or not all(isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.Load))
                               for n in ast.walk(expr)):
        return None  # a name, an attribute or a string: nothing is called
    try:
        value = eval(compile(ast.Expression(expr), "<dtype>", "eval"), dict(scope))
    except Exception:  # noqa: BLE001 - anything unresolvable is simply not inferred
        return None
    if not isinstance(value, (type, str, np.dtype)):
        return None
    try:
        return np.dtype(value)
    except TypeError:
        return None
