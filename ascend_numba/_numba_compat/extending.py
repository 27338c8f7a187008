"""The pieces of Numba's extension machinery that live in ``numba.core`` / ``numba.np`` (not
``numba.extending``), for the intrinsics, overloads and lowerings outside the wall: importing
them from here keeps every ``numba.core`` import inside :mod:`ascend_numba._numba_compat`."""

from __future__ import annotations

from numba.core import cgutils, event
from numba.core.compiler import Flags
from numba.core.errors import TypingError
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.np.numpy_support import as_dtype

__all__ = ["cgutils", "TypingError", "Flags", "lower_builtin", "AbstractTemplate", "infer_global", "signature",
           "as_dtype", "CompileCounter"]


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
