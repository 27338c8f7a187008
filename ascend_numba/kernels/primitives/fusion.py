"""Tile fusion: a Compute written as a short program of vector ops, run as one pass (SPEC §3).

The PTO compiler fuses a run of elementwise tile ops into one loop over the tiles; each op still
rounds as the device's vector unit does, so the bits cannot change.  :func:`vector_program`
turns a function written with the vector-op vocabulary into such a loop::

    @vector_program(temps=("t",))
    def scale_add(x, y, out, t, a):
        t = muls(x, a)          # each line is one vector op over the whole tiles
        out = add(t, y)

    scale_add(ctx, n, True, x_loc, y_loc, z_loc, t_loc, 2.0)   # (ctx, count, fuse, tiles and scalars)

A program's body is a sequence of ``tile = op(operands)`` lines (every vector op declared in
:mod:`ascend_numba.host.primitives`, with the primitives' operand order minus ``ctx``, the
destination and the count), ``if``/``else`` on flag parameters, and calls of other programs
(inlined: a program may pass one tile under two of its callee's names, as an in-place update
does).  Every parameter is a tile (a destination or a tile operand), a scalar (an operand
expression of scalar parameters: ``beta1 - one``, ``-one``; no number literals, whose type
would change the arithmetic) or a flag (read by ``if`` tests; a compile-time constant at the
call folds its branches away).

What a call does, by lane:

* plain lanes: one pass over the tiles, in blocks of ``config.FUSION_BLOCK`` elements; per
  element every op in program order, rounding in its destination tile's type exactly as the
  primitive would (a fp16 tile's result is rounded to fp16 after every op, through the CPU's
  conversions, and such a pass works on ``config.FUSION_INTERLEAVE_F16`` elements side by
  side), temporaries (``temps``) kept in registers and never written to UB, every other
  assigned tile stored; the part block at the end element by element.  Between blocks the pass
  advances the lane's preload by the share of the ops' advances that the elements done so far
  stand for.  The tiles must not overlap and must hold ``count`` elements each, and no Adds /
  Muls scalar may be a NaN; otherwise the ops run one by one over the whole tiles, exactly as the
  primitives compute them, in one slow loop that is cheap to compile.  ``fuse`` False runs the
  op-by-op Compute (the primitives' calls); a call whose ``fuse`` is a compile-time constant
  compiles only the path it names, so a fused kernel never compiles the primitives' loops.
* traced and checked lanes: the ops one by one over the whole tiles, so every op is counted and
  every operand's UB range checked exactly as the unfused Compute's.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass, field

import numpy as np
from numba import types

from ...config import FUSION_BLOCK, FUSION_INTERLEAVE_F16
from ..._numba_compat.extending import (
    AbstractTemplate, Flags, as_dtype, infer_global, lower_builtin, python_twin, signature,
)
from ..._numba_compat.jit import JIT_OPTIONS, compile_linked_subroutine, jit
from ..half import (
    bf16_to_f32, f16_to_f32, f16_to_f32_quiet, f32_round_f16, f32_round_f16_quiet, f32_to_bf16, f32_to_f16,
    f32_to_f16_quiet,
)
from ..interpret import python_function
from ..lane import Lane, _address
from ...host.primitives import VECTOR_OPS, element_expression
from . import vector
from .preload import advance_preload

__all__ = ["vector_program", "VectorProgramError", "parse_program"]

# An interleaved pass takes its block in FUSION_INTERLEAVE_F16 equal parts.
if FUSION_BLOCK % FUSION_INTERLEAVE_F16:
    raise ValueError(f"config.FUSION_BLOCK ({FUSION_BLOCK}) must be a multiple of config.FUSION_INTERLEAVE_F16 "
                     f"({FUSION_INTERLEAVE_F16})")


class VectorProgramError(ValueError):
    """A vector program that cannot be compiled as written (raised when it is decorated)."""


@dataclass(frozen=True)
class _OpSpec:
    """A vector op as the fused pass emits it, from its declaration (host.primitives)."""

    tiles: int  # tile operands
    scalars: int  # scalar operands
    kind: str  # "arith", "fill" (the scalar), "cast" (bits to bits)
    element: str  # the expression of one element ({0}, {1}: tile values, then scalars), or the cast's conversion
    element_f16: str | None  # the expression for fp16 destination tiles, where it differs
    quiets: bool  # an arithmetic result: a number or a quiet NaN

    @property
    def with_scalar(self) -> bool:
        """An op of a tile and a scalar (Adds, Muls): a NaN scalar is its NaN everywhere."""
        return (self.tiles, self.scalars) == (1, 1)


def _expression(element, arity: int) -> str:
    # A plain element function is inlined; an element intrinsic is called by its name.
    if callable(element):
        return element_expression(element)
    return f"{element}({', '.join(f'{{{i}}}' for i in range(arity))})"


OPS = {name: _OpSpec(p.tiles, p.scalars, p.kind,
                     p.element if p.kind == "cast" else _expression(p.element, p.tiles + p.scalars),
                     _expression(p.element_f16, p.tiles + p.scalars) if p.element_f16 else None, p.quiets)
       for name, p in VECTOR_OPS.items()}

# Scalar operands and flag tests: parameters combined by arithmetic, comparisons and logic.  Number
# literals only in tests (``variant == 0``).
_EXPR_NODES = (ast.Name, ast.Load, ast.UnaryOp, ast.USub, ast.UAdd, ast.Not, ast.BinOp, ast.Add, ast.Sub, ast.Mult,
               ast.Div, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.BoolOp, ast.And,
               ast.Or)


@dataclass
class _Op:
    dst: str
    op: str
    tiles: list
    scalars: list  # ast expressions


@dataclass
class _If:
    test: ast.expr
    then: list
    orelse: list


@dataclass
class _Program:
    name: str
    params: list
    body: list
    temps: tuple
    roles: dict = field(default_factory=dict)  # param -> "tile" | "scalar" | "flag"

    def tile_uses(self) -> dict:
        """Each tile parameter: "src" when some op reads it, else "dst" (written only)."""
        read = {t for s in _ops_of(self.body) for t in s.tiles}
        return {p: "src" if p in read else "dst" for p in self.params if self.roles.get(p) == "tile"}


def vector_program(func=None, *, temps: tuple = ()):
    """Make a vector program (tile fusion) of ``func``; see the module doc.  ``temps``: tiles
    whose values are dead once the program ends (kept in registers when fused).

    The result is called from kernels as ``program(ctx, count, fuse, *params)``: ``count``
    elements of every tile (each tile view starts where its data does), ``fuse`` False for the
    op-by-op Compute.  Raises VectorProgramError for a body it cannot compile."""
    if func is None:
        return lambda f: vector_program(f, temps=temps)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError):
        raise VectorProgramError(f"vector program {func.__qualname__}: its source cannot be read (a program is "
                                 "compiled from its source)") from None
    program = parse_program(tree.body[0], func.__qualname__, func.__code__.co_firstlineno,
                            lambda name: getattr(func.__globals__.get(name), "vector_program", None), tuple(temps))
    return _make_stub(program, func)


# ---- parsing --------------------------------------------------------------------------------------

class _Parse:
    """What a parse needs to name a problem and to find the programs a body calls."""

    def __init__(self, name: str, first_line: int, lookup):
        self.name, self.first_line, self.lookup = name, first_line, lookup

    def fail(self, node, problem: str):
        line = self.first_line + getattr(node, "lineno", 1) - 1
        raise VectorProgramError(f"vector program {self.name} (line {line}): {problem}")


def parse_program(fdef: ast.FunctionDef, name: str, first_line: int, lookup, temps: tuple = ()) -> _Program:
    """The program a ``def`` written in the vector-op vocabulary stands for (calls of other
    programs inlined; ``lookup(name)`` gives a called program or None).  Plain AST work: the
    linter reads programs from source with it.  Raises VectorProgramError."""
    func = _Parse(name, first_line, lookup)
    args = fdef.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        func.fail(fdef, "parameters must be plain positional names (no defaults, *args or keywords)")
    params = [a.arg for a in args.args]
    for p in params:
        if p.startswith("_") or p in ("ctx", "count", "fuse"):
            func.fail(fdef, f"parameter {p!r}: names starting with '_', and ctx, count, fuse, are reserved")
    body = fdef.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    program = _Program(name, params, _statements(func, body, set(params)), temps)
    program.roles = _roles(func, program)
    for t in temps:
        if program.roles.get(t) != "tile":
            func.fail(fdef, f"temp {t!r} is not a tile of the program")
    return program


def _statements(func, nodes, names: set) -> list:
    out = []
    for node in nodes:
        if isinstance(node, ast.Pass):
            continue
        if isinstance(node, ast.If):
            _check_expr(func, node.test, names, numbers=True)
            out.append(_If(node.test, _statements(func, node.body, names), _statements(func, node.orelse, names)))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            out.append(_op(func, node, names))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            out.extend(_inline(func, node.value, names))
        else:
            func.fail(node, "each line is 'tile = op(...)', a call of another vector program, or an if/else "
                              "on flags")
    return out


def _op(func, node: ast.Assign, names: set) -> _Op:
    dst, call = node.targets[0].id, node.value
    spec = OPS.get(call.func.id)
    if spec is None:
        func.fail(node, f"{call.func.id!r} is not a vector op; ops are {', '.join(OPS)}")
    if call.keywords or len(call.args) != spec.tiles + spec.scalars:
        func.fail(node, f"{call.func.id} takes {spec.tiles} tile and {spec.scalars} scalar operand(s)")
    if dst not in names:
        func.fail(node, f"{dst!r} is not a parameter (a program writes only the tiles it is given)")
    tiles = []
    for arg in call.args[:spec.tiles]:
        if not isinstance(arg, ast.Name) or arg.id not in names:
            func.fail(node, f"{call.func.id}: tile operands are parameters, got {ast.unparse(arg)!r}")
        tiles.append(arg.id)
    for arg in call.args[spec.tiles:]:
        _check_expr(func, arg, names, numbers=False)
    return _Op(dst, call.func.id, tiles, list(call.args[spec.tiles:]))


def _check_expr(func, expr, names: set, numbers: bool):
    for node in ast.walk(expr):
        if isinstance(node, ast.Constant) and numbers and isinstance(node.value, (bool, int)):
            continue
        if not isinstance(node, _EXPR_NODES):
            what = "a number" if isinstance(node, ast.Constant) else type(node).__name__
            func.fail(expr, f"{ast.unparse(expr)!r}: {what} is not allowed here (scalar operands combine "
                              f"scalar parameters: pass numbers as parameters, their type decides the arithmetic)")
        if isinstance(node, ast.Name) and node.id not in names:
            func.fail(expr, f"{node.id!r} is not a parameter")


def _inline(func, call: ast.Call, names: set) -> list:
    program = func.lookup(call.func.id)
    if program is None:
        func.fail(call, f"{call.func.id!r} is neither a vector op assigned to a tile nor a vector program")
    if call.keywords or len(call.args) != len(program.params):
        func.fail(call, f"{program.name} takes {len(program.params)} arguments")
    binding = {}
    for param, arg in zip(program.params, call.args):
        if program.roles.get(param) == "tile":
            if not isinstance(arg, ast.Name) or arg.id not in names:
                func.fail(call, f"{program.name}: tile {param!r} must be given a tile parameter, "
                                  f"got {ast.unparse(arg)!r}")
        else:
            _check_expr(func, arg, names, numbers=program.roles.get(param) == "flag")
        binding[param] = arg
    return _substituted(program.body, binding)


class _Rename(ast.NodeTransformer):
    def __init__(self, binding):
        self.binding = binding

    def visit_Name(self, node):
        return ast.copy_location(_copy(self.binding[node.id]), node) if node.id in self.binding else node


def _copy(expr):
    return ast.parse(ast.unparse(expr), mode="eval").body


def _substituted(body: list, binding: dict) -> list:
    def expr(e):
        return _Rename(binding).visit(_copy(e))

    def name(n):
        return binding[n].id

    out = []
    for s in body:
        if isinstance(s, _Op):
            out.append(_Op(name(s.dst), s.op, [name(t) for t in s.tiles], [expr(e) for e in s.scalars]))
        else:
            out.append(_If(expr(s.test), _substituted(s.then, binding), _substituted(s.orelse, binding)))
    return out


def _roles(func, program: _Program) -> dict:
    roles: dict = {}

    def give(n, role):
        if roles.setdefault(n, role) != role:
            func.fail(None, f"{n!r} is used both as a {roles[n]} and as a {role}")

    def walk(body):
        for s in body:
            if isinstance(s, _Op):
                for t in (s.dst, *s.tiles):
                    give(t, "tile")
                for e in s.scalars:
                    for n in _names(e):
                        give(n, "scalar")
            else:
                for n in _names(s.test):
                    give(n, "flag")
                walk(s.then)
                walk(s.orelse)
    walk(program.body)
    return roles


def _names(expr) -> list:
    return [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]


def _check_temps_written_first(program: _Program, body: list):
    """A temp lives in a register when fused: every path must write it before reading it (checked
    per compile-time flag values, when the program is compiled)."""
    def walk(body, written: set) -> set:
        for s in body:
            if isinstance(s, _Op):
                for t in s.tiles:
                    if t in program.temps and t not in written:
                        raise VectorProgramError(f"vector program {program.name}: temp {t!r} may be read "
                                                 f"before it is written (by {s.op} into {s.dst!r})")
                written = written | {s.dst}
            else:
                written = walk(s.then, written) & walk(s.orelse, written)
        return written
    walk(body, set())


# ---- code generation --------------------------------------------------------------------------------

def _pruned(body: list, static: dict) -> list:
    """The body with every test on compile-time flags decided."""
    out = []
    for s in body:
        if isinstance(s, _If) and all(n in static for n in _names(s.test)):
            out.extend(_pruned(s.then if eval(compile(ast.Expression(s.test), "<test>", "eval"), {}, dict(static))
                               else s.orelse, static))
        elif isinstance(s, _If):
            out.append(_If(s.test, _pruned(s.then, static), _pruned(s.orelse, static)))
        else:
            out.append(s)
    return out


def _ops_of(body: list):
    for s in body:
        if isinstance(s, _Op):
            yield s
        else:
            yield from _ops_of(s.then)
            yield from _ops_of(s.orelse)


def _if_lines(s: _If, indent: str, lines_of) -> list:
    """An if/else on flags around the lines ``lines_of(body, indent)`` gives for each branch."""
    lines = [f"{indent}if {ast.unparse(s.test)}:", *(lines_of(s.then, indent + "    ") or [indent + "    pass"])]
    if s.orelse:
        lines += [f"{indent}else:", *lines_of(s.orelse, indent + "    ")]
    return lines


def _unfused_lines(body: list, indent: str) -> list:
    """The primitives' calls, one per op, over the whole tiles."""
    lines = []
    for s in body:
        if isinstance(s, _If):
            lines += _if_lines(s, indent, _unfused_lines)
            continue
        operands = [s.dst, *s.tiles, *(ast.unparse(e) for e in s.scalars)]
        lines.append(f"{indent}_p.{s.op}(ctx, {', '.join(operands)}, count)")
    return lines


class _Element:
    """One element of every op, in registers ``_r_<tile>``, written for the tiles' element types
    (``half``: the uint16 tiles, fp16 in arithmetic), in the primitives' own arithmetic.

    A register holds its tile's stored bits ("raw"), or for an op's result its value ("value":
    for a fp16 tile the float32 value the tile would hold, already rounded to fp16, so two ops in
    a row cost one rounding, not a conversion to fp16 and back; for other tiles the same thing
    as raw; "quiet": such a value known not to be a signalling NaN)."""

    def __init__(self, scalar_of: dict, half: set, nan_scalars: bool = False):
        self.scalar_of, self.half, self.nan_scalars = scalar_of, half, nan_scalars
        self.lines: list = []

    def value(self, t: str, forms: dict, quieting: bool = False) -> str:
        """Tile ``t``'s value as an operand; ``quieting``: of an op whose result quiets any NaN
        operand, for which the hardware's fp16 widening (which quiets a signalling NaN, NumPy's
        keeps it) gives the same bits at a fraction of the instructions."""
        if forms[t] != "raw" or t not in self.half:
            return f"_r_{t}"
        return f"f16_to_f32_quiet(_r_{t})" if quieting else f"f16_to_f32(_r_{t})"

    def raw(self, t: str, forms: dict) -> str:
        if forms[t] == "raw" or t not in self.half:
            return f"_r_{t}"
        return f"f32_to_f16_quiet(_r_{t})" if forms[t] == "quiet" else f"f32_to_f16(_r_{t})"

    def rounded(self, t: str, expr: str, quiet: bool) -> str:
        """What tile ``t`` would read back of an arithmetic result stored into it."""
        if t not in self.half:
            return f"_dt_{t}({expr})"
        return f"f32_round_f16_quiet({expr})" if quiet else f"f32_round_f16({expr})"

    def emit(self, body: list, indent: str, forms: dict) -> dict:
        for s in body:
            if isinstance(s, _If):
                self._branch(s, indent, forms)
                continue
            spec = OPS[s.op]
            if spec.kind == "cast":  # a cast reads and writes bits: dst[i] = conversion(src[i])
                self.lines.append(f"{indent}_r_{s.dst} = _dt_{s.dst}({spec.element}({self.raw(s.tiles[0], forms)}))")
                forms[s.dst] = "raw"
                continue
            # A result that is a number or a quiet NaN (the CPU's arithmetic) is rounded with the
            # hardware's conversions alone (see kernels.half); a selection may be a signalling NaN.
            quiet = spec.quiets
            a = [self.value(t, forms, quiet) for t in s.tiles]
            if spec.with_scalar and self.nan_scalars:
                # A NaN scalar stands in for the operand: its NaN, quieted, everywhere (the
                # primitives' rule, vector._with_scalar).
                v = self.scalar_of[id(s)]
                a[0] = f"({v} if {v} != {v} else {a[0]})"
            element = spec.element_f16 if spec.element_f16 and s.dst in self.half else spec.element
            result = element.format(*a, *([self.scalar_of[id(s)]] if spec.scalars else []))
            self.lines.append(f"{indent}_r_{s.dst} = {self.rounded(s.dst, result, quiet)}")
            forms[s.dst] = "quiet" if quiet else "value"
        return forms

    def _branch(self, s: _If, indent: str, forms: dict):
        self.lines.append(f"{indent}if {ast.unparse(s.test)}:")
        start = len(self.lines)
        then = self.emit(s.then, indent + "    ", dict(forms))
        then_end = len(self.lines)
        self.lines.append(f"{indent}else:")
        orelse = self.emit(s.orelse, indent + "    ", dict(forms))
        # A register raw on one path and a value on the other leaves both raw; a value and a
        # quiet value, a value.
        for t in sorted(set(then) | set(orelse)):
            f_then, f_else = then.get(t, forms.get(t)), orelse.get(t, forms.get(t))
            if f_then == f_else:
                forms[t] = f_then
            elif "raw" not in (f_then, f_else):
                forms[t] = "value"
            else:
                if f_then != "raw":
                    self.lines.insert(then_end, f"{indent}    _r_{t} = {self.raw(t, then)}")
                    then_end += 1
                else:
                    self.lines.append(f"{indent}    _r_{t} = {self.raw(t, orelse)}")
                forms[t] = "raw"
        if then_end == start:
            self.lines.insert(start, f"{indent}    pass")
        if self.lines[-1] == f"{indent}else:":
            self.lines.pop()


def _count_lines(body: list, indent: str) -> list:
    """``_nops``: the ops the program runs (a constant unless a flag is known only at run time)."""
    static = sum(1 for s in body if isinstance(s, _Op))
    lines = [f"{indent}_nops += {static}"] if static else []
    for s in body:
        if isinstance(s, _If):
            lines += _if_lines(s, indent, _count_lines)
    return lines


@jit
def _disjoint(starts, ends):
    """Whether the byte ranges ``[starts[k], ends[k])`` are pairwise disjoint."""
    for i in range(len(starts)):
        for j in range(i + 1, len(starts)):
            if starts[i] < ends[j] and starts[j] < ends[i]:
                return False
    return True


def _loads_and_stores(program: _Program, body: list) -> tuple[list, list]:
    """Tiles each element loads first (read before written, or written only on some paths) and
    stores last (every tile written that is not a temp), in parameter order."""
    loads: set = set()

    def walk(body, written: frozenset) -> frozenset:
        for s in body:
            if isinstance(s, _Op):
                loads.update(t for t in s.tiles if t not in written)
                written = written | {s.dst}
            else:
                then, orelse = walk(s.then, written), walk(s.orelse, written)
                loads.update((then ^ orelse) - set(program.temps))  # written on one path: keep the other's
                written = then & orelse
        return written
    walk(body, frozenset())
    stored = {s.dst for s in _ops_of(body)} - set(program.temps)
    order = [p for p in program.params if program.roles.get(p) == "tile"]
    return [t for t in order if t in loads], [t for t in order if t in stored]


def _interleaved(lines: list, ways: int) -> list:
    """The element loop's body doing ``ways`` elements ``_i + k * FUSION_BLOCK // ways`` at once:
    each statement once per element, with that element's registers (``_r<k>_<tile>``: no
    parameter starts with ``_``), one after the other, so the CPU has ``ways`` independent chains
    to overlap; each ``if``/``else`` line once (its test reads flags only, the same for all)."""
    if ways == 1:
        return lines
    out = []
    for line in lines:
        if line.strip().startswith(("if ", "else:")) or line.strip() == "pass":
            out.append(line)
            continue
        for k in range(ways):
            out.append(re.sub(r"\b_r_", f"_r{k}_", line).replace("[_i]", f"[_i + {k * FUSION_BLOCK // ways}]"))
    return out


def _guarded(body: list, guard: str = "") -> list:
    """Every op of ``body`` in program order with the flag test that runs it ("" always)."""
    out = []
    for s in body:
        if isinstance(s, _Op):
            out.append((guard, s))
            continue
        test = f"({ast.unparse(s.test)})"
        out += _guarded(s.then, f"{guard} and {test}" if guard else test)
        out += _guarded(s.orelse, f"{guard} and not {test}" if guard else f"not {test}")
    return out


def _stepwise_lines(body: list, scalar_of: dict, half: set, indent: str) -> list:
    """The ops one by one over ``count`` elements of the tiles, as the primitives compute them
    (each op over every element before the next, ``min`` of the count and its tiles' sizes, a
    NaN Adds / Muls scalar's NaN everywhere, the preload advanced once per op), in one element
    loop that picks the op: slow, for the pass's rare fallback, and a fraction of the primitives'
    compile."""
    ops = _guarded(body)
    sizes = []
    for guard, s in ops:
        # min of four for every op (one overload to compile): absent operands repeat the dst.
        n = f"max(min(count, {', '.join(f'{t}.size' for t in [s.dst, *s.tiles, s.dst, s.dst][:3])}), 0)"
        sizes.append(f"{n} if {guard} else -1" if guard else n)
    lines = [f"{indent}_sizes = ({', '.join(sizes)},)",
             f"{indent}for _k in range({len(ops)}):",
             f"{indent}    _n = _sizes[_k]",
             f"{indent}    if _n < 0:",
             f"{indent}        continue",
             f"{indent}    advance_preload(ctx)",
             f"{indent}    for _i in range(_n):"]
    case = indent + "            "
    for k, (_, s) in enumerate(ops):
        compute = _Element(scalar_of, half, nan_scalars=True)
        forms = compute.emit([s], case, {t: "raw" for t in s.tiles})
        step = [*(f"{case}_r_{t} = {t}[_i]" for t in dict.fromkeys(s.tiles)), *compute.lines,
                f"{case}{s.dst}[_i] = {compute.raw(s.dst, forms)}"]
        lines.append(f"{indent}        {'if' if k == 0 else 'elif'} _k == {k}:")
        # Each op's registers of its own (a tile's bits in one op, its fp32 value in another),
        # named apart from the pass's.
        lines += [re.sub(r"\b_r_", f"_q{k}_", line) for line in step]
    return lines


def _source(program: _Program, body: list, fused: bool, half: set = frozenset(), fuse=None) -> str:
    """``_impl``: the op-by-op Compute (the primitives' calls, one per op), or (``fused``) the
    pass (whole blocks, then the last part block's elements one at a time) with the ops one by
    one (:func:`_stepwise_lines`) as its fallback; ``half``: the uint16 tiles (fp16
    arithmetic); ``fuse``: its value when the call passes a constant, else None (a run-time
    False then runs the op-by-op Compute, compiled only for such calls)."""
    params = ", ".join(["ctx", "count", "fuse", *program.params])
    call = f"_op_by_op({', '.join(['ctx', 'count', *program.params])})"
    op_by_op = "\n".join([f"def _op_by_op({', '.join(['ctx', 'count', *program.params])}):",
                          *(_unfused_lines(body, "    ") or ["    pass"]), ""])
    if not fused or fuse is False:
        return "\n".join([op_by_op, f"def _impl({params}):", f"    {call}", ""])
    tiles = [t for t in program.params if program.roles.get(t) == "tile"
             and any(t == s.dst or t in s.tiles for s in _ops_of(body))]
    loads, stores = _loads_and_stores(program, body)
    # Each op's scalar operand in its destination's type, as the primitive takes it (once per call).
    scalar_of, scalar_lines, operand_scalars = {}, [], []
    for k, s in enumerate(_ops_of(body)):
        if OPS[s.op].scalars:
            scalar_of[id(s)] = f"_s{k}"
            if OPS[s.op].with_scalar:
                operand_scalars.append(f"_s{k}")
            # As _vscalar takes it: a fp16 tile's scalar is the fp16 value nearest it.
            value = ast.unparse(s.scalars[0])
            scalar_lines.append(f"    _s{k} = f32_round_f16(np.float32({value}))" if s.dst in half
                                else f"    _s{k} = _dt_{s.dst}({value})")
    # The tiles hold count elements each and do not overlap, and no Adds / Muls scalar is a NaN
    # (the primitive's own rule for that): else the ops one by one.
    starts = ", ".join(f"_address({t})" for t in tiles)
    ends = ", ".join(f"_address({t}) + count * {t}.itemsize" for t in tiles)
    sizes = ", ".join(f"{t}.size" for t in tiles)
    fits = [f"    _ok = count > 0 and min(({sizes},)) >= count and _disjoint(({starts},), ({ends},))",
            *(f"    _ok = _ok and {v} == {v}" for v in operand_scalars)]
    element = "                "
    compute = _Element(scalar_of, set(half))
    forms = compute.emit(body, element, {t: "raw" for t in loads})
    # One element: its loads, the ops in registers, its stores (indexed by _i).
    one = [*(f"{element}_r_{t} = _v_{t}[_i]" for t in loads), *compute.lines,
           *(f"{element}_v_{t}[_i] = {compute.raw(t, forms)}" for t in stores)]
    # Chains of fp16 roundings run FUSION_INTERLEAVE_F16 elements side by side (see config).
    ways = FUSION_INTERLEAVE_F16 if any(OPS[s.op].kind != "cast" and s.dst in half for s in _ops_of(body)) else 1
    return "\n".join([
        *([op_by_op] if fuse is None else []),
        f"def _impl({params}):",
        *(["    if fuse == 0:", f"        {call}", "        return"] if fuse is None else []),
        *scalar_lines,
        *fits,
        "    if _ok:",
        "        _nops = 0",
        *_count_lines(body, "        "),
        "        _advanced = 0",
        # Whole blocks of a constant length (a vectorized loop with no remainder loop of its own).
        f"        _whole = count // {FUSION_BLOCK} * {FUSION_BLOCK}",
        f"        for _b in range(0, _whole, {FUSION_BLOCK}):",
        # The preload shares the unfused ops would have advanced by the end of this block.
        f"            _due = _nops * (_b + {FUSION_BLOCK}) // count",
        "            while _advanced < _due:",
        "                advance_preload(ctx)",
        "                _advanced += 1",
        # Views of the block, indexed from 0: the element loop vectorizes.
        *(f"            _v_{t} = {t}[_b:_b + {FUSION_BLOCK}]" for t in tiles),
        f"            for _i in range({FUSION_BLOCK // ways}):",
        *_interleaved(one, ways),
        # The last part block, element by element (the same lines, on views from its start),
        # then the preload's remaining shares.
        *(f"        _v_{t} = {t}[_whole:]" for t in tiles),
        "        for _i in range(count - _whole):",
        *(line[4:] for line in one),
        "        while _advanced < _nops:",
        "            advance_preload(ctx)",
        "            _advanced += 1",
        "    else:",
        *_stepwise_lines(body, scalar_of, set(half), "        "),
        "",
    ])


def _scope(dtypes: dict) -> dict:
    """The generated code's names: the primitives (``_p``), the conversions, and each tile's NumPy
    element type as ``_dt_<tile>`` (the primitives' stores cast to it)."""
    return {"_p": vector, "np": np, "_address": _address, "_disjoint": _disjoint, "advance_preload": advance_preload,
            **vector.ELEMENT_INTRINSICS,
            "f16_to_f32": f16_to_f32, "f32_to_f16": f32_to_f16, "bf16_to_f32": bf16_to_f32, "f32_to_bf16": f32_to_bf16,
            "f32_round_f16": f32_round_f16, "f32_round_f16_quiet": f32_round_f16_quiet,
            "f32_to_f16_quiet": f32_to_f16_quiet, "f16_to_f32_quiet": f16_to_f32_quiet,
            **{f"_dt_{t}": d for t, d in dtypes.items()}}


def _make_stub(program: _Program, func):
    params = ", ".join(["ctx", "count", "fuse", *program.params])
    namespace: dict = {}
    exec(f"def {func.__name__}({params}):\n    raise NotImplementedError  # compiled only\n", namespace)
    stub = namespace[func.__name__]
    stub.__doc__, stub.__module__, stub.__qualname__ = func.__doc__, func.__module__, func.__qualname__
    stub.vector_program = program
    impls: dict = {}

    def implementation(ctx, count, fuse, *args):
        static = {p: t.literal_value for p, t in zip(program.params, args)
                  if program.roles.get(p) == "flag" and isinstance(t, types.Literal)}
        dtypes = {p: as_dtype(t.dtype).type for p, t in zip(program.params, args)
                  if program.roles.get(p) == "tile" and isinstance(t, types.Array)}
        fused = isinstance(ctx, types.NamedTuple) and ctx.instance_class is Lane
        fuse_value = bool(fuse.literal_value) if isinstance(fuse, types.Literal) else None
        key = (fused, fuse_value, tuple(sorted(static.items())),
               tuple(sorted((p, d.__name__) for p, d in dtypes.items())))
        if key not in impls:
            body = _pruned(program.body, static)
            _check_temps_written_first(program, body)
            scope = _scope(dtypes)
            exec(_source(program, body, fused, {p for p, d in dtypes.items() if d is np.uint16}, fuse_value), scope)
            # Not cached on its own (no source file), but in each kernel calling it.
            if "_op_by_op" in scope:
                scope["_op_by_op"] = jit(scope["_op_by_op"])
            impls[key] = scope["_impl"]
        return impls[key]

    _register_call(stub, implementation)

    @python_twin(stub)
    def op_by_op(ctx, count, fuse, *args):
        # Interpret mode: the op-by-op Compute, the primitives' calls (the tests on flags at run time).
        if "python" not in impls:
            scope = _scope({})
            exec(_source(program, program.body, False), scope)
            impls["python"] = python_function(scope["_op_by_op"])
        impls["python"](ctx, count, *args)

    return stub


class _ProgramCall(AbstractTemplate):
    """Typing of a program's call: literal flags first, so their branches fold at compile time."""

    prefer_literal = True
    implementation = None

    def generic(self, args, kws):
        if kws:
            return None
        self.implementation(*args)  # generated and checked now: a bad program fails typing
        return signature(types.none, *args)


def _register_call(stub, implementation):
    """Make ``stub`` callable from compiled code: its ``_impl`` for the call's types is compiled as
    a subroutine of the caller (:func:`compile_linked_subroutine`), optimized and made into machine
    code once, inside the kernel; an ``@overload`` is also turned into machine code on its own
    first (the fused fp16 ApplyAdamW program's LLVM work outside the kernel: 0.70 -> 0.49 CPU s as
    a subroutine).  The flags are the house's: no NRT (a program allocates nothing), NumPy's
    error model."""
    template = type(f"_Call_{stub.__name__}", (_ProgramCall,),
                    {"key": stub, "implementation": staticmethod(implementation)})
    infer_global(stub, types.Function(template))

    @lower_builtin(stub, types.VarArg(types.Any))
    def lower_call(context, builder, sig, args):
        flags = Flags()
        flags.error_model = JIT_OPTIONS["error_model"]  # x/0 is inf, as on the device (see _numba_compat.jit)
        cres = compile_linked_subroutine(context, builder, implementation(*sig.args), sig, flags)
        context.call_internal(builder, cres.fndesc, sig, args)
        return context.get_dummy_value()
