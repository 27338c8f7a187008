"""Checked mode's entry from the primitives: each primitive's rule function and how a checked lane calls it.

A primitive's rule function (``check_transfer`` in ``kernels/primitives/dma.py``, ...) lives
beside the primitive, decorated with :func:`checked_rule`.  It verifies the primitive's
accesses before the primitive runs, reports the first violation through :mod:`.report` and
returns whether the primitive may run.  With a plain :class:`Lane` or a :class:`TracedLane` the
hook compiles to ``True`` and nothing else, so unchecked kernels pay nothing.  Rule functions
take scalars (addresses and sizes), never arrays: see :mod:`ascend_numba.kernels.lane`.

A checked lane calls them through its rule table (their addresses) rather than linking them
in: a linked-in rule function is optimized again inside each kernel's module (it doubled a
checked Tile kernel's cold compile).  A rule function is compiled when a kernel that calls it is
compiled, or loaded from the on-disk cache: a checked launch compiles the rules its kernel
reaches, not all of them (together about 18 CPU s).
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
from numba import types
from numba.extending import intrinsic

from .._numba_compat.call import call_by_address
from .._numba_compat.extending import cgutils, overload, python_twin
from .._numba_compat.jit import OVERLOAD_OPTIONS, carries_reload_hooks, function_address, jit, make_addressable, \
    on_cache_load
from ..kernels.interpret import python_function
from ..kernels.lane import LANE_TYPES, CheckedLane
from . import report  # as a module: the primitives it reaches import this one while it loads
from .rules import COUNTS

__all__ = ["checked_rule", "rule_table", "count_ok", "is_ub", "COUNT", "BLOCK_COUNT", "BLOCK_LEN", "ROWS", "COLS",
           "ELEMENTS", "SRC_STRIDE", "DST_STRIDE"]

COUNT, BLOCK_COUNT, BLOCK_LEN, ROWS, COLS, ELEMENTS, SRC_STRIDE, DST_STRIDE = range(len(COUNTS))


def _is_checked(ctx_type) -> bool:
    return isinstance(ctx_type, types.NamedTuple) and ctx_type.instance_class is CheckedLane


# Every rule function, in the order the primitives' modules register them: its index is its slot
# in the rule table a checked lane carries, the address of its compiled code or 0 until a kernel
# that calls it is compiled or loaded.
_RULE_FUNCTIONS: list = []
MAX_RULES = 256
_RULE_TABLE = np.zeros(MAX_RULES, np.uint64)


def _rule_arg_types(rule) -> tuple:
    # Rule functions take scalars: a parameter named ``*addr`` is an address (uint64), any other an int64.
    names = list(inspect.signature(rule.py_func).parameters)[1:]
    return tuple(types.uint64 if n.endswith("addr") else types.int64 for n in names)


def checked_rule(rule):
    """The hook a primitive calls before it runs, made from ``rule(ctx, ...)`` (compiled, returns
    whether the primitive may run).  In a CheckedLane the hook is False once the lane has a
    violation (every later primitive is skipped, so nothing it does goes unchecked), else the
    rule's answer; in any other lane it is True and compiles to nothing."""
    make_addressable(rule)
    slot = len(_RULE_FUNCTIONS)
    if slot == MAX_RULES:
        raise RuntimeError(f"checked mode's rule table holds {MAX_RULES} rule functions: "
                           "increase checked.dispatch.MAX_RULES")
    argtys = _rule_arg_types(rule)
    _RULE_FUNCTIONS.append((rule, argtys, functools.partial(_compile_rule, slot)))
    call = _rule_caller(argtys, slot)

    def hook(ctx, *args):
        raise NotImplementedError  # compiled only

    @overload(hook, jit_options=OVERLOAD_OPTIONS)
    def _ov_hook(ctx, *args):
        if not _is_checked(ctx):
            return lambda ctx, *args: True
        return lambda ctx, *args: not report.failed(ctx) and call(ctx.rules_addr, ctx, args)

    functools.update_wrapper(hook, rule.py_func)
    return hook


def _compile_rule(slot: int) -> None:
    """Compile (or load) the rule function in ``slot`` for a checked lane and put its address in
    the table, unless it is there."""
    if _RULE_TABLE[slot] == 0:
        rule, argtys, _ = _RULE_FUNCTIONS[slot]
        sig = (LANE_TYPES["checked"], *argtys)
        rule.compile(types.boolean(*sig))  # the type the callers read the answer as
        _RULE_TABLE[slot] = function_address(rule.overloads[sig])


def _rule_caller(argtys: tuple, slot: int):
    """An intrinsic calling the rule function in ``slot`` of the rule table at ``table``, compiled
    for ``(ctx, *argtys)``, each argument converted to its declared type; returns the rule's bool.
    Typing a call compiles the rule function; loading the caller from the cache loads it."""
    @intrinsic
    def call_rule(typingctx, table, ctx, args):
        if not isinstance(args, types.BaseTuple) or len(args) != len(argtys):
            return None
        sig_args = (ctx, *argtys)
        _compile_rule(slot)

        def codegen(context, builder, signature, llargs):
            on_cache_load(context, _RULE_FUNCTIONS[slot][2])
            table_ptr = builder.inttoptr(llargs[0], cgutils.intp_t.as_pointer())
            address = builder.load(builder.gep(table_ptr, [cgutils.intp_t(slot)]))
            values = [llargs[1]] + [context.cast(builder, v, t, want) for v, t, want in
                                    zip(cgutils.unpack_tuple(builder, llargs[2]), args.types, argtys)]
            _, result = call_by_address(context, builder, address, types.boolean, sig_args, values)
            return result

        return types.boolean(table, ctx, args), codegen

    @python_twin(call_rule)
    def call_rule_py(table, ctx, args):
        # Interpret mode: the rule function itself, on Python integers (exact where int64 and uint64 mix).
        return bool(python_function(_RULE_FUNCTIONS[slot][0].py_func)(ctx, *(int(v) for v in args)))

    return call_rule


def rule_table() -> np.ndarray:
    """The addresses of the rule functions compiled for a checked lane, by slot (0 for one no
    kernel of the process calls); compiling or loading a kernel fills its rules' slots in.  Where
    a kernel loaded from the cache cannot bring its rules (see ``carries_reload_hooks``), the first
    checked launch compiles them all."""
    if not carries_reload_hooks() and not _RULE_TABLE[:len(_RULE_FUNCTIONS)].all():
        for slot in range(len(_RULE_FUNCTIONS)):
            _compile_rule(slot)
    return _RULE_TABLE


@jit(always_inline=True)
def is_ub(ctx, addr):
    return ctx.ub_addr <= addr and addr < ctx.ub_addr + ctx.ub_size


@jit(always_inline=True)
def count_ok(ctx, prim, operand, value, which, least):
    """A count the device takes unsigned is at least ``least`` (0, or 1 where the API forbids 0);
    ``which`` names it (an index into ``rules.COUNTS``)."""
    if value < least:
        report.count_out_of_range(ctx, prim, operand, count=which, value=value)
        return False
    return True
