"""A tiny run of the private path, for a Numba outside the tested range (see
:func:`ascend_numba._numba_compat.jit.uses_public_jit`): a link-only helper that LLVM inlines,
called from a function with machine code of its own, called by address from a function Python
calls.  Compiled in memory; raises whatever the private path raises."""

from __future__ import annotations

from numba import types
from numba.extending import intrinsic

from .call import call_by_address
from .jit import function_address, private_dispatcher


@intrinsic
def _call(typingctx, addr, x):
    def codegen(context, builder, signature, args):
        status, result = call_by_address(context, builder, args[0], types.int64, (types.int64,), [args[1]])
        return result

    return types.int64(addr, x), codegen


def _caller(addr, x):
    return _call(addr, x)


def run_probe() -> None:
    """Raise unless the private path compiles and computes ``(x + 1) * 2``."""
    def plus_one(x):
        return x + 1

    helper = private_dispatcher(plus_one, always_inline=True, cache=False)

    def twice_plus_one(x):
        return helper(x) * 2

    body = private_dispatcher(twice_plus_one, addressable=True, cache=False)
    caller = private_dispatcher(_caller, python=True, cache=False)
    body.compile((types.int64,))
    got = caller(function_address(body.overloads[(types.int64,)]), 20)
    if got != 42:
        raise RuntimeError(f"a function called by address returned {got}, not 42")
