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
from .rules import CHECK_DETAILS, CHECK_OPERAND, CHECK_PRIMITIVE, CHECK_RULE, MAX_DETAILS, REPORTED

__all__ = ["failed", *REPORTED]


@jit(always_inline=True)
def failed(ctx):
    """Whether the lane has a violation (every later primitive is skipped)."""
    return _load_i64(ctx.check_addr, CHECK_RULE) != 0


@jit
def _record(ctx, code, prim, operand, details):
    """Record the lane's first violation (later ones are ignored): the rule's code, the
    primitive's, the operand's and the details (int64, in the record's order, padded with 0).
    Out of line: a reporter's call site stays small in the hot rule functions around it."""
    base = ctx.check_addr
    if _load_i64(base, CHECK_RULE) != 0:
        return
    _store_i64(base, CHECK_RULE, code)
    _store_i64(base, CHECK_PRIMITIVE, prim)
    _store_i64(base, CHECK_OPERAND, operand)
    for k in range(MAX_DETAILS):
        _store_i64(base, CHECK_DETAILS + k, details[k])


def _reporter(ident: str, rule):
    """The stub compiled code calls as ``report.<ident>``, overloaded with its implementation."""
    params = ", ".join(("ctx", "prim", "operand", *rule.details))
    details = [f"np.int64({name})" for name in rule.details] + ["np.int64(0)"] * (MAX_DETAILS - len(rule.details))
    source = (f"def {ident}({params}):\n"
              f"    raise NotImplementedError  # compiled only\n"
              f"def generate({params}):\n"
              f"    return implementation\n"
              f"def implementation({params}):\n"
              f"    _record(ctx, {rule.code}, prim, operand, ({', '.join(details)},))\n")
    namespace = {"np": np, "_record": _record, "__name__": __name__}
    exec(compile(source, f"<reporter of {rule.name}>", "exec"), namespace)  # noqa: S102 - our own records
    stub = namespace[ident]
    stub.__doc__ = f"Report [{rule.name}] with its details {', '.join(rule.details) or '(none)'}."
    overload(stub, jit_options=OVERLOAD_OPTIONS)(namespace["generate"])
    python_twin(stub)(python_function(namespace["implementation"]))
    return stub


globals().update({ident: _reporter(ident, rule) for ident, rule in REPORTED.items()})
