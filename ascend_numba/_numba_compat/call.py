"""The one call-by-address intrinsic: compiled code calling a Numba-compiled function whose
machine code is at an address known only at run time (a kernel body from the shared launchers,
a checked rule from the lane's rule table).

The callee is called with Numba's own calling convention (a return slot, an exception slot and
the arguments flattened by Numba's argument packer), which is what Numba's private
``BaseCallConv._get_arg_packer`` and ``get_function_type`` describe; nothing else here knows it.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils

from . import NumbaCompatError, private_api_message

__all__ = ["call_by_address", "borrowed"]


def call_by_address(context, builder, address, restype, argtys, values):
    """Codegen: call the function compiled for ``restype(*argtys)`` at ``address`` (an LLVM
    integer) with ``values`` (LLVM values of ``argtys``); returns ``(status, result)``, the
    callee's status code (0, or that of an exception it raised) and its return value."""
    try:
        fnty = context.call_conv.get_function_type(restype, argtys)
        retty, excty = fnty.args[0].pointee, fnty.args[1].pointee
        packed = context.call_conv._get_arg_packer(argtys).as_arguments(builder, values)
    except (AttributeError, TypeError) as exc:
        raise NumbaCompatError(private_api_message("Numba's calling convention (call by address)", exc)) from None
    fn = builder.inttoptr(address, fnty.as_pointer())
    retval = cgutils.alloca_once(builder, retty)
    builder.store(cgutils.get_null_value(retty), retval)
    excinfo = cgutils.alloca_once(builder, excty, name="excinfo")
    status = builder.call(fn, [retval, excinfo, *packed])
    return status, context.get_returned_value(builder, restype, builder.load(retval))


def borrowed(context, builder, ty, value):
    """An array value passed on without its reference count (its meminfo null): the caller holds
    the array for the whole call, and every array passed between compiled functions would
    otherwise cost an atomic increment and decrement of a count all lanes share."""
    if not isinstance(ty, types.Array):
        return value
    ary = context.make_array(ty)(context, builder, value=value)
    ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
    return ary._getvalue()

