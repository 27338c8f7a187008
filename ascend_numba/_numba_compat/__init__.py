"""The wall around Numba's private API: everything that touches ``numba.core`` lives in this
package, and nothing outside it imports Numba's internals (``tests/test_numba_compat.py`` checks).

Supported and tested: Numba :data:`TESTED_NUMBA` (the range ``pyproject.toml`` declares; the
docs' supported versions page has the matrix ``make test-compat`` runs).  Importing this package
imports nothing of Numba: it reads Numba's version from the installed distribution, so
``import ascend_numba`` stays cheap and warns once when the installed Numba is outside the tested
range.

Checked on Numba 0.60.0, 0.61.2, 0.63.1, 0.65.1 and 0.68.1 (the suite's compat subset; the
whole suite on 0.68.1).

Private symbols in use, what for, and what happens without them ("public": the fallback below;
"error": :class:`NumbaCompatError`):

* ``numba.core.registry.CPUDispatcher`` subclassed, its ``get_call_template`` and ``_compiler``:
  calls from compiled code typed without literals and with int64-widened integers, one helper
  specialization per tensor layout (:mod:`.jit`).  Public.
* ``numba.core.compiler.Compiler`` subclassed, ``compile_extra``, ``state.library``,
  ``state.targetctx``: helpers compiled into link-only libraries.  Public.
* ``numba.core.codegen.JITCodeLibrary`` subclassed: ``_optimize_final_module``,
  ``_finalize_final_module``, ``_finalize_dynamic_globals``, ``_get_module_for_linking``,
  ``_shared_module``, ``_finalized``, ``_codegen``, ``add_ir_module``,
  ``serialize_using_object_code``: link-only libraries, no module optimization and no machine code
  of a helper's own (its callers do both, once), the ``alwaysinline`` mark set on the IR.  Public.
* ``numba.core.caching.FunctionCache`` subclassed: ``_index_key``, ``_impl_class``,
  ``_cache_path``, ``load_overload``, ``save_overload``; ``CompileResultCacheImpl.rebuild`` (its
  payload tuple read by position) and ``compiler.CompileResult``: the on-disk cache keyed by the
  digest of every file compiled code depends on, link-only helpers rebuilt from it, writes locked
  across processes.  Public (no disk cache); an entry that cannot be rebuilt is a cache miss.
* ``CodeLibrary._reload_init`` (Numba's reload hooks, carried by a library to the callers that
  link it in and run when a cached result is rebuilt): a checked rule function compiled with the
  first kernel that calls it and loaded with that kernel from the cache (:func:`.jit.on_cache_load`).
  Without it (Numba 0.60, the public path) the first checked launch compiles every rule.
* ``numba.core.bytecode.FunctionIdentity._unique_ids`` replaced by random ids: the per-process
  counter gave two different functions of one name and argument types, first compiled in two
  processes, one symbol, and a process loading both from the cache ran one for the other
  (numba/numba#10486).  Public (no disk cache, so no symbols from other processes).
* ``numba.core.compiler.compile_internal``, ``compiler_lock.global_compiler_lock``,
  ``context.active_code_library``: vector programs compiled once as subroutines and linked into
  the kernel being lowered.  Public (``context.compile_subroutine``).
* ``BaseCallConv.get_function_type``, ``BaseCallConv._get_arg_packer``,
  ``context.get_returned_value``, ``context.make_array``: :func:`.call.call_by_address`, the
  launchers calling a kernel body's entry, the entry the body and a checked lane its rules by
  address.  Error.
* ``numba.np.arrayobj.populate_array``: a kernel body's entry making its array arguments
  (:func:`.call.array_value`).  Error.
* ``numba.core.cgutils``, ``numba.core.errors``, ``numba.core.imputils.lower_builtin``,
  ``numba.core.typing.templates``, ``numba.core.event``, ``numba.core.compiler.Flags``,
  ``numba.np.numpy_support``: intrinsics, overloads, the vector programs' typing and lowering,
  the compile counter (:mod:`.extending`).  Error.

The public fallback: plain ``numba.njit`` dispatchers with the same options (the same bits; more
specializations, a slower compile, no on-disk cache).  A process takes it when a symbol above is
missing, when ``ASCEND_NUMBA_PUBLIC_JIT=1`` asks for it, or when the installed Numba is outside
the tested range and a probe (:mod:`.probe`: a link-only helper, inlined, called by address)
fails; it says so once, in a RuntimeWarning.  Where no public equivalent exists, the first launch
raises :class:`NumbaCompatError`: one message naming the installed and the supported versions.
"""

from __future__ import annotations

import os
import re
import warnings

__all__ = ["TESTED_NUMBA", "NumbaCompatError", "numba_version", "check_numba_version", "private_api_message",
           "public_jit_forced", "compat_error_in"]

# The lowest and highest Numba the suite passes on (make test-compat); pyproject.toml's range.
TESTED_NUMBA = ("0.60.0", "0.68.1")

_warned = False


class NumbaCompatError(RuntimeError):
    """The installed Numba lacks, or differs in, an internal that ascend_numba needs and has no
    public replacement for."""


def _parse(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0])[:3])


def _is_development(version: str) -> bool:
    return bool(re.search(r"dev|a\d|b\d|rc|\+", version))


def numba_version() -> str:
    """The installed Numba's version, read without importing Numba ('' when none is installed)."""
    from importlib import metadata

    try:
        return metadata.version("numba")
    except metadata.PackageNotFoundError:
        return ""


def _range_text() -> str:
    return f"numba {TESTED_NUMBA[0]} to {TESTED_NUMBA[1]}"


def check_numba_version(version: str | None = None) -> str | None:
    """Warn once (RuntimeWarning) when ``version`` (default: the installed Numba's) is outside
    the tested range or a development build; returns the warning's text, or None."""
    global _warned
    version = numba_version() if version is None else version
    if not version:
        return None
    low, high = (_parse(v) for v in TESTED_NUMBA)
    if low <= _parse(version) <= high and not _is_development(version):
        return None
    text = (f"ascend_numba is tested with {_range_text()}; numba {version} is installed. Kernels that "
            "depend on Numba internals fall back to public Numba APIs where they can (same results, slower "
            f"compile) and otherwise raise NumbaCompatError; pip install 'numba>={TESTED_NUMBA[0]},"
            f"<={TESTED_NUMBA[1]}' gives a tested environment")
    if not _warned:
        _warned = True
        warnings.warn(text, RuntimeWarning, stacklevel=3)
    return text


def private_api_message(what: str, exc: BaseException | str) -> str:
    """The one message for a Numba internal that is missing or behaves differently."""
    return (f"{what} is not available in the installed numba {numba_version() or '(unknown)'} ({exc}); "
            f"ascend_numba supports {_range_text()}: pip install 'numba>={TESTED_NUMBA[0]},<={TESTED_NUMBA[1]}'")


def public_jit_forced() -> bool:
    """``ASCEND_NUMBA_PUBLIC_JIT=1``: compile with plain ``numba.njit`` dispatchers only."""
    return os.environ.get("ASCEND_NUMBA_PUBLIC_JIT", "") not in ("", "0")


def compat_error_in(exc: BaseException) -> NumbaCompatError | None:
    """The :class:`NumbaCompatError` behind ``exc`` (Numba wraps errors raised while lowering
    into its own, with the original as the context), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, NumbaCompatError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None
