"""A kernel body's entry: what lets one launcher serve every kernel.

The host packs a launch's GM arguments and tiling into one payload of 8-byte words
(:func:`payload_packer`): for a tensor (and the tiling) the address of its ``ndarray`` object,
for a scalar its bits.  A body's entry, compiled for each body signature, unpacks the payload into
the body's arguments and calls the body by address.  The types it unpacks are a compile-time
argument (:class:`~ascend_numba._numba_compat.call.CompileTimeTypes`), so every entry is called by
address the same way, and the launchers (:mod:`.launchers`) that call entries are compiled once
per kind of lane for all kernels: a launcher compiled per argument types cost 0.6-0.9 CPU s of
each kernel's first call (a parallel loop), 92 times in the test suite.

The entry reads a tensor's data address, shape and strides from its ``ndarray`` object, as
NumPy's C macros ``PyArray_DATA``, ``PyArray_DIMS`` and ``PyArray_STRIDES`` do (the fields'
offsets are found and checked once, at import): an ``id()`` per tensor is all the host packs, where
reading the data address from Python cost 1.5-2 us a tensor (20 us for a tiling record's dtype).
"""

from __future__ import annotations

import ctypes
from typing import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._numba_compat.call import CompileTimeTypes, array_value, call_by_address
from .._numba_compat.extending import as_dtype, python_twin
from .._numba_compat.jit import jit
from .interpret import run_python

__all__ = ["kernel_entry", "entry_signature", "payload_packer", "call_entry"]

_I64 = ir.IntType(64)


def _ndarray_offsets() -> tuple[int, int, int]:
    """The byte offsets, in an ``ndarray`` object, of its data address and of the addresses of its
    shape and its strides (``PyArrayObject_fields``: ``data``, ``nd``, ``dimensions``, ``strides``)."""
    probe = np.zeros((3, 5), np.int16)[:, ::2]
    words = (ctypes.c_int64 * 8).from_address(id(probe))
    for data in range(1, 5):
        if words[data] == probe.ctypes.data:
            break
    else:
        raise ImportError("ascend_numba: this NumPy's ndarray object has no data address where NumPy's C API has it")
    dims, strides = data + 2, data + 3
    shape = tuple((ctypes.c_int64 * 2).from_address(words[dims]))
    steps = tuple((ctypes.c_int64 * 2).from_address(words[strides]))
    if (words[data + 1] & 0xFFFFFFFF, shape, steps) != (probe.ndim, probe.shape, probe.strides):
        raise ImportError("ascend_numba: this NumPy's ndarray object does not lay out its shape and strides as "
                          "NumPy's C API has them")
    return 8 * data, 8 * dims, 8 * strides


_DATA, _DIMS, _STRIDES = _ndarray_offsets()


def _field(builder, obj, offset: int):
    """The 8-byte field at ``offset`` in the object at ``obj`` (an i8 pointer)."""
    return builder.load(builder.bitcast(builder.gep(obj, [_I64(offset)]), _I64.as_pointer()))


@intrinsic
def _unpack_and_call(typingctx, ctx, payload, body, held):
    """Call the body at address ``body`` with ``ctx`` and the arguments of types ``held.held``
    unpacked from the payload at address ``payload``; returns the body's status (0, or the code
    of an exception it raised) and the address of the exception's record."""
    if not isinstance(held, CompileTimeTypes):
        return None
    argtys = (ctx, *held.held)

    def codegen(context, builder, signature, llargs):
        words = builder.inttoptr(llargs[1], _I64.as_pointer())

        values = [llargs[0]]
        for at, ty in enumerate(held.held):
            if isinstance(ty, (types.Array, types.Record)):  # an ndarray object; a record is a tiling's first
                obj = builder.inttoptr(builder.load(builder.gep(words, [_I64(at)])), ir.IntType(8).as_pointer())
                data = _field(builder, obj, _DATA)
            if isinstance(ty, types.Array):
                dims = builder.inttoptr(_field(builder, obj, _DIMS), _I64.as_pointer())
                steps = builder.inttoptr(_field(builder, obj, _STRIDES), _I64.as_pointer())
                values.append(array_value(context, builder, ty, data,
                                          [builder.load(builder.gep(dims, [_I64(k)])) for k in range(ty.ndim)],
                                          [builder.load(builder.gep(steps, [_I64(k)])) for k in range(ty.ndim)]))
            elif isinstance(ty, types.Record):
                values.append(builder.inttoptr(data, context.get_value_type(ty)))
            else:  # a scalar, its bits at the start of its word
                slot = builder.bitcast(builder.gep(words, [_I64(at)]), context.get_data_type(ty).as_pointer())
                values.append(context.unpack_value(builder, ty, slot))
        status, _, exception = call_by_address(context, builder, llargs[2], types.none, argtys, values,
                                               exception=True)
        return context.make_tuple(builder, signature.return_type, [builder.sext(status, _I64), exception])

    return types.UniTuple(types.int64, 2)(ctx, payload, body, held), codegen


@jit(addressable=True)
def kernel_entry(ctx, payload, body, held):
    """A body's entry (compiled for :func:`entry_signature`): its status and exception record."""
    return _unpack_and_call(ctx, payload, body, held)


def entry_signature(body_sig: tuple) -> tuple:
    """The signature of the entry for a body compiled for ``body_sig`` (its context type first)."""
    return (body_sig[0], types.uint64, types.uint64, CompileTimeTypes(body_sig[1:]))


def payload_packer(body_sig: tuple) -> Callable[[tuple, "np.ndarray | None"], np.ndarray]:
    """``pack(gm_args, tiling)``: the payload the entry for ``body_sig`` unpacks (the GM tensors
    and scalars, then the tiling when the body takes its record).  The payload holds the tensors'
    addresses, not references: the caller keeps them alive while the payload is in use."""
    scalars = [None if isinstance(ty, (types.Array, types.Record)) else as_dtype(ty) for ty in body_sig[1:]]
    if not any(dtype is not None for dtype in scalars):
        def pack_tensors(gm_args: tuple, tiling: "np.ndarray | None") -> np.ndarray:
            return np.array([*map(id, gm_args)] if tiling is None else [*map(id, gm_args), id(tiling)], np.int64)

        return pack_tensors
    bits = [None if dt is None else np.dtype(f"i{dt.itemsize}") for dt in scalars]

    def pack(gm_args: tuple, tiling: "np.ndarray | None") -> np.ndarray:
        words = [id(value) if dtype is None else int(np.asarray(value, dtype).view(as_int))
                 for value, dtype, as_int in zip(gm_args, scalars, bits)]
        if tiling is not None:
            words.append(id(tiling))
        return np.array(words, np.int64)

    return pack


@intrinsic
def call_entry(typingctx, entry, ctx, payload, body):
    """Call the entry at address ``entry`` for the body at address ``body`` on ``payload`` (an
    int64 array); returns what the body's call returned (see :func:`kernel_entry`)."""
    restype = types.UniTuple(types.int64, 2)

    def codegen(context, builder, signature, llargs):
        data = context.make_array(signature.args[2])(context, builder, llargs[2]).data
        values = [llargs[1], builder.ptrtoint(data, _I64), llargs[3]]
        _, result = call_by_address(context, builder, llargs[0], restype, (ctx, types.uint64, types.uint64), values)
        return result

    return restype(entry, ctx, payload, body), codegen


@python_twin(call_entry)
def call_entry_py(entry, ctx, payload, body):
    # Interpret mode: ``body`` is the interpreted body and ``payload`` its (GM arguments, record).
    return run_python(body, ctx, *payload)
