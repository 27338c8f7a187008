"""A vector program's model: the ops it may use (from their declarations in
:mod:`ascend_numba.host.primitives`), its statements, and the parse of a function's source into
them (see :mod:`.fusion` for what a program is and how it runs).  The linter reads programs
through :func:`parse_program` too.

Plain Python: no Numba in this module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...host.primitives import PRIMITIVES, VECTOR_OPS, element_expression

__all__ = ["VectorProgramError", "OPS", "Op", "If", "Program", "parse_program", "ops_of", "names_in",
           "check_temps_written_first", "only", "is_copy"]


class VectorProgramError(ValueError):
    """A vector program that cannot be compiled as written (raised when it is decorated)."""


@dataclass(frozen=True)
class _OpSpec:
    """A vector op as the fused pass emits it, from its declaration (host.primitives)."""

    tiles: int  # tile operands
    scalars: int  # scalar operands
    kind: str  # "arith", "fill" (the scalar), "cast" (bits to bits), "cast_mode" (Cast under a RoundMode),
    # "bits" (integer logic on the stored bits),
    # "copy" (a DMA copy: the program's stages)
    element: str  # the expression of one element ({0}, {1}: tile values, then scalars), or the cast's conversion
    quiets: bool  # an arithmetic result: a number or the default NaN (quiet)


def _expression(element, arity: int) -> str:
    # A plain element function is inlined; an element intrinsic is called by its name.
    if callable(element):
        return element_expression(element)
    return f"{element}({', '.join(f'{{{i}}}' for i in range(arity))})"


# An arithmetic op's (``quiets``) NaN results become the default NaN where the pass stores them or
# an op that keeps a NaN's bits reads them (fusion_codegen._Element.raw / value).
OPS = {name: _OpSpec(p.tiles, p.scalars, p.kind,
                     p.element if p.kind == "cast" else _expression(p.element, p.tiles + p.scalars), p.quiets)
       for name, p in VECTOR_OPS.items()}
# A program's CopyIn and CopyOut: the DMA primitives of host.primitives with both offsets 0 (every
# view starts where its data does).  ``dst = data_copy(src)`` moves ``count`` elements;
# ``dst = data_copy_pad(src, nbytes)`` exactly ``nbytes`` (one block, no strides), as a tile's
# last part goes out.
OPS.update({PRIMITIVES[name].name: _OpSpec(1, scalars, "copy", "", False)
            for name, scalars in (("data_copy", 0), ("data_copy_pad", 1))})
# Cast under a RoundMode (kind "cast_mode": bits to bits, its scalar the mode): ``dst = cast(src, mode)``.
OPS.update({name: _OpSpec(1, 1, "cast_mode", "", False) for name in ("cast", "cast_bf16")})

# Scalar operands and flag tests: parameters combined by arithmetic, comparisons and logic.  Number
# literals only in tests (``variant == 0``).
_EXPR_NODES = (ast.Name, ast.Load, ast.UnaryOp, ast.USub, ast.UAdd, ast.Not, ast.BinOp, ast.Add, ast.Sub, ast.Mult,
               ast.Div, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.BoolOp, ast.And,
               ast.Or)


@dataclass
class Op:
    dst: str
    op: str
    tiles: list
    scalars: list  # ast expressions


@dataclass
class If:
    test: ast.expr
    then: list
    orelse: list


@dataclass
class Program:
    name: str
    params: list
    body: list
    temps: tuple
    roles: dict = field(default_factory=dict)  # param -> "tile" | "scalar" | "flag"

    def tile_uses(self) -> dict:
        """Each tile parameter: "src" when some op reads it, else "dst" (written only)."""
        read = {t for s in ops_of(self.body) for t in s.tiles}
        return {p: "src" if p in read else "dst" for p in self.params if self.roles.get(p) == "tile"}


def is_copy(s) -> bool:
    return isinstance(s, Op) and OPS[s.op].kind == "copy"


def only(body: list, keep) -> list:
    """``body`` with just the ops ``keep(op)`` is true of (an if/else left with none dropped)."""
    out = []
    for s in body:
        if isinstance(s, Op):
            if keep(s):
                out.append(s)
            continue
        then, orelse = only(s.then, keep), only(s.orelse, keep)
        if then or orelse:
            out.append(If(s.test, then, orelse))
    return out


def ops_of(body: list):
    for s in body:
        if isinstance(s, Op):
            yield s
        else:
            yield from ops_of(s.then)
            yield from ops_of(s.orelse)


# ---- parsing --------------------------------------------------------------------------------------

class _Parse:
    """What a parse needs to name a problem and to find the programs a body calls."""

    def __init__(self, name: str, first_line: int, lookup):
        self.name, self.first_line, self.lookup = name, first_line, lookup

    def fail(self, node, problem: str):
        line = self.first_line + getattr(node, "lineno", 1) - 1
        raise VectorProgramError(f"vector program {self.name} (line {line}): {problem}")


def parse_program(fdef: ast.FunctionDef, name: str, first_line: int, lookup, temps: tuple = ()) -> Program:
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
    program = Program(name, params, _statements(func, body, set(params)), temps)
    program.roles = _roles(func, program)
    for t in temps:
        if program.roles.get(t) != "tile":
            func.fail(fdef, f"temp {t!r} is not a tile of the program")
    _check_stages(func, fdef, program)
    return program


def _check_stages(func, fdef, program: Program):
    """Copies open the program (its CopyIn: GM -> UB) or close it (its CopyOut: UB -> GM), the
    device's three stages; a copy's destination that nothing reads (GM) is no temp, whose value
    would be dropped."""
    order = list(ops_of(program.body))
    computes = [k for k, s in enumerate(order) if not is_copy(s)]
    read = {t for s in order for t in s.tiles}
    for k, s in enumerate(order):
        if not is_copy(s):
            continue
        if computes and computes[0] < k < computes[-1]:
            func.fail(fdef, f"{s.op} into {s.dst!r} lies between vector ops: copies go before the first "
                            "(CopyIn) or after the last (CopyOut)")
        if s.dst in program.temps and s.dst not in read:
            func.fail(fdef, f"{s.op} into temp {s.dst!r}, which nothing reads: a temp's value is dropped when "
                            "the program ends")


def _statements(func, nodes, names: set) -> list:
    out = []
    for node in nodes:
        if isinstance(node, ast.Pass):
            continue
        if isinstance(node, ast.If):
            _check_expr(func, node.test, names, numbers=True)
            out.append(If(node.test, _statements(func, node.body, names), _statements(func, node.orelse, names)))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            out.append(_op(func, node, names))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            out.extend(_inline(func, node.value, names))
        else:
            func.fail(node, "each line is 'tile = op(...)', a call of another vector program, or an if/else "
                              "on flags")
    return out


def _op(func, node: ast.Assign, names: set) -> Op:
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
    return Op(dst, call.func.id, tiles, list(call.args[spec.tiles:]))


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
        if isinstance(s, Op):
            out.append(Op(name(s.dst), s.op, [name(t) for t in s.tiles], [expr(e) for e in s.scalars]))
        else:
            out.append(If(expr(s.test), _substituted(s.then, binding), _substituted(s.orelse, binding)))
    return out


def _roles(func, program: Program) -> dict:
    roles: dict = {}

    def give(n, role):
        if roles.setdefault(n, role) != role:
            func.fail(None, f"{n!r} is used both as a {roles[n]} and as a {role}")

    def walk(body):
        for s in body:
            if isinstance(s, Op):
                for t in (s.dst, *s.tiles):
                    give(t, "tile")
                for e in s.scalars:
                    for n in names_in(e):
                        give(n, "scalar")
            else:
                for n in names_in(s.test):
                    give(n, "flag")
                walk(s.then)
                walk(s.orelse)
    walk(program.body)
    return roles


def names_in(expr) -> list:
    return [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]


def check_temps_written_first(program: Program, body: list):
    """A temp lives in a register when fused: every path must write it before reading it (checked
    per compile-time flag values, when the program is compiled)."""
    def walk(body, written: set) -> set:
        for s in body:
            if isinstance(s, Op):
                for t in s.tiles:
                    if t in program.temps and t not in written:
                        raise VectorProgramError(f"vector program {program.name}: temp {t!r} may be read "
                                                 f"before it is written (by {s.op} into {s.dst!r})")
                written = written | {s.dst}
            else:
                written = walk(s.then, written) & walk(s.orelse, written)
        return written
    walk(body, set())
