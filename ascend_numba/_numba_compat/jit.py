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
* Helpers are not made into machine code of their own (:class:`LinkedLibrary`).  Numba
  finalizes every function it compiles: it links in the callees' modules, optimizes the whole
  module and generates machine code for it, and a caller does the same again over a module
  holding its callees.  A helper's code only ever runs inside its callers, so its library
  stops at linking; the kernel, a rule or a function Python calls (``addressable``) optimizes
  and generates everything once.  In a checked ApplyAdamW first call, 140 libraries'
  finalizations were 10 of its 20 CPU s.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import os
import pathlib
import pickle
import warnings

import numba
from llvmlite import binding as llvm
from numba import types
from numba.core import bytecode, compiler
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from . import check_numba_version, public_jit_forced

try:
    from numba._dispatcher import compute_fingerprint as _compute_fingerprint
except ImportError:  # not in this Numba: every key is the caller's own
    def _compute_fingerprint(values):
        raise NotImplementedError

try:
    import fcntl
except ImportError:  # not POSIX: cache writes are not serialized across processes
    fcntl = None

__all__ = ["jit", "dispatcher", "JIT_OPTIONS", "OVERLOAD_OPTIONS", "TaggedCache", "compiled_code_digest",
           "KernelDispatcher", "LinkedLibrary", "compile_linked_subroutine", "function_address", "make_addressable",
           "uses_public_jit", "argument_key", "on_cache_load", "carries_reload_hooks"]

# error_model="numpy": x/0 gives inf/nan as on the device, not ZeroDivisionError.
# No fastmath: results are compared bit for bit.
JIT_OPTIONS = {"cache": True, "error_model": "numpy"}
# @overload implementations are compiled into their (cached) callers; caching them on their own
# would go through Numba's unlocked index update (see TaggedCache.save_overload).  Only compiled
# code calls them: no cfunc wrapper (Numba gives them no CPython one).
OVERLOAD_OPTIONS = {"error_model": "numpy", "no_cfunc_wrapper": True}

_PACKAGE = pathlib.Path(__file__).resolve().parents[1]

# The private symbols the house dispatcher needs (see the package doc), checked by name.
_PRIVATE_SYMBOLS = {
    "Dispatcher.get_call_template": (CPUDispatcher, "get_call_template"),
    "Compiler.compile_extra": (compiler.Compiler, "compile_extra"),
    "compiler.compile_internal": (compiler, "compile_internal"),
    "JITCodeLibrary._optimize_final_module": (JITCodeLibrary, "_optimize_final_module"),
    "JITCodeLibrary._finalize_final_module": (JITCodeLibrary, "_finalize_final_module"),
    "JITCodeLibrary._finalize_dynamic_globals": (JITCodeLibrary, "_finalize_dynamic_globals"),
    "JITCodeLibrary._get_module_for_linking": (JITCodeLibrary, "_get_module_for_linking"),
    "JITCodeLibrary.serialize_using_object_code": (JITCodeLibrary, "serialize_using_object_code"),
    "FunctionCache._index_key": (FunctionCache, "_index_key"),
    "CompileResultCacheImpl.rebuild": (CompileResultCacheImpl, "rebuild"),
    "FunctionIdentity._unique_ids": (bytecode.FunctionIdentity, "_unique_ids"),
}


class _RandomIds:
    """Numba's function ids drawn at random, where Numba counts them from 1 in every process.

    Numba names compiled code by qualified name, argument types and this id.  Two functions with
    one qualified name and argument types but different code (an overload's closure over another
    operation, a kernel body per specialization) compiled first in two processes with the same
    history got one id, so one symbol, and a process loading both from the on-disk cache linked
    every call to the first: a kernel's ``Sub`` ran as another kernel's ``Add``
    (numba/numba#10486).  Random 62-bit ids make that a 1-in-10^13 event, forked workers included."""

    def __iter__(self):
        return self

    def __next__(self) -> int:
        return int.from_bytes(os.urandom(8), "little") >> 2


def missing_private_symbols() -> list[str]:
    """The private symbols of :data:`_PRIVATE_SYMBOLS` the installed Numba lacks."""
    return [name for name, (owner, attr) in _PRIVATE_SYMBOLS.items() if not hasattr(owner, attr)]


@functools.cache
def uses_public_jit() -> bool:
    """Whether this process compiles with plain ``numba.njit`` dispatchers: asked for
    (``ASCEND_NUMBA_PUBLIC_JIT=1``), or the installed Numba lacks a private symbol, or it is
    outside the tested range and the private path failed its probe (:func:`_probe`).  Taking the
    private path (before anything compiles through it), installs :class:`_RandomIds`."""
    if public_jit_forced():
        return True
    missing = missing_private_symbols()
    if missing:
        _warn_public(f"missing {', '.join(missing)}")
        return True
    if not isinstance(bytecode.FunctionIdentity._unique_ids, _RandomIds):
        bytecode.FunctionIdentity._unique_ids = _RandomIds()
    if check_numba_version() is not None:  # untested: try the private path once on a tiny function
        try:
            _probe()
        except Exception as exc:  # noqa: BLE001 - any failure of the private path sends us to the public one
            _warn_public(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            return True
    return False


def _warn_public(why: str) -> None:
    warnings.warn(f"ascend_numba: Numba's internals differ from the tested ones ({why}); compiling with plain "
                  "numba.njit (same results, slower compile, no on-disk cache)", RuntimeWarning, stacklevel=4)


def _probe() -> None:
    """Compile through the private path, in memory, what every kernel needs: a link-only helper
    LLVM inlines, called from a function with machine code of its own, called by address."""
    from .probe import run_probe

    run_probe()


@functools.cache
def compiled_code_digest() -> str:
    """A hash of every module compiled code can depend on (``kernels/``, ``checked/``, ``host/`` and this
    wall with their subpackages, each op's ``kernel.py`` and ``plan.py``, ``config.py``) and of the Numba
    version.
    Numba's own cache only notices changes to a function's own file, and compiled functions
    here call each other across files."""
    h = hashlib.sha256(numba.__version__.encode())
    sources = [*_PACKAGE.joinpath("kernels").rglob("*.py"), *_PACKAGE.joinpath("checked").rglob("*.py"),
               *_PACKAGE.joinpath("host").rglob("*.py"),
               *_PACKAGE.joinpath("_numba_compat").rglob("*.py"),
               *_PACKAGE.glob("ops/*/kernel.py"), *_PACKAGE.glob("ops/*/plan.py"), *_PACKAGE.glob("config.py")]
    for path in sorted(sources):
        h.update(str(path.relative_to(_PACKAGE)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


class LinkedLibrary(JITCodeLibrary):
    """The code of a helper that only ever runs inside its callers: finalizing it links in its
    callees' modules and stops, with no module optimization and no machine code of its own (its
    callers' finalization does both, over the whole linked module).  It has no address
    (``get_pointer_to_function`` is 0, as for any function without a CPython wrapper) and its
    environment is never set: the code runs only as part of a caller."""

    _LINKED = "ascend_numba-linked"  # the serialized kind: the module callers link in, as bitcode
    # An LLVM attribute for the library's functions: "alwaysinline" (inlined into every caller),
    # "noinline" (one copy in a caller's module, however many calls: a rare path's code), or None.
    inline_attribute = None

    # Numba's finalize links the callees in, then calls these two: the module optimization, and
    # the engine's machine code, left to the callers.
    def _optimize_final_module(self):
        pass

    def _finalize_final_module(self):
        self._finalize_dynamic_globals()  # a process's addresses in the code: Numba then does not cache it
        self._finalized = True

    def add_ir_module(self, ir_module):
        if self.inline_attribute:
            # On the IR, before Numba parses it: llvmlite's binding-level
            # ``add_function_attribute`` puts the attribute on the return value before 0.48.
            for fn in ir_module.functions:
                if not fn.is_declaration:
                    fn.attributes.add(self.inline_attribute)
        super().add_ir_module(ir_module)

    def get_pointer_to_function(self, name):
        self._ensure_finalized()
        return 0

    @property
    def codegen(self):
        return _CodegenWithoutEnv(self._codegen)

    def serialize_using_object_code(self):
        return self.name, self._LINKED, self._get_module_for_linking().as_bitcode()

    @classmethod
    def rebuilt(cls, codegen, libdata):
        """The library ``serialize_using_object_code`` saved, or None for another kind."""
        name, kind, bitcode = libdata
        if kind != cls._LINKED:
            return None
        library = cls(codegen, name)
        library._shared_module = llvm.parse_bitcode(bitcode)
        library._finalized = True
        return library


class _CodegenWithoutEnv:
    """The codegen as a :class:`LinkedLibrary` shows it: an environment is never set (its global
    is in no module the engine has; setting it would write through a null address)."""

    def __init__(self, codegen):
        self._codegen = codegen

    def set_env(self, env_name, env):
        pass

    def __getattr__(self, name):
        return getattr(self._codegen, name)


class _LinkedCompiler(compiler.Compiler):
    """Numba's pipeline, compiling into a :class:`LinkedLibrary`."""

    inline_attribute = None

    def compile_extra(self, func):
        if self.state.library is None:
            self.state.library = LinkedLibrary(self.state.targetctx.codegen(), func.__qualname__)
            self.state.library.inline_attribute = self.inline_attribute
        return super().compile_extra(func)


class _InlinedCompiler(_LinkedCompiler):
    """Numba's pipeline, compiling into a :class:`LinkedLibrary` whose functions LLVM inlines."""

    inline_attribute = "alwaysinline"


class _NotInlinedCompiler(_LinkedCompiler):
    """Numba's pipeline, compiling into a :class:`LinkedLibrary` whose functions LLVM keeps apart."""

    inline_attribute = "noinline"


def function_address(cres) -> int:
    """The machine-code address of a compiled function (a kernel body, a checked rule)."""
    address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    if not address:
        raise RuntimeError(f"{cres.fndesc.qualname} has no machine code of its own: compile it addressable "
                           "(see ascend_numba._numba_compat.jit.LinkedLibrary)")
    return address


def argument_key(values: tuple):
    """Numba's own dispatch fingerprint of ``values`` (the C function its dispatcher calls on every
    call, a tenth of the cost of reading each array's dtype and flags from Python), or None for
    values it cannot fingerprint (the caller then keys by what it reads itself).  It tells apart
    what Numba types apart except byte order: callers pass native-order arrays only."""
    try:
        return _compute_fingerprint(values)
    except Exception:  # noqa: BLE001 - Numba raises ValueError/NotImplementedError for other objects
        return None


_SUBROUTINES: dict = {}  # (implementation, signature) -> its CompileResult, for this process


def compile_linked_subroutine(context, builder, implementation, sig, flags):
    """Numba's ``context.compile_subroutine`` into a :class:`LinkedLibrary`: ``implementation``
    compiled for ``sig`` with ``flags`` (once per process) and linked into the library being
    lowered; returns the CompileResult, for ``context.call_internal``."""
    if uses_public_jit():
        return context.compile_subroutine(builder, implementation, sig, flags=flags, caching=False)
    key = (implementation, sig)
    cres = _SUBROUTINES.get(key)
    if cres is None:
        flags.no_compile = flags.no_cpython_wrapper = flags.no_cfunc_wrapper = True
        with global_compiler_lock:
            library = LinkedLibrary(context.codegen(), implementation.__name__)
            cres = _SUBROUTINES[key] = compiler.compile_internal(
                context.typing_context, context, library, implementation, sig.args, sig.return_type, flags, locals={})
    context.active_code_library.add_linking_library(cres.library)
    return cres


class _CacheImpl(CompileResultCacheImpl):
    """Numba's compile-result cache, also for :class:`LinkedLibrary` results (as
    ``CompileResult._rebuild`` does for the others)."""

    def rebuild(self, target_context, payload):
        library = LinkedLibrary.rebuilt(target_context.codegen(), payload[0])
        _, fndesc, env, signature, objectmode, lifted, typeann, reload_init, referenced_envs = payload
        if library is None:
            cres = super().rebuild(target_context, payload)
            # Numba runs a rebuilt result's reload hooks but leaves them off its library, so a
            # caller compiled against it would not carry them into its own cache entry.
            _keep_reload_hooks(cres.library, reload_init)
            return cres
        _keep_reload_hooks(library, reload_init)
        for fn in reload_init:
            fn()
        return compiler.CompileResult(
            target_context=target_context, typing_context=target_context.typing_context, library=library,
            environment=env, entry_point=target_context.get_executable(library, fndesc, env), fndesc=fndesc,
            type_annotation=typeann, signature=signature, objectmode=objectmode, lifted=lifted, typing_error=None,
            call_helper=None, metadata=None, reload_init=reload_init, referenced_envs=referenced_envs)


@functools.cache
def carries_reload_hooks() -> bool:
    """Whether this Numba's code libraries carry reload hooks to their callers (from 0.61; 0.60
    keeps them on a compile result only), so :func:`on_cache_load` works; never on the public path."""
    if uses_public_jit():
        return False
    from numba.core.registry import cpu_target

    return hasattr(cpu_target.target_context.codegen().create_library("ascend_numba-probe"), "_reload_init")


def _keep_reload_hooks(library, reload_init) -> None:
    if carries_reload_hooks():
        library._reload_init.update(reload_init)


def on_cache_load(context, hook) -> None:
    """Codegen: call ``hook()`` whenever the code being lowered is loaded from the on-disk cache,
    in any process, also as part of a caller that links it in (Numba's reload hooks: ``hook`` is
    pickled by reference with the cache entry, and it may be called more than once).  Does
    nothing unless :func:`carries_reload_hooks`."""
    if carries_reload_hooks():
        context.active_code_library._reload_init.add(hook)


_UNSAVABLE_INDEX = (AttributeError, ImportError, pickle.UnpicklingError, EOFError, TypeError, ValueError,
                    ReferenceError)


class _UnusableIndex(Exception):
    """A function's on-disk index this process can neither load nor save (see save_overload)."""


def _index_step(step):
    # Only the index's own load and save mark it unusable: the same exception types raised while
    # reducing or writing a compile result must not cost the function its other entries.
    def guarded(*args):
        try:
            return step(*args)
        except _UNSAVABLE_INDEX as exc:
            raise _UnusableIndex(f"{type(exc).__name__}: {exc}") from exc
    return guarded


class TaggedCache(FunctionCache):
    """Numba's on-disk cache with a tag (the code digest, a specialization) added to the index key.

    ``on_miss`` is called when a lookup finds nothing, just before Numba compiles."""

    _impl_class = _CacheImpl

    def __init__(self, py_func, tag: str, on_miss=None):
        super().__init__(py_func)
        self._tag = tag
        self._on_miss = on_miss
        index = self._cache_file
        index._load_index, index._save_index = _index_step(index._load_index), _index_step(index._save_index)

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (self._tag,)

    def load_overload(self, sig, target_context):
        try:
            found = super().load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 - an entry this Numba cannot rebuild is a miss: compile it again
            found = None
        if found is None and self._on_miss is not None:
            self._on_miss()
        return found

    def save_overload(self, sig, data):
        # Numba updates a function's index by read-modify-write: two processes saving two
        # specializations at once (test workers, `ascend-numba warmup --workers`) could lose an
        # entry or point one at the other's data file.  One lock per cache directory prevents it.
        with self._locked():
            try:
                super().save_overload(sig, data)
            except _UnusableIndex:
                # The index's keys are pickled signatures, and Numba re-pickles them all on every
                # save: one naming a type this version of the library lacks (another version wrote
                # it) fails to load, one naming a dispatcher another process made and this one no
                # longer holds fails to dump (ReferenceError).  Start the function's index afresh.
                with contextlib.suppress(OSError):
                    os.remove(self._cache_file._index_path)
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

    A dispatcher made with ``always_inline`` compiles its function marked for LLVM to inline at
    every call (the mark travels with the IR callers link in, and with the on-disk cache).  A hot
    primitive inlined by LLVM costs its callers nothing extra to type, where Numba's IR-level
    ``inline="always"`` re-types it at every call site."""

    def make_addressable(self):
        """Compile from now on into a library of its own machine code, for compiled code that
        calls it by address (see :class:`LinkedLibrary`)."""
        self._compiler.pipeline_class = compiler.Compiler

    widen = True  # signed integer arguments typed as int64

    def compile(self, sig):
        with global_compiler_lock, _collecting_less():
            return super().compile(sig)

    def get_call_template(self, args, kws):
        if not self.widen:
            return super().get_call_template(tuple(types.unliteral(a) for a in args),
                                             {k: types.unliteral(v) for k, v in kws.items()})
        return super().get_call_template(tuple(_call_type(a) for a in args),
                                         {k: _call_type(v) for k, v in kws.items()})


# The cyclic collector's thresholds while a compile runs.  A compile allocates millions of
# short-lived IR objects: at Python's defaults (700, 10, 10) the collector ran a full collection,
# over every long-lived Numba object of the process, about once a second of compiling (15% of a
# cold compile).  With young collections 14x rarer it runs a third as many.
COMPILE_GC_THRESHOLDS = (10_000, 10, 10)
_outer_thresholds: list = []  # the caller's thresholds while a compile (and those nested in it) runs


@contextlib.contextmanager
def _collecting_less():
    """Raise the collector's thresholds to :data:`COMPILE_GC_THRESHOLDS` (never lower them) for
    the outermost compile; the caller's come back when it ends.  Held under the compiler lock."""
    outermost = not _outer_thresholds
    if outermost:
        _outer_thresholds.append(gc.get_threshold())
        gc.set_threshold(*map(max, gc.get_threshold(), COMPILE_GC_THRESHOLDS))
    try:
        yield
    finally:
        if outermost:
            gc.set_threshold(*_outer_thresholds.pop())


def make_addressable(disp) -> None:
    """Compile ``disp`` from now on into code with an address of its own (a checked rule)."""
    if isinstance(disp, KernelDispatcher):
        disp.make_addressable()


def dispatcher(func, tag: str | None = None, *, python: bool = False, addressable: bool = False,
               always_inline: bool = False, never_inline: bool = False, on_miss=None, **options):
    """A :class:`KernelDispatcher` for ``func`` with the house options, cached under ``tag``
    (default: the code digest).  Its code is a :class:`LinkedLibrary`, run only inside its
    callers, unless Python calls it (``python``) or compiled code calls it by address
    (``addressable``: a kernel body, a checked rule).  When :func:`uses_public_jit`, a plain
    ``numba.njit`` dispatcher with the same options and no on-disk cache."""
    if uses_public_jit():
        return numba.njit(**{k: v for k, v in {**JIT_OPTIONS, **options}.items() if k not in ("cache", "widen")})(func)
    return private_dispatcher(func, tag, python=python, addressable=addressable, always_inline=always_inline,
                              never_inline=never_inline, on_miss=on_miss, **options)


def private_dispatcher(func, tag: str | None = None, *, python: bool = False, addressable: bool = False,
                       always_inline: bool = False, never_inline: bool = False, on_miss=None, cache: bool = True,
                       widen: bool = True, **options):
    """:func:`dispatcher`'s private path, whatever :func:`uses_public_jit` says; ``widen=False``:
    calls keep their integer types (a function whose result depends on its operands' width)."""
    targetoptions = {k: v for k, v in {**JIT_OPTIONS, **options}.items() if k != "cache"}
    targetoptions["nopython"] = True
    targetoptions.setdefault("_nrt", False)  # see the module doc
    if not python:
        targetoptions.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
    pipeline = (compiler.Compiler if python or addressable else _InlinedCompiler if always_inline
                else _NotInlinedCompiler if never_inline else _LinkedCompiler)
    disp = KernelDispatcher(py_func=func, locals={}, targetoptions=targetoptions, pipeline_class=pipeline)
    disp.widen = widen
    if cache:
        disp._cache = _LazyCache(func, tag, on_miss)
    return disp


class _LazyCache:
    """A dispatcher's :class:`TaggedCache`, made on its first use: finding a function's cache
    directory and hashing the compiled code's sources cost a few ms per hundred functions at
    import, for functions many processes never compile."""

    def __init__(self, func, tag, on_miss):
        self._args = (func, tag, on_miss)
        self._cache = None

    def __getattr__(self, name):
        if self._cache is None:
            func, tag, on_miss = self._args
            try:
                self._cache = TaggedCache(func, tag or compiled_code_digest(), on_miss)
            except RuntimeError:  # no cache locator for this function (no source file): in memory only
                from numba.core.caching import NullCache

                self._cache = NullCache()
        return getattr(self._cache, name)


def jit(func=None, *, python: bool = False, always_inline: bool = False, never_inline: bool = False, **options):
    """Compile with the house options: ``@jit``; ``@jit(python=True)`` for functions called
    from Python; ``@jit(always_inline=True)`` for small hot helpers LLVM must inline into their
    callers' loops; ``@jit(never_inline=True)`` for a rare path called from many places (one copy
    of its code in a caller's module); ``@jit(inline="always")`` (Numba's IR inlining) only where
    a call needs its arguments to stay compile-time values."""
    if func is None:
        return lambda f: dispatcher(f, python=python, always_inline=always_inline, never_inline=never_inline,
                                    **options)
    return dispatcher(func, python=python, always_inline=always_inline, never_inline=never_inline, **options)
