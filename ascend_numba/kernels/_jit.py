"""The one decorator for compiled code: cached, IEEE arithmetic, no fastmath."""

import functools
import hashlib
import pathlib

import numba
from numba import njit
from numba.core.caching import FunctionCache

__all__ = ["jit", "JIT_OPTIONS", "TaggedCache", "library_digest"]

# error_model="numpy": x/0 gives inf/nan as on the device, not ZeroDivisionError.
# No fastmath: results are compared bit for bit.
JIT_OPTIONS = {"cache": True, "error_model": "numpy"}


@functools.cache
def library_digest() -> str:
    """A hash of every module compiled code depends on (this package's kernels and host
    constants) and of the Numba version.  Numba's own cache only notices changes to a
    function's own file, and compiled functions here inline each other across files."""
    root = pathlib.Path(__file__).resolve().parents[1]
    h = hashlib.sha256(numba.__version__.encode())
    for path in sorted([*root.joinpath("kernels").glob("*.py"), *root.joinpath("host").glob("*.py")]):
        h.update(path.read_bytes())
    return h.hexdigest()


class TaggedCache(FunctionCache):
    """Numba's on-disk cache with a tag (the library digest, a specialization) added to the index key."""

    def __init__(self, py_func, tag: str):
        super().__init__(py_func)
        self._tag = tag

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (self._tag,)


def _tagged(dispatcher):
    try:
        dispatcher._cache = TaggedCache(dispatcher.py_func, library_digest())
    except RuntimeError:
        pass  # no cache locator for this function (no source file): compile in memory only
    return dispatcher


def jit(func=None, **options):
    """``numba.njit`` with the house options (``@jit`` or ``@jit(inline="always")``), cached
    under the library digest."""
    merged = {**JIT_OPTIONS, **options}
    if func is None:
        return lambda f: _tagged(njit(**merged)(f))
    return _tagged(njit(**merged)(func))
