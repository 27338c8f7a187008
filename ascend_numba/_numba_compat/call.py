"""The one call-by-address intrinsic: compiled code calling a Numba-compiled function whose
machine code is at an address known only at run time (a kernel body's entry from the shared
launchers, a kernel body from its entry, a checked rule from the lane's rule table).

The callee is called with Numba's own calling convention (a return slot, an exception slot and
the arguments flattened by Numba's argument packer), which is what Numba's private
``BaseCallConv._get_arg_packer`` and ``get_function_type`` describe; nothing else here knows it.
An argument of type :class:`CompileTimeTypes` flattens to nothing, so a function compiled with
one is called by address as if it had not got it.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import models, register_model

from . import NumbaCompatError, private_api_message

__all__ = ["call_by_address", "raised_exception", "CompileTimeTypes", "array_value"]


class CompileTimeTypes(types.Type):
    """An argument that exists only while compiling: it carries ``held`` (a tuple of Numba types)
    to the callee's typing and takes no machine argument."""

    def __init__(self, held: tuple):
        self.held = tuple(held)
        super().__init__(name=f"CompileTimeTypes{self.held}")


@register_model(CompileTimeTypes)
class _NoArgumentModel(models.DataModel):
    # As Numba's model for an omitted argument, with an empty value for the local variable.
    def get_value_type(self):
        return ir.LiteralStructType([])

    def get_data_type(self):
        return ir.LiteralStructType([])

    def get_argument_type(self):
        return ()

    def as_argument(self, builder, value):
        return ()

    def from_argument(self, builder, value):
        return ir.Constant(self.get_value_type(), None)


def array_value(context, builder, aryty, data, shape, strides):
    """Codegen: an array of type ``aryty`` over the memory at ``data`` (an i64 address) with
    ``shape`` and ``strides`` (lists of i64 values), without a reference count (its meminfo null:
    whoever made the memory holds it for the whole call)."""
    from numba.np.arrayobj import populate_array

    ary = context.make_array(aryty)(context, builder)
    try:
        populate_array(ary, data=builder.inttoptr(data, ary.data.type), shape=list(shape), strides=list(strides),
                       itemsize=context.get_abi_sizeof(context.get_data_type(aryty.dtype)), meminfo=None)
    except (AttributeError, TypeError) as exc:
        raise NumbaCompatError(private_api_message("Numba's array structure (populate_array)", exc)) from None
    return ary._getvalue()


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
