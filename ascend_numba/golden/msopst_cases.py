"""msOpST case definition files in, msOpST's data layout out (``ascend-numba msopst gen`` /
``compare``).

A case file is a JSON list of cases (MindStudio's msOpST "test case definition file"):
``case_name``, ``op``, ``input_desc``, ``output_desc``, optional ``attr``,
``calc_expect_func_file``, ``error_threshold``, ``expect``, ``st_mode``.  Each input has
``format``, ``type``, ``shape`` (each a value or a list of values), optional ``name``,
``ori_format``, ``ori_shape``, ``data_distribute``, ``value_range``, ``value`` (a list, or a
``.bin`` path relative to the case file), ``is_const`` and ``cross_list``; outputs the same
without data fields.

Subcases (op_test_frame's ST expansion): an input's list-valued fields line up by index (a
list of one value serves every subcase) unless ``cross_list`` groups them: fields of one group
line up, groups cross (the first group varies fastest), fields no group names line up in a group
of their own at the end.  Every input must give the same number of subcases (or one); outputs
line up with them.  Subcase ``i`` of case ``C`` is named ``C_subcase_i``, lower case, ``.`` as
``_``.

Inputs are drawn by msOpST's distributions, with the meaning its data generator gives
``value_range`` ``[a, b]`` (default uniform ``[0.1, 1.0]``): uniform in [a, b); normal with mean
a and std ``|b| + 1e-4``; beta with ``|a| + 1e-4, |b| + 1e-4``; laplace with loc a and scale
``|b| + 1e-4``; triangular on [a, b] with its peak drawn uniformly once; relu, sigmoid, tanh of a
uniform draw; softmax of uniform draws over the tensor.  Values become the input type as
``astype`` does (toward zero for integers); bool is uniform in [0, 2) truncated.  Draws are
seeded per subcase and input (``--seed``), the same bytes with any number of workers.

Every case file problem is reported before any case runs, naming the file, the case and the
field.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..dtypes import DEVICE_DTYPES, TYPE_ALIASES, dtype_by_name
from ..msopst import SIGNATURES, transdata_channels, transdata_fixed_attr
from ..ops.adamw.api import SCALAR_NAMES
from .cases import REGISTRY, Case, CaseError, InputSpec, generate_inputs, parse_cases
from ..ops import REGISTRY as OPS
from ..ops import SHIPPED
from .expect_func import call_expect_func, load_expect_func
from .store import little_endian, sha256_of

__all__ = ["MsopstCaseError", "Subcase", "load_msopst", "gen_msopst", "input_file", "expect_file", "output_file",
           "msopst_threshold", "DEFAULT_THRESHOLD", "TYPES"]

DEFAULT_THRESHOLD = (0.01, 0.05)
# msOpST type names -> device dtype names
TYPES = {**{name: name for name in DEVICE_DTYPES}, **TYPE_ALIASES}
DISTRIBUTIONS = ("uniform", "normal", "beta", "laplace", "triangular", "relu", "sigmoid", "softmax", "tanh")
_CASE_FIELDS = {"case_name", "op", "input_desc", "output_desc", "attr", "calc_expect_func_file", "error_threshold",
                "expect", "st_mode", "comment"}
_UNSUPPORTED = {"fuzz_impl": "fuzz cases (fuzz_impl, fuzz_case_num) are not supported: list the shapes instead",
                "fuzz_case_num": "fuzz cases (fuzz_impl, fuzz_case_num) are not supported: list the shapes instead"}
_DATA_FIELDS = ("format", "ori_format", "type", "shape", "ori_shape", "data_distribute", "value_range")
_INPUT_FIELDS = {"name", "is_const", "value", "cross_list", "param_type", *_DATA_FIELDS}
_OUTPUT_DATA_FIELDS = ("format", "ori_format", "type", "shape", "ori_shape")
_OUTPUT_FIELDS = {"name", "cross_list", "param_type", *_OUTPUT_DATA_FIELDS}


class MsopstCaseError(CaseError):
    """A case file problem, naming the file, the case and the field."""


@dataclass
class Subcase:
    """One msOpST subcase and how the twin computes it: ``golden`` (a golden case of the twin's
    op) draws the tensors it computes from; ``extra`` are the inputs it takes as values
    (``multiples``, ``perm``, ApplyAdamW's scalars) or does not use, drawn or given here."""

    name: str
    case_name: str
    op: str
    file: Path
    inputs: list[dict]
    outputs: list[dict]
    attrs: dict
    threshold: tuple
    golden: Case | None = None
    golden_names: dict = field(default_factory=dict)  # msOpST input index -> the golden case's input name
    extra: dict = field(default_factory=dict)  # msOpST input index -> its array
    expect_func: Any = None  # an op the twin does not implement: the case's calc_expect_func_file
    draws: dict = field(default_factory=dict)  # such a subcase's inputs: index -> the case drawing it


def input_file(sub: Subcase, index: int) -> str:
    return f"{sub.name}_input{index}_{sub.inputs[index]['type']}.bin"


def expect_file(sub: Subcase, index: int) -> str:
    return f"{sub.name}_expect_np_output{index}_{sub.outputs[index]['type']}.bin"


def output_file(sub: Subcase, index: int) -> str:
    """The device output's file name, as msOpST names it."""
    return f"{sub.name}_output{index}_{sub.outputs[index]['type']}.bin"


class _Problems:
    """Every problem of a set of files, one line each, raised together."""

    def __init__(self):
        self.lines: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.lines.append(f"{where}: {problem}")

    def raise_any(self) -> None:
        if len(self.lines) == 1:
            raise MsopstCaseError(self.lines[0])
        if self.lines:
            raise MsopstCaseError(f"{len(self.lines)} problems:\n" + "\n".join(f"  {p}" for p in self.lines))


def _case_files(paths) -> list[Path]:
    files = []
    for p in map(Path, paths):
        files += sorted(p.rglob("*.json")) if p.is_dir() else [p]
    return files


def load_msopst(paths, seed: int = 0) -> list[Subcase]:
    """Every subcase of the case files (or directories of them) in ``paths``, validated and
    expanded; raises MsopstCaseError listing every problem before anything runs."""
    problems, subcases, seen = _Problems(), [], {}
    files = _case_files(paths)
    if not files:
        problems.add(", ".join(map(str, paths)), "no case files (*.json)")
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            problems.add(f"case file {path}", e.strerror or str(e))
            continue
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            problems.add(f"case file {path}", f"not valid JSON: {e}")
            continue
        cases = doc if isinstance(doc, list) else [doc] if isinstance(doc, dict) else None
        if cases is None:
            problems.add(f"case file {path}", "must hold a list of cases")
            continue
        for i, raw in enumerate(cases):
            for sub in _parse_case(path, i, raw, seed, problems):
                if sub.name in seen:
                    problems.add(f"case file {path}: case {sub.case_name!r}",
                                 f"subcase {sub.name!r} is also named by {seen[sub.name]}")
                seen[sub.name] = f"{path} ({sub.case_name!r})"
                subcases.append(sub)
    problems.raise_any()
    return subcases


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def _options(desc: dict, name: str, depth: int) -> list:
    """A field's list of per-subcase values: ``shape: [2, 3]`` is one value, ``[[2, 3], [4]]`` two."""
    value = desc.get(name)
    if value is None:
        return []
    if depth == 2:  # shape, ori_shape, value_range: a list of lists is a list of values
        return value if value and all(isinstance(v, list) for v in value) else [value]
    return _listed(value)


def _expand(desc: dict, fields: tuple, where: str, problems: _Problems) -> list[dict] | None:
    """One description per subcase, by the cross-list rules (see the module doc)."""
    options = {f: _options(desc, f, 2 if f in ("shape", "ori_shape", "value_range") else 1) for f in fields}
    options = {f: o for f, o in options.items() if o}
    groups = desc.get("cross_list")
    if groups is None:
        groups = [list(options)]
    elif not (isinstance(groups, list) and all(isinstance(g, list) and all(isinstance(f, str) for f in g)
                                               for g in groups)):
        problems.add(where, f"cross_list must be a list of lists of field names, got {groups!r}")
        return None
    else:
        named = {f for g in groups for f in g}
        unknown = sorted(named - set(fields))
        if unknown:
            problems.add(where, f"cross_list names {unknown}, not fields of a description ({', '.join(fields)})")
            return None
        groups = [[f for f in g if f in options] for g in groups] + [[f for f in options if f not in named]]
    sizes = []
    for group in groups:
        lengths = {f: len(options[f]) for f in group if len(options[f]) != 1}
        if len(set(lengths.values())) > 1:
            problems.add(where, "fields that line up have lists of different lengths: " +
                         ", ".join(f"{f} ({n})" for f, n in lengths.items()))
            return None
        sizes.append(max(lengths.values(), default=1))
    out = []
    for combo in itertools.product(*(range(n) for n in reversed(sizes))):
        picks = dict(zip(range(len(sizes) - 1, -1, -1), combo))  # first group fastest
        one = {k: v for k, v in desc.items() if k not in options and k != "cross_list"}
        for g, group in enumerate(groups):
            for f in group:
                values = options[f]
                one[f] = values[picks[g]] if len(values) > 1 else values[0]
        out.append(one)
    return out


def _check_desc(desc, case: str, fld: str, allowed: set, problems: _Problems, is_input: bool) -> bool:
    where = f"{case}: field '{fld}'"
    if not isinstance(desc, dict):
        problems.add(where, "must be a mapping")
        return False
    ok = True
    for key in sorted(set(desc) - allowed):
        problems.add(f"{case}: field '{fld}.{key}'", f"unknown field (fields: {', '.join(sorted(allowed))})")
        ok = False
    for key in ("type", "shape") if not desc.get("is_const") or "value" not in desc else ("type",):
        if key not in desc:
            problems.add(f"{case}: field '{fld}.{key}'", "missing")
            ok = False
    for name in ("format", "ori_format", "type", "data_distribute"):
        if name in desc and not all(isinstance(v, str) for v in _listed(desc[name])):
            problems.add(f"{case}: field '{fld}.{name}'", f"must be a name or a list of names, got {desc[name]!r}")
            ok = False
    for name in ("shape", "ori_shape"):
        if name in desc and not all(isinstance(s, list) and all(isinstance(d, int) and not isinstance(d, bool) and
                                                                d >= 0 for d in s)
                                    for s in _options(desc, name, 2)):
            problems.add(f"{case}: field '{fld}.{name}'", f"must be a shape (a list of non-negative integers) or a list of "
                                            f"shapes, got {desc[name]!r}")
            ok = False
    if "value_range" in desc and not all(isinstance(r, list) and len(r) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in r) for r in _options(desc, "value_range", 2)):
        problems.add(f"{case}: field '{fld}.value_range'", f"must be [min, max] or a list of them, got {desc['value_range']!r}")
        ok = False
    for kind in _listed(desc.get("data_distribute", [])):
        if isinstance(kind, str) and kind not in DISTRIBUTIONS:
            problems.add(f"{case}: field '{fld}.data_distribute'", f"unknown distribution {kind!r}; msOpST's are {list(DISTRIBUTIONS)}")
            ok = False
    for t in _listed(desc.get("type", [])):
        if isinstance(t, str) and t not in TYPES:
            problems.add(f"{case}: field '{fld}.type'", f"{t!r} is not a type the twin holds; types: {sorted(TYPES)}")
            ok = False
    if is_input and "is_const" in desc and not isinstance(desc["is_const"], bool):
        problems.add(f"{case}: field '{fld}.is_const'", f"must be true or false, got {desc['is_const']!r}")
        ok = False
    return ok


def _parse_case(path: Path, i: int, raw, seed: int, problems: _Problems) -> list[Subcase]:
    label = raw.get("case_name", f"#{i}") if isinstance(raw, dict) else f"#{i}"
    where = f"case file {path}: case {label!r}"
    if not isinstance(raw, dict):
        problems.add(where, "must be a mapping")
        return []
    before = len(problems.lines)
    for key in sorted(set(raw) - _CASE_FIELDS):
        problems.add(f"{where}: field {key!r}", _UNSUPPORTED.get(key, f"unknown field (fields: "
                                                                     f"{', '.join(sorted(_CASE_FIELDS))})"))
    for key in ("case_name", "op", "input_desc", "output_desc"):
        if key not in raw:
            problems.add(f"{where}: field {key!r}", "missing")
    if not isinstance(raw.get("case_name", ""), str) or not raw.get("case_name", "x"):
        problems.add(f"{where}: field 'case_name'", f"must be a non-empty name, got {raw.get('case_name')!r}")
    op = raw.get("op")
    if "op" in raw and op not in SIGNATURES and not raw.get("calc_expect_func_file") and op not in _user_ops():
        problems.add(f"{where}: field 'op'", f"op type {op!r} is not one the twin implements (op types: "
                                             f"{', '.join(SIGNATURES)}, and yours registered): name its "
                                             "expected-data function in calc_expect_func_file")
    threshold = raw.get("error_threshold", list(DEFAULT_THRESHOLD))
    if not (isinstance(threshold, list) and len(threshold) == 2 and all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t for t in threshold)):
        problems.add(f"{where}: field 'error_threshold'", f"must be [threshold1, threshold2], two numbers >= 0, "
                                                          f"got {threshold!r}")
    ins, outs = raw.get("input_desc", []), raw.get("output_desc", [])
    for name, descs in (("input_desc", ins), ("output_desc", outs)):
        if not isinstance(descs, list):
            problems.add(f"{where}: field {name!r}", "must be a list of descriptions")
    attrs = raw.get("attr", [])
    if not isinstance(attrs, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str) and "value" in a
                                              for a in attrs):
        problems.add(f"{where}: field 'attr'", "must be a list of {name, type, value}")
        attrs = []
    if len(problems.lines) > before or not isinstance(ins, list) or not isinstance(outs, list):
        return []
    expanded_in, expanded_out = [], []
    for k, desc in enumerate(ins):
        if _check_desc(desc, where, f"input_desc[{k}]", _INPUT_FIELDS, problems, True):
            expanded_in.append(_expand(desc, _DATA_FIELDS, f"{where}: field 'input_desc[{k}]'", problems))
    for k, desc in enumerate(outs):
        if _check_desc(desc, where, f"output_desc[{k}]", _OUTPUT_FIELDS, problems, False):
            expanded_out.append(_expand(desc, _OUTPUT_DATA_FIELDS, f"{where}: field 'output_desc[{k}]'", problems))
    if len(problems.lines) > before or None in expanded_in or None in expanded_out:
        return []
    counts = {len(e) for e in expanded_in + expanded_out if len(e) != 1}
    if len(counts) > 1:
        problems.add(f"{where}: field 'input_desc'", "inputs and outputs give different numbers of subcases: " +
                     ", ".join(f"{d.get('name', k)}: {len(e)}" for k, (d, e) in
                               enumerate(zip(ins + outs, expanded_in + expanded_out))))
        return []
    total = max(counts, default=1)
    base = str(raw["case_name"]).lower().replace(".", "_")
    subs = []
    for s in range(total):
        name = f"{base}_subcase_{s}"
        sub = Subcase(name, raw["case_name"], op, path,
                      [e[s if len(e) > 1 else 0] for e in expanded_in], [e[s if len(e) > 1 else 0] for e in expanded_out],
                      {a["name"]: a["value"] for a in attrs}, tuple(float(t) for t in threshold))
        sub_seed, sub_where = (seed << 32) | zlib.crc32(name.encode()), f"{where} subcase {s}"
        if (_plan(sub, sub_seed, sub_where, problems) if op in SIGNATURES
                else _plan_user(sub, raw.get("calc_expect_func_file") or None, sub_seed, sub_where, problems)):
            subs.append(sub)
    return subs


def _input_spec(sub: Subcase, k: int) -> tuple[InputSpec, str]:
    """The golden input spec (and dtype name) msOpST's description of input ``k`` draws by."""
    desc = sub.inputs[k]
    dtype = TYPES[desc["type"]]
    if "value" in desc:
        value = desc["value"]
        if isinstance(value, str):
            file = (sub.file.parent / value).resolve()
            return InputSpec(tuple(desc.get("shape", ())), "file", (str(file),), "truncate"), dtype
        flat = np.asarray(value, dtype=np.float64).reshape(-1).tolist() if value != [] else []
        shape = desc.get("shape", [len(flat)] if np.ndim(value) == 1 else list(np.shape(value)))
        return InputSpec(tuple(shape), "values", tuple(flat), "truncate"), dtype
    low, high = desc.get("value_range", [0.1, 1.0])
    kind = desc.get("data_distribute", "uniform")
    if dtype == "bool":
        kind, low, high = "uniform", 0, 2
    params = {"normal": (low, abs(high) + 1e-4), "beta": (abs(low) + 1e-4, abs(high) + 1e-4),
              "laplace": (low, abs(high) + 1e-4)}.get(kind, (low, high))
    return InputSpec(tuple(desc["shape"]), kind, tuple(float(p) for p in params), "truncate"), dtype


_GOLDEN_PROBLEM = re.compile(r"case '\w+': field 'inputs\.x(?:\.dist\.(\w+))?(?:\.\w+)?': (.*)")


def _checked_spec(k: int, spec: InputSpec, dtype: str, seed: int, where: str, problems: _Problems) -> Case | None:
    """A one-input golden case drawing input ``k`` (golden validates it as it validates its own
    case files: values the type cannot hold are refused)."""
    doc = {"cases": [{"name": "input", "op": "tile", "dtype": dtype, "seed": seed, "attrs": {"reps": [1]},
                      "inputs": {"x": spec.to_dict()}}]}
    try:
        return parse_cases(doc)[0]
    except CaseError as e:
        for line in str(e).splitlines():
            found = _GOLDEN_PROBLEM.search(line)
            if found:
                kind, problem = found.groups()
                what = {"values": "value", "file": "value"}.get(kind, f"{kind} value_range" if kind else "shape")
                problems.add(f"{where}: field 'input_desc[{k}]'", f"{what}: {problem}")
        return None


def _plan_user(sub: Subcase, spec, seed: int, where: str, problems: _Problems) -> bool:
    """An op the twin does not ship: the case's own expected-data function (:mod:`.expect_func`),
    every input drawn here; else the user's registered op of that name, run as a golden case (its
    checks, workers and cache), the inputs named as its own."""
    before = len(problems.lines)
    values = {}
    for k in range(len(sub.inputs)):
        input_spec, dtype = _input_spec(sub, k)
        case = _checked_spec(k, input_spec, dtype, seed + 7919 * k, where, problems)  # each input its own draws
        if case is not None:
            values[k] = (case, dtype)
    if spec is not None:
        try:
            sub.expect_func = load_expect_func(sub.file, spec, sub.op)
        except ValueError as e:
            problems.add(f"{where}: field 'calc_expect_func_file'", str(e))
        sub.draws = {k: case for k, (case, _) in values.items()}  # drawn when written: one subcase at a time
        return len(problems.lines) == before
    if len(problems.lines) > before:
        return False
    names = [d.get("name") for d in sub.inputs]
    try:
        sub.golden = parse_cases({"cases": [{"name": sub.name, "op": sub.op, "dtype": values[0][1] if values else "",
                                             "seed": seed, "attrs": sub.attrs,
                                             "inputs": {n: values[k][0].inputs["x"].to_dict()
                                                        for k, n in enumerate(names)}}]})[0]
    except CaseError as e:
        problems.add(where, str(e).replace(f"case {sub.name!r}: ", ""))
        return False
    sub.golden_names = dict(enumerate(names))
    return True


def _plan(sub: Subcase, seed: int, where: str, problems: _Problems) -> bool:
    """How the twin computes ``sub`` (see :class:`Subcase`), checking the shapes and types
    against the op; adds each problem and returns False when there is one."""
    sig = SIGNATURES[sub.op]
    before = len(problems.lines)
    if len(sub.inputs) > len(sig.inputs) or len(sub.inputs) < len(sig.inputs) - len(sig.optional):
        problems.add(f"{where}: field 'input_desc'", f"{sub.op} takes inputs {list(sig.inputs)}, the case gives "
                                                     f"{len(sub.inputs)}")
        return False
    if len(sub.outputs) != len(sig.outputs):
        problems.add(f"{where}: field 'output_desc'", f"{sub.op} has outputs {list(sig.outputs)}, the case gives "
                                                      f"{len(sub.outputs)}")
        return False
    unknown = sorted(set(sub.attrs) - set(sig.attrs))
    for name in unknown:
        problems.add(f"{where}: field 'attr'", f"{name!r} is not an attribute of {sub.op} ({list(sig.attrs)})")
    by_name = dict(zip(sig.inputs, range(len(sub.inputs))))
    values = {}
    for k, desc in enumerate(sub.inputs):
        if sig.inputs[k] in _CONSTS.get(sub.op, ()) and "value" not in desc:
            problems.add(f"{where}: field 'input_desc[{k}]'", f"{sub.op}'s {sig.inputs[k]} needs a value "
                                                              "(is_const with value)")
            continue
        spec, dtype = _input_spec(sub, k)
        case = _checked_spec(k, spec, dtype, seed, where, problems)
        if case is not None:
            values[k] = (case, dtype)
    if len(problems.lines) > before:
        return False
    main = {"Tile": "x", "TileD": "x", "ApplyAdamW": "var", "TransData": "src", "Transpose": "x"}[sub.op]
    dtype = values[by_name[main]][1]
    for name in (*_CONSTS.get(sub.op, ()), *_SCALARS.get(sub.op, ())):
        k = by_name[name]
        sub.extra[k] = generate_inputs(values[k][0])["x"]
    attrs = dict(sub.attrs)
    try:
        op, tensors, golden_attrs = _golden_op(sub, by_name, attrs)
    except ValueError as e:
        problems.add(f"{where}: field {e.args[0]!r}", e.args[1])
        return False
    for name, k in by_name.items():
        if k not in sub.extra and name not in tensors:
            sub.extra[k] = generate_inputs(values[k][0])["x"]  # an input the op does not read (amsgrad off)
    for name in (*tensors, *_SCALARS.get(sub.op, ())):
        if values[by_name[name]][1] != dtype:
            problems.add(f"{where}: field 'input_desc[{by_name[name]}].type'",
                         f"{values[by_name[name]][1]}: {sub.op} takes every tensor in {main}'s type, {dtype}")
    for k, desc in enumerate(sub.outputs):
        if TYPES[desc["type"]] != dtype:
            problems.add(f"{where}: field 'output_desc[{k}].type'", f"{desc['type']}: {sub.op}'s outputs have "
                                                                    f"the inputs' type, {dtype}")
    if len(problems.lines) > before:
        return False
    golden_inputs = {_GOLDEN_NAMES.get((sub.op, name), name): values[by_name[name]][0].inputs["x"].to_dict()
                     for name in tensors}
    try:
        sub.golden = parse_cases({"cases": [{"name": sub.name, "op": op, "dtype": dtype, "seed": seed,
                                             "inputs": golden_inputs, "attrs": golden_attrs}]})[0]
    except CaseError as e:
        problems.add(where, str(e).replace(f"case {sub.name!r}: ", ""))
        return False
    sub.golden_names = {by_name[n]: _GOLDEN_NAMES.get((sub.op, n), n) for n in tensors}
    entry = REGISTRY[op]
    shapes = {n: s.shape for n, s in sub.golden.inputs.items()}
    want = entry.output_shapes(shapes, sub.golden.attrs, DEVICE_DTYPES[dtype].itemsize)
    for k, (out_name, shape) in enumerate(want.items()):
        given = sub.outputs[k].get("shape")
        if given is not None and tuple(given) != tuple(shape):
            problems.add(f"{where}: field 'output_desc[{k}].shape'", f"{given}: {sub.op} gives {list(shape)}")
    return len(problems.lines) == before


def _user_ops() -> set:
    """The user's registered ops (:mod:`ascend_numba.ops.user`): an msOpST case may name one."""
    return set(OPS) - SHIPPED


_GOLDEN_NAMES = {("TransData", "src"): "x"}  # msOpST input name -> the golden op's, where they differ
_CONSTS = {"Tile": ("multiples",), "Transpose": ("perm",)}  # inputs that must come as values
_SCALARS = {"ApplyAdamW": SCALAR_NAMES}


def _golden_op(sub: Subcase, by_name: dict, attrs: dict) -> tuple[str, tuple, dict]:
    """The twin's op, the msOpST inputs it computes from, and its golden attributes; raises
    ValueError((field, problem))."""
    if sub.op in ("Tile", "TileD"):
        reps = sub.extra[by_name["multiples"]] if sub.op == "Tile" else np.asarray(attrs.get("multiples", []))
        if sub.op == "TileD" and "multiples" not in attrs:
            raise ValueError("attr", "TileD needs the attribute multiples")
        return "tile", ("x",), {"reps": [int(r) for r in np.asarray(reps).reshape(-1)]}
    if sub.op == "Transpose":
        perm = [int(p) for p in sub.extra[by_name["perm"]].reshape(-1)]
        if perm != [1, 0] or len(sub.inputs[by_name["x"]]["shape"]) != 2:
            raise ValueError("input_desc", f"Transpose with perm {perm} on a {len(sub.inputs[by_name['x']]['shape'])}"
                                           "-D x: the twin's TTRANS kernel transposes 2-D tensors, perm [1, 0] only")
        return "transpose2d", ("x",), {}
    if sub.op == "TransData":
        fixed = transdata_fixed_attr(attrs)
        if fixed is not None:
            name, plain = fixed
            raise ValueError("attr", f"TransData {name}={attrs[name]!r}: the twin's conversions take {plain}")
        if "src_format" not in attrs or "dst_format" not in attrs:
            raise ValueError("attr", "TransData needs the attributes src_format and dst_format")
        golden = {"src": attrs["src_format"], "dst": attrs["dst_format"]}
        channels = transdata_channels(golden["src"], golden["dst"], sub.outputs[0])
        if channels is not None:
            golden["c"] = channels
        return "convert_format", ("src",), golden
    scalars = {n: float(sub.extra[by_name[n]].astype(np.float64).reshape(-1)[0]) for n in _SCALARS["ApplyAdamW"]}
    amsgrad, maximize = bool(attrs.get("amsgrad", False)), bool(attrs.get("maximize", False))
    tensors = ("var", "m", "v", "grad") + (("max_grad_norm",) if amsgrad else ())
    if amsgrad and "max_grad_norm" not in by_name:
        raise ValueError("input_desc", "ApplyAdamW with amsgrad needs the input max_grad_norm")
    return "apply_adamw", tensors, {**scalars, "amsgrad": amsgrad, "maximize": maximize}


def msopst_threshold(sub: Subcase, override: tuple | None) -> tuple:
    return tuple(override) if override is not None else sub.threshold


# ---- gen ---------------------------------------------------------------------------------------

def gen_msopst(subcases: list[Subcase], out_dir, *, seed: int = 0, run=None) -> dict:
    """Write every subcase in msOpST's layout under ``out_dir``: ``<op>/data/<subcase>_input<i>_<type>.bin``
    and ``<op>/data/<subcase>_expect_np_output<i>_<type>.bin``, and ``<op>/manifest.json``; the
    goldens come from ``run(cases, staging_dir)`` (the golden runner, with its workers, cache and
    interrupt safety).  Returns the golden run's summary."""
    out_dir = Path(out_dir)
    staging = out_dir / ".msopst-golden"
    ops = sorted({s.op for s in subcases})
    for op in ops:
        (out_dir / op.lower() / "manifest.json").unlink(missing_ok=True)  # written last: says complete
    summary = run([s.golden for s in subcases if s.golden is not None], staging)
    manifests: dict[str, list] = {op: [] for op in ops}
    for sub in subcases:
        data = out_dir / sub.op.lower() / "data"
        data.mkdir(parents=True, exist_ok=True)
        meta = json.loads((staging / sub.name / "case.json").read_text()) if sub.golden is not None else {}
        if sub.draws:
            sub.extra = {k: generate_inputs(case)["x"] for k, case in sub.draws.items()}
        files = []
        for k, desc in enumerate(sub.inputs):
            target = data / input_file(sub, k)
            if k in sub.golden_names:
                listing = meta["inputs"][sub.golden_names[k]]
                os.replace(staging / sub.name / listing["file"], target)
                digest = listing["sha256"]
            else:
                little_endian(sub.extra[k]).tofile(target)
                digest = sha256_of(sub.extra[k])
            files.append({"input": k, "name": desc.get("name"), "file": f"data/{target.name}", "type": desc["type"],
                          "shape": list(_input_shape(sub, k)), "sha256": digest})
        if sub.golden is None:  # a user function's subcase: counted in the summary as a golden case is
            started = time.perf_counter()
            files += _expect_files(sub, data)
            sub.extra = {}  # its inputs are written: free them before the next subcase draws
            summary.cases += 1
            summary.bytes += sum((data.parent / f["file"]).stat().st_size for f in files)
            summary.seconds += time.perf_counter() - started
        for k, out_name in enumerate(REGISTRY[sub.golden.op].outputs if sub.golden is not None else ()):
            listing = meta["outputs"][out_name]
            target = data / expect_file(sub, k)
            os.replace(staging / sub.name / listing["file"], target)
            files.append({"output": k, "name": out_name, "file": f"data/{target.name}", "type": sub.outputs[k]["type"],
                          "shape": listing["shape"], "sha256": listing["sha256"]})
        shutil.rmtree(staging / sub.name, ignore_errors=True)
        manifests[sub.op].append({"subcase": sub.name, "case_name": sub.case_name, "case_file": str(sub.file),
                                  "attrs": sub.attrs, "golden_attrs": sub.golden.attrs if sub.golden else None,
                                  "seed": sub.golden.seed if sub.golden else None,
                                  "error_threshold": list(sub.threshold), "files": files})
    shutil.rmtree(staging, ignore_errors=True)
    for op, entries in manifests.items():
        manifest = out_dir / op.lower() / "manifest.json"
        tmp = manifest.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"op": op, "seed": seed, "library": "ascend_numba", "version": __version__,
                                   "subcases": entries}, indent=2, sort_keys=True, default=_jsonable))
        os.replace(tmp, manifest)
    return summary


def _expect_files(sub: Subcase, data: Path) -> list[dict]:
    """A user function's subcase: its outputs computed and written (case.json lists a golden's)."""
    outputs = [{**d, "numpy": dtype_by_name(TYPES[d["type"]])} for d in sub.outputs]
    try:
        arrays = call_expect_func(sub.expect_func, sub.inputs, sub.extra, outputs, sub.attrs)
    except ValueError as e:
        raise MsopstCaseError(f"case file {sub.file}: case {sub.case_name!r}: {e}") from None
    files = []
    for k, array in enumerate(arrays):
        target = data / expect_file(sub, k)
        little_endian(array).tofile(target)
        files.append({"output": k, "name": sub.outputs[k].get("name"), "file": f"data/{target.name}",
                      "type": sub.outputs[k]["type"], "shape": list(array.shape), "sha256": sha256_of(array)})
    return files


def _input_shape(sub: Subcase, k: int) -> tuple:
    if k in sub.extra:
        return sub.extra[k].shape
    return sub.golden.inputs[sub.golden_names[k]].shape


def _jsonable(value: Any):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")
