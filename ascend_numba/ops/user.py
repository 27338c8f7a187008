"""Ops from the user's own modules: registered beside the shipped ones, so the golden CLI, ``msopst
gen``, the ``golden`` pytest fixture and the registry-driven tests and benchmarks see them.

A module that defines ``ENTRIES`` (a tuple of :class:`~ascend_numba.ops.registry.OpEntry`, as each
op folder's ``__init__.py`` does) is loaded by name: ``--ops MODULE`` on the commands, the
``ASCEND_NUMBA_OPS`` environment variable (module names, comma-separated; the golden workers
inherit it), or an entry point in the ``ascend_numba.ops`` group naming the module.  A module may
also call :func:`register` itself.  A user op may not take a shipped op's name.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from ..config import OPS_ENTRY_POINTS, OPS_ENV
from .registry import OpEntry

__all__ = ["register", "load_ops"]

_LOADED: set = set()


def register(*entries: OpEntry) -> None:
    """Add ``entries`` to the op registry (again under its own name: a reload replaces it)."""
    from . import REGISTRY, SHIPPED

    for entry in entries:
        if not isinstance(entry, OpEntry):
            raise TypeError(f"register takes OpEntry values, got {type(entry).__name__}")
        if entry.name in SHIPPED:
            raise ValueError(f"op {entry.name!r} is one the package ships: name yours otherwise")
        REGISTRY[entry.name] = entry


def load_ops(modules=()) -> list[str]:
    """Import the user's op modules (``modules``, then ``$ASCEND_NUMBA_OPS``, then the entry points)
    once each and register their ``ENTRIES``; returns the registry's user op names."""
    from . import REGISTRY, SHIPPED

    names = [*modules, *(m.strip() for m in os.environ.get(OPS_ENV, "").split(",") if m.strip())]
    names += [ep.value for ep in entry_points(group=OPS_ENTRY_POINTS)]
    for name in names:
        if name in _LOADED:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            raise ImportError(f"op module {name!r}: {e}") from e
        register(*getattr(module, "ENTRIES", ()))
        _LOADED.add(name)
    return sorted(set(REGISTRY) - SHIPPED)
