"""The one decorator for compiled code: cached, IEEE arithmetic, no fastmath, cheap to compile.

Compile time is what a new user waits for, so the house dispatcher keeps it down:

* Call sites do not multiply specializations.  Numba types a constant argument as a literal
  (``Literal[int](0)``) and an ``int32`` tiling field as ``int32``, and compiles the callee once
  per combination: ``data_copy_pad`` had four specializations in the Tile kernel alone.  The
  house dispatcher types every call from compiled code with literals dropped and signed
  integers widened to ``int64`` (values are unchanged), so a helper compiles once per tensor
  layout.
* Helpers are called only from compiled code, so they get no CPython or cfunc wrapper (a
  third of a small function's compile); ``python=True`` keeps them for functions Python calls.
* No reference counting (``_nrt=False``): helpers allocate nothing and every array they see is
  held by the caller for the whole launch, yet each array passed to a helper cost a call to
  increment and decrement its count (with IR inlining Numba pruned those pairs; across calls it
  cannot).  The few helpers that return an array view (``alloc_buffer``, ``reinterpret``) keep
  it: ``@jit(_nrt=True)``.  Dropping it made a Doubling Tile 1.7x faster.
* No IR-level ``inline="always"`` by default: it re-types the callee at every call site.  Hot
  primitives are marked ``always_inline`` instead, so LLVM inlines them into their callers'
  loops from the IR each callee is compiled to once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pathlib

import numba
from numba import types
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

try:
    import fcntl
except ImportError:  # not POSIX: cache writes are not serialized across processes
    fcntl = None

__all__ = ["jit", "dispatcher", "JIT_OPTIONS", "OVERLOAD_OPTIONS", "TaggedCache", "compiled_code_digest",
           "KernelDispatcher"]

# error_model="numpy": x/0 gives inf/nan as on the device, not ZeroDivisionError.
# No fastmath: results are compared bit for bit.
JIT_OPTIONS = {"cache": True, "error_model": "numpy"}
# @overload implementations are compiled into their (cached) callers; caching them on their own
# would go through Numba's unlocked index update (see TaggedCache.save_overload).  Only compiled
# code calls them: no cfunc wrapper (Numba gives them no CPython one).
OVERLOAD_OPTIONS = {"error_model": "numpy", "no_cfunc_wrapper": True}

_PACKAGE = pathlib.Path(__file__).resolve().parents[1]


@functools.cache
def compiled_code_digest() -> str:
    """A hash of every module compiled code can depend on (``kernels/`` and ``host/`` with their
    subpackages, each op's ``kernel.py`` and ``plan.py``, ``config.py``) and of the Numba version.
    Numba's own cache only notices changes to a function's own file, and compiled functions
    here call each other across files."""
    h = hashlib.sha256(numba.__version__.encode())
    sources = [*_PACKAGE.joinpath("kernels").rglob("*.py"), *_PACKAGE.joinpath("host").rglob("*.py"),
               *_PACKAGE.glob("ops/*/kernel.py"), *_PACKAGE.glob("ops/*/plan.py"), *_PACKAGE.glob("config.py")]
    for path in sorted(sources):
        h.update(str(path.relative_to(_PACKAGE)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


class TaggedCache(FunctionCache):
    """Numba's on-disk cache with a tag (the code digest, a specialization) added to the index key.

    ``on_miss`` is called when a lookup finds nothing, just before Numba compiles."""

    def __init__(self, py_func, tag: str, on_miss=None):
        super().__init__(py_func)
        self._tag = tag
        self._on_miss = on_miss

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (self._tag,)

    def load_overload(self, sig, target_context):
        found = super().load_overload(sig, target_context)
        if found is None and self._on_miss is not None:
            self._on_miss()
        return found

    def save_overload(self, sig, data):
        # Numba updates a function's index by read-modify-write: two processes saving two
        # specializations at once (test workers, `ascend-numba warmup --workers`) could lose an
        # entry or point one at the other's data file.  One lock per cache directory prevents it.
        with self._locked():
            super().save_overload(sig, data)

    @contextlib.contextmanager
    def _locked(self):
        if fcntl is None:
            yield
            return
        try:
            self._impl.locator.ensure_cache_path()
            lock = open(os.path.join(self._cache_path, ".ascend_numba.lock"), "a")
        except OSError:
            yield  # an unwritable cache: Numba's own save fails quietly as well
            return
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


def _call_type(t):
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


class KernelDispatcher(CPUDispatcher):
    """A dispatcher whose calls from compiled code are typed without literals and with signed
    integers as int64: one specialization per tensor layout, not per call site.

    ``always_inline``: the compiled function is marked for LLVM to inline at every call (the
    mark travels with the IR callers link in, and with the on-disk cache).  A hot primitive
    inlined by LLVM costs its callers nothing extra to type, where Numba's IR-level
    ``inline="always"`` re-types it at every call site."""

    always_inline = False

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_call_type(a) for a in args),
                                         {k: _call_type(v) for k, v in kws.items()})

    def add_overload(self, cres):
        if self.always_inline:
            fn = cres.library._get_module_for_linking().get_function(cres.fndesc.llvm_func_name)
            if "alwaysinline" not in str(fn.attributes):
                fn.add_function_attribute("alwaysinline")
        super().add_overload(cres)


def dispatcher(func, tag: str | None = None, *, python: bool = False, always_inline: bool = False, on_miss=None,
               **options):
    """A :class:`KernelDispatcher` for ``func`` with the house options, cached under ``tag``
    (default: the code digest)."""
    targetoptions = {k: v for k, v in {**JIT_OPTIONS, **options}.items() if k != "cache"}
    targetoptions["nopython"] = True
    targetoptions.setdefault("_nrt", False)  # see the module doc
    if not python:
        targetoptions.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
    disp = KernelDispatcher(py_func=func, locals={}, targetoptions=targetoptions)
    disp.always_inline = always_inline
    try:
        disp._cache = TaggedCache(func, tag or compiled_code_digest(), on_miss)
    except RuntimeError:
        pass  # no cache locator for this function (no source file): compile in memory only
    return disp


def jit(func=None, *, python: bool = False, always_inline: bool = False, **options):
    """Compile with the house options: ``@jit``; ``@jit(python=True)`` for functions called
    from Python; ``@jit(always_inline=True)`` for small hot helpers LLVM must inline into their
    callers' loops; ``@jit(inline="always")`` (Numba's IR inlining) only where a call needs its
    arguments to stay compile-time values."""
    if func is None:
        return lambda f: dispatcher(f, python=python, always_inline=always_inline, **options)
    return dispatcher(func, python=python, always_inline=always_inline, **options)
