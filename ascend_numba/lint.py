"""The kernel linter: PTO AUTO-mode rules (seed 003) checked on a kernel's Python source.

In AUTO mode the PTO compiler assigns every tile's UB address once and inserts the pipe
synchronization itself; it can do that only for kernels written to a set of rules, and a kernel
breaking them fails to compile, runs with two tiles stomping one address, or loses its
parallelism.  This module reads a kernel's source with :mod:`ast` (nothing is compiled or run)
and reports each rule it breaks as ``path:line:col: CODE message``.

Which rules apply depends on the kernel's mode (``@kernel(mode="auto" | "manual")``): AUTO
kernels get every rule; manual kernels (the default) only those that hold in both modes: sub-tiles
inside their parent (3.2: past it the view is cut short) and UB reached through primitives only
(4.2: checked mode sees nothing else).  The rest are AUTO's: a manual kernel places its tiles
itself, may bind one after its first DataCopy (the Ascend C samples' LocalMemAllocator style) or
rebind it at run time (3.3: TASSIGN), and may double-buffer by hand.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .host.primitives import PRIMITIVES

__all__ = ["Finding", "RULES", "lint", "lint_source", "KernelRuleError"]

# code: (seed section, modes it applies in, what it says)
RULES = {
    "PTO201": ("2.1", ("auto",), "a guard of a loop's first or last iteration must be statically evaluable"),
    "PTO202": ("2.2", ("auto",), "a condition that does not depend on the inner loop must be hoisted out of it"),
    "PTO203": ("2.3", ("auto",), "a compound condition guarding a primitive should be a named bool first"),
    "PTO204": ("2.4", ("auto",), "no hand-written double or multi buffering in AUTO mode"),
    "PTO301": ("3.1/3.2", ("auto",), "aliases (reinterpret, sub-tiles) right after the tile's declaration"),
    "PTO302": ("3.4", ("auto",), "a tile is the target of one alias only"),
    "PTO303": ("3.3", ("auto",), "tiles are bound once, at Init"),
    "PTO304": ("3.2", ("auto", "manual"), "a sub-tile lies inside its parent tile"),
    "PTO401": ("4.1", ("auto",), "no GM -> UB load into a tile that is only a destination"),
    "PTO402": ("4.2", ("auto", "manual"), "UB tiles are read and written through primitives only"),
}

# Primitive -> (position of the destination tensor, positions of the source tensors); positions
# count from 0 with ctx first.
_ROLES = {n: p.roles for n, p in PRIMITIVES.items() if "dst" in p.operands}
_DATA_MOVES = {n for n, p in PRIMITIVES.items() if p.family == "dma"}
_TILE_ATTRIBUTES = {"size", "nbytes", "itemsize", "dtype", "shape"}  # facts, not data


class KernelRuleError(ValueError):
    """A ``mode="auto"`` kernel breaks AUTO-mode rules: ``findings`` lists every one."""

    def __init__(self, findings: list):
        self.findings = list(findings)
        super().__init__("the kernel breaks AUTO-mode rules (seed 003):\n" + "\n".join(map(str, findings)))


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"


def _callee(node) -> str | None:
    """The name a call calls (``f(...)``, ``mod.f(...)``)."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


def _base(node) -> str | None:
    """The variable a tensor expression views: ``t``, ``t[a:]``, ``reinterpret(t, ...)``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            node = node.value
        elif _callee(node) == "reinterpret" and node.args:
            node = node.args[0]
        else:
            return None


def _names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls_primitive(nodes) -> bool:
    return any(_callee(n) in _ROLES for stmt in nodes for n in ast.walk(stmt))


def _is_kernel_decorator(dec) -> tuple[bool, str | None]:
    """Whether a decorator makes a kernel, and the mode it names."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
    if name != "kernel":
        return False, None
    mode = None
    if isinstance(dec, ast.Call):
        for kw in dec.keywords:
            if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
                mode = kw.value.value
    return True, mode


class _KernelLint:
    """The findings of one kernel function."""

    def __init__(self, func: ast.FunctionDef, path: str, mode: str, line_offset: int, constants=frozenset(),
                 programs=None):
        self.func, self.path, self.mode, self.offset = func, path, mode, line_offset
        # Vector programs the kernel may call (name -> tile parameter -> "src" / "dst"): a call
        # reads and writes its tiles as the program's ops do.
        self.programs = programs or {}
        self.constants = _derived_constants(func, set(constants))
        self.findings: list[Finding] = []
        params = [a.arg for a in func.args.args]
        self.gm = set(params[1:])  # the GM tensors and scalars after ctx
        self.tiles: dict[str, ast.AST] = {}  # name -> its alloc_buffer call
        self.aliases: dict[str, list] = {}  # alias name -> the statements binding it

    def add(self, code: str, node, message: str):
        if self.mode in RULES[code][1]:
            self.findings.append(Finding(self.path, node.lineno + self.offset, node.col_offset + 1, code,
                                         f"{message} ({RULES[code][0]})"))

    def run(self) -> list[Finding]:
        self._bindings(self.func.body, depth=0, moved=[False])
        self._control(self.func.body, loops=[])
        self._raw_access()
        self._redundant_loads()
        return sorted(self.findings, key=lambda f: (f.line, f.col, f.code))

    # -- 3.x: tiles and aliases -------------------------------------------------------------------

    def _bindings(self, body, depth: int, moved: list):
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self._binding(stmt, stmt.targets[0].id, stmt.value, depth, moved[0])
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) \
                    and isinstance(stmt.value, ast.Tuple) and len(stmt.targets[0].elts) == len(stmt.value.elts):
                for target, value in zip(stmt.targets[0].elts, stmt.value.elts):
                    if isinstance(target, ast.Name):
                        self._binding(stmt, target.id, value, depth, moved[0])
            if _calls_moves(stmt) and not isinstance(stmt, (ast.If, ast.For, ast.While)):
                moved[0] = True
            if isinstance(stmt, (ast.For, ast.While)):
                self._bindings(stmt.body, depth + 1, moved)
                moved[0] = moved[0] or _calls_moves(stmt)
                self._bindings(stmt.orelse, depth + 1, moved)
            elif isinstance(stmt, ast.If):
                # A branch at Init (on a key or a constant) still binds at Init: depth is loops only.
                # The two branches exclude each other: a tile bound in both is bound once.
                before = dict(self.tiles)
                self._bindings(stmt.body, depth, moved)
                in_body, self.tiles = self.tiles, before
                self._bindings(stmt.orelse, depth, moved)
                self.tiles = {**in_body, **self.tiles}

    def _binding(self, stmt, name: str, value, depth: int, moved: bool):
        if _callee(value) == "alloc_buffer":
            count = value.args[1] if len(value.args) > 1 else None
            if isinstance(count, ast.BinOp) and isinstance(count.op, ast.Mult) and any(
                    isinstance(side, ast.Constant) and isinstance(side.value, int) and side.value > 1
                    for side in (count.left, count.right)):
                self.add("PTO204", stmt, f"tile '{name}' holds several slots (a queue deeper than 1): hand-written "
                                         "multi-buffering")
            if depth > 0 or moved or name in self.tiles:
                where = ("inside a loop" if depth > 0 else "after the lane's first data movement" if moved
                         else "a second time")
                self.add("PTO303", stmt, f"tile '{name}' bound {where}: a tile's UB is bound once, at Init")
            self.tiles.setdefault(name, value)
            return
        base = _base(value)
        is_alias = base is not None and base != name and (base in self.tiles or base in self.aliases) and (
            _callee(value) == "reinterpret" or isinstance(value, ast.Subscript))
        if not is_alias:
            return
        sites = self.aliases.setdefault(name, [])
        sites.append(stmt)
        if depth > 0:
            self.add("PTO301", stmt, f"alias '{name}' of tile '{base}' made inside a loop: declare it once, right "
                                     "after the tile")
        elif len(sites) == 2:
            self.add("PTO302", stmt, f"'{name}' is made an alias a second time (first at line "
                                     f"{sites[0].lineno + self.offset}): an alias target is aliased once")
        self._subtile_bounds(stmt, name, value, base)

    def _subtile_bounds(self, stmt, name, value, base):
        parent = self.tiles.get(base)
        if not (isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice) and parent is not None
                and len(parent.args) >= 2 and isinstance(parent.args[1], ast.Constant)):
            return
        size = parent.args[1].value
        for bound in (value.slice.lower, value.slice.upper):
            if isinstance(bound, ast.Constant) and isinstance(bound.value, int) and not 0 <= bound.value <= size:
                self.add("PTO304", stmt, f"sub-tile '{name}' reaches element {bound.value} of tile '{base}', which "
                                         f"holds {size}")

    # -- 2.x: control flow ------------------------------------------------------------------------

    def _control(self, body, loops: list):
        for stmt in body:
            if isinstance(stmt, ast.For):
                var = stmt.target.id if isinstance(stmt.target, ast.Name) else None
                assigned = {n.id for s in stmt.body for n in ast.walk(s) if isinstance(n, ast.Name)
                            and isinstance(n.ctx, ast.Store)}
                self._ping_pong(stmt)
                self._control(stmt.body, loops + [(var, assigned | ({var} if var else set()))])
                self._control(stmt.orelse, loops)
            elif isinstance(stmt, ast.While):
                assigned = {n.id for s in stmt.body for n in ast.walk(s) if isinstance(n, ast.Name)
                            and isinstance(n.ctx, ast.Store)}
                self._ping_pong(stmt)
                self._control(stmt.body, loops + [(None, assigned)])
            elif isinstance(stmt, ast.If):
                self._guard(stmt, loops)
                self._control(stmt.body, loops)
                self._control(stmt.orelse, loops)

    def _guard(self, stmt: ast.If, loops: list):
        guards_primitive = _calls_primitive(stmt.body) or _calls_primitive(stmt.orelse)
        for var, _ in loops:
            if var is None:
                continue
            for cmp in (n for n in ast.walk(stmt.test) if isinstance(n, ast.Compare)):
                sides = [cmp.left, *cmp.comparators]
                if any(isinstance(s, ast.Name) and s.id == var for s in sides) and any(
                        isinstance(n, ast.Subscript) for s in sides for n in ast.walk(s)):
                    self.add("PTO201", stmt.test, f"the guard compares loop variable '{var}' with data read at run "
                                                  "time; compare it with the loop's start, its bound minus one or "
                                                  "a constant")
        if len(loops) >= 2 and guards_primitive and not _names(stmt.test) <= self.constants:
            _var, assigned = loops[-1]
            if not (_names(stmt.test) & assigned):
                self.add("PTO202", stmt.test, "the condition does not change inside this inner loop: hoist the if "
                                              "out of the loop")
        if guards_primitive and any(isinstance(n, ast.BoolOp) for n in ast.walk(stmt.test)):
            self.add("PTO203", stmt.test, "a compound condition guards a primitive: compute it into a named bool "
                                          "first")

    def _ping_pong(self, loop):
        for node in (n for s in loop.body for n in ast.walk(s)):
            slot = None
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitXor) \
                    and isinstance(node.target, ast.Name):
                slot = node.target.id
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, v = node.targets[0].id, node.value
                if isinstance(v, ast.BinOp) and name in _names(v) and (
                        isinstance(v.op, (ast.BitXor, ast.Mod)) or (isinstance(v.op, ast.Sub)
                                                                    and isinstance(v.left, ast.Constant))):
                    slot = name
            if slot is not None:
                self.add("PTO204", node, f"'{slot}' cycles through buffer slots (hand-written multi-buffering): in "
                                         "AUTO mode the compiler overlaps the pipes; use one tile per stage")

    # -- 4.x: data movement and raw access ---------------------------------------------------------

    def _ub(self, name) -> bool:
        return name in self.tiles or name in self.aliases

    def _raw_access(self):
        allowed = set()  # nodes that are a primitive's tensor arguments (views)
        for call in (n for n in ast.walk(self.func) if isinstance(n, ast.Call)):
            if _callee(call) in _ROLES or _callee(call) in ("reinterpret", "alloc_buffer", "preload"):
                allowed.update(id(a) for a in call.args)
        for node in ast.walk(self.func):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and self._ub(node.value.id) \
                    and not isinstance(node.slice, ast.Slice):
                self.add("PTO402", node, f"'{node.value.id}' indexed directly: read and write UB tiles through "
                                         "primitives (GetValue, SetValue, DataCopy, vector ops)")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self._ub(node.value.id) \
                    and node.attr not in _TILE_ATTRIBUTES:
                self.add("PTO402", node, f"'{node.value.id}.{node.attr}' reaches into a UB tile: use primitives")
            elif isinstance(node, ast.Call) and _callee(node) not in _ROLES and _callee(node) not in (
                    "reinterpret", "alloc_buffer", "preload", "min", "max", "len", "range"):
                for arg in node.args:
                    name = _base(arg)
                    if name is not None and self._ub(name) and id(arg) not in allowed and isinstance(
                            node.func, ast.Attribute):
                        self.add("PTO402", node, f"UB tile '{name}' passed to {_callee(node)}(): a CCE-intrinsic "
                                                 "style access checked mode and the AUTO compiler cannot see")

    def _redundant_loads(self):
        """4.1: a GM -> UB load whose tile's next use (in source order) writes it, or that has none."""
        uses = []  # (line, col, root, role) of every primitive's tensor argument
        for call in (n for n in ast.walk(self.func) if isinstance(n, ast.Call)):
            # A vector program of the module shadows a primitive of its name.
            role = self._program_roles(_callee(call)) or _ROLES.get(_callee(call))
            if role is None:
                continue
            dst_pos, src_pos = role
            roles = {}  # a tile both read and written by one op (add(ctx, b, b, a)) is read
            for p, arg in enumerate(call.args):
                name = _base(arg)
                if name is not None and self._ub(name) and (p in _as_set(dst_pos) or p in src_pos):
                    root = self._root(name)
                    roles[root] = "src" if p in src_pos or roles.get(root) == "src" else "dst"
            uses += [(call.lineno, call.col_offset, root, r, call) for root, r in roles.items()]
        uses.sort(key=lambda u: (u[0], u[1]))
        branches = _branches(self.func)
        for k, (_line, _col, root, role, call) in enumerate(uses):
            if role != "dst" or _callee(call) not in ("data_copy", "data_copy_pad") or len(call.args) < 4 \
                    or _base(call.args[3]) not in self.gm:
                continue
            # A use in the other branch of an if the load is in never runs after it.
            after = next((u for u in uses[k + 1:] if u[2] == root
                          and not _exclusive(branches[id(call)], branches[id(u[4])])), None)
            if after is None or after[3] == "dst":
                self.add("PTO401", call, f"tile '{root}' is loaded from GM, then written before any primitive "
                                         "reads it (only a destination): drop the load; AUTO may give it the "
                                         "address of a tile whose lifetime does not overlap, and the loads stomp")

    def _program_roles(self, name):
        """A vector program call's (destination positions, source positions), as _ROLES has them
        (its tiles follow ctx, count and fuse)."""
        uses = self.programs.get(name)
        if uses is None:
            return None
        positions = {param: 3 + i for i, param in enumerate(uses)}
        return ({positions[p] for p, u in uses.items() if u == "dst"},
                tuple(positions[p] for p, u in uses.items() if u == "src"))

    def _root(self, name: str) -> str:
        """The tile an alias views (through chains of aliases)."""
        seen = set()
        while name in self.aliases and name not in seen:
            seen.add(name)
            base = _base(self.aliases[name][0].value) if isinstance(self.aliases[name][0], ast.Assign) else None
            if base is None or base == name:
                break
            name = base
        return name


def _as_set(position) -> set:
    return position if isinstance(position, set) else {position}


def _branches(func: ast.FunctionDef) -> dict:
    """Each call's enclosing if branches: ``id(call)`` -> {``id(if)``: 0 in its body, 1 in its else}."""
    found = {}

    def visit(node, path):
        if isinstance(node, ast.Call):
            found[id(node)] = path
        if isinstance(node, ast.If):
            visit(node.test, path)
            for branch, stmts in enumerate((node.body, node.orelse)):
                for stmt in stmts:
                    visit(stmt, {**path, id(node): branch})
            return
        for child in ast.iter_child_nodes(node):
            visit(child, path)

    visit(func, {})
    return found


def _exclusive(a: dict, b: dict) -> bool:
    """Whether two calls' branches (see :func:`_branches`) exclude each other."""
    return any(b.get(node, branch) != branch for node, branch in a.items())


def _module_programs(tree: ast.Module) -> dict:
    """The vector programs a module defines (``@vector_program`` functions), each as its tile
    parameters' uses; one the program parser refuses is left out (importing it raises anyway)."""
    from .kernels.primitives.fusion_program import VectorProgramError, parse_program

    parsed, uses = {}, {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name != "vector_program":
                continue
            temps = ()
            for kw in getattr(dec, "keywords", ()):
                if kw.arg == "temps" and isinstance(kw.value, (ast.Tuple, ast.List)):
                    temps = tuple(e.value for e in kw.value.elts if isinstance(e, ast.Constant))
            try:
                parsed[node.name] = parse_program(node, node.name, node.lineno, parsed.get, temps)
            except VectorProgramError:
                continue
            uses[node.name] = parsed[node.name].tile_uses()
    return uses


def _imported_programs(tree: ast.Module, path: str) -> dict:
    """The vector programs a module imports (``from m import prog``, ``import m``: m's programs
    by name), read from the imported module's source as :func:`_module_programs` reads a file's
    own; a module that cannot be found is skipped."""
    uses = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = _module_source(node.module or "", node.level, path)
            if source is None:
                continue
            theirs = _module_programs(ast.parse(source))
            uses.update({a.asname or a.name: theirs[a.name] for a in node.names if a.name in theirs})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                source = _module_source(alias.name, 0, path)
                if source is not None:
                    uses.update(_module_programs(ast.parse(source)))
    return uses


def _module_source(module: str, level: int, path: str) -> str | None:
    """The source of ``module`` imported from the file at ``path`` (``level``: a relative
    import's dots): beside the file first, then wherever Python would import it from."""
    import importlib.util

    here = Path(path).resolve().parent
    for _ in range(max(level - 1, 0)):
        here = here.parent
    parts = module.split(".") if module else []
    for candidate in (here.joinpath(*parts).with_suffix(".py") if parts else None,
                      here.joinpath(*parts, "__init__.py")):
        if candidate is not None and candidate.is_file():
            return candidate.read_text()
    if level or not module:
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None) if spec is not None else None
    return Path(origin).read_text() if origin and origin.endswith(".py") else None


def _derived_constants(func: ast.FunctionDef, constants: set) -> set:
    """Compile-time constants (the kernel's declared ``constant`` names) and the locals computed
    only from them (``amsgrad = Amsgrad == 1``): a branch on them folds away when compiled."""
    known = set(constants)
    changed = True
    while changed:
        changed = False
        for stmt in ast.walk(func):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id not in known and _names(stmt.value) and _names(stmt.value) <= known:
                known.add(stmt.targets[0].id)
                changed = True
    return known


def _module_constants(tree: ast.Module) -> set:
    """Module-level names bound to ``constant(...)``."""
    return {t.id for stmt in tree.body if isinstance(stmt, ast.Assign) and _callee(stmt.value) == "constant"
            for t in stmt.targets if isinstance(t, ast.Name)}


def _calls_moves(stmt) -> bool:
    return any(_callee(n) in _DATA_MOVES for n in ast.walk(stmt))


def lint_source(source: str, path: str = "<string>", mode: str | None = None, line_offset: int = 0) -> list[Finding]:
    """The findings of every kernel (a function decorated ``@kernel`` / ``@an.kernel``) in
    ``source``.  ``mode`` overrides each kernel's own (its decorator's ``mode=``, else manual)."""
    tree = ast.parse(source, filename=path)
    constants = _module_constants(tree)
    programs = {**_imported_programs(tree, path), **_module_programs(tree)}
    findings = []
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        for dec in func.decorator_list:
            is_kernel, own = _is_kernel_decorator(dec)
            if is_kernel:
                findings += _KernelLint(func, path, mode or own or "manual", line_offset, constants, programs).run()
                break
    return findings


def lint_function(func, mode: str) -> list[Finding]:
    """The findings of one kernel function (its source, wherever it is defined)."""
    lines, first = inspect.getsourcelines(func)
    source = textwrap.dedent("".join(lines))
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    try:
        path = inspect.getsourcefile(func) or "<string>"
    except TypeError:
        path = "<string>"
    scope = getattr(func, "__globals__", {})
    constants = {name for name, value in scope.items() if type(value).__name__ == "KernelConstant"}
    programs = {name: value.vector_program.tile_uses() for name, value in scope.items()
                if hasattr(value, "vector_program")}
    return _KernelLint(node, path, mode, first - 1, constants, programs).run()


def lint(target, mode: str | None = None) -> list[Finding]:
    """Lint a kernel (a :class:`~ascend_numba.kernels.Kernel` or a function) or a Python file
    (path): the AUTO-mode rules its mode (or ``mode``) applies, as :class:`Finding` s
    (``str(f)`` is ``path:line:col: CODE message``)."""
    if isinstance(target, (str, Path)):
        path = Path(target)
        return lint_source(path.read_text(), str(path), mode)
    func = getattr(target, "py_func", target)
    if not callable(func):
        raise TypeError(f"lint: expected a kernel, a function or a path, got {type(target).__name__}")
    return lint_function(func, mode or getattr(target, "mode", "manual"))
