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

__all__ = ["call_by_address", "borrowed", "raised_exception"]


def call_by_address(context, builder, address, restype, argtys, values, *, exception=False):
    """Codegen: call the function compiled for ``restype(*argtys)`` at ``address`` (an LLVM
    integer) with ``values`` (LLVM values of ``argtys``); returns ``(status, result)``, the
    callee's status code (0, or that of an exception it raised) and its return value, and with
    ``exception`` a third value: the address (i64) of the exception record the callee left, for
    :func:`raised_exception` (meaningful when the status is not 0)."""
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
    builder.store(cgutils.get_null_value(excty), excinfo)
    status = builder.call(fn, [retval, excinfo, *packed])
    result = context.get_returned_value(builder, restype, builder.load(retval))
    if exception:
        return status, result, builder.ptrtoint(builder.load(excinfo), cgutils.intp_t)
    return status, result


def raised_exception(address: int) -> BaseException | None:
    """The exception a compiled function raised, rebuilt from the record at ``address`` (Numba's
    ``excinfo_t``: the pickled ``(class, args, location)`` and its size first): its class and,
    for a message fixed at compile time, its arguments; a message built at run time is replaced
    by a note saying so.  None when there is no record or it cannot be read."""
    import ctypes

    if not address:
        return None
    try:
        data_ptr = ctypes.c_void_p.from_address(address).value
        size = ctypes.c_int32.from_address(address + ctypes.sizeof(ctypes.c_void_p)).value
        if not data_ptr or not 0 < size < 1 << 24:
            return None
        from numba.core import serialize

        info = serialize.loads(ctypes.string_at(data_ptr, size))
        cls, args = info[0], info[1] if len(info) > 1 else ()
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return None
        if not all(isinstance(a, (str, int, float, bool, type(None))) for a in (args or ())):
            args = ("(a message built from run-time values)",)
        return cls(*(args or ()))
    except Exception:  # noqa: BLE001 - a record this Numba lays out differently: no details
        return None


def borrowed(context, builder, ty, value):
    """An array value passed on without its reference count (its meminfo null): the caller holds
    the array for the whole call, and every array passed between compiled functions would
    otherwise cost an atomic increment and decrement of a count all lanes share."""
    if not isinstance(ty, types.Array):
        return value
    ary = context.make_array(ty)(context, builder, value=value)
    ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
    return ary._getvalue()

