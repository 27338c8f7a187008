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
list; "inf", "-inf", "nan" allowed).  Default: ``{uniform: [-1, 1]}``.

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

import numpy as np
import yaml

from ..dtypes import DEVICE_DTYPES as DTYPES
from ..ops import REGISTRY as _OPS

__all__ = ["CaseError", "Case", "InputSpec", "load_cases", "parse_cases", "generate_inputs", "generate_range", "DTYPES",
           "REGISTRY", "INPUT_BLOCK", "case_bytes", "physical_memory", "io_pool"]

# The ops a case file can name: the registry's, those offered for goldens.
REGISTRY = {name: entry for name, entry in _OPS.items() if entry.golden}
DISTRIBUTIONS = ("uniform", "normal", "integers", "special")
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
                "inputs": {k: {"shape": list(v.shape), "dist": {v.dist: list(v.params)}}
                           for k, v in self.inputs.items()},
                "attrs": self.attrs}


def _fail(case: str, fld: str, problem: str):
    raise CaseError(f"case {case!r}: field {fld!r}: {problem}")


def _parse_input(case: str, name: str, raw) -> InputSpec:
    where = f"inputs.{name}"
    if not isinstance(raw, dict):
        _fail(case, where, "must be a mapping with 'shape' (and optionally 'dist')")
    unknown = set(raw) - {"shape", "dist"}
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
    dist = raw.get("dist", {"uniform": [-1, 1]})
    if not isinstance(dist, dict) or len(dist) != 1:
        _fail(case, f"{where}.dist", f"must be one of {{{', '.join(DISTRIBUTIONS)}: [...]}}")
    (kind, params), = dist.items()
    if kind not in DISTRIBUTIONS:
        _fail(case, f"{where}.dist", f"unknown distribution {kind!r}; use one of {DISTRIBUTIONS}")
    if not isinstance(params, list) or (kind != "special" and len(params) != 2) or not params:
        _fail(case, f"{where}.dist.{kind}", "needs [a, b]" if kind != "special" else "needs a list of values")
    if any(isinstance(p, bool) or not isinstance(p, (int, float, str)) for p in params):
        _fail(case, f"{where}.dist.{kind}", f"values must be numbers, got {params!r}")
    try:
        values = tuple(float(p) if not isinstance(p, int) else p for p in params)
    except (TypeError, ValueError):
        _fail(case, f"{where}.dist.{kind}", f"values must be numbers, got {params!r}")
    problem = _distribution_problem(kind, values)
    if problem:
        _fail(case, f"{where}.dist.{kind}", f"{problem}, got {list(params)}")
    return InputSpec(tuple(shape), kind, values)


def _distribution_problem(kind: str, values: tuple) -> str | None:
    if kind == "special":
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
    if kind == "integers":
        if not (isinstance(lo, int) and isinstance(hi, int)):
            return "needs integer bounds"
        if lo > hi:
            return "needs low <= high"
        if not (-(1 << 63) <= lo and hi < (1 << 63)):
            return "needs bounds within int64"
    return None


def parse_cases(doc: Any) -> list[Case]:
    """Validate a loaded case document; raises CaseError naming the case and field."""
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise CaseError("case file: top level must be a mapping with a 'cases' list")
    cases, seen = [], set()
    for i, raw in enumerate(doc["cases"]):
        label = raw.get("name", f"#{i}") if isinstance(raw, dict) else f"#{i}"
        if not isinstance(raw, dict):
            _fail(label, "case", "must be a mapping")
        for required in ("name", "op", "dtype"):
            if required not in raw:
                _fail(label, required, "missing")
        unknown = set(raw) - {"name", "op", "dtype", "seed", "inputs", "attrs"}
        if unknown:
            _fail(label, sorted(unknown)[0], "unknown field")
        name = raw["name"]
        if not isinstance(name, str) or not _NAME.match(name):
            _fail(label, "name", "must be a directory name of [A-Za-z0-9_.-], starting with a letter, digit or _"
                                 f", got {name!r}")
        if name in seen:
            _fail(name, "name", "duplicate case name")
        seen.add(name)
        for fld in ("op", "dtype"):
            if not isinstance(raw[fld], str):
                _fail(name, fld, f"must be a name (a string), got {raw[fld]!r}")
        spec = REGISTRY.get(raw["op"])
        if spec is None:
            _fail(name, "op", f"unknown op {raw['op']!r}; ops are {sorted(REGISTRY)}")
        if raw["dtype"] not in DTYPES or raw["dtype"] not in spec.dtypes:
            _fail(name, "dtype", f"{raw['dtype']!r} is not a dtype of {spec.name}; use one of {sorted(spec.dtypes)}")
        seed = raw.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            _fail(name, "seed", f"must be a non-negative integer, got {seed!r}")
        raw_inputs = raw.get("inputs") or {}
        if not isinstance(raw_inputs, dict):
            _fail(name, "inputs", "must be a mapping")
        attrs = raw.get("attrs") or {}
        if not isinstance(attrs, dict):
            _fail(name, "attrs", "must be a mapping")
        try:
            attrs = spec.check_attrs(attrs)
        except ValueError as e:
            _fail(name, f"attrs.{e.args[0]}", e.args[1])
        needed = spec.input_names(attrs)
        for missing in [n for n in needed if n not in raw_inputs]:
            _fail(name, f"inputs.{missing}", "missing")
        for extra in [n for n in raw_inputs if n not in needed]:
            _fail(name, f"inputs.{extra}", f"not an input of {spec.name} (inputs: {list(needed)})")
        inputs = {n: _parse_input(name, n, raw_inputs[n]) for n in needed}
        shapes = {n: s.shape for n, s in inputs.items()}
        problem = spec.check_shapes(shapes, attrs)
        if problem:
            _fail(name, problem[0], problem[1])
        itemsize = DTYPES[raw["dtype"]].itemsize
        try:
            out_shapes = spec.output_shapes(shapes, attrs, itemsize)
        except ValueError as e:
            _fail(name, e.args[0], e.args[1])
        for out_name, out_shape in out_shapes.items():
            if math.prod(out_shape) > MAX_ELEMENTS:
                _fail(name, "attrs", f"output {out_name} of shape {list(out_shape)} holds {math.prod(out_shape)} "
                                     f"elements, past the device's limit of {MAX_ELEMENTS} per tensor")
        case = Case(name, spec.name, raw["dtype"], seed, inputs, attrs)
        if spec.chunking is None and case_bytes(case) > physical_memory():
            _fail(name, "inputs", f"{spec.name} is computed whole in memory and the case needs "
                                  f"{case_bytes(case) / 2**30:.1f} GiB; this machine has "
                                  f"{physical_memory() / 2**30:.1f} GiB")
        cases.append(case)
    return cases


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
    """Read and validate a YAML or JSON case file."""
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
    return parse_cases(doc)


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
    key = (case.seed, zlib.crc32(name.encode()))
    first, stop = start // INPUT_BLOCK, -(-(start + count) // INPUT_BLOCK)

    def fill(block: int) -> None:
        lo, hi = max(start, block * INPUT_BLOCK), min(start + count, (block + 1) * INPUT_BLOCK)
        size = min(INPUT_BLOCK, math.prod(spec.shape) - block * INPUT_BLOCK)
        values = _draw(np.random.default_rng([*key, block]), spec, size, flat.dtype)
        _convert(values[lo - block * INPUT_BLOCK:hi - block * INPUT_BLOCK], flat[lo - start:hi - start])

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


def _draw(rng: np.random.Generator, spec: InputSpec, count: int, dtype: np.dtype) -> np.ndarray:
    """A block's ``count`` values in float64 (complex128 for a complex dtype, int64 for
    integers), as NumPy's generator draws them: uniform is ``low + (high - low) * u`` and normal
    ``mean + std * z``, NumPy's own formulas, applied here to draws into a reused buffer."""
    def one(slot):
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


def _convert(values: np.ndarray, out: np.ndarray) -> None:
    """Drawn values into the input's dtype: rounded to the nearest integer for integer dtypes,
    non-zero for bool, cast otherwise."""
    with np.errstate(all="ignore"):
        if out.dtype == np.bool_:
            np.not_equal(values, 0, out=out)
        elif out.dtype.kind in "iu":
            np.copyto(out, np.rint(values), casting="unsafe")
        else:
            np.copyto(out, values, casting="unsafe")


@functools.cache
def io_pool() -> concurrent.futures.ThreadPoolExecutor:
    """Threads for input generation, hashing and writing (NumPy and hashlib release the GIL)."""
    return concurrent.futures.ThreadPoolExecutor(max(2, os.cpu_count() or 2), thread_name_prefix="ascend-numba-io")
