"""Golden case files: schema, validation and deterministic input generation.

A case file (YAML or JSON) holds ``cases``, a list of mappings::

    cases:
      - name: tile_fp16              # unique; [A-Za-z0-9_.-]
        op: tile                     # tile | repeat | apply_adamw | transpose2d | convert_format
        dtype: float16               # the dtype of every input
        seed: 7                      # default 0
        inputs:                      # every input the op takes
          x: {shape: [256, 64], dist: {uniform: [-1, 1]}}
        attrs: {reps: [2, 3]}        # the op's attributes (see the registry)

Distributions: ``{uniform: [lo, hi]}``, ``{normal: [mean, std]}``,
``{integers: [lo, hi]}`` (inclusive), ``{special: [v, ...]}`` (values drawn from the
list; "inf", "-inf", "nan" allowed), ``{beta: [a, b]}``, ``{laplace: [loc, scale]}``,
``{triangular: [lo, hi]}`` (its peak drawn once per tensor, uniform in [lo, hi], as msOpST
does), ``{relu: [lo, hi]}``, ``{sigmoid: [lo, hi]}``, ``{tanh: [lo, hi]}`` (the activation of
a uniform draw in [lo, hi]), ``{softmax: [lo, hi]}`` (exp of uniform draws over their sum across
the whole tensor), ``{values: [v, ...]}`` (exactly these values, one per element) and
``{file: path}`` (the tensor's raw little-endian bytes), ``{bits: []}`` (random bit patterns of the
dtype, every finite value, never NaN or infinity).  An input that names no distribution gets its
op's default (the registry entry's ``default_for``: ``bits`` for data movement, training-like
values for ApplyAdamW); ``ascend-numba golden --explain`` prints what each input will be drawn by.
``convert: truncate`` (default ``round``) turns drawn values into an integer or bool dtype
toward zero, as NumPy's ``astype`` does (msOpST's data generator).  A distribution must draw
values the case's dtype holds: bounds (and special values) past an integer dtype's range or a
float dtype's finite range, or a normal whose mean +- 6 std passes a float dtype's, are an error
(an integer dtype's normal draws are clipped to its range).  A file's problems are reported
together, each naming its case and field.

Inputs depend only on the seed, the input's name, its shape, dtype and
distribution -- never on the case name, the worker or the order of the run.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import math
import os
import re
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collections.abc import Mapping

import numpy as np
import yaml

from ..dtypes import DEVICE_DTYPES as DTYPES
from ..dtypes import float_bit_layout
from ..ops import REGISTRY as _OPS

__all__ = ["CaseError", "Case", "InputSpec", "load_cases", "parse_cases", "generate_inputs", "generate_range", "DTYPES",
           "REGISTRY", "INPUT_BLOCK", "case_bytes", "physical_memory", "io_pool"]

class _GoldenOps(Mapping):
    """The ops a case file can name: the registry's offered for goldens (a user op registered
    later too)."""

    def __getitem__(self, name):
        entry = _OPS[name]
        if not entry.golden:
            raise KeyError(name)
        return entry

    def __iter__(self):
        return (name for name, entry in _OPS.items() if entry.golden)

    def __len__(self):
        return sum(1 for _ in self)


REGISTRY = _GoldenOps()
DISTRIBUTIONS = ("uniform", "normal", "integers", "special", "beta", "laplace", "triangular", "relu", "sigmoid",
                 "softmax", "tanh", "values", "file", "bits")
_LISTS = ("special", "values")  # distributions whose parameter is a list of values
CONVERSIONS = ("round", "truncate")
# A case name is a directory name: no path separators, not hidden, never "." or "..".
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
MAX_ELEMENTS = (1 << 31) - 1  # the device's int32 element limit, per tensor


class CaseError(ValueError):
    """A case file problem, naming the case and the field."""


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]
    dist: str
    params: tuple
    convert: str = "round"  # drawn values into an integer or bool dtype: "round" or "truncate"

    def to_dict(self) -> dict:
        """The input as a case file writes it."""
        return {"shape": list(self.shape), "dist": {self.dist: self.params[0] if self.dist == "file"
                                                    else list(self.params)},
                **({"convert": self.convert} if self.convert != "round" else {})}


@dataclass(frozen=True)
class Case:
    name: str
    op: str
    dtype: str
    seed: int
    inputs: dict[str, InputSpec] = field(hash=False)
    attrs: dict[str, Any] = field(hash=False)

    def to_dict(self) -> dict:
        return {"name": self.name, "op": self.op, "dtype": self.dtype, "seed": self.seed,
                "inputs": {k: v.to_dict() for k, v in self.inputs.items()},
                "attrs": self.attrs}


def _fail(case: str, fld: str, problem: str):
    raise CaseError(f"case {case!r}: field {fld!r}: {problem}")


def _parse_input(case: str, name: str, raw, dtype: str | None = None, default: dict | None = None) -> InputSpec:
    where = f"inputs.{name}"
    if not isinstance(raw, dict):
        _fail(case, where, "must be a mapping with 'shape' (and optionally 'dist')")
    unknown = set(raw) - {"shape", "dist", "convert"}
    if unknown:
        _fail(case, f"{where}.{sorted(unknown)[0]}", "unknown field")
    if "shape" not in raw:
        _fail(case, f"{where}.shape", "missing")
    shape = raw["shape"]
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                              for s in shape):
        _fail(case, f"{where}.shape", f"must be a list of non-negative integers, got {shape!r}")
    if math.prod(shape) > MAX_ELEMENTS:
        _fail(case, f"{where}.shape", f"{shape} holds {math.prod(shape)} elements, past the device's limit of "
                                      f"{MAX_ELEMENTS} per tensor")
    dist = raw.get("dist", default or {"uniform": [-1, 1]})
    if not isinstance(dist, dict) or len(dist) != 1:
        _fail(case, f"{where}.dist", f"must be one of {{{', '.join(DISTRIBUTIONS)}: [...]}}")
    (kind, params), = dist.items()
    if kind not in DISTRIBUTIONS:
        _fail(case, f"{where}.dist", f"unknown distribution {kind!r}; use one of {DISTRIBUTIONS}")
    convert = raw.get("convert", "round")
    if convert not in CONVERSIONS:
        _fail(case, f"{where}.convert", f"must be one of {CONVERSIONS}, got {convert!r}")
    if kind == "file":
        return InputSpec(tuple(shape), kind, (_check_file(case, where, params, shape, dtype),), convert)
    if kind == "bits":
        if params != []:
            _fail(case, f"{where}.dist.bits", f"takes no parameters ({{bits: []}}), got {params!r}")
        return InputSpec(tuple(shape), kind, (), convert)
    if not isinstance(params, list) or (kind not in _LISTS and len(params) != 2) or not params:
        _fail(case, f"{where}.dist.{kind}", "needs [a, b]" if kind not in _LISTS else "needs a list of values")
    if kind == "values" and len(params) != math.prod(shape):
        _fail(case, f"{where}.dist.values", f"holds {len(params)} values for a shape of {math.prod(shape)} elements")
    if any(isinstance(p, bool) or not isinstance(p, (int, float, str)) for p in params):
        _fail(case, f"{where}.dist.{kind}", f"values must be numbers, got {params!r}")
    try:
        values = tuple(float(p) if not isinstance(p, int) else p for p in params)
    except (TypeError, ValueError):
        _fail(case, f"{where}.dist.{kind}", f"values must be numbers, got {params!r}")
    problem = _distribution_problem(kind, values)
    if problem:
        _fail(case, f"{where}.dist.{kind}", f"{problem}, got {list(params)}")
    if dtype is not None and "dist" in raw:
        problem = _range_problem(kind, values, dtype)
        if problem:
            _fail(case, f"{where}.dist.{kind}", f"{list(values)} {problem}")
    return InputSpec(tuple(shape), kind, values, convert)


def _check_file(case: str, where: str, path, shape, dtype: str | None) -> str:
    """A ``file`` distribution's path: readable, and as long as the tensor in ``dtype``."""
    if not isinstance(path, str):
        _fail(case, f"{where}.dist.file", f"must be a path, got {path!r}")
    try:
        size = os.stat(path).st_size
    except OSError as e:
        _fail(case, f"{where}.dist.file", f"{path}: {e.strerror}")
    if dtype is not None and size != math.prod(shape) * DTYPES[dtype].itemsize:
        _fail(case, f"{where}.dist.file", f"{path} holds {size} bytes; shape {list(shape)} of {dtype} needs "
                                          f"{math.prod(shape) * DTYPES[dtype].itemsize}")
    return path


# A normal draw lands past mean +- 6 std about once in 500 million, a Laplace draw past loc +- 21
# scales about as rarely: the bounds a float dtype must hold.
NORMAL_SPAN, LAPLACE_SPAN = 6, 21


def _range_problem(kind: str, values: tuple, dtype_name: str) -> str | None:
    """Why the distribution draws values ``dtype_name`` cannot hold (an integer dtype would wrap
    them, a float one turn them into inf), or None.  Normal draws into an integer dtype are
    clipped to its range (see :func:`_convert`): only the mean must lie in it."""
    if dtype_name == "bool":
        return None  # any value is False or True
    dtype = DTYPES[dtype_name]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi, what = int(info.min), int(info.max), f"{dtype_name} (integers {info.min} to {info.max})"
    else:
        real = np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype
        top = float(real.type(np.finfo(real).max)) if real.kind == "f" else float(_finite_max(dtype_name))
        lo, hi, what = -top, top, f"{dtype_name} (finite values up to {top:g} in magnitude)"
    if kind in _LISTS:
        bad = [v for v in values if not _special_fits(v, lo, hi, dtype.kind in "iu")]
        return f"holds values {dtype_name} cannot: {bad}; {what}" if bad else None
    a, b = values
    if kind in ("beta", "sigmoid", "softmax", "tanh"):
        return None  # within [-1, 1]
    if kind in ("normal", "laplace"):
        span = NORMAL_SPAN if kind == "normal" else LAPLACE_SPAN
        if dtype.kind in "iu":
            return None if lo <= a <= hi else f"has a mean outside {what}"
        if abs(a) + span * b > hi:
            return (f"reaches past {what} (center +- {span} x its scale); draws that far would be "
                    f"{'inf' if dtype.kind in 'fcV' else 'wrapped'}")
        return None
    if a < lo or b > hi:
        return f"is outside {what}; values past it would be {'wrapped' if dtype.kind in 'iu' else 'inf'}"
    return None


def _finite_max(dtype_name: str) -> float:
    """The largest finite value of an ml_dtypes float type (bfloat16, float8_*)."""
    import ml_dtypes

    return float(ml_dtypes.finfo(DTYPES[dtype_name]).max)


def _special_fits(value, lo, hi, integer: bool) -> bool:
    if isinstance(value, str) or not math.isfinite(float(value)):
        return not integer  # inf and nan: float types only
    if integer:
        return float(value) == int(value) and lo <= int(value) <= hi
    return lo <= float(value) <= hi


def _distribution_problem(kind: str, values: tuple) -> str | None:
    if kind in _LISTS:
        return None  # any value, inf and nan included
    lo, hi = values
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "needs finite bounds"
    if kind == "uniform" and lo > hi:
        return "needs low <= high"
    if kind == "uniform" and not math.isfinite(float(hi) - float(lo)):
        return "needs high - low within float64"
    if kind == "normal" and hi < 0:
        return "needs a standard deviation >= 0"
    if kind == "laplace" and hi < 0:
        return "needs a scale >= 0"
    if kind == "beta" and not (lo > 0 and hi > 0):
        return "needs a > 0 and b > 0"
    if kind in ("triangular", "relu", "sigmoid", "softmax", "tanh") and lo > hi:
        return "needs low <= high"
    if kind == "integers":
        if not (isinstance(lo, int) and isinstance(hi, int)):
            return "needs integer bounds"
        if lo > hi:
            return "needs low <= high"
        if not (-(1 << 63) <= lo and hi < (1 << 63)):
            return "needs bounds within int64"
    return None


def parse_cases(doc: Any) -> list[Case]:
    """Validate a loaded case document; raises CaseError listing every problem found, one line
    each, naming the case and the field."""
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise CaseError("top level must be a mapping with a 'cases' list")
    unknown = sorted(set(doc) - {"cases"})
    problems = [f"field {k!r}: unknown top-level field (a case file holds 'cases')" for k in unknown]
    cases, seen = [], set()
    for i, raw in enumerate(doc["cases"]):
        case = _parse_case(i, raw, seen, problems)
        if case is not None:
            cases.append(case)
    if len(problems) == 1:
        raise CaseError(problems[0])
    if problems:
        raise CaseError(f"{len(problems)} problems:\n" + "\n".join(f"  {p}" for p in problems))
    return cases


def _parse_case(i: int, raw, seen: set, problems: list) -> Case | None:
    """One case, or None with its problems appended to ``problems``: every check whose inputs
    are sound runs, so one pass reports every problem of the case."""
    found = []

    def check(step, *args):
        try:
            return step(*args)
        except CaseError as e:
            found.append(str(e))
            return None

    label = raw.get("name", f"#{i}") if isinstance(raw, dict) else f"#{i}"
    label = label if isinstance(label, str) else f"#{i}"
    if not isinstance(raw, dict):
        problems.append(f"case {label!r}: field 'case': must be a mapping")
        return None
    for required in ("name", "op", "dtype"):
        if required not in raw:
            found.append(f"case {label!r}: field {required!r}: missing")
    for key in sorted(set(raw) - {"name", "op", "dtype", "seed", "inputs", "attrs"}, key=str):
        found.append(f"case {label!r}: field {key!r}: unknown field (fields: name, op, dtype, seed, inputs, attrs)")
    name = raw.get("name")
    if "name" in raw and (not isinstance(name, str) or not _NAME.match(name)):
        found.append(f"case {label!r}: field 'name': must be a directory name of [A-Za-z0-9_.-], starting with a "
                     f"letter, digit or _, got {name!r}")
    elif name in seen:
        found.append(f"case {label!r}: field 'name': duplicate case name")
    seen.add(name)
    for fld in ("op", "dtype"):
        if fld in raw and not isinstance(raw[fld], str):
            found.append(f"case {label!r}: field {fld!r}: must be a name (a string), got {raw[fld]!r}")
    spec = REGISTRY.get(raw.get("op")) if isinstance(raw.get("op"), str) else None
    if isinstance(raw.get("op"), str) and spec is None:
        found.append(f"case {label!r}: field 'op': unknown op {raw['op']!r}; ops are {sorted(REGISTRY)}")
    dtype = raw.get("dtype") if isinstance(raw.get("dtype"), str) else None
    if spec is not None and dtype is not None and (dtype not in DTYPES or dtype not in spec.dtypes):
        found.append(f"case {label!r}: field 'dtype': {dtype!r} is not a dtype of {spec.name}; "
                     f"use one of {sorted(spec.dtypes)}")
        dtype = None
    elif spec is None and dtype is not None and dtype not in DTYPES:
        found.append(f"case {label!r}: field 'dtype': {dtype!r} is not a device dtype; use one of {sorted(DTYPES)}")
        dtype = None
    seed = raw.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        found.append(f"case {label!r}: field 'seed': must be a non-negative integer, got {seed!r}")
    raw_inputs = raw.get("inputs") or {}
    if not isinstance(raw_inputs, dict):
        found.append(f"case {label!r}: field 'inputs': must be a mapping")
        raw_inputs = None
    attrs = raw.get("attrs") or {}
    if not isinstance(attrs, dict):
        found.append(f"case {label!r}: field 'attrs': must be a mapping")
        attrs = None
    inputs = None
    if spec is not None and attrs is not None:
        for key in [k for k in attrs if k not in spec.attrs]:
            found.append(f"case {label!r}: field 'attrs.{key}': unknown attribute of {spec.name} "
                         f"(attributes: {sorted(spec.attrs)})")
        try:
            attrs = spec.check_attrs({k: v for k, v in attrs.items() if k in spec.attrs})
        except ValueError as e:
            found.append(f"case {label!r}: field 'attrs.{e.args[0]}': {e.args[1]}")
            attrs = None
    if spec is not None and attrs is not None and raw_inputs is not None:
        needed = spec.input_names(attrs)
        for missing in [n for n in needed if n not in raw_inputs]:
            found.append(f"case {label!r}: field 'inputs.{missing}': missing")
        for extra in [n for n in raw_inputs if n not in needed]:
            found.append(f"case {label!r}: field 'inputs.{extra}': not an input of {spec.name} "
                         f"(inputs: {list(needed)})")
        parsed = {n: check(_parse_input, label, n, raw_inputs[n], dtype, spec.default_for(n))
                  for n in needed if n in raw_inputs}
        if len(parsed) == len(needed) and None not in parsed.values():
            inputs = parsed
    if inputs is not None and dtype is not None:
        check(_check_case_shapes, label, spec, inputs, attrs, dtype)
    if found:
        problems.extend(found)
        return None
    case = Case(name, spec.name, dtype, seed, inputs, attrs)
    if spec.chunking is None and case_bytes(case) > physical_memory():
        problems.append(f"case {label!r}: field 'inputs': {spec.name} is computed whole in memory and the case "
                        f"needs {case_bytes(case) / 2**30:.1f} GiB; this machine has "
                        f"{physical_memory() / 2**30:.1f} GiB")
        return None
    return case


def _check_case_shapes(name: str, spec, inputs: dict, attrs: dict, dtype: str) -> None:
    shapes = {n: s.shape for n, s in inputs.items()}
    problem = spec.check_shapes(shapes, attrs)
    if problem:
        _fail(name, problem[0], problem[1])
    try:
        out_shapes = spec.output_shapes(shapes, attrs, DTYPES[dtype].itemsize)
    except ValueError as e:
        _fail(name, e.args[0], e.args[1])
    for out_name, out_shape in out_shapes.items():
        if math.prod(out_shape) > MAX_ELEMENTS:
            _fail(name, "attrs", f"output {out_name} of shape {list(out_shape)} holds {math.prod(out_shape)} "
                                 f"elements, past the device's limit of {MAX_ELEMENTS} per tensor")


def physical_memory() -> int:
    """This machine's RAM in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def case_bytes(case: Case) -> int:
    """The bytes of a case's inputs and outputs together."""
    spec = REGISTRY[case.op]
    itemsize = DTYPES[case.dtype].itemsize
    shapes = {n: s.shape for n, s in case.inputs.items()}
    outputs = spec.output_shapes(shapes, case.attrs, itemsize)
    return itemsize * (sum(math.prod(s) for s in shapes.values()) + sum(math.prod(s) for s in outputs.values()))


def load_cases(path: str | Path) -> list[Case]:
    """Read and validate a YAML or JSON case file; a CaseError names the file and lists every
    problem, each with its case and field."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise CaseError(f"case file {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise CaseError(f"case file {path}: not UTF-8 text (byte {e.start}: {e.reason})") from None
    try:
        doc = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise CaseError(f"case file {path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {e}") from None
    try:
        return parse_cases(doc)
    except CaseError as e:
        raise CaseError(f"case file {path}: {e}") from None


INPUT_BLOCK = 1 << 20  # elements per independent random stream: fixed, so bytes never depend on chunks


def generate_inputs(case: Case) -> dict[str, np.ndarray]:
    """The case's inputs, the same bytes on any machine, worker, order or chunking."""
    return {name: generate_range(case, name, 0, math.prod(spec.shape)).reshape(spec.shape)
            for name, spec in case.inputs.items()}


def generate_range(case: Case, name: str, start: int, count: int) -> np.ndarray:
    """Elements ``[start, start + count)`` of input ``name``, flat.

    Input element ``i`` belongs to block ``i // 2**20``, drawn from the stream seeded by (seed,
    crc32(name), block): a counter-based layout, so any range is drawn without the rest.  Blocks
    fill in parallel on the I/O thread pool.
    """
    spec = case.inputs[name]
    flat = np.empty(count, DTYPES[case.dtype])
    if spec.dist == "file":
        flat[:] = np.fromfile(spec.params[0], flat.dtype.newbyteorder("<"), count, offset=start * flat.itemsize)
        return flat
    if spec.dist == "values":
        _convert(np.array(spec.params[start:start + count], dtype=np.float64), flat, spec.convert)
        return flat
    key = (case.seed, zlib.crc32(name.encode()))
    first, stop = start // INPUT_BLOCK, -(-(start + count) // INPUT_BLOCK)
    whole = _tensor_constants(key, spec)

    def fill(block: int) -> None:
        lo, hi = max(start, block * INPUT_BLOCK), min(start + count, (block + 1) * INPUT_BLOCK)
        size = min(INPUT_BLOCK, math.prod(spec.shape) - block * INPUT_BLOCK)
        if spec.dist == "bits":
            flat[lo - start:hi - start] = _finite_bits(np.random.default_rng([*key, block]), size, flat.dtype)[
                lo - block * INPUT_BLOCK:hi - block * INPUT_BLOCK]
            return
        values = _draw(np.random.default_rng([*key, block]), spec, size, flat.dtype, whole)
        _convert(values[lo - block * INPUT_BLOCK:hi - block * INPUT_BLOCK], flat[lo - start:hi - start],
                 spec.convert)

    list(io_pool().map(fill, range(first, stop)))
    return flat


_scratch = threading.local()


def _scratch_block(slot: int, count: int) -> np.ndarray:
    """A float64 buffer of this thread for ``count`` draws, kept from block to block: a fresh
    8 MB array per block cost about as much in page faults as drawing into it."""
    buffers = getattr(_scratch, "buffers", None)
    if buffers is None:
        buffers = _scratch.buffers = {}
    buf = buffers.get(slot)
    if buf is None or buf.size < count:
        buf = buffers[slot] = np.empty(max(count, INPUT_BLOCK))
    return buf[:count]


_MODE_STREAM = 1 << 40  # the stream a triangular tensor's peak is drawn from (past every block's)


@functools.lru_cache(maxsize=64)
def _tensor_constants(key: tuple, spec: InputSpec) -> float | None:
    """What a tensor's draws share: a triangular tensor's peak (drawn once, uniform in [lo, hi]),
    or a softmax tensor's denominator (the sum of exp over every block's uniform draws, a first
    pass over the tensor); None for the others."""
    if spec.dist == "triangular":
        lo, hi = (float(v) for v in spec.params)
        return float(np.random.default_rng([*key, _MODE_STREAM]).uniform(lo, hi))
    if spec.dist != "softmax":
        return None
    total = math.prod(spec.shape)
    blocks = range(-(-total // INPUT_BLOCK))

    def block_sum(block):
        size = min(INPUT_BLOCK, total - block * INPUT_BLOCK)
        return float(np.exp(_uniform(np.random.default_rng([*key, block]), spec, size, 0)).sum())

    return math.fsum(io_pool().map(block_sum, blocks))


def _uniform(rng, spec: InputSpec, count: int, slot: int) -> np.ndarray:
    a, b = float(spec.params[0]), float(spec.params[1])
    buf = _scratch_block(slot, count)
    rng.random(out=buf)
    buf *= b - a
    buf += a
    return buf


def _draw(rng: np.random.Generator, spec: InputSpec, count: int, dtype: np.dtype, whole=None) -> np.ndarray:
    """A block's ``count`` values in float64 (complex128 for a complex dtype, int64 for
    integers), as NumPy's generator draws them: uniform is ``low + (high - low) * u`` and normal
    ``mean + std * z``, NumPy's own formulas, applied here to draws into a reused buffer.
    ``whole``: the tensor's shared constant (see :func:`_tensor_constants`)."""
    def one(slot):
        if spec.dist in ("relu", "sigmoid", "softmax", "tanh"):
            u = _uniform(rng, spec, count, slot)
            if spec.dist == "relu":
                return np.maximum(u, 0.0, out=u)
            if spec.dist == "tanh":
                return np.tanh(u, out=u)
            if spec.dist == "sigmoid":
                return np.reciprocal(np.exp(np.negative(u, out=u), out=u) + 1.0)
            return np.exp(u, out=u) / whole
        if spec.dist == "beta":
            return rng.beta(float(spec.params[0]), float(spec.params[1]), count)
        if spec.dist == "laplace":
            return rng.laplace(float(spec.params[0]), float(spec.params[1]), count)
        if spec.dist == "triangular":
            lo, hi = float(spec.params[0]), float(spec.params[1])
            return rng.triangular(lo, whole, hi, count) if lo < hi else np.full(count, lo)
        if spec.dist in ("uniform", "normal"):
            a, b = float(spec.params[0]), float(spec.params[1])
            buf = _scratch_block(slot, count)
            if spec.dist == "uniform":
                rng.random(out=buf)
                scale, loc = b - a, a
            else:
                rng.standard_normal(out=buf)
                scale, loc = b, a
            buf *= scale
            buf += loc
            return buf
        if spec.dist == "integers":
            return rng.integers(int(spec.params[0]), int(spec.params[1]), count, endpoint=True)
        return rng.choice(np.array(spec.params, dtype=np.float64), count)
    values = one(0)
    if dtype.kind == "c":
        values = values + 1j * one(1)
    return values


def _finite_bits(rng: np.random.Generator, count: int, dtype: np.dtype) -> np.ndarray:
    """``count`` random bit patterns of ``dtype``; a floating pattern that would be NaN or
    infinity has its exponent's top bit cleared (a finite value of the same sign)."""
    raw = rng.integers(0, 256, count * dtype.itemsize, dtype=np.uint8)
    if dtype == np.bool_:
        return (raw & 1).view(np.bool_)
    layout = float_bit_layout(dtype)
    if layout is not None:
        width, _, exponent, _ = layout
        words = raw.view(f"u{width}")
        mask, top = words.dtype.type(exponent), words.dtype.type(1 << (exponent.bit_length() - 1))
        words[(words & mask) == mask] ^= top
    return raw.view(dtype)


def _convert(values: np.ndarray, out: np.ndarray, convert: str = "round") -> None:
    """Drawn values into the input's dtype: rounded to the nearest integer (``truncate``: toward
    zero) and clipped to the dtype's range for integer dtypes (only a normal or Laplace draw's tail
    can leave it: the case file's bounds are checked against the dtype), non-zero for bool (after
    truncating, with ``truncate``), cast otherwise."""
    with np.errstate(all="ignore"):
        whole = np.trunc(values) if convert == "truncate" and out.dtype.kind in "iub" else values
        if out.dtype == np.bool_:
            np.not_equal(whole, 0, out=out)
        elif out.dtype.kind in "iu":
            np.copyto(out, np.clip(whole if convert == "truncate" else np.rint(values), *_float_bounds(out.dtype)),
                      casting="unsafe")
        else:
            np.copyto(out, values, casting="unsafe")


@functools.cache
def _float_bounds(dtype: np.dtype) -> tuple[float, float]:
    """The float64 values nearest an integer dtype's bounds that lie inside them."""
    info = np.iinfo(dtype)
    lo, hi = float(info.min), float(info.max)
    return (lo if lo >= info.min else float(np.nextafter(lo, 0)),
            hi if hi <= info.max else float(np.nextafter(hi, 0)))


@functools.cache
def io_pool() -> concurrent.futures.ThreadPoolExecutor:
    """Threads for input generation, hashing and writing (NumPy and hashlib release the GIL)."""
    return concurrent.futures.ThreadPoolExecutor(max(2, os.cpu_count() or 2), thread_name_prefix="ascend-numba-io")
