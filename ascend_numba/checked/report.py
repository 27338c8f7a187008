"""Each rule's reporter, built from its record in :mod:`.rules`: ``report.<record name>`` (lower
case) is an intrinsic of ``(ctx, prim, operand, <the rule's details, by name>)`` that records the
lane's first violation in its check row, so a call site reads as the rule it reports::

    report.gm_write_race(ctx, prim, OPERAND_DST, tensor=r, byte=b, other_lane=o - 1)

A misspelt or missing detail is a compile error.  An intrinsic, not a function: its stores are
emitted at the call site, so a rule costs no compile of its own (as overloads, the reporters
were 18 extra compiles of a checked Tile kernel's first call).  The row's layout is
:mod:`.rules`'; the host names the details back from the same record
(:func:`.messages.decode_violation`).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._numba_compat.extending import cgutils, python_twin
from .._numba_compat.jit import jit
from ..kernels.interpret import python_function
from ..kernels.lane import CheckedLane, _load_i64, _store_i64
from .rules import CHECK_DETAILS, CHECK_OPERAND, CHECK_PRIMITIVE, CHECK_RULE, REPORTED

__all__ = ["failed", *REPORTED]

_CHECK_ADDR = CheckedLane._fields.index("check_addr")


@jit(always_inline=True)
def failed(ctx):
    """Whether the lane has a violation (every later primitive is skipped)."""
    return _load_i64(ctx.check_addr, CHECK_RULE) != 0


def _typed(code: int, ctx, prim, operand, details: tuple):
    """A reporter's signature and codegen: if the lane's check row is empty, store the rule's
    code, the primitive, the operand and the details (as int64, in the record's order).  Code
    at the call site, in an unlikely branch: nothing is compiled per rule."""
    if not (isinstance(ctx, types.NamedTuple) and ctx.instance_class is CheckedLane):
        return None
    sig = types.none(ctx, prim, operand, *details)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        check_addr = cgutils.unpack_tuple(builder, args[0])[_CHECK_ADDR]
        row = builder.inttoptr(check_addr, i64.as_pointer())
        empty = builder.icmp_unsigned("==", builder.load(row), ir.Constant(i64, 0))
        with builder.if_then(empty, likely=False):
            slots = [(CHECK_RULE, ir.Constant(i64, code))]
            slots += [(slot, context.cast(builder, v, t, types.int64)) for slot, v, t in
                      zip((CHECK_PRIMITIVE, CHECK_OPERAND, *range(CHECK_DETAILS, CHECK_DETAILS + len(details))),
                          args[1:], signature.args[1:])]
            for slot, value in slots:
                builder.store(value, builder.gep(row, [ir.Constant(i64, slot)]))
        return context.get_dummy_value()

    return sig, codegen


def _record(ctx, code, prim, operand, details):
    """Interpret mode's reporter: the same stores, in Python (run by :func:`python_function`)."""
    if _load_i64(ctx.check_addr, CHECK_RULE) != 0:
        return
    for slot, value in ((CHECK_RULE, code), (CHECK_PRIMITIVE, prim), (CHECK_OPERAND, operand),
                        *((CHECK_DETAILS + k, v) for k, v in enumerate(details))):
        _store_i64(ctx.check_addr, slot, int(value))


def _reporter(ident: str, rule):
    """``report.<ident>``: an intrinsic of ``(ctx, prim, operand, <the rule's details>)``, called
    with the details by keyword, and its plain-Python twin."""
    details = ", ".join(rule.details)
    params = ", ".join(("ctx", "prim", "operand", *rule.details))
    source = (f"def {ident}(typingctx, {params}):\n"
              f"    return _typed({rule.code}, ctx, prim, operand, ({details}{',' if details else ''}))\n"
              f"def twin({params}):\n"
              f"    _record(ctx, {rule.code}, prim, operand, ({details}{',' if details else ''}))\n")
    namespace = {"_typed": _typed, "_record": python_function(_record), "__name__": __name__}
    exec(compile(source, f"<reporter of {rule.name}>", "exec"), namespace)  # noqa: S102 - our own records
    definition = namespace[ident]
    definition.__doc__ = f"Report [{rule.name}] with its details {details or '(none)'}."
    reporter = intrinsic(definition)
    python_twin(reporter)(namespace["twin"])
    return reporter


globals().update({ident: _reporter(ident, rule) for ident, rule in REPORTED.items()})
