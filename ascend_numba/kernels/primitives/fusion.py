"""Tile fusion: a tile's Compute, and its CopyIn and CopyOut, written as a short program of vector
ops and copies, run as one pass (SPEC §3).

The PTO compiler fuses a run of elementwise tile ops into one loop over the tiles; each op still
rounds as the device's vector unit does, so the bits cannot change.  :func:`vector_program`
turns a function written with the vector-op vocabulary into such a loop::

    @vector_program(temps=("t",))
    def scale_add(x, y, out, t, a):
        t = muls(x, a)          # each line is one vector op over the whole tiles
        out = add(t, y)

    scale_add(ctx, n, True, x_loc, y_loc, z_loc, t_loc, 2.0)   # (ctx, count, fuse, tiles and scalars)

The arguments after ``fuse`` may come grouped in tuples, each standing for its elements in order.

A program's body is a sequence of ``tile = op(operands)`` lines (every vector op declared in
:mod:`ascend_numba.host.primitives`, and Cast under a RoundMode, ``o = cast(t, mode)`` or
``cast_bf16``, with the primitives' operand order minus ``ctx``, the destination and the count), ``if``/``else`` on flag parameters, and calls of other programs
(inlined: a program may pass one tile under two of its callee's names, as an in-place update
does), and copies: ``ub = data_copy(gm)`` lines before the first vector op (the CopyIn, ``count``
elements) and ``gm = data_copy(ub)`` / ``gm = data_copy_pad(ub, nbytes)`` lines after the last (the
CopyOut; ``nbytes``: exactly those, one block), the DMA primitives with both offsets 0.  Every
parameter is a tile (a destination or a tile operand, a GM tensor for a copy), a scalar (an operand
expression of scalar parameters: ``beta1 - one``, ``-one``; no number literals, whose type
would change the arithmetic) or a flag (read by ``if`` tests; a compile-time constant at the
call folds its branches away).

What a call does, by lane:

* plain lanes: one pass over the tiles, in blocks of ``config.FUSION_BLOCK`` elements; per
  element every op in program order, rounding in its destination tile's type exactly as the
  primitive would (a fp16 tile's result is rounded to fp16 after every op, through the CPU's
  conversions, and such a pass works on ``config.FUSION_INTERLEAVE_F16`` elements side by
  side), temporaries (``temps``) kept in registers and never written to UB, every other
  assigned tile stored; the part block at the end through the same loops, over its length.  Copies move an element's
  bits in the same pass: from a CopyIn's GM view, and to a CopyOut's, in the loop itself when
  every CopyOut writes its CopyIn's tensor in place (paired in parameter order), else in a loop
  of the block's own after it, from the UB tiles the element loop stored; the few elements past
  a GM view's end (padding) or a DataCopyPad's bytes run through the fallback below, which
  leaves bytes as the primitives would.  Between blocks the pass advances the lane's preload by
  the share of the ops' advances that the elements done so far stand for.  The tiles must hold
  ``count`` elements each (a copy's GM view: what it has), the
  ones the pass touches in memory must not overlap (but for an update in place), a copy's ends
  must have one element type, and no Adds / Muls scalar may be a NaN; otherwise the ops run one
  by one over the whole tiles, exactly as the primitives compute them (the copies: the
  primitives), in one slow loop that is cheap to compile.  ``fuse`` False runs the
  op-by-op Compute (the primitives' calls); a call whose ``fuse`` is a compile-time constant
  compiles only the path it names, so a fused kernel never compiles the primitives' loops.
* traced and checked lanes: the copies and ops one by one over the whole tiles (the primitives'
  calls), so every copy and op is counted and every operand's range checked exactly as the
  unfused tile's.

A program's model and its parse are :mod:`.fusion_program`, the source of its calls
:mod:`.fusion_codegen`, the names that source calls :mod:`.fusion_runtime`; this module makes a
program of a function and registers its calls with Numba.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np
from numba import types

from ..._numba_compat.extending import (
    AbstractTemplate, Flags, as_dtype, infer_global, lower_builtin, python_twin, signature,
)
from ..._numba_compat.jit import JIT_OPTIONS, compile_linked_subroutine, jit
from ..interpret import python_function
from ..lane import is_plain_lane
from . import dma
from .fusion_codegen import _pruned, _source
# OPS: the ops a program may use, read through this module by the tests.
from .fusion_program import OPS, Program, VectorProgramError, check_temps_written_first, is_copy, ops_of, \
    parse_program
from .fusion_runtime import _scope

__all__ = ["vector_program", "VectorProgramError", "parse_program"]


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


def _make_stub(program: Program, func):
    params = ", ".join(["ctx", "count", "fuse", *program.params])
    namespace: dict = {}
    exec(f"def {func.__name__}({params}):\n    raise NotImplementedError  # compiled only\n", namespace)
    stub = namespace[func.__name__]
    stub.__doc__, stub.__module__, stub.__qualname__ = func.__doc__, func.__module__, func.__qualname__
    stub.vector_program = program
    impls: dict = {}

    def implementation(ctx, count, fuse, *args):
        if len(args) != len(program.params):
            raise VectorProgramError(f"vector program {program.name} takes {len(program.params)} arguments after "
                                     f"ctx, count and fuse (a tuple counts as its elements), got {len(args)}")
        static = {p: t.literal_value for p, t in zip(program.params, args)
                  if program.roles.get(p) == "flag" and isinstance(t, types.Literal)}
        dtypes = {p: as_dtype(t.dtype).type for p, t in zip(program.params, args)
                  if program.roles.get(p) == "tile" and isinstance(t, types.Array)}
        # Fused in a plain Lane only: an AtomicLane's CopyOut combines with GM, as its copy primitives do.
        fused = is_plain_lane(ctx)
        fuse_value = bool(fuse.literal_value) if isinstance(fuse, types.Literal) else None
        key = (fused, fuse_value, tuple(sorted(static.items())),
               tuple(sorted((p, d.__name__) for p, d in dtypes.items())))
        if key not in impls:
            body = _pruned(program.body, static)
            typed = dict(zip(program.params, args))
            for s in ops_of(body):
                if is_copy(s):  # as the primitive's own check: one element type on both ends
                    dma.check_copy_types(typed[s.dst].dtype, typed[s.tiles[0]].dtype)
            check_temps_written_first(program, body)
            scope = _scope(dtypes)
            exec(_source(program, body, fused, {p for p, d in dtypes.items() if d is np.uint16}, fuse_value, dtypes),
                 scope)
            # Not cached on its own (no source file), but in each kernel calling it.
            for name in ("_op_by_op", "_stepwise"):
                if name in scope:
                    scope[name] = jit(scope[name])
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
        impls["python"](ctx, count, *_flat(args, lambda a: isinstance(a, tuple), lambda a: a))

    return stub


def _flat(items, is_group, parts) -> list:
    """``items`` with every group (``is_group``) replaced by its ``parts``, recursively."""
    out = []
    for item in items:
        out.extend(_flat(parts(item), is_group, parts) if is_group(item) else [item])
    return out


def _flat_types(args) -> list:
    # A call's arguments may come in tuples, each standing for its elements in order: Python passes
    # a call of more than 30 arguments through a list, and Numba 0.60 then types its constants as
    # run-time values, so flags would no longer fold.
    return _flat(args, lambda t: isinstance(t, types.BaseTuple), lambda t: t.types)


class _ProgramCall(AbstractTemplate):
    """Typing of a program's call: literal flags first, so their branches fold at compile time."""

    prefer_literal = True
    implementation = None

    def generic(self, args, kws):
        if kws:
            return None
        # Generated and checked now: a bad program fails typing.  (ctx, a named tuple, is no group.)
        self.implementation(*args[:3], *_flat_types(args[3:]))
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
        typed = list(zip(sig.args[:3], args[:3])) + _flat(
            list(zip(sig.args[3:], args[3:])), lambda a: isinstance(a[0], types.BaseTuple),
            lambda a: [(t, builder.extract_value(a[1], i)) for i, t in enumerate(a[0].types)])
        flat_sig = signature(types.none, *(t for t, _ in typed))
        cres = compile_linked_subroutine(context, builder, implementation(*flat_sig.args), flat_sig, flags)
        context.call_internal(builder, cres.fndesc, flat_sig, [v for _, v in typed])
        return context.get_dummy_value()
