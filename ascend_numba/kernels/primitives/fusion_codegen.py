"""The Python source of a vector program's call (:mod:`.fusion`), for one call site's types and
compile-time flags: ``_impl(ctx, count, fuse, *params)``, exec'd in the names of
:func:`.fusion_runtime._scope` and compiled into the calling kernel.  It is made of

* ``_op_by_op``: the op-by-op run, the primitives' calls, one per op and copy, over the whole tiles
  (the traced and checked lanes, ``fuse`` False, interpret mode);
* the fused pass (plain lanes): whole blocks of ``config.FUSION_BLOCK`` elements, then the part block
  through the same loops; per element its CopyIn, the Compute's ops in registers (:class:`_Element`,
  rounding as the primitives do; fp16 chains ``config.FUSION_INTERLEAVE_F16`` elements side by
  side) and its CopyOut; the preload advanced between blocks;
* ``_stepwise``: the pass's fallback, the ops one by one in one element loop that picks the op, for
  tiles the pass cannot take and the few elements past a copy's end.

Plain text: no Numba in this module.  A body's tests on compile-time flags are decided first
(:func:`_pruned`).
"""

from __future__ import annotations

import ast
import re

from ...config import FUSION_BLOCK, FUSION_INTERLEAVE_F16
from .fusion_program import OPS, If, Op, Program, is_copy, names_in, only, ops_of

# An interleaved pass takes its block in FUSION_INTERLEAVE_F16 equal parts.
if FUSION_BLOCK % FUSION_INTERLEAVE_F16:
    raise ValueError(f"config.FUSION_BLOCK ({FUSION_BLOCK}) must be a multiple of config.FUSION_INTERLEAVE_F16 "
                     f"({FUSION_INTERLEAVE_F16})")


def _pruned(body: list, static: dict) -> list:
    """The body with every test on compile-time flags decided."""
    out = []
    for s in body:
        if isinstance(s, If) and all(n in static for n in names_in(s.test)):
            out.extend(_pruned(s.then if eval(compile(ast.Expression(s.test), "<test>", "eval"), {}, dict(static))
                               else s.orelse, static))
        elif isinstance(s, If):
            out.append(If(s.test, _pruned(s.then, static), _pruned(s.orelse, static)))
        else:
            out.append(s)
    return out


def _if_lines(s: If, indent: str, lines_of) -> list:
    """An if/else on flags around the lines ``lines_of(body, indent)`` gives for each branch."""
    lines = [f"{indent}if {ast.unparse(s.test)}:", *(lines_of(s.then, indent + "    ") or [indent + "    pass"])]
    if s.orelse:
        lines += [f"{indent}else:", *lines_of(s.orelse, indent + "    ")]
    return lines


def _unfused_lines(body: list, indent: str) -> list:
    """The primitives' calls, one per op, over the whole tiles."""
    lines = []
    for s in body:
        if isinstance(s, If):
            lines += _if_lines(s, indent, _unfused_lines)
            continue
        if is_copy(s):
            lines.append(f"{indent}{_copy_call(s)}")
            continue
        operands = [s.dst, *s.tiles, *(ast.unparse(e) for e in s.scalars)]
        module = "_cvt" if OPS[s.op].kind == "cast_mode" else "_p"
        lines.append(f"{indent}{module}.{s.op}(ctx, {', '.join(operands)}, count)")
    return lines


def _plain_copy(s: Op) -> str:
    """What a program's copy does in a plain lane (its rule and trace hook fold away there): one
    byte copy, clamped to both tensors, as the primitive's own (DataCopyPad: one gapless block),
    on views that start ``_skip`` elements into the program's.  Far less to compile than the
    primitives' calls, for the pass's rare fallback."""
    nbytes = f"{ast.unparse(s.scalars[0])} - _skip * {s.dst}.itemsize" if s.op == "data_copy_pad" \
        else f"count * {s.tiles[0]}.itemsize"
    return f"_dma.copy_bytes({s.dst}, 0, {s.tiles[0]}, 0, {nbytes})"


def _copy_call(s: Op) -> str:
    """A program's copy as the primitive's call (both offsets 0)."""
    if s.op == "data_copy_pad":
        return f"_dma.data_copy_pad(ctx, {s.dst}, 0, {s.tiles[0]}, 0, 1, {ast.unparse(s.scalars[0])}, 0, 0)"
    return f"_dma.data_copy(ctx, {s.dst}, 0, {s.tiles[0]}, 0, count)"


class _Element:
    """One element of every op, in registers ``_r_<tile>``, written for the tiles' element types
    (``half``: the uint16 tiles, fp16 in arithmetic), in the primitives' own arithmetic.

    A register holds its tile's stored bits ("raw"), or for an op's result its value ("value":
    for a fp16 tile the float32 value the tile would hold, already rounded to fp16, so two ops in
    a row cost one rounding, not a conversion to fp16 and back; for other tiles the same thing
    as raw; "quiet": such a value known not to be a signalling NaN)."""

    def __init__(self, scalar_of: dict, half: set, copies: dict | None = None):
        self.scalar_of, self.half = scalar_of, half
        # The pass's copies (None: no copies): "kinds", each source and sink (1, 2) by name, read
        # and written through its view ``_v_<tile>``; "sink_as": a sink written through its
        # source's view (an update in place).
        self.copies = copies
        self.lines: list = []
        # The pass's element loop defers the NaN policy of its stores to views (None: applied at
        # each store): (view, fp16 bits) of each view an arithmetic result went to.
        self.deferred: list | None = None
        # Views that also take bits the policy must leave (a copy, a selection): the fix-up would
        # change them, so their arithmetic results take the policy at the store.
        self.undeferred: set = set()
        self.raw_views: set = set()

    def value(self, t: str, forms: dict, quieting: bool = False) -> str:
        """Tile ``t``'s value as an operand; ``quieting``: of an op whose result quiets any NaN
        operand, for which the hardware's fp16 widening (which quiets a signalling NaN, NumPy's
        keeps it) gives the same bits at a fraction of the instructions.  An arithmetic result
        ("quiet") is the default NaN where it is one before an op that keeps a NaN's bits reads
        it; an op that quiets does not care which NaN it gets."""
        if forms[t] == "quiet" and not quieting:
            return f"canonical_nan(_r_{t})"
        if forms[t] != "raw" or t not in self.half:
            return f"_r_{t}"
        return f"f16_to_f32_quiet(_r_{t})" if quieting else f"f16_to_f32(_r_{t})"

    def raw(self, t: str, forms: dict, view: str | None = None, indent: str = "") -> str:
        """Tile ``t``'s bits, as stored: an arithmetic result ("quiet") with a NaN made the
        default NaN.  The NaN policy is applied here, where a value leaves the registers, not
        after every op: a NaN stays a NaN through arithmetic, and the select per op cost a fused
        ApplyAdamW 1M fp32 lane 12 -> 18.5 ms.  Stored to ``view`` by the pass's element loop,
        the result goes as the CPU made it and joins the element's sum ``_r__sum`` (a NaN if any
        result is), and the loop's fix-up (:func:`_nan_fixup`) runs where a sum was a NaN."""
        if view is not None and forms[t] != "quiet":
            self.raw_views.add(view)
        if forms[t] == "raw":
            return f"_r_{t}"
        if view is not None and self.deferred is not None and forms[t] == "quiet" and view not in self.undeferred:
            self.deferred.append((view, t in self.half))
            self.lines.append(f"{indent}_r__sum = _r__sum + _r_{t}")
            return f"f32_to_f16_quiet(_r_{t})" if t in self.half else f"_r_{t}"
        if t not in self.half:
            return f"canonical_nan(_r_{t})" if forms[t] == "quiet" else f"_r_{t}"
        return f"f32_to_f16_quiet(canonical_nan(_r_{t}))" if forms[t] == "quiet" else f"f32_to_f16(_r_{t})"

    def rounded(self, t: str, expr: str, quiet: bool) -> str:
        """What tile ``t`` would read back of an arithmetic result stored into it."""
        if t not in self.half:
            return f"_dt_{t}({expr})"
        return f"f32_round_f16_quiet({expr})" if quiet else f"f32_round_f16({expr})"

    def emit(self, body: list, indent: str, forms: dict) -> dict:
        for s in body:
            if isinstance(s, If):
                self._branch(s, indent, forms)
                continue
            spec = OPS[s.op]
            if spec.kind == "copy":
                self._copy(s, indent, forms)
                continue
            if spec.kind == "cast_mode":  # Cast under a RoundMode: bits to bits through its word
                src = s.tiles[0]
                self.lines.append(f"{indent}_r_{s.dst} = _cast_{s.op}({s.dst}, {src}, {self.raw(src, forms)}, "
                                  f"{self.scalar_of[id(s)]})")
                forms[s.dst] = "raw"
                continue
            if spec.kind == "cast":  # a cast reads and writes bits: dst[i] = conversion(src[i])
                self.lines.append(f"{indent}_r_{s.dst} = _dt_{s.dst}({spec.element}({self.raw(s.tiles[0], forms)}))")
                forms[s.dst] = "raw"
                continue
            if spec.kind == "bits":  # integer logic on the stored bits (a uint16 tile's, not fp16's)
                a = [self.raw(t, forms) for t in s.tiles]
                result = spec.element.format(*a, *([self.scalar_of[id(s)]] if spec.scalars else []))
                self.lines.append(f"{indent}_r_{s.dst} = _dt_{s.dst}({result})")
                forms[s.dst] = "raw"
                continue
            # A result that is a number or a quiet NaN (the CPU's arithmetic) is rounded with the
            # hardware's conversions alone (see kernels.half); a selection may be a signalling NaN.
            quiet = spec.quiets
            a = [self.value(t, forms, quiet) for t in s.tiles]
            result = spec.element.format(*a, *([self.scalar_of[id(s)]] if spec.scalars else []))
            self.lines.append(f"{indent}_r_{s.dst} = {self.rounded(s.dst, result, quiet)}")
            forms[s.dst] = "quiet" if quiet else "value"
        return forms

    def _copy(self, s: Op, indent: str, forms: dict):
        """A copy moves an element's bits: from a source's view or a register, into a register
        or a sink's view."""
        kinds = self.copies["kinds"]
        if kinds.get(s.dst) == 2:
            view = f"_v_{self.copies['sink_as'].get(s.dst, s.dst)}"
            if kinds.get(s.tiles[0]) == 1:
                self.raw_views.add(view)
            src = f"_v_{s.tiles[0]}[_i]" if kinds.get(s.tiles[0]) == 1 else self.raw(s.tiles[0], forms, view, indent)
            self.lines.append(f"{indent}{view}[_i] = {src}")
            return
        src = f"_v_{s.tiles[0]}[_i]" if kinds.get(s.tiles[0]) == 1 else self.raw(s.tiles[0], forms)
        self.lines.append(f"{indent}_r_{s.dst} = {src}")
        forms[s.dst] = "raw"

    def _branch(self, s: If, indent: str, forms: dict):
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
                # A value and an arithmetic result: the result side takes the NaN policy now.
                if f_then == "quiet":
                    self.lines.insert(then_end, f"{indent}    _r_{t} = canonical_nan(_r_{t})")
                    then_end += 1
                else:
                    self.lines.append(f"{indent}    _r_{t} = canonical_nan(_r_{t})")
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
    static = sum(1 for s in body if isinstance(s, Op))
    lines = [f"{indent}_nops += {static}"] if static else []
    for s in body:
        if isinstance(s, If):
            lines += _if_lines(s, indent, _count_lines)
    return lines


def _loads_and_stores(program: Program, body: list) -> tuple[list, list]:
    """Tiles each element loads first (read before written, or written only on some paths) and
    stores last (every tile written that is not a temp), in parameter order."""
    loads: set = set()

    def walk(body, written: frozenset) -> frozenset:
        for s in body:
            if isinstance(s, Op):
                loads.update(t for t in s.tiles if t not in written)
                written = written | {s.dst}
            else:
                then, orelse = walk(s.then, written), walk(s.orelse, written)
                loads.update((then ^ orelse) - set(program.temps))  # written on one path: keep the other's
                written = then & orelse
        return written
    walk(body, frozenset())
    stored = {s.dst for s in ops_of(body)} - set(program.temps)
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
        if isinstance(s, Op):
            out.append((guard, s))
            continue
        test = f"({ast.unparse(s.test)})"
        out += _guarded(s.then, f"{guard} and {test}" if guard else test)
        out += _guarded(s.orelse, f"{guard} and not {test}" if guard else f"not {test}")
    return out


def _stepwise_lines(body: list, scalar_of: dict, half: set, indent: str) -> list:
    """The ops one by one over ``count`` elements of the tiles, as the primitives compute them
    (each op over every element before the next, ``min`` of the count and its tiles' sizes, the
    preload advanced once per op), in one element
    loop that picks the op: slow, for the pass's rare fallback, and a fraction of the primitives'
    compile."""
    ops = _guarded(body)
    sizes = []
    for guard, s in ops:
        # min of four for every op (one overload to compile): absent operands repeat the dst; a
        # copy is one byte copy (a size of 0: no element loop).
        n = "0" if is_copy(s) \
            else f"max(min(count, {', '.join(f'{t}.size' for t in [s.dst, *s.tiles, s.dst, s.dst][:3])}), 0)"
        sizes.append(f"{n} if {guard} else -1" if guard else n)
    copies = [line for j, (_, s) in enumerate(ops) if is_copy(s)
              for line in (f"{indent}    if _k == {j}:", f"{indent}        {_plain_copy(s)}",
                           f"{indent}        continue")]
    # Tuples of at most 16 displayed, then joined: Python builds a longer display through a list,
    # which Numba cannot type.
    chunks = " + ".join(f"({', '.join(sizes[k:k + 16])},)" for k in range(0, len(sizes), 16))
    lines = [f"{indent}_sizes = {chunks}",
             f"{indent}for _k in range({len(ops)}):",
             f"{indent}    _n = _sizes[_k]",
             f"{indent}    if _n < 0:",
             f"{indent}        continue",
             *copies,
             f"{indent}    advance_preload(ctx)",
             f"{indent}    for _i in range(_n):",
             f"{indent}        scalar_loop()"]
    case = indent + "            "
    first = True
    for k, (_, s) in enumerate(ops):
        if is_copy(s):
            continue
        compute = _Element(scalar_of, half)
        forms = compute.emit([s], case, {t: "raw" for t in s.tiles})
        step = [*(f"{case}_r_{t} = {t}[_i]" for t in dict.fromkeys(s.tiles)), *compute.lines,
                f"{case}{s.dst}[_i] = {compute.raw(s.dst, forms)}"]
        lines.append(f"{indent}        {'if' if first else 'elif'} _k == {k}:")
        first = False
        # Each op's registers of its own (a tile's bits in one op, its fp32 value in another),
        # named apart from the pass's.
        lines += [re.sub(r"\b_r_", f"_q{k}_", line) for line in step]
    if first:  # copies only
        lines.append(f"{indent}        pass")
    return lines


def _tile_kinds(program: Program, body: list) -> dict:
    """Each tile the body uses: 1 a source (only read, by copies: a CopyIn's GM tensor), 2 a sink
    (only written, by copies: a CopyOut's), 0 any other (a tile the pass holds in a register)."""
    ops = list(ops_of(body))
    read = {t for s in ops for t in s.tiles}
    written = {s.dst for s in ops}
    kinds = {}
    for t in program.params:
        if t not in read and t not in written:
            continue
        by_copies = all(is_copy(s) for s in ops if t == s.dst or t in s.tiles)
        kinds[t] = 1 if by_copies and t not in written else 2 if by_copies and t not in read else 0
    return kinds


def _copy_out_ops(body: list) -> set:
    """The ids of the body's CopyOut: the copies after its last vector op (none without one)."""
    order = list(ops_of(body))
    last = max((k for k, s in enumerate(order) if not is_copy(s)), default=len(order))
    return {id(s) for s in order[last + 1:]}


def _copy_loops(body: list, indent: str, length: int | str) -> list:
    """A stage of copies over ``length`` elements of the views: a loop of each run of copies,
    inside the flag tests (a test inside a loop keeps it from vectorizing)."""
    lines, run = [], []

    def flush():
        if run:
            lines.extend([f"{indent}for _i in range({length}):", *run])
            run.clear()
    for s in body:
        if isinstance(s, If):
            flush()
            lines += _if_lines(s, indent, lambda b, i: _copy_loops(b, i, length))
        else:
            run.append(f"{indent}    _v_{s.dst}[_i] = _v_{s.tiles[0]}[_i]")
    flush()
    return lines


def _nan_fixup(views: list, indent: str, length: int | str) -> list:
    """After an element loop whose sums ``_nan`` found a NaN: each view an arithmetic result went
    to with the NaN policy deferred, its NaNs made the default NaN (fp16 views hold bits).  A sum
    per element and a test per block cost a fused ApplyAdamW a fraction of a select per store."""
    if not views:
        return []
    return [f"{indent}if _nan:",
            *(f"{indent}    {'_default_nans_f16' if fp16 else '_default_nans'}({view}, {length})" for view, fp16 in views)]


def _either(test: str, then: list, orelse: list) -> list:
    """``if test:`` the lines ``then``, ``else:`` the lines ``orelse``, each indented one level
    more than its first line."""
    indent = then[0][:len(then[0]) - len(then[0].lstrip())]
    return [f"{indent}if {test}:", *("    " + line for line in then), f"{indent}else:",
            *("    " + line for line in orelse)]


def _whole_block_copies(body: list) -> list:
    """``body`` for whole blocks, where a copy's count plays no part: an if/else of the same copies
    on both sides (DataCopy of whole tiles, else DataCopyPad of their bytes) is its copies, with
    no test left in the element loop to keep it from vectorizing."""
    out = []
    for s in body:
        if isinstance(s, If):
            then, orelse = _whole_block_copies(s.then), _whole_block_copies(s.orelse)
            if all(is_copy(c) for c in then + orelse) \
                    and [(c.dst, c.tiles) for c in then] == [(c.dst, c.tiles) for c in orelse]:
                out.extend(then)
            else:
                out.append(If(s.test, then, orelse))
        else:
            out.append(s)
    return out


def _copy_elements(s: Op) -> str:
    """The elements a copy moves from the start of its views (a DataCopyPad: its whole ones)."""
    return f"{ast.unparse(s.scalars[0])} // {s.dst}.itemsize" if s.op == "data_copy_pad" else "count"


def _source(program: Program, body: list, fused: bool, half: set = frozenset(), fuse=None,
            dtypes: dict | None = None) -> str:
    """``_impl``: the op-by-op run (the primitives' calls, one per op), or (``fused``) the pass
    (whole blocks, then the part block through the same loops; per element its CopyIn,
    the Compute's ops and its CopyOut) with the ops one by one (:func:`_stepwise_lines`) as its
    fallback; ``half``: the uint16 tiles (fp16 arithmetic); ``fuse``: its value when the call
    passes a constant, else None (a run-time False then runs the op-by-op Compute, compiled only
    for such calls); ``dtypes``: each tile's element type."""
    params = ", ".join(["ctx", "count", "fuse", *program.params])
    call = f"_op_by_op({', '.join(['ctx', 'count', *program.params])})"
    op_by_op = "\n".join([f"def _op_by_op({', '.join(['ctx', 'count', *program.params])}):",
                          *(_unfused_lines(body, "    ") or ["    pass"]), ""])
    if not fused or fuse is False:
        return "\n".join([op_by_op, f"def _impl({params}):", f"    {call}", ""])
    kinds = _tile_kinds(program, body)
    tiles = list(kinds)
    loads, stores = (tuple(t for t in ts if kinds[t] == 0) for ts in _loads_and_stores(program, body))
    copies = [s for s in ops_of(body) if is_copy(s)]
    # Each op's scalar operand in its destination's type, as the primitive takes it (once per call).
    scalar_of, scalar_lines = {}, []
    for k, s in enumerate(ops_of(body)):
        if OPS[s.op].scalars and not is_copy(s):
            scalar_of[id(s)] = f"_s{k}"
            # As _vscalar takes it: a fp16 tile's scalar is the fp16 value nearest it.
            value = ast.unparse(s.scalars[0])
            if OPS[s.op].kind == "cast_mode":  # the mode as Cast's word (int32 -> fp16: the DEQSCALE register)
                scalar_lines.append(f"    _s{k} = _word_{s.op}(ctx, {s.dst}, {s.tiles[0]}, np.int64({value}))")
                continue
            scalar_lines.append(f"    _s{k} = f32_round_f16(np.float32({value}))"
                                if s.dst in half and OPS[s.op].kind != "bits" else f"    _s{k} = _dt_{s.dst}({value})")
    # Chains of fp16 roundings run FUSION_INTERLEAVE_F16 elements side by side (see config).
    ways = FUSION_INTERLEAVE_F16 if any(OPS[s.op].kind not in ("cast", "cast_mode", "copy", "bits") and s.dst in half
                                        for s in ops_of(body)) else 1
    # A whole block's CopyOut runs as a loop of its own after the block's element loop, from the
    # UB tiles the element loop stored (staged): a loop reading a tensor and writing it in place
    # (var -> var_out) is not vectorized (LLVM's test that its arrays do not overlap fails), one
    # reading GM and writing UB, or UB and GM, is.
    copy_out = _copy_out_ops(body)
    staged = list(dict.fromkeys(t for s in ops_of(body) if id(s) in copy_out for t in s.tiles if t not in stores))
    # Every tile holds count elements (a copy's source and sink: what they have, as the primitive
    # clamps), and no two the pass reads or writes in memory (a temp kept in registers throughout
    # is not one) overlap, but for sources (only read) and a sink at its source's very bytes (an
    # update in place: each element is read before it is written, and never again).
    # Also a copy's two ends have one element type and a DataCopyPad moves whole elements inside the
    # count; else the ops run one by one.
    touched = set(loads) | set(stores) | set(staged) | {t for t in tiles if kinds[t]}
    touched = [t for t in tiles if t in touched]
    ends = [f"_a_{t} + count * {t}.itemsize" if kinds[t] == 0 else f"_a_{t} + min(count * {t}.itemsize, {t}.nbytes)"
            for t in touched]
    same_types = all(dtypes[s.dst] == dtypes[s.tiles[0]] for s in copies)
    pads = [s for s in copies if s.op == "data_copy_pad"]
    inner = [t for t in tiles if kinds[t] == 0]  # a short temp: an op covers what its tiles hold
    # Tests joined with & and |, not and / or: each of those is a branch, and Numba's compile
    # time grows with a function's branches.
    fits = [f"    _ok = {same_types} & (count > 0)",
            *([f"    _ok = _ok & (min(({', '.join(f'{t}.size' for t in inner)},)) >= count)"] if inner else []),
            *(f"    _a_{t} = _address({t})" for t in touched),
            f"    _ok = _ok & _apart(({', '.join(f'_a_{t}' for t in touched)},), ({', '.join(ends)},), "
            f"({', '.join(str(kinds[t]) for t in touched)},))",
            *(f"    _ok = _ok & (0 <= {ast.unparse(s.scalars[0])}) & ({ast.unparse(s.scalars[0])} <= count * "
              f"{s.dst}.itemsize) & ({ast.unparse(s.scalars[0])} % {s.dst}.itemsize == 0)" for s in pads)]
    # The pass runs where every source and sink has its element: up to _lim (the rest, a CopyIn's
    # GM padding or past a DataCopyPad's bytes, a few elements, one by one).
    limits = [f"{t}.size" for t in tiles if kinds[t]] + [_copy_elements(s) for s in pads]
    element = "                "

    # One element: its loads, the copies and ops in registers, its stores (indexed by _i); and the
    # views its arithmetic results went to with the CPU's NaNs (see _Element.raw).
    def one(inline_copy_out: bool, sink_as: dict | None = None, of: list | None = None,
            undeferred: frozenset = frozenset()) -> tuple[list, list]:
        compute = _Element(scalar_of, set(half), copies={"kinds": kinds, "sink_as": sink_as or {}})
        compute.deferred, compute.undeferred = [], undeferred
        forms = compute.emit((body if of is None else of) if inline_copy_out
                             else only(body if of is None else of, lambda s: id(s) not in copy_out),
                             element, {t: "raw" for t in loads})
        kept = stores if inline_copy_out else (*stores, *dict.fromkeys(staged))
        stored = [f"{element}_v_{t}[_i] = {compute.raw(t, forms, f'_v_{t}', element)}" for t in kept]
        mixed = {v for v, _ in compute.deferred} & compute.raw_views
        if mixed:
            return one(inline_copy_out, sink_as, of, undeferred | mixed)
        lines = [*(f"{element}_r_{t} = _v_{t}[_i]" for t in loads), *compute.lines, *stored]
        if compute.deferred:
            lines = [f"{element}_r__sum = np.float32(0)", *lines, f"{element}_nan = _nan | (_r__sum != _r__sum)"]
        return lines or [f"{element}pass"], list(dict.fromkeys(compute.deferred))
    block = FUSION_BLOCK
    sources = [t for t in tiles if kinds[t] == 1]
    pairs = [(sink, src) for src, sink in zip(sources, [t for t in tiles if kinds[t] == 2])]
    in_place = " and ".join(f"_a_{sink} == _a_{src}" for sink, src in pairs) if ways == 1 and copy_out else ""

    def block_loops(length, ways: int) -> list:
        """A block's loops over ``length`` elements of its views, ``ways`` side by side: read and
        written back in one loop (in place), or its loop, then the CopyOut's."""
        head = f"            for _i in range({length if ways == 1 else length // ways}):"

        def element_loop(lines: list, views: list) -> list:
            return [*(["            _nan = False"] if views else []), head, *_interleaved(lines, ways),
                    *_nan_fixup(views, "            ", length)]
        staged = [*element_loop(*one(not copy_out)),
                  *_copy_loops(_whole_block_copies(only(body, lambda s: id(s) in copy_out)), "            ", length)]
        if not in_place:
            return staged
        return _either(in_place, element_loop(*one(True, dict(pairs), _whole_block_copies(body))), staged)
    args = ", ".join(program.params)
    rest = ", ".join(f"{p}[_lim:]" if p in kinds else p for p in program.params)
    return "\n".join([
        *([op_by_op] if fuse is None else []),
        f"def _stepwise(ctx, count, _skip, {args}):",
        *scalar_lines,
        *_stepwise_lines(body, scalar_of, set(half), "    "),
        "",
        f"def _impl({params}):",
        *(["    if fuse == 0:", f"        {call}", "        return"] if fuse is None else []),
        *scalar_lines,
        *fits,
        "    if _ok:",
        "        _nops = 0",
        *_count_lines(only(body, lambda s: not is_copy(s)), "        "),
        "        _advanced = 0",
        # Whole blocks of a constant length (a vectorized loop with no remainder loop of its own).
        f"        _lim = min(({', '.join(['count', *limits])},))",
        f"        _whole = _lim // {block} * {block}",
        f"        for _b in range(0, _whole, {block}):",
        # The preload shares the unfused ops would have advanced by the end of this block.
        f"            _due = _nops * (_b + {block}) // count",
        "            while _advanced < _due:",
        "                advance_preload(ctx)",
        "                _advanced += 1",
        # Views of the block, indexed from 0: the element loop vectorizes.
        *(f"            _v_{t} = {t}[_b:_b + {block}]" for t in touched),
        *block_loops(block, ways),
        # The part block: the whole blocks' loops over its length, on views from its start (a
        # device tile need not be whole blocks: 3776 elements are 7 and 192, and element by element
        # those 5% took a third of a 1M bf16 step's loop time).  Then the few elements past _lim
        # one by one, and the preload's remaining shares.
        *(f"        _v_{t} = {t}[_whole:]" for t in touched),
        *(line[4:] for line in block_loops("_lim - _whole", 1)),
        "        if _lim < count:",
        f"            _stepwise(ctx, count - _lim, _lim, {rest})",
        "        while _advanced < _nops:",
        "            advance_preload(ctx)",
        "            _advanced += 1",
        "    else:",
        f"        _stepwise(ctx, count, 0, {args})",
        "",
    ])
