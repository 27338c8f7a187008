"""The op registry shared by the golden CLI, the pytest fixture, the tests and the benchmarks.

Each entry knows its inputs, attributes and outputs, and computes them two ways:
``run`` with ascend_numba (the kernel's bits) and ``reference`` with plain NumPy
(what a hand-written ``gen_data.py`` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..ops.adamw import apply_adamw
from ..ops.tile import repeat, tile
from ..ops.ttrans import convert_format, transpose2d
from ..host.ttrans_plan import CONVERSIONS, FORMAT_NDIM, check_given_c0, conversion_output_shape, resolve_c0
from ..reference import adamw as adamw_ref
from ..reference import tile as tile_ref
from ..reference import ttrans as ttrans_ref

__all__ = ["OpSpec", "REGISTRY"]

_ALL = {"float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64", "bool", "complex64", "complex128"}
_HALF_AND_FLOAT = {"float32", "float16", "bfloat16"}
_TTRANS = {"float32", "int32", "uint32", "float16", "bfloat16", "int16", "uint16", "int8", "uint8"}
REQUIRED = object()


@dataclass(frozen=True)
class OpSpec:
    name: str
    dtypes: frozenset
    attrs: dict              # name -> (check(value) -> value, default or REQUIRED)
    inputs: Callable[[dict], tuple]
    outputs: tuple[str, ...]
    shapes: Callable[[dict, dict], tuple | None]  # -> (field, problem) or None
    run: Callable[[dict, dict], dict]
    reference: Callable[[dict, dict], dict]
    output_shapes: Callable[[dict, dict, int], dict]  # (input shapes, attrs, itemsize) -> output shapes

    def check_attrs(self, given: dict) -> dict:
        """Defaults filled in; raises ValueError((field, problem))."""
        for key in given:
            if key not in self.attrs:
                raise ValueError(key, f"unknown attribute of {self.name} (attributes: {sorted(self.attrs)})")
        out = {}
        for key, (check, default) in self.attrs.items():
            if key not in given:
                if default is REQUIRED:
                    raise ValueError(key, "missing")
                out[key] = default
                continue
            try:
                out[key] = check(given[key])
            except (TypeError, ValueError) as e:
                raise ValueError(key, str(e)) from None
        return out

    def input_names(self, attrs: dict) -> tuple:
        return self.inputs(attrs)

    def check_shapes(self, shapes: dict, attrs: dict):
        return self.shapes(shapes, attrs)


def _int_list(value) -> list:
    if isinstance(value, bool) or not isinstance(value, (int, list)):
        raise TypeError(f"must be an integer or a list of integers, got {value!r}")
    values = [value] if isinstance(value, int) else value
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise ValueError(f"must hold non-negative integers, got {value!r}")
    return values


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"must be a number, got {value!r}")
    return float(value)


def _flag(value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"must be true or false, got {value!r}")
    return value


def _choice(*options):
    def check(value):
        if value not in options:
            raise ValueError(f"must be one of {list(options)}, got {value!r}")
        return value
    return check


def _opt_int(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"must be a positive integer, got {value!r}")
    return value


def _no_shape_rule(shapes, attrs):
    return None


def _repeat_shapes(shapes, attrs):
    if len(attrs["repeats"]) < len(shapes["x"]):
        return "attrs.repeats", "needs at least one entry per dim of x"
    return None


def _ndim_rule(ndim: int):
    def rule(shapes, attrs):
        if len(shapes["x"]) != ndim:
            return "inputs.x.shape", f"must have {ndim} dims, got {len(shapes['x'])}"
        return None
    return rule


def _convert_shapes(shapes, attrs):
    if (attrs["src"], attrs["dst"]) not in CONVERSIONS:
        return "attrs.dst", f"{attrs['src']} -> {attrs['dst']} is not a supported conversion"
    return _ndim_rule(FORMAT_NDIM[attrs["src"]])(shapes, attrs)


def _tile_out(shapes, attrs, itemsize):
    shape, reps = tuple(shapes["x"]), tuple(attrs["reps"])
    n = max(len(shape), len(reps))
    shape, reps = (1,) * (n - len(shape)) + shape, (1,) * (n - len(reps)) + reps
    return {"y": tuple(s * r for s, r in zip(shape, reps))}


def _repeat_out(shapes, attrs, itemsize):
    return _tile_out(shapes, {"reps": attrs["repeats"]}, itemsize)


def _convert_out(shapes, attrs, itemsize):
    x = tuple(shapes["x"])
    c0 = attrs["c0"]
    try:
        if attrs["src"] in ("NCHW", "GNCHW", "NCDHW"):
            c0 = resolve_c0(c0, itemsize, allow_four=attrs["src"] != "NCDHW")
        else:
            check_given_c0(c0, x[-1])
    except ValueError as e:
        raise ValueError("attrs.c0", str(e)) from None
    if attrs["dst"] in ("NCHW", "GNCHW") and attrs["c"] is not None and attrs["c"] > x[-4] * x[-1]:
        raise ValueError("attrs.c", f"must be at most C1*C0 = {x[-4] * x[-1]}, got {attrs['c']}")
    return {"y": conversion_output_shape(x, itemsize, attrs["src"], attrs["dst"], c0=c0, n0=attrs["n0"],
                                         c=attrs["c"])}


def _adamw_inputs(attrs):
    return ("var", "m", "v", "grad") + (("max_grad_norm",) if attrs["amsgrad"] else ())


def _adamw_shapes(shapes, attrs):
    for name, shape in shapes.items():
        if shape != shapes["var"]:
            return f"inputs.{name}.shape", f"must equal var's shape {list(shapes['var'])}"
    return None


_ADAMW_SCALARS = ("beta1_power", "beta2_power", "lr", "weight_decay", "beta1", "beta2", "epsilon")


def _adamw_run(inputs, attrs):
    args = [inputs[n].copy() for n in ("var", "m", "v")]
    out = apply_adamw(*args, *(attrs[k] for k in _ADAMW_SCALARS), inputs["grad"],
                                inputs.get("max_grad_norm"), amsgrad=attrs["amsgrad"], maximize=attrs["maximize"],
                                variant=attrs["variant"])
    return dict(zip(("var", "m", "v"), out))


def _adamw_reference(inputs, attrs):
    out = adamw_ref.apply_adamw_reference(inputs["var"], inputs["m"], inputs["v"],
                                          *(attrs[k] for k in _ADAMW_SCALARS), inputs["grad"],
                                          inputs.get("max_grad_norm"), amsgrad=attrs["amsgrad"],
                                          maximize=attrs["maximize"], variant=attrs["variant"])
    return dict(zip(("var", "m", "v"), out))


def _convert_run(inputs, attrs):
    return {"y": convert_format(inputs["x"], attrs["src"], attrs["dst"], c0=attrs["c0"], n0=attrs["n0"],
                                           c=attrs["c"])}


def _convert_reference(inputs, attrs):
    x, dst = inputs["x"], attrs["dst"]
    c0 = attrs["c0"] or 32 // x.itemsize
    if dst in ("NC1HWC0", "GNC1HWC0"):
        return {"y": ttrans_ref.nchw_to_nc1hwc0(x, c0)}
    if dst in ("NCHW", "GNCHW"):
        return {"y": ttrans_ref.nc1hwc0_to_nchw(x, attrs["c"])}
    if dst == "FRACTAL_Z":
        return {"y": ttrans_ref.nc1hwc0_to_fractal_z(x, attrs["n0"])}
    return {"y": ttrans_ref.ncdhw_to_fractal_z_3d(x, c0, attrs["n0"])}


REGISTRY: dict[str, OpSpec] = {spec.name: spec for spec in (
    OpSpec("tile", frozenset(_ALL), {"reps": (_int_list, REQUIRED)}, lambda a: ("x",), ("y",), _no_shape_rule,
           lambda i, a: {"y": tile(i["x"], a["reps"])},
           lambda i, a: {"y": np.tile(i["x"], a["reps"])}, _tile_out),
    OpSpec("repeat", frozenset(_ALL), {"repeats": (_int_list, REQUIRED)}, lambda a: ("x",), ("y",), _repeat_shapes,
           lambda i, a: {"y": repeat(i["x"], a["repeats"])},
           lambda i, a: {"y": tile_ref.repeat_reference(i["x"], a["repeats"])}, _repeat_out),
    OpSpec("apply_adamw", frozenset(_HALF_AND_FLOAT),
           {**{k: (_number, REQUIRED) for k in _ADAMW_SCALARS}, "amsgrad": (_flag, False),
            "maximize": (_flag, False), "variant": (_choice("seed", "a2"), "seed")},
           _adamw_inputs, ("var", "m", "v"), _adamw_shapes, _adamw_run, _adamw_reference,
           lambda s, a, i: {n: tuple(s["var"]) for n in ("var", "m", "v")}),
    OpSpec("transpose2d", frozenset(_TTRANS), {}, lambda a: ("x",), ("y",), _ndim_rule(2),
           lambda i, a: {"y": transpose2d(i["x"])},
           lambda i, a: {"y": ttrans_ref.transpose2d_reference(i["x"])},
           lambda s, a, i: {"y": tuple(reversed(s["x"]))}),
    OpSpec("convert_format", frozenset(_TTRANS),
           {"src": (_choice(*sorted({s for s, _ in CONVERSIONS})), REQUIRED),
            "dst": (_choice(*sorted({d for _, d in CONVERSIONS})), REQUIRED),
            "c0": (_opt_int, None), "n0": (_opt_int, 16), "c": (_opt_int, None)},
           lambda a: ("x",), ("y",), _convert_shapes, _convert_run, _convert_reference, _convert_out),
)}


def run(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> dict[str, np.ndarray]:
    """Compute an op's outputs with ascend_numba."""
    return REGISTRY[op].run(inputs, attrs)
