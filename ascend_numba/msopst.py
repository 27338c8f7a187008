"""msOpST expected-data functions: the kernels' exact bits for the op types the twin implements.

Point a case's ``calc_expect_func_file`` at this file (``ascend-numba msopst expect-func Tile``
prints the string)::

    "calc_expect_func_file": "/path/to/ascend_numba/msopst.py:Tile"

msOpST imports this file by its path, as a top-level module, so it imports the package by its
absolute name.  Each function is named as msOpST names the op type, with CANN's input, output and
attribute names (the op definitions, ``REG_OP(...)``, of the CANN op_proto headers):

=============  ==========================================================  ==========  ======================================
op type        inputs                                                      outputs     attributes
=============  ==========================================================  ==========  ======================================
Tile           x, multiples                                                y
TileD          x                                                           y           multiples
ApplyAdamW     var, m, v, beta1_power, beta2_power, lr, weight_decay,      var, m, v   amsgrad=False, maximize=False
               beta1, beta2, epsilon, grad, max_grad_norm (optional)
TransData      src                                                         dst         src_format, dst_format,
                                                                                       src_subformat=0, dst_subformat=0,
                                                                                       groups=1
Transpose      x, perm                                                     y
=============  ==========================================================  ==========  ======================================

Both calling styles in use are accepted.  Keywords: every input, output and attribute by name;
inputs and outputs are dicts (``value`` for inputs, and ``shape``, ``dtype``, ``format``,
``ori_shape``, ``ori_format``), attributes plain values.  Positional: the inputs, then the
outputs, then the attribute values, each in the order above (an input's ``value`` may be the
array itself; an attribute may come as ``{"value": v}``; outputs and trailing attributes may be
left out).  An absent optional input may be left out or, as op_test_frame passes it, given as
None in its place (``ApplyAdamW(var, ..., grad, None, var_out, m_out, v_out, False, False)``) or
as its keyword; a required input given as None is an error naming it.  Each function returns a
list of NumPy arrays, one per output.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

import ascend_numba as an
from ascend_numba.dtypes import TYPE_ALIASES, dtype_by_name

__all__ = ["SIGNATURES", "OpSignature", "MsOpstError", "Tile", "TileD", "ApplyAdamW", "TransData", "Transpose",
           "expect_func"]

_REQUIRED = object()


class MsOpstError(ValueError):
    """An expected-data call this twin cannot serve, naming the op, the argument and why."""


@dataclass(frozen=True)
class OpSignature:
    """An op type's inputs, outputs and attributes as CANN defines them (in order)."""

    inputs: tuple
    outputs: tuple
    attrs: dict = field(default_factory=dict)  # name -> default (_REQUIRED: none)
    optional: tuple = ()  # optional inputs (always the last ones)


SIGNATURES = {
    "Tile": OpSignature(("x", "multiples"), ("y",)),
    "TileD": OpSignature(("x",), ("y",), {"multiples": _REQUIRED}),
    "ApplyAdamW": OpSignature(("var", "m", "v", "beta1_power", "beta2_power", "lr", "weight_decay", "beta1", "beta2",
                               "epsilon", "grad", "max_grad_norm"), ("var", "m", "v"),
                              {"amsgrad": False, "maximize": False}, optional=("max_grad_norm",)),
    "TransData": OpSignature(("src",), ("dst",), {"src_format": _REQUIRED, "dst_format": _REQUIRED, "src_subformat": 0,
                                                 "dst_subformat": 0, "groups": 1}),
    "Transpose": OpSignature(("x", "perm"), ("y",)),
}


# TransData attributes the twin's conversions take at their defaults only; the conversions that
# drop channel padding, whose output description says how many channels to keep.
_TRANSDATA_FIXED = ("groups", "src_subformat", "dst_subformat")
_TRANSDATA_CROPS = (("NC1HWC0", "NCHW"), ("GNC1HWC0", "GNCHW"))


def transdata_fixed_attr(attrs: dict) -> tuple[str, object] | None:
    """The first of TransData's ``groups``, ``src_subformat``, ``dst_subformat`` set to other than
    its default, as ``(name, default)``, or None."""
    defaults = SIGNATURES["TransData"].attrs
    return next(((n, defaults[n]) for n in _TRANSDATA_FIXED if attrs.get(n, defaults[n]) != defaults[n]), None)


def transdata_channels(src_format, dst_format, dst) -> int | None:
    """The channels a (G)NC1HWC0 -> (G)NCHW conversion keeps: C of the output description's
    shape (``dst``, a dict with ``shape``), or None."""
    if (src_format, dst_format) in _TRANSDATA_CROPS and isinstance(dst, dict) and dst.get("shape"):
        return int(dst["shape"][-3])
    return None


def expect_func(op: str) -> str:
    """The ``calc_expect_func_file`` string for ``op``: this file's path and the function."""
    if op not in SIGNATURES:
        raise MsOpstError(f"op type {op!r} is not one the twin implements; op types: {', '.join(SIGNATURES)}")
    return f"{os.path.abspath(__file__)}:{op}"


def _is_input(value) -> bool:
    """An input as msOpST passes one: an array, or a dict holding one (or a list) as ``value``."""
    if isinstance(value, np.ndarray):
        return True
    return isinstance(value, dict) and isinstance(value.get("value"), (np.ndarray, list, tuple))


def _absent(op: str, name: str) -> None:
    """An input given as None, op_test_frame's way of passing an absent optional input: fine for
    an optional input, an error naming a required one."""
    sig = SIGNATURES[op]
    if name not in sig.optional:
        optional = f"; optional inputs: {', '.join(sig.optional)}" if sig.optional else "; it has no optional inputs"
        raise MsOpstError(f"{op}: input {name!r} is None, but it is required{optional}")


def _bind(op: str, args: tuple, kwargs: dict) -> tuple[dict, dict, dict]:
    """``(inputs, outputs, attrs)`` by name from either calling style."""
    sig = SIGNATURES[op]
    inputs, outputs, attrs = {}, {}, {}
    required = [n for n in sig.inputs if n not in sig.optional]
    rest = list(args)
    position = 0  # inputs are matched by position, a None included: it holds its input's place
    while rest and position < len(sig.inputs) and (rest[0] is None or _is_input(rest[0])):
        name, value = sig.inputs[position], rest.pop(0)
        position += 1
        if value is None:
            _absent(op, name)
        else:
            inputs[name] = value
    while rest and isinstance(rest[0], dict) and "value" not in rest[0] and len(outputs) < len(sig.outputs):
        outputs[sig.outputs[len(outputs)]] = rest.pop(0)
    names = list(sig.attrs)
    if len(rest) > len(names):
        raise MsOpstError(f"{op}: {len(args)} positional arguments; it takes its inputs ({', '.join(sig.inputs)}), "
                          f"outputs ({', '.join(sig.outputs)}) and attributes ({', '.join(names) or 'none'})")
    attrs.update(zip(names, rest))
    for name, value in kwargs.items():
        if name in sig.inputs and _is_input(value):
            inputs[name] = value
        elif name in sig.inputs and value is None and name not in inputs:  # else an output's (var, m, v)
            _absent(op, name)
        elif name in sig.outputs:
            outputs[name] = value
        elif name in sig.attrs:
            attrs[name] = value
        else:
            raise MsOpstError(f"{op}: unknown argument {name!r}; inputs {list(sig.inputs)}, outputs "
                              f"{list(sig.outputs)}, attributes {list(sig.attrs)}")
    for name in required:
        if name not in inputs:
            raise MsOpstError(f"{op}: input {name!r} is missing (inputs: {', '.join(sig.inputs)})")
    for name, default in sig.attrs.items():
        value = attrs.get(name, default)
        if isinstance(value, dict) and "value" in value:
            value = value["value"]
        if value is _REQUIRED:
            raise MsOpstError(f"{op}: attribute {name!r} is required")
        attrs[name] = value
    return inputs, outputs, attrs


def _array(op: str, name: str, given) -> np.ndarray:
    """An input's array, in the dtype its description names (a bfloat16 input may come as its
    uint16 bits)."""
    value = given.get("value") if isinstance(given, dict) else given
    arr = np.asarray(value)
    dtype_name = given.get("dtype") if isinstance(given, dict) else None
    if dtype_name:
        try:
            want = dtype_by_name(TYPE_ALIASES.get(dtype_name, dtype_name))
        except TypeError:
            raise MsOpstError(f"{op}: input {name!r} has dtype {dtype_name!r}, not a NumPy or ml_dtypes type") from None
        if arr.dtype != want:
            arr = arr.view(want) if arr.dtype.itemsize == want.itemsize and arr.dtype.kind in "uV" else arr.astype(want)
    shape = given.get("shape") if isinstance(given, dict) else None
    if shape is not None and arr.size == int(np.prod(shape, dtype=np.int64)) and arr.shape != tuple(shape):
        arr = arr.reshape(shape)
    return arr


def _ints(op: str, name: str, given) -> list[int]:
    value = given.get("value") if isinstance(given, dict) else given
    try:
        values = [int(v) for v in np.asarray(value).reshape(-1)]
    except (TypeError, ValueError):
        raise MsOpstError(f"{op}: {name} must be a list of integers, got {value!r}") from None
    return values


def Tile(*args, **kwargs) -> list[np.ndarray]:  # noqa: N802 - msOpST's op type name
    """Tile: ``y = tile(x, multiples)`` (the Tile kernel)."""
    inputs, _, _ = _bind("Tile", args, kwargs)
    return [an.tile(_array("Tile", "x", inputs["x"]), _ints("Tile", "multiples", inputs["multiples"]))]


def TileD(*args, **kwargs) -> list[np.ndarray]:  # noqa: N802
    """TileD: Tile with ``multiples`` as an attribute."""
    inputs, _, attrs = _bind("TileD", args, kwargs)
    return [an.tile(_array("TileD", "x", inputs["x"]), _ints("TileD", "multiples", attrs["multiples"]))]


def ApplyAdamW(*args, **kwargs) -> list[np.ndarray]:  # noqa: N802
    """ApplyAdamW: the updated ``var, m, v`` (the seed's evaluation order, ``variant="seed"``)."""
    from ascend_numba.ops.adamw.api import SCALAR_NAMES  # with the op: Numba loads when a kernel runs

    inputs, _, attrs = _bind("ApplyAdamW", args, kwargs)
    tensors = {n: _array("ApplyAdamW", n, inputs[n]) for n in ("var", "m", "v", "grad")}
    scalars = {n: _array("ApplyAdamW", n, inputs[n]) for n in SCALAR_NAMES}
    mgn = inputs.get("max_grad_norm")
    mgn = None if mgn is None else _array("ApplyAdamW", "max_grad_norm", mgn)
    var, m, v = an.apply_adamw(tensors["var"], tensors["m"], tensors["v"], *(scalars[n] for n in SCALAR_NAMES),
                               tensors["grad"], mgn, amsgrad=bool(attrs["amsgrad"]), maximize=bool(attrs["maximize"]),
                               inplace=False)
    return [var, m, v]


def TransData(*args, **kwargs) -> list[np.ndarray]:  # noqa: N802
    """TransData: the seven TTRANS format conversions (``convert_format``)."""
    inputs, outputs, attrs = _bind("TransData", args, kwargs)
    fixed = transdata_fixed_attr(attrs)
    if fixed is not None:
        name, plain = fixed
        raise MsOpstError(f"TransData: attribute {name}={attrs[name]!r}; the twin's conversions take {plain}")
    src = _array("TransData", "src", inputs["src"])
    src_format, dst_format = str(attrs["src_format"]), str(attrs["dst_format"])
    crop = transdata_channels(src_format, dst_format, outputs.get("dst"))
    try:
        return [an.convert_format(src, src_format, dst_format, c=crop)]
    except (ValueError, TypeError) as e:
        raise MsOpstError(f"TransData: {e}") from None


def Transpose(*args, **kwargs) -> list[np.ndarray]:  # noqa: N802
    """Transpose: what the TTRANS kernel does, a 2-D transpose (``perm`` [1, 0])."""
    inputs, _, _ = _bind("Transpose", args, kwargs)
    x = _array("Transpose", "x", inputs["x"])
    perm = _ints("Transpose", "perm", inputs["perm"])
    if x.ndim != 2 or perm != [1, 0]:
        raise MsOpstError(f"Transpose: perm {perm} on a {x.ndim}-D x; the twin's TTRANS kernel transposes 2-D "
                          "tensors, perm [1, 0] only")
    return [an.transpose2d(x)]
