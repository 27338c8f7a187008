"""What a user kernel expects of its GM arguments, read from its source before anything compiles.

A GM tensor is flat bytes to the kernel: nothing at run time says that ``x`` was meant to hold
float32.  A kernel that moves ``x`` to or from ``x_loc = alloc_buffer(ctx, n, np.float32)`` does
say it, so a launch with a float64 ``x`` is refused by name instead of computing on half-read
elements.  The source is read along every path that moves GM data: ``data_copy`` and
``data_copy_pad`` in the kernel, in the helpers it calls (jitted or plain, arguments followed by
position) and in the vector programs it calls (their CopyIn and CopyOut lines); branches on the
launch's compile-time constants are decided first, as the compiler folds them.  Declared dtypes
(``@kernel(dtypes=...)``) take precedence.

What the source cannot tell (a buffer whose dtype is computed, a tensor passed through a
container) the compiled copy refuses instead (:func:`copy_types_agree`, checked when a kernel
compiles and in interpret mode), so no launch moves elements of one width through a tensor of
another.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable

import numpy as np

from ..dtypes import FLOAT8_NAMES, device_dtype_name

__all__ = ["as_gm_dtype", "expected_dtypes", "accepts", "copy_types_agree", "RAW_VIEWS"]

# Device element types with no NumPy arithmetic reach kernels as unsigned ints of their width;
# by name, so ml_dtypes need not be imported to recognize its types.
RAW_VIEWS = {"float16": np.dtype(np.uint16), "bfloat16": np.dtype(np.uint16),
             **{name: np.dtype(np.uint8) for name in FLOAT8_NAMES}}
# The copies that move GM data: primitive -> (dst, src) argument positions (after ctx at 0).
_COPIES = {"data_copy": (1, 3), "data_copy_pad": (1, 3)}
_UB_VIEWS = ("alloc_buffer", "reinterpret")  # a UB tensor of the dtype their argument names
_MAX_DEPTH = 6  # helper calls followed


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


def copy_types_agree(a: np.dtype, b: np.dtype) -> bool:
    """Whether a DataCopy / DataCopyPad may move data between tensors of element types ``a`` and
    ``b`` (as kernels see them: fp16 and bf16 are uint16): one type, as the device's copies take
    (``DataCopy(LocalTensor<T>, GlobalTensor<T>, ...)``), or an unsigned view of the other's width,
    or bytes."""
    return accepts(a, b) or accepts(b, a)


def expected_dtypes(func: Callable, constants: dict | None = None) -> dict[str, tuple[np.dtype, str]]:
    """``{argument: (dtype, why)}`` for each GM argument the kernel moves to or from UB buffers of
    a dtype its source names (an array of that dtype fits, or one :func:`copy_types_agree` with it) (``alloc_buffer(ctx, n, np.float32)``, ``dtype=``, a compile-time
    constant bound in ``constants``), along every path (see the module doc).  An argument moved
    through buffers of dtypes no one array fits (a run-time branch reading it two ways) is left
    to the compiled copy's check; with several that fit, the most specific is returned."""
    flow = _Flow(constants or {})
    flow.function(func, None, 0, "")
    out = {}
    for gm, seen in flow.found.items():
        fitting = [d for d, _ in seen if all(copy_types_agree(e, d) for e, _ in seen)]
        if fitting:
            best = min(fitting, key=lambda d: (d.kind == "u", -d.itemsize))
            out[gm] = next(s for s in seen if s[0] == best)
    return out


class _Flow:
    """A walk of a kernel's source that binds each local name to a GM argument (``("gm", name)``)
    or a UB tensor (``("ub", dtype or None, name)``) and records each copy between the two."""

    def __init__(self, constants: dict):
        self.constants = constants
        self.found: dict[str, set] = {}

    # ---- functions ----------------------------------------------------------------------------

    def function(self, func: Callable, binding: dict | None, depth: int, where: str):
        """Walk ``func``; ``binding``: its parameters' bindings (None: the kernel, whose
        parameters after ``ctx`` are the GM arguments)."""
        fn = _function_def(func)
        if fn is None:
            return
        params = [a.arg for a in fn.args.args]
        if binding is None:
            binding = {p: ("gm", p) for p in params[1:]}
        scope = {**getattr(getattr(func, "py_func", func), "__globals__", {}), **self.constants}
        self.statements(fn.body, dict(binding), scope, depth, where)

    def statements(self, body: list, binding: dict, scope: dict, depth: int, where: str):
        for node in body:
            if isinstance(node, ast.If):
                self.calls(node.test, binding, scope, depth, where)
                taken = _decided(node.test, self.constants)
                if taken is None:
                    self.statements(node.body, binding, scope, depth, where)
                    self.statements(node.orelse, binding, scope, depth, where)
                else:
                    self.statements(node.body if taken else node.orelse, binding, scope, depth, where)
                continue
            if isinstance(node, (ast.For, ast.While, ast.With, ast.Try)):
                for expr in (getattr(node, "iter", None), getattr(node, "test", None)):
                    if expr is not None:
                        self.calls(expr, binding, scope, depth, where)
                for part in ("body", "orelse", "finalbody"):
                    self.statements(getattr(node, part, []), binding, scope, depth, where)
                for handler in getattr(node, "handlers", []):
                    self.statements(handler.body, binding, scope, depth, where)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            self.calls(node, binding, scope, depth, where)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
                bound = self.value(node.value, target, binding, scope)
                if bound is None:
                    binding.pop(target, None)
                else:
                    binding[target] = bound

    def value(self, expr, target: str, binding: dict, scope: dict):
        """What assigning ``expr`` to ``target`` binds it to (None: nothing known)."""
        if isinstance(expr, ast.Call) and _callee(expr) in _UB_VIEWS:
            base = _base(expr.args[0]) if _callee(expr) == "reinterpret" and expr.args else None
            if _callee(expr) == "reinterpret" and binding.get(base, ("",))[0] != "ub":
                return None
            return ("ub", _literal_dtype(expr, scope), target)
        base = _base(expr)
        return binding.get(base) if base is not None else None

    def calls(self, node, binding: dict, scope: dict, depth: int, where: str):
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            name = _callee(call)
            if name in _COPIES:
                d, s = _COPIES[name]
                if len(call.args) > max(d, s):
                    self.copy(binding.get(_base(call.args[d])), binding.get(_base(call.args[s])), where)
                continue
            if name == "set_global_buffer" and len(call.args) > 2:  # GlobalTensor<T>: the argument's type
                gm, dtype = binding.get(_base(call.args[1])), _dtype_of(call.args[2], scope)
                if gm and gm[0] == "gm" and dtype is not None:
                    self.found.setdefault(gm[1], set()).add(
                        (dtype, f"declares it GlobalTensor<{dtype}> in SetGlobalBuffer{where}"))
                continue
            target = scope.get(name) if isinstance(call.func, ast.Name) else None
            if target is None or depth >= _MAX_DEPTH:
                continue
            program = getattr(target, "vector_program", None)
            if program is not None:
                self.program(program, call, binding, depth, where)
            elif _is_user_code(target):
                args = [binding.get(_base(a)) for a in call.args]
                fn = _function_def(target)
                if fn is not None and not any(isinstance(a, ast.Starred) for a in call.args):
                    inner = {a.arg: b for a, b in zip(fn.args.args, args) if b is not None}
                    if inner:
                        self.function(target, inner, depth + 1, where or f" (in {fn.name})")

    def program(self, program, call: ast.Call, binding: dict, depth: int, where: str):
        """A vector program's call ``prog(ctx, count, fuse, *params)``: its copies, with the
        parameters bound to the call's arguments (tuples standing for their elements)."""
        args = _flat_args(call.args[3:])
        if len(args) != len(program.params):
            return
        flags = {p: v for p, v in ((p, _constant_value(a, self.constants)) for p, a in zip(program.params, args))
                 if v is not _UNKNOWN}
        inner = {p: binding.get(_base(a)) for p, a in zip(program.params, args)}
        for op in _program_copies(program.body, flags):
            self.copy(inner.get(op.dst), inner.get(op.tiles[0]), where or f" (in {program.name})")

    def copy(self, dst, src, where: str):
        for gm, ub, way in ((dst, src, "from"), (src, dst, "into")):
            if gm and ub and gm[0] == "gm" and ub[0] == "ub" and ub[1] is not None:
                self.found.setdefault(gm[1], set()).add(
                    (ub[1], f"copies it {way} {ub[2]}, a UB buffer of {ub[1]}{where}"))


# ---- source reading -------------------------------------------------------------------------------

_UNKNOWN = object()


def _function_def(func):
    func = getattr(func, "py_func", func)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _is_user_code(obj) -> bool:
    """A function of the user's (plain or jitted), not one of the library's primitives."""
    func = getattr(obj, "py_func", obj)
    return inspect.isfunction(func) and not (func.__module__ or "").startswith("ascend_numba.")


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _base(expr) -> str | None:
    """The name a tensor expression views: ``x``, ``x[pos:]``, ``x[a:b]``."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _flat_args(args: list) -> list:
    out = []
    for a in args:
        out.extend(_flat_args(a.elts) if isinstance(a, ast.Tuple) else [a])
    return out


def _constant_value(expr, constants: dict):
    """The value of a literal or of a compile-time constant's name, else _UNKNOWN."""
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name) and expr.id in constants:
        return constants[expr.id]
    return _UNKNOWN


def _decided(test, constants: dict) -> bool | None:
    """The truth of an ``if`` test made of literals and compile-time constants (None: decided at
    run time)."""
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    if not names <= constants.keys() or any(isinstance(n, (ast.Call, ast.Attribute, ast.Subscript))
                                            for n in ast.walk(test)):
        return None
    try:
        return bool(eval(compile(ast.Expression(test), "<test>", "eval"), {"__builtins__": {}}, dict(constants)))
    except Exception:  # noqa: BLE001 - a test it cannot evaluate is a run-time one
        return None


def _program_copies(body: list, flags: dict):
    """The copies of a vector program's body, its ``if`` tests on known flags decided."""
    from .primitives.fusion_program import If, is_copy

    for s in body:
        if isinstance(s, If):
            taken = _decided(s.test, flags)
            for part in ((s.then, s.orelse) if taken is None else (s.then if taken else s.orelse,)):
                yield from _program_copies(part, flags)
        elif is_copy(s):
            yield s


def _literal_dtype(call: ast.Call, scope: dict) -> np.dtype | None:
    """The dtype argument of an ``alloc_buffer`` / ``reinterpret`` call when it names a type
    (``np.float32``, ``"float32"``, a compile-time constant bound to one)."""
    index = 2 if _callee(call) == "alloc_buffer" else 1
    expr = call.args[index] if len(call.args) > index else next(
        (k.value for k in call.keywords if k.arg == "dtype"), None)
    return _dtype_of(expr, scope)


def _dtype_of(expr, scope: dict) -> np.dtype | None:
    """The dtype an expression names (``np.float32``, ``"float32"``, a constant bound to one), or None."""
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
