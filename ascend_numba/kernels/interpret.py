"""Interpret mode: kernels and every primitive run as plain Python and NumPy (SPEC §3).

``with an.interpret():``, ``ASCEND_NUMBA_INTERPRET=1`` or ``interpret=True`` on an op or a kernel
launch runs the same code the compiler would compile, as Python: a kernel body, the primitives it
calls, their checked-mode rules and trace hooks, the launchers themselves.  Nothing compiles, so
``breakpoint()``, ``pdb``, ``print()``, coverage.py and an IDE debugger work inside a lane, and a
UB tile is a NumPy view of the lane's UB bytes.

How: a compiled function (a Numba dispatcher) is run as its own Python function with its globals
seen through :class:`_Globals`, which hands out, in place of each compiled object it names,
what interpret mode runs for it:

* a dispatcher: its Python function, interpreted the same way (so every call below the kernel
  body is Python too);
* an overload stub: the implementation its generator returns for the call's argument types (the
  generator the compiler would ask, :data:`~ascend_numba._numba_compat.extending.OVERLOADS`);
* an intrinsic or a compiled-only stub: its declared Python twin (the ``python_twin`` beside its
  codegen, :data:`~ascend_numba._numba_compat.extending.TWINS`).

The code is the compiled code, so the bits, the checked-mode errors and the trace counts are the
compiled run's; only the twins are written twice, each tested against its intrinsic.  Lanes run
one after another in lane order (a kernel calling ``sync_all`` on threads, one per lane, as
compiled).  NumPy warnings are off inside a lane: compiled code wraps and divides by zero
silently.  Under NumPy 1.x, NEP 50 promotion is on while a lane runs (see
:func:`_weak_python_scalars`).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import os
import threading
import types as pytypes

import numba
import numpy as np
from numba import types
from numba.extending import is_jitted

from .._numba_compat.extending import OVERLOADS, TWINS, python_twin
from .lane import LANE_TYPES, CheckedLane, Lane, TracedLane

__all__ = ["interpret", "interpreting", "python_function", "run_python", "raised", "InterpretError"]


class InterpretError(RuntimeError):
    """Compiled-only code that has no plain-Python form (an intrinsic without a twin)."""


# ---- the switch -------------------------------------------------------------------------------------

_local = threading.local()


# ASCEND_NUMBA_INTERPRET is read once, at import, as Numba reads its NUMBA_* variables: reading
# os.environ on every launch was a sixth of a small op's call.  How many interpret blocks are open
# in any thread: while none is, a launch does not look up its thread's stack.
_ENV_DEFAULT = os.environ.get("ASCEND_NUMBA_INTERPRET", "") not in ("", "0")
_open_blocks = 0
_open_blocks_lock = threading.Lock()


def interpreting(explicit: bool | None = None) -> bool:
    """Whether a launch runs interpreted: ``explicit`` when given (an op's or a launch's
    ``interpret=``), else the innermost :func:`interpret` block of this thread, else
    ``ASCEND_NUMBA_INTERPRET`` as it was when ascend_numba was imported."""
    if explicit is not None:
        return bool(explicit)
    if _open_blocks:
        stack = getattr(_local, "stack", None)
        if stack:
            return stack[-1]
    return _ENV_DEFAULT


@contextlib.contextmanager
def interpret(enabled: bool = True):
    """Run every op and kernel launched inside the block interpreted (``enabled`` False: compiled,
    whatever ``ASCEND_NUMBA_INTERPRET`` says)::

        with an.interpret():
            an.tile(x, (2, 3))      # breakpoint() in the kernel stops inside a lane
    """
    global _open_blocks
    stack = _local.__dict__.setdefault("stack", [])
    stack.append(bool(enabled))
    with _open_blocks_lock:
        _open_blocks += 1
    try:
        yield
    finally:
        stack.pop()
        with _open_blocks_lock:
            _open_blocks -= 1


# ---- compiled objects -> what runs in their place --------------------------------------------------

_FUNCTIONS: dict = {}  # (code, id(globals), closure cells, constants) -> (function, interpreted function)
_lock = threading.RLock()


def _intrinsic_type():
    from numba.extending import intrinsic

    return type(intrinsic(lambda typingctx: None))


_INTRINSIC = _intrinsic_type()


def _registered(table: dict, obj):
    try:
        return table.get(obj)
    except TypeError:  # unhashable: not a registered object
        return None


def _stands_for(obj):
    """What interpret mode runs in place of ``obj`` (``obj`` itself when it is plain Python)."""
    twin = _registered(TWINS, obj)
    if twin is not None:
        return twin
    if is_jitted(obj):
        return python_function(obj.py_func)
    generator = _registered(OVERLOADS, obj)
    if generator is not None:
        return OverloadCall(obj, generator)
    if isinstance(obj, _INTRINSIC):
        return _missing(obj)
    if isinstance(obj, pytypes.ModuleType) and obj.__name__.split(".")[0] in ("ascend_numba", "numba"):
        return _Module(obj)
    return obj


def _missing(obj):
    name = getattr(obj, "__name__", None) or getattr(getattr(obj, "_defn", None), "__name__", repr(obj))

    def call(*args):
        raise InterpretError(f"{name} is compiled-only: it has no plain-Python twin (declare one with "
                             "ascend_numba._numba_compat.extending.python_twin)")
    return call


class _Globals(dict):
    """A function's globals as interpret mode sees them: each name looked up once in the
    function's own globals (or ``extra``, a kernel's compile-time constants), replaced by what
    runs in its place (see :func:`_stands_for`), and kept."""

    def __init__(self, source: dict, extra: dict | None):
        super().__init__(__builtins__=source.get("__builtins__", builtins), __name__=source.get("__name__"),
                         __file__=source.get("__file__"))
        self._source, self._extra = source, extra or {}

    def __missing__(self, key):
        if key in self._extra:
            value = self._extra[key]
        else:
            value = self._source[key]  # KeyError: Python then looks in the builtins
        value = _stands_for(value)
        self[key] = value
        return value


class _Module:
    """A package module read through interpret mode (``_p.adds`` in generated code)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        value = _stands_for(getattr(self._module, name))
        setattr(self, name, value)
        return value


def python_function(func, extra: dict | None = None):
    """``func`` (a Python function written for the compiler) as interpret mode runs it: the same
    code (same file and lines, for debuggers and coverage), reading its globals through
    :class:`_Globals` and its closure's compiled objects as what stands for them."""
    # One code object serves many closures (every checked_rule hook's lambda): the cells are part
    # of the key, and the original function is kept with the clone so the ids stay its own.
    key = (func.__code__, id(func.__globals__), tuple(id(c) for c in func.__closure__ or ()),
           tuple(sorted((extra or {}).items(), key=lambda kv: kv[0])) if extra else ())
    try:
        found = _FUNCTIONS.get(key)
    except TypeError:  # an unhashable constant: not kept
        key, found = None, None
    if found is not None:
        return found[1]
    with _lock:
        closure = None
        if func.__closure__:
            closure = tuple(pytypes.CellType(_stands_for(c.cell_contents)) if _filled(c) else c
                            for c in func.__closure__)
        clone = pytypes.FunctionType(func.__code__, _Globals(func.__globals__, extra), func.__name__,
                                     func.__defaults__, closure)
        clone.__qualname__, clone.__module__, clone.__doc__ = func.__qualname__, func.__module__, func.__doc__
        clone.__kwdefaults__ = func.__kwdefaults__
        if key is not None:
            _FUNCTIONS[key] = (func, clone)
    return clone


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _type_key(value):
    # What an overload generator can decide on, at a fraction of numba.typeof's cost.
    if isinstance(value, np.ndarray):
        return (value.dtype, value.ndim, value.flags.c_contiguous)
    if isinstance(value, (type, str)):
        return (type(value), value)
    if isinstance(value, tuple):  # a tuple of tensors is typed by its members' types
        return (type(value), *(_type_key(v) for v in value))
    return type(value)


# A lane context's Numba type is the launchers' (numba.typeof would make a NamedUniTuple of it); a
# plain lane is an AtomicLane's, which leaves nothing out: interpret mode compiles nothing to save.
_LANE_TYPES = {Lane: LANE_TYPES["atomic"], TracedLane: LANE_TYPES["traced"], CheckedLane: LANE_TYPES["checked"]}


def _typeof(value):
    lane = _LANE_TYPES.get(type(value))
    if lane is not None:
        return lane
    try:
        return numba.typeof(value)
    except ValueError:  # a function passed to a loop (an element op), already Python here
        return types.pyobject


class OverloadCall:
    """An overloaded stub in interpret mode: the generator's implementation for the argument
    types of the call (asked once per types), run as Python."""

    def __init__(self, stub, generator):
        self.stub, self.generator, self.impls = stub, generator, {}

    def __call__(self, *args):
        key = tuple(_type_key(a) for a in args)
        impl = self.impls.get(key)
        if impl is None:
            made = self.generator(*(_typeof(a) for a in args))
            if made is None:
                raise TypeError(f"{self.stub.__name__}: no implementation for arguments "
                                f"{', '.join(str(_typeof(a)) for a in args)}")
            impl = self.impls[key] = python_function(made)
        return impl(*args)


# ---- twins of Numba's own compiled-only names --------------------------------------------------------

@python_twin(numba.carray)
def _carray(ptr, shape, dtype=None):
    """numba.carray of an address (interpret mode's ``_voidptr`` is the integer address)."""
    dt = np.dtype(str(dtype)) if not isinstance(dtype, (np.dtype, type)) else np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.empty(shape, dt)
    buffer = (ctypes.c_char * (count * dt.itemsize)).from_address(int(ptr))
    return np.frombuffer(buffer, dt, count).reshape(shape)


python_twin(numba.get_thread_id)(lambda: 0)
python_twin(numba.literal_unroll)(lambda values: values)


# ---- running a lane ----------------------------------------------------------------------------------

# Compiled code mixes NumPy integers with Python ones as Numba types them: uint64 * 2 stays uint64.
# NumPy 2 promotes a Python scalar the same way (NEP 50); NumPy 1.x turns np.uint64 * int into a
# float64 unless its NEP 50 promotion is switched on, which is process-wide: on while any
# interpreted lane runs.
_NEP50 = hasattr(np, "_set_promotion_state") and np.lib.NumpyVersion(np.__version__) < "2.0.0"
_nep50_users = [0, None]


@contextlib.contextmanager
def _weak_python_scalars():
    if not _NEP50:
        yield
        return
    with _lock:
        if _nep50_users[0] == 0:
            _nep50_users[1] = np._get_promotion_state()
            np._set_promotion_state("weak")
        _nep50_users[0] += 1
    try:
        yield
    finally:
        with _lock:
            _nep50_users[0] -= 1
            if _nep50_users[0] == 0:
                np._set_promotion_state(_nep50_users[1])


_RAISED: dict = {}  # negative key -> the exception a lane raised
_next_key = [0]


def run_python(body, ctx, args: tuple, tiling) -> tuple[int, int]:
    """Run an interpreted kernel body on one lane: ``(0, 0)``, or ``(1, key)`` when the lane
    raised (the exception kept for :func:`raised`), as the compiled body's call returns."""
    call_args = (ctx, *args) if tiling is None else (ctx, *args, tiling)
    try:
        with np.errstate(all="ignore"), _weak_python_scalars():
            body(*call_args)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - reported by the launch as the lane's error
        if type(exc).__name__ == "BdbQuit":  # the user quit the debugger: stop the launch
            raise
        with _lock:
            _next_key[0] -= 1
            key = _next_key[0]
            _RAISED[key] = exc
        return 1, key
    return 0, 0


def raised(key: int) -> BaseException | None:
    """The exception an interpreted lane raised (its key, negative: see :func:`run_python`)."""
    return _RAISED.pop(key, None)
