"""Each rule's reporter, built from its record in :mod:`.rules`: ``report.<record name>`` (lower
case) is a compiled function of ``(ctx, prim, operand, <the rule's details, by name>)`` that
records the lane's first violation in its check row, so a call site reads as the rule it reports::

    report.gm_write_race(ctx, prim, OPERAND_DST, tensor=r, byte=b, other_lane=o - 1)

A misspelt or missing detail is a compile error.  The row's layout is :mod:`.rules`'; the host
names the details back from the same record (:func:`.messages.decode_violation`).
"""

from __future__ import annotations

import numpy as np

from .._numba_compat.extending import overload, python_twin
from .._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..kernels.interpret import python_function
from ..kernels.lane import _load_i64, _store_i64
from .rules import CHECK_DETAILS, CHECK_OPERAND, CHECK_PRIMITIVE, CHECK_RULE, REPORTED

__all__ = ["failed", *REPORTED]


@jit(always_inline=True)
def failed(ctx):
    """Whether the lane has a violation (every later primitive is skipped)."""
    return _load_i64(ctx.check_addr, CHECK_RULE) != 0


@jit(always_inline=True)
def _first(ctx, code, prim, operand):
    """Record the rule, primitive and operand of the lane's first violation; False if it has one."""
    base = ctx.check_addr
    if _load_i64(base, CHECK_RULE) != 0:
        return False
    _store_i64(base, CHECK_RULE, code)
    _store_i64(base, CHECK_PRIMITIVE, prim)
    _store_i64(base, CHECK_OPERAND, operand)
    return True


def _reporter(ident: str, rule):
    """The stub compiled code calls as ``report.<ident>``, overloaded with its implementation."""
    params = ", ".join(("ctx", "prim", "operand", *rule.details))
    stores = "".join(f"        _store_i64(ctx.check_addr, {CHECK_DETAILS + k}, np.int64({name}))\n"
                     for k, name in enumerate(rule.details))
    source = (f"def {ident}({params}):\n"
              f"    raise NotImplementedError  # compiled only\n"
              f"def generate({params}):\n"
              f"    return implementation\n"
              f"def implementation({params}):\n"
              f"    if _first(ctx, {rule.code}, prim, operand):\n"
              f"{stores or '        pass'}\n")
    namespace = {"np": np, "_first": _first, "_store_i64": _store_i64, "__name__": __name__}
    exec(compile(source, f"<reporter of {rule.name}>", "exec"), namespace)  # noqa: S102 - our own records
    stub = namespace[ident]
    stub.__doc__ = f"Report [{rule.name}] with its details {', '.join(rule.details) or '(none)'}."
    overload(stub, jit_options=OVERLOAD_OPTIONS)(namespace["generate"])
    python_twin(stub)(python_function(namespace["implementation"]))
    return stub


globals().update({ident: _reporter(ident, rule) for ident, rule in REPORTED.items()})
