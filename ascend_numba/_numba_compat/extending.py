"""The pieces of Numba's extension machinery that live in ``numba.core`` / ``numba.np`` (not
``numba.extending``), for the intrinsics, overloads and lowerings outside the wall: importing
them from here keeps every ``numba.core`` import inside :mod:`ascend_numba._numba_compat`."""

from __future__ import annotations

from numba.core import cgutils, event
from numba.core.compiler import Flags
from numba.core.errors import TypingError
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.extending import overload as _numba_overload
from numba.np.numpy_support import as_dtype

__all__ = ["cgutils", "TypingError", "Flags", "lower_builtin", "AbstractTemplate", "infer_global", "signature",
           "as_dtype", "CompileCounter", "overload", "python_twin", "OVERLOADS", "TWINS"]

# What interpret mode (kernels.interpret) runs in place of compiled-only code: an overload's
# implementation generator, by the stub it overloads, and the plain-Python twin of an intrinsic,
# an overload or a stub, by the object it stands for.
OVERLOADS: dict = {}
TWINS: dict = {}


def overload(func, **options):
    """``numba.extending.overload`` that also records the generator, so interpret mode can ask it
    for the implementation of a call's argument types and run that as Python."""
    register = _numba_overload(func, **options)

    def decorate(generator):
        OVERLOADS[func] = generator
        return register(generator)
    return decorate


def python_twin(target):
    """Declare the decorated plain-Python function as what interpret mode runs for ``target`` (an
    intrinsic, or a compiled-only stub): same arguments, same result, same bits."""
    def decorate(twin):
        TWINS[target] = twin
        return twin
    return decorate


class CompileCounter(event.Listener):
    """Counts the functions Numba compiles while registered (``with CompileCounter() as c``)."""

    def __init__(self):
        self.count = 0

    def on_start(self, ev):
        self.count += 1

    def on_end(self, ev):
        pass

    def __enter__(self):
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc):
        event.unregister("numba:compile", self)
