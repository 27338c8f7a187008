"""Ops from the user's own modules: registered beside the shipped ones, so the golden CLI and its
workers, ``msopst gen``, the pytest plugin (registered before collection, and the ``golden``
fixture) and ``bench/test_bench_user_ops.py`` see them (the golden cache keys them by their
modules' sources too).

A module that defines ``ENTRIES`` (a tuple of :class:`~ascend_numba.ops.registry.OpEntry`, as each
op folder's ``__init__.py`` does) is loaded by name: ``--ops MODULE`` on the commands, the
``ASCEND_NUMBA_OPS`` environment variable (module names, comma-separated; the golden workers
inherit it), or an entry point in the ``ascend_numba.ops`` group naming the module.  A module may
also call :func:`register` itself (such an op is not seen by worker processes, which import the
modules).  A user op may not take a shipped op's name, nor another module's op's.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
from importlib.metadata import entry_points

from ..config import OPS_ENTRY_POINTS, OPS_ENV
from .registry import OpEntry

__all__ = ["register", "load_ops", "loaded_modules", "op_source_digest"]

_LOADED: set = set()


def register(*entries: OpEntry) -> None:
    """Add ``entries`` to the op registry (again under its own name: a reload replaces it)."""
    from . import REGISTRY, SHIPPED

    for entry in entries:
        if not isinstance(entry, OpEntry):
            raise TypeError(f"register takes OpEntry values, got {type(entry).__name__}")
        if entry.name in SHIPPED:
            raise ValueError(f"op {entry.name!r} is one the package ships: name yours otherwise")
        known = REGISTRY.get(entry.name)
        if known is not None and known.function.__module__ != entry.function.__module__:
            raise ValueError(f"op {entry.name!r} is registered by {known.function.__module__} already "
                             f"({entry.function.__module__} registers it again)")
        REGISTRY[entry.name] = entry


def load_ops(modules=()) -> list[str]:
    """Import the user's op modules (``modules``, then ``$ASCEND_NUMBA_OPS``, then the entry points)
    once each and register their ``ENTRIES``; returns the registry's user op names."""
    from . import REGISTRY, SHIPPED

    names = [*modules, *(m.strip() for m in os.environ.get(OPS_ENV, "").split(",") if m.strip())]
    names += [ep.value.partition(":")[0].strip() for ep in entry_points(group=OPS_ENTRY_POINTS)]
    for name in names:
        if name in _LOADED:
            continue
        try:
            module = importlib.import_module(name)
            register(*getattr(module, "ENTRIES", ()))
        except Exception as e:  # the user's module: whatever it raises is the problem to name
            raise ImportError(f"op module {name!r}: {type(e).__name__}: {e}") from e
        _LOADED.add(name)
    return sorted(set(REGISTRY) - SHIPPED)


def loaded_modules() -> tuple:
    """The op modules loaded so far (what a worker process loads in turn)."""
    return tuple(sorted(_LOADED))


def op_source_digest(name: str) -> str:
    """A hash of the source files of a user op's function, reference and call ('' for a shipped
    op: the package's own digest covers it), so a cached golden follows the user's edits."""
    from . import REGISTRY, SHIPPED

    if name in SHIPPED or name not in REGISTRY:
        return ""
    entry, h = REGISTRY[name], hashlib.sha256()
    for part in (entry.function, entry.reference_function, entry.call):
        module = sys.modules.get(getattr(part, "__module__", "") or "")
        path = getattr(module, "__file__", None) or inspect.getsourcefile(part)
        if path:
            h.update(open(path, "rb").read())
    return h.hexdigest()
