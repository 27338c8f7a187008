"""The op registry: one :class:`OpEntry` per public op, read by the public API, the golden CLI,
the parametrized tests and the benchmarks.

An entry knows the op's function and its plain NumPy reference, the dtypes it takes, its inputs,
attributes and outputs (with the checks the golden case files get), and its cases: the shapes
every test runs and the benchmark groups.  Each op folder (``ops/<op>/__init__.py``) defines its
entries; :data:`REGISTRY` (in :mod:`ascend_numba.ops`) collects them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["OpEntry", "Case", "Chunking", "Span", "REQUIRED", "FINITE_BITS", "random_bits", "int_list", "number",
           "flag", "choice", "positive_int_or_none", "same_shape_as"]

REQUIRED = object()  # an attribute without a default
# Data movement is bit for bit: by default its inputs are random bit patterns of their dtype, every
# finite value (subnormals and both zeros included), never NaN or infinity.
FINITE_BITS = {"bits": []}


@dataclass(frozen=True)
class Case:
    """Inputs' shapes and attributes of one call; ``dtype`` None: every dtype of the op.
    ``modes``: how the registry test runs it (``plain``, ``checked``, ``traced``), each mode of
    a kernel specialization being a compile of its own.  ``small``: smaller shapes taking the same
    kernel path, for the runs in interpret mode compared with compiled ones (None: ``shapes``)."""

    name: str
    shapes: dict
    attrs: dict = field(default_factory=dict)
    dtype: str | None = None
    modes: tuple = ("plain", "checked")
    small: dict | None = None


def random_bits(shapes: dict, dtype: np.dtype, rng: np.random.Generator) -> dict:
    """Inputs of random bytes (every bit pattern, NaN payloads included): for ops that move data."""
    out = {}
    for name, shape in shapes.items():
        raw = rng.integers(0, 256, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, dtype=np.uint8)
        if dtype == np.bool_:
            raw &= 1
        out[name] = raw.view(dtype).reshape(shape)
    return out


@dataclass(frozen=True)
class Chunking:
    """How a golden case larger than memory is computed in pieces whose bytes equal the whole
    case's (each op's ``chunks.py``).

    ``plan(entry, shapes, attrs, itemsize, budget, align)`` lists the chunks (small picklable values),
    each one's inputs and outputs within about ``budget`` bytes where the op allows it.
    ``compute(entry, inputs, attrs, chunk)`` returns ``{output: (element offset, flat array)}``,
    each array a contiguous range of that output.  ``elementwise``: every chunk is a
    :class:`Span` of the flat tensors, its inputs handed over as that range of each input (spans
    are multiples of ``align`` elements where they can be); otherwise ``inputs`` are the whole
    inputs, read-only memory maps.
    """

    plan: Callable
    compute: Callable
    elementwise: bool = False


@dataclass(frozen=True)
class Span:
    """Elements ``[start, start + count)`` of every flat tensor of an elementwise op."""

    start: int
    count: int


def _call_one_input(function: Callable, inputs: dict, attrs: dict, options: dict) -> dict:
    (x,) = inputs.values()
    return {"y": function(x, **attrs, **options)}


@dataclass(frozen=True)
class OpEntry:
    """One public op.

    ``function(*inputs, **attrs, **options)`` and ``reference`` (plain NumPy, the same
    arguments without the options) are called through ``call`` (default: one input ``x``, one
    output ``y``).  ``attrs`` maps each attribute to ``(check, default or REQUIRED)``;
    ``check_shapes(shapes, attrs)`` returns ``(field, problem)`` or None; ``output_shapes(shapes,
    attrs, itemsize)`` gives each output's shape without running.  ``test_cases`` run in
    ``tests/test_registry.py`` for every dtype in their modes; ``bench_cases`` are the benchmark
    groups by name; ``warmup_cases`` are tiny calls (each with its dtype) that between them
    compile every kernel specialization the op can need (``ascend-numba warmup``);
    ``test_inputs(shapes, dtype, rng)`` draws the tests' inputs (default: random bits);
    ``chunking`` computes golden cases larger than memory in pieces; ``moves_bytes``: the kernels
only move bytes, so dtypes of one width share every kernel.
    """

    name: str
    function: Callable
    reference_function: Callable
    dtypes: tuple
    output_shapes: Callable[[dict, dict, int], dict]
    inputs: tuple | Callable[[dict], tuple] = ("x",)
    outputs: tuple = ("y",)
    attrs: dict = field(default_factory=dict)
    check_shapes: Callable[[dict, dict], tuple | None] = lambda shapes, attrs: None
    call: Callable[[Callable, dict, dict, dict], dict] = _call_one_input
    test_cases: tuple = ()
    bench_cases: dict = field(default_factory=dict)
    warmup_cases: tuple = ()
    test_inputs: Callable[[dict, np.dtype, np.random.Generator], dict] = random_bits
    golden: bool = True  # offered by the golden CLI
    # The kernels move bytes on unsigned views: dtypes of one element width run the same code.
    moves_bytes: bool = False
    chunking: Chunking | None = None  # golden cases larger than memory, in pieces
    # The distribution a golden case's input gets when it names none: per input, else the op's.
    input_defaults: dict = field(default_factory=dict)
    default_dist: dict = field(default_factory=lambda: dict(FINITE_BITS))

    def default_for(self, name: str) -> dict:
        """The distribution input ``name`` is drawn by when a case names none."""
        return dict(self.input_defaults.get(name, self.default_dist))

    def input_names(self, attrs: dict) -> tuple:
        return self.inputs(attrs) if callable(self.inputs) else self.inputs

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

    def run(self, inputs: dict[str, np.ndarray], attrs: dict[str, Any], **options) -> dict[str, np.ndarray]:
        """The outputs by name, computed with ascend_numba (``options``: trace, checked, block_dim...;
        with ``trace=True`` each output is the op's ``(result, trace)``)."""
        return self.call(self.function, inputs, attrs, options)

    def reference(self, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> dict[str, np.ndarray]:
        """The outputs by name, computed by the plain NumPy reference."""
        return self.call(self.reference_function, inputs, attrs, {})


# ---- attribute checks (raise TypeError / ValueError with the problem) --------------------------

def int_list(value) -> list:
    if isinstance(value, bool) or not isinstance(value, (int, list)):
        raise TypeError(f"must be an integer or a list of integers, got {value!r}")
    values = [value] if isinstance(value, int) else value
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise ValueError(f"must hold non-negative integers, got {value!r}")
    return values


def number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"must be a number, got {value!r}")
    return float(value)


def flag(value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"must be true or false, got {value!r}")
    return value


def choice(*options):
    def check(value):
        if value not in options:
            raise ValueError(f"must be one of {list(options)}, got {value!r}")
        return value
    return check


def positive_int_or_none(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"must be a positive integer, got {value!r}")
    return value


# ---- common shapes of entries -------------------------------------------------------------------

def same_shape_as(name: str = "x", output: str = "y"):
    """``output_shapes`` of an op whose one output has the shape of input ``name``."""
    return lambda shapes, attrs, itemsize: {output: tuple(shapes[name])}

