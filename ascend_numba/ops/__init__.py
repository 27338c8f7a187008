"""The ops, one folder each: ``plan.py`` (host tiling, plain Python), ``kernel.py`` (compiled),
``api.py`` (the public function), ``reference.py`` (plain NumPy) and ``__init__.py`` (the
registry entries).  :data:`REGISTRY` is what the public API, the golden CLI, the tests and the
benchmarks read."""

from . import adamw, copy, tile, ttrans
from .registry import Case, OpEntry

# One line per op folder; the user's own ops join it through :mod:`.user`.
REGISTRY: dict[str, OpEntry] = {entry.name: entry for op in (tile, adamw, ttrans, copy) for entry in op.ENTRIES}
SHIPPED = frozenset(REGISTRY)

from .user import load_ops, register  # noqa: E402 - it reads REGISTRY

__all__ = ["REGISTRY", "SHIPPED", "OpEntry", "Case", "register", "load_ops"]
