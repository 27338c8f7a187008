"""Launching a kernel on simulated cores (SPEC §3, PyPTO launch syntax from seed 001).

A kernel is a plain Python function of one lane::

    def add_kernel(ctx, x, y, z, tiling):   # ctx: Lane, x/y/z: GM tensors, tiling: record
        ...

decorated with :func:`kernel` (optionally bound to a TilingKey class) and
launched PyPTO style, ``add_kernel[None, block_dim, key](x, y, z, tiling)``, or
with :meth:`Kernel.launch` for the platform and other options.  The launch
runs ``block_dim`` lanes under ``numba.prange``; a lane owns the UB of the host
thread running it for its whole run (one UB per host thread, allocated once and
reused, never zeroed -- like the device's) and reads the tiling from the TilingData's bytes
through its NumPy structured dtype, as a device kernel reads it from GM.

Key fields are compile-time constants: the kernel body sees each field name as
a global holding the key's value, so ``if UseScale == 1:`` folds away, and each
key compiles one specialization.  Specializations are cached on disk; the cache
index includes the key, the tiling layout and a hash of the kernel's source file
and of the library's compiled code, so one key can never load another's code.
The launchers are shared by all kernels: they call a body through its address.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import threading
import types as pytypes
import warnings
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np
from numba import get_thread_id, prange, types
from numba.extending import intrinsic

from ..config import CHECK_MAP_POOL_BYTES, KERNEL_PRINT_WORDS, STREAM_BYTES, TRACE_CAPACITY
from ..host.check import CHECK_RULE, CHECK_SLOTS, decode_violation, garbage_violation, unwritten_violation
from ..host.errors import KernelError
from ..host.platform import Platform, check_block_dim, get_platform
from ..host.tiling import is_tiling_class, numpy_dtype, to_array
from ..host.tiling_key import tiling_key_schema
from ..host.trace import TRACE_EVENTS, LaunchTrace, trace_row_length
from .._numba_compat import NumbaCompatError, compat_error_in
from .._numba_compat.call import borrowed, call_by_address, raised_exception
from .arguments import accepts, as_gm_dtype, expected_dtypes
from .._numba_compat.extending import TypingError, cgutils, overload, python_twin
from .._numba_compat.jit import OVERLOAD_OPTIONS, compiled_code_digest, dispatcher, function_address, jit
from .check import (
    GRANULE, MIXED, REGION_COLS, REGION_DIRTY, REGION_TOUCHED, TOUCHED_OWNER, TOUCHED_READER, owner_marks,
    rule_table,
)
from .interpret import interpreting, python_function, raised, run_python
from .lane import (
    ERR_LANE_RAISED, ERR_SYNC_ABANDONED, ERR_SYNC_NOT_RESIDENT, ERR_TMP_TOO_SMALL, ERR_UB_CAPACITY, LANE_STATE_SLOTS,
    LANE_TYPES, STATE_AUTO, STATE_BARRIER, STATE_ERROR, STATE_ERROR_DETAIL, STATE_EXCEPTION, STATE_PRINT,
    STATE_STREAM, CheckedLane, Lane,
    TracedLane, _address,
)
from .primitives.debug import PRINT_NAMES, flush_prints, prints_enabled
from .primitives.sync import barrier_finish, barrier_lanes, barrier_wait_turn

__all__ = ["Kernel", "KernelBody", "PreparedLaunch", "kernel", "KernelError", "as_gm", "check_block_dim",
           "compile_messages", "body_signature"]


def as_gm(array: np.ndarray, name: str = "tensor") -> np.ndarray:
    """The flat GM view of a C-contiguous array; fp16/bf16/fp8 become uint views of their width."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name}: expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype.hasobject or array.dtype.itemsize == 0:
        raise TypeError(f"{name}: dtype {array.dtype} is not a fixed-size element type a GM tensor can hold")
    if not array.flags.c_contiguous:
        raise ValueError(f"{name}: GM tensors must be C-contiguous (use numpy.ascontiguousarray)")
    flat = array.reshape(-1)
    raw = as_gm_dtype(array.dtype)
    return flat.view(raw) if raw != array.dtype else flat


class KernelConstant:
    """A name a kernel body reads as a compile-time constant (see :func:`constant`)."""

    __slots__ = ("name", "doc")

    def __init__(self, name: str, doc: str):
        self.name, self.doc = name, doc

    def __repr__(self) -> str:
        return f"<kernel constant {self.name}: {self.doc}>" if self.doc else f"<kernel constant {self.name}>"


def constant(name: str, doc: str = "") -> KernelConstant:
    """Declare a compile-time constant of a kernel, at the top of the kernel's module::

        IO = constant("IO", "element type of the GM tensors")

    Each specialization binds the name to a value (a TilingKey field from the launch's key, any
    other from ``datatype=`` or an op's constants), so branches on it fold away.  A launch that
    leaves a constant the body reads unbound raises TypeError before compiling."""
    return KernelConstant(name, doc)


def _names_read(func: Callable) -> set[str]:
    """The global and attribute names ``func``'s code (nested functions included) reads."""
    names, codes = set(), [func.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, pytypes.CodeType))
    return names


def _constants_read(func: Callable) -> set[str]:
    """The declared constants ``func`` reads (by the globals its code names)."""
    return {n for n in _names_read(func) if isinstance(func.__globals__.get(n), KernelConstant)}


def _specialized_body(func: Callable, consts: dict, tag: str, announce: str, nrt: bool):
    """``func`` compiled with ``consts`` injected as globals (compile-time constants), cached
    under ``tag``; ``announce`` is printed (see :func:`compile_messages`) before a real compile;
    ``nrt``: Numba's reference-counted runtime, needed to allocate arrays in the body."""
    scope = dict(func.__globals__)
    scope.update(consts)
    clone = pytypes.FunctionType(func.__code__, scope, func.__name__, func.__defaults__, func.__closure__)
    clone.__qualname__ = func.__qualname__
    clone.__module__ = func.__module__
    return dispatcher(clone, tag, addressable=True, on_miss=functools.partial(_announce_compile, announce),
                      _nrt=nrt)


def _source_digest(func: Callable) -> str:
    """The kernel's source file (or bytecode when there is none) together with the library's."""
    try:
        with open(inspect.getsourcefile(func), "rb") as f:
            own = f.read()
    except (OSError, TypeError):
        own = func.__code__.co_code
    return hashlib.sha256(own + compiled_code_digest().encode()).hexdigest()


_COMPILE_MESSAGES: bool | None = None


def compile_messages(enabled: bool | None = None) -> bool | None:
    """Whether a kernel compiled for the first time (not found in Numba's on-disk cache) prints
    ``compiling <kernel> kernel (first run only)...`` to stderr.  None (default): when stderr is
    a terminal or ``ASCEND_NUMBA_COMPILE_MESSAGES=1``.  Returns the previous setting."""
    global _COMPILE_MESSAGES
    previous, _COMPILE_MESSAGES = _COMPILE_MESSAGES, enabled
    return previous


def _announce_compile(what: str):
    enabled = _COMPILE_MESSAGES
    if enabled is None:
        enabled = os.environ.get("ASCEND_NUMBA_COMPILE_MESSAGES", "") not in ("", "0") or sys.stderr.isatty()
    if enabled:
        print(f"compiling {what} (first run only)...", file=sys.stderr, flush=True)


# ---- the launchers -------------------------------------------------------------------------------
#
# One launcher serves every kernel: it builds each lane's context and calls the kernel body
# through its address.  Calling through an address keeps the body's code out of the launcher's
# LLVM module: a direct call would link the whole kernel in and optimize and generate it a
# second time (measured: 5.3 of a Tile kernel's 17.8 CPU seconds, before the other savings).
# The launchers are compiled once per argument types and cached like everything else.

def _make_lane(i, block_dim, ub, block_bytes, state, trace):
    raise NotImplementedError  # compiled only


@overload(_make_lane, jit_options=OVERLOAD_OPTIONS)
def _ov_make_lane(i, block_dim, ub, block_bytes, state, trace):
    # The plain launcher passes trace=None; a traced one passes the trace rows.
    if isinstance(trace, types.NoneType):
        def plain(i, block_dim, ub, block_bytes, state, trace):
            return Lane(np.int64(i), np.int64(block_dim), _address(ub), np.int64(ub.size), np.int64(block_bytes),
                        _address(state))
        return plain

    def traced(i, block_dim, ub, block_bytes, state, trace):
        row = trace[i]
        return TracedLane(np.int64(i), np.int64(block_dim), _address(ub), np.int64(ub.size),
                          np.int64(block_bytes), _address(state), _address(row),
                          np.int64((row.size - TRACE_EVENTS) // 3))
    return traced


@jit
def _make_checked_lane(i, block_dim, ub, block_bytes, state, trace, check, shadow, epoch, regions):
    # shadow: this lane's UB shadow (see kernels.check); regions: the GM region table and the
    # rule table.
    row = trace[i]
    table, rules = regions
    return CheckedLane(np.int64(i), np.int64(block_dim), _address(ub), np.int64(ub.size), np.int64(block_bytes),
                       _address(state), _address(row), np.int64((row.size - TRACE_EVENTS) // 3),
                       _address(check[i]), _address(shadow), np.int64(epoch), _address(table),
                       np.int64(table.shape[0]), _address(rules))


def _tiling_record(tiling):
    raise NotImplementedError  # compiled only


@overload(_tiling_record, jit_options=OVERLOAD_OPTIONS)
def _ov_tiling_record(tiling):
    if isinstance(tiling, types.NoneType):
        return lambda tiling: None
    return lambda tiling: tiling[0]


def _canonical(t):
    # Read-only and unaligned arrays have the same data model: one body serves them all.
    if isinstance(t, types.Array):
        return types.Array(t.dtype, t.ndim, t.layout)
    return t


def body_signature(ctx, args, tiling) -> tuple:
    """The argument types a kernel body is compiled for: its context, the GM tensors and
    scalars (``args``, a tuple type), and the tiling record unless ``tiling`` is none."""
    tail = () if isinstance(tiling, types.NoneType) else (tiling,)
    return (ctx, *(_canonical(t) for t in args.types), *tail)


@intrinsic
def _call_body(typingctx, addr, ctx, args, tiling):
    """Call the kernel body compiled for ``body_signature(ctx, args, tiling)`` at ``addr``;
    returns its status (0, or the code of an exception it raised) and the address of the
    exception's record."""
    if ctx not in LANE_TYPES.values():
        raise TypingError(f"not a lane context type: {ctx}")
    argtys = body_signature(ctx, args, tiling)

    def codegen(context, builder, signature, llargs):
        values = [llargs[1], *cgutils.unpack_tuple(builder, llargs[2])]
        if len(argtys) > len(values):
            values.append(llargs[3])
        # The GM tensors reach the body without a reference count, like UB views.
        values = [borrowed(context, builder, ty, value) for ty, value in zip(argtys, values)]
        status, _, exception = call_by_address(context, builder, llargs[0], types.none, argtys, values,
                                               exception=True)
        status = builder.sext(status, cgutils.intp_t)
        return context.make_tuple(builder, signature.return_type, [status, exception])

    return types.UniTuple(types.int64, 2)(addr, ctx, args, tiling), codegen


# Interpret mode: the "address" is the interpreted body itself.
python_twin(_call_body)(run_python)


@jit
def _interleaved_lane(k, per_thread, threads):
    # prange hands each host thread a contiguous run of k; mapping run position j of thread t
    # to lane j * threads + t spreads lanes round-robin, so the idle trailing lanes of a split
    # do not leave one thread with all the work.  Results never depend on this mapping.
    return (k % per_thread) * threads + k // per_thread


@jit
def _lane_raised(state_row, result):
    status, exception = result
    if status != 0 and state_row[STATE_ERROR] == 0:
        state_row[STATE_ERROR] = ERR_LANE_RAISED
        state_row[STATE_ERROR_DETAIL] = status
        state_row[STATE_EXCEPTION] = exception


@jit(python=True, parallel=True)
def _launch_lanes(block_dim, ub_pool, block_bytes, state, trace, args, tiling, body_addr):
    """Run lanes 0..block_dim-1 in parallel, each on the UB of the host thread running it."""
    threads = ub_pool.shape[0]
    per_thread = (block_dim + threads - 1) // threads
    for k in prange(per_thread * threads):
        i = _interleaved_lane(k, per_thread, threads)
        if i < block_dim:
            ctx = _make_lane(i, block_dim, ub_pool[get_thread_id()], block_bytes, state[i], trace)
            _lane_raised(state[i], _call_body(body_addr, ctx, args, _tiling_record(tiling)))


# Checked launches run the lanes one after another on one UB: the owner maps need no atomics,
# the first violation is always the same one, and the launch stops at the lane that found it.

@jit(python=True)
def _launch_lanes_checked(block_dim, ub_pool, block_bytes, state, trace, check, shadow, first_epoch, regions, args,
                          tiling, body_addr):
    """Run lanes 0..block_dim-1 one after another, stopping at the first that broke a rule;
    returns how many ran."""
    record = _tiling_record(tiling)
    for i in range(block_dim):
        # Each lane marks the shadow with its own epoch, so what earlier lanes (of this launch or
        # an earlier one: the shadow is pooled) wrote reads as unwritten; the shadow is cleared
        # every 255 lanes.
        epoch = (first_epoch + i) % 255 + 1
        if epoch == 1:
            shadow[:] = 0
        ctx = _make_checked_lane(i, block_dim, ub_pool[0], block_bytes, state[i], trace, check, shadow, epoch,
                                 regions)
        _lane_raised(state[i], _call_body(body_addr, ctx, args, record))
        if check[i, CHECK_RULE] != 0 or state[i, STATE_ERROR] != 0:
            return i + 1
    return block_dim


# A kernel that calls sync_all runs every lane on a host thread of its own (all resident, as
# SyncAll needs on the device), each with its own UB; the threads run these without the GIL.

@jit(python=True, nogil=True)
def _run_resident_lane(i, block_dim, ub, block_bytes, state, trace, args, tiling, body_addr, barrier):
    ctx = _make_lane(i, block_dim, ub, block_bytes, state[i], trace)
    _lane_raised(state[i], _call_body(body_addr, ctx, args, _tiling_record(tiling)))
    barrier_finish(_address(barrier), i, False)


@jit(python=True, nogil=True)
def _run_resident_lane_checked(i, block_dim, ub, block_bytes, state, trace, check, shadow, regions, args, tiling,
                               body_addr, barrier):
    # One lane at a time, in index order from barrier to barrier (see primitives.sync).
    barrier_wait_turn(_address(barrier), i)
    ctx = _make_checked_lane(i, block_dim, ub, block_bytes, state[i], trace, check, shadow, 1, regions)
    _lane_raised(state[i], _call_body(body_addr, ctx, args, _tiling_record(tiling)))
    barrier_finish(_address(barrier), i, True)


def _run_resident(launcher, block_dim: int, ub_rows: np.ndarray, lane_args, shadow=None):
    """Run ``launcher(i, block_dim, ub_rows[i], *lane_args)`` (``shadow[i]`` after the first
    three of ``lane_args`` in checked launches) on ``block_dim`` threads at once."""
    def lane_call(i):
        if shadow is None:
            return (i, block_dim, ub_rows[i], *lane_args)
        return (i, block_dim, ub_rows[i], *lane_args[:4], shadow[i], *lane_args[4:])

    if hasattr(launcher, "compile"):  # interpret mode's launchers are Python
        launcher.compile(tuple(numba.typeof(a) for a in lane_call(0)))  # once, not on every thread
    threads = [threading.Thread(target=launcher, args=lane_call(i), daemon=True) for i in range(block_dim)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class _UBPool(threading.local):
    """One UB per host thread, reused by every lane that thread runs (the device's UB is not zeroed either)."""

    def get(self, ub_size: int) -> np.ndarray:
        pool = getattr(self, "pool", None)
        if pool is None or pool.shape[1] != ub_size:
            # get_thread_id() < NUMBA_NUM_THREADS whatever set_num_threads() says.
            pool = self.pool = np.empty((numba.config.NUMBA_NUM_THREADS, ub_size), np.uint8)
        return pool

    def resident(self, ub_size: int, lanes: int) -> np.ndarray:
        """One UB per lane, for launches whose lanes are all resident (SyncAll)."""
        rows = getattr(self, "rows", None)
        if rows is None or rows.shape[1] != ub_size or rows.shape[0] < lanes:
            rows = self.rows = np.empty((lanes, ub_size), np.uint8)
        return rows


_UB_POOL = _UBPool()


class _CheckMapPool(threading.local):
    """Bytes for checked launches' maps, reused from launch to launch: a fresh map costs a page
    fault and the kernel's zeroing per page (0.84 ms for 16 MB, against 0.19 ms to clear a reused
    one).  The summaries and garbage maps must start zeroed and are cleared where a launch wrote
    them; the owner and reader byte maps need not (a byte is read only where its granule's summary
    says MIXED, and a granule is filled before it becomes that), nor do the backups."""

    def take(self, nbytes: int) -> np.ndarray:
        """Zeroed bytes (give them back zeroed: see :func:`_clear_maps`)."""
        return self._pooled("buf", nbytes, np.zeros)

    def shadow(self, nbytes: int) -> tuple[np.ndarray, int]:
        """The UB shadow of one-lane-at-a-time launches and the epoch its next lane takes: a new
        shadow starts at epoch 0, whose lane clears it (see ``_launch_lanes_checked``)."""
        buf = getattr(self, "shadow_buf", None)
        if buf is None or buf.size != nbytes:
            buf = self.shadow_buf = np.empty(nbytes, np.uint8)
            self.epoch = 0
        return buf, self.epoch

    def byte_maps(self, nbytes: int) -> np.ndarray:
        """Bytes for the owner and reader maps, not zeroed."""
        return self._pooled("byte_map_buf", nbytes, np.empty)

    def backups(self, nbytes: int) -> np.ndarray:
        """Bytes for the backups of the caller's arrays, not zeroed (read only where written)."""
        return self._pooled("backup", nbytes, np.empty)

    def _pooled(self, name: str, nbytes: int, make) -> np.ndarray:
        buf = getattr(self, name, None)
        if buf is None or buf.size < nbytes:
            buf = make(nbytes, np.uint8)
            if nbytes <= CHECK_MAP_POOL_BYTES:
                setattr(self, name, buf)
        return buf[:nbytes]


_CHECK_MAPS = _CheckMapPool()

def _arg_key(gm_args: tuple) -> tuple:
    # What decides the body's argument types, at a fraction of numba.typeof's cost.
    return tuple((a.dtype, a.ndim, a.flags.c_contiguous, a.flags.f_contiguous) if type(a) is np.ndarray
                 else type(a) for a in gm_args)


class KernelBody:
    """One specialization of a kernel body (compile-time constants, tiling layout, lane mode)
    and the address of its compiled code for each set of argument types."""

    interpreted = False

    def __init__(self, dispatcher, mode: str, resident: bool = False, auto: bool = False, prints: bool = False):
        self.dispatcher = dispatcher
        self.mode = mode
        self.prints = prints  # compiled with kprint / dump_tensor on: its launches get print rows
        self.resident = resident  # every lane on a thread of its own (the kernel calls sync_all)
        self.auto = auto  # an AUTO-mode kernel: checked launches apply the AUTO rules too
        self._addresses: dict[tuple, int] = {}

    def address(self, gm_args: tuple, tiling: np.ndarray | None) -> int:
        """The compiled body's address for these GM arguments (compiled, or loaded from the
        on-disk cache, on first use)."""
        key = _arg_key(gm_args)
        found = self._addresses.get(key)
        if found is None:
            record = types.none if tiling is None else numba.typeof(tiling).dtype
            sig = body_signature(LANE_TYPES[self.mode], numba.typeof(gm_args), record)
            try:
                self.dispatcher.compile(sig)
            except Exception as exc:
                compat = compat_error_in(exc)
                if compat is None:
                    raise
                raise NumbaCompatError(str(compat)) from None
            cres = self.dispatcher.overloads[sig]
            if cres.signature.return_type != types.none:
                raise TypeError(f"kernel {self.dispatcher.py_func.__name__} returns a value; kernels return nothing")
            found = self._addresses[key] = function_address(cres)
        return found


class InterpretedBody(KernelBody):
    """A kernel body in interpret mode: the lane function as Python (see :mod:`.interpret`);
    its "address" is that function, which the interpreted launchers call."""

    interpreted = True

    def __init__(self, function, mode: str, resident: bool = False, auto: bool = False, prints: bool = False):
        super().__init__(None, mode, resident, auto, prints)
        self.function = function

    def address(self, gm_args: tuple, tiling: np.ndarray | None):
        return self.function


def _launcher(body: KernelBody, compiled):
    """A launcher for ``body``: ``compiled`` itself, or its Python in interpret mode."""
    return python_function(compiled.py_func) if body.interpreted else compiled


class Kernel:
    """A lane function plus its optional TilingKey schema; compiles one body per key, tiling
    layout and lane mode (plain, traced, checked)."""

    def __init__(self, func: Callable, tiling_key: type | None = None, nrt: bool = True, resident: bool = False,
                 mode: str = "manual", strict: bool = True, outputs: tuple = (), dtypes: dict | None = None):
        if not callable(func):
            raise TypeError("kernel() expects a function")
        if mode not in ("manual", "auto"):
            raise ValueError(f"kernel mode must be 'manual' or 'auto', got {mode!r}")
        self.mode = mode
        if mode == "auto":
            _check_auto_rules(func, strict)
        self.py_func = func
        self.nrt = nrt
        self.key_schema = tiling_key_schema(tiling_key) if tiling_key is not None else None
        self._bodies: dict[tuple, KernelBody] = {}
        self._digest = _source_digest(func)
        self.arg_names = tuple(inspect.signature(func).parameters)[1:]  # after ctx
        unknown = [n for n in (*outputs, *(dtypes or {})) if n not in self.arg_names]
        if unknown:
            raise TypeError(f"kernel {func.__name__}: {unknown[0]!r} is not one of its arguments "
                            f"({', '.join(self.arg_names)})")
        self.outputs = tuple(outputs)  # every byte of these a checked launch must see written
        self._declared_dtypes = {n: np.dtype(d) for n, d in (dtypes or {}).items()}
        self._arg_dtypes = None  # declared and inferred, on first launch (see arguments.expected_dtypes)
        self._constants = _constants_read(func)
        # SyncAll needs every lane resident at once: a kernel calling sync_all gets a launch that
        # runs each lane on a thread of its own (a helper calling it needs resident=True).
        self.resident = resident or "sync_all" in _names_read(func)
        self._prints = any(n in PRINT_NAMES for n in _names_read(func))
        functools.update_wrapper(self, func)

    def __repr__(self) -> str:
        return f"<Kernel {self.py_func.__module__}.{self.py_func.__qualname__}>"

    def __getitem__(self, config) -> Callable:
        """``kernel[stream, block_dim]`` or ``kernel[stream, block_dim, key]`` -> a launch callable."""
        if not isinstance(config, tuple) or len(config) not in (2, 3):
            raise TypeError("launch with kernel[stream, block_dim] or kernel[stream, block_dim, key]")
        _stream, block_dim, *rest = config
        key = rest[0] if rest else None
        return functools.partial(self.launch, block_dim=block_dim, key=key)

    def _key_constants(self, key) -> dict:
        if self.key_schema is None:
            if key is not None:
                raise TypeError(f"{self!r} has no TilingKey; launch it without a key")
            return {}
        if key is None:
            raise TypeError(f"{self!r} is bound to {self.key_schema.key_cls.__name__}; pass a key dict")
        return dict(self.key_schema.validate_concrete(key))

    def body(self, constants: dict, tiling_dtype: np.dtype | None, mode: str = "plain",
             interpret: bool = False) -> KernelBody:
        """The body for one set of compile-time constants, tiling layout and lane mode
        (``plain``, ``traced``: lanes record a trace, ``checked``: primitives verify every
        access and record a trace); compiled on first launch, cached on disk -- or, with
        ``interpret``, the lane function run as Python (nothing compiles)."""
        prints = self._prints and prints_enabled()
        cache_key = (tuple(constants.items()), tiling_dtype, mode, prints, interpret)
        found = self._bodies.get(cache_key)
        if found is None:
            unbound = sorted(self._constants - constants.keys())
            if unbound:
                raise TypeError(f"{self!r} reads the compile-time constants {', '.join(unbound)}: bind them with "
                                "the launch's key or datatype={...}")
            if interpret:
                found = self._bodies[cache_key] = InterpretedBody(python_function(self.py_func, constants), mode,
                                                                  self.resident, self.mode == "auto", prints)
                return found
            layout = None if tiling_dtype is None else (tiling_dtype.descr, tiling_dtype.itemsize)
            tag = f"{self._digest}|{cache_key[0]!r}|{layout!r}|{mode}" + ("|prints" if prints else "")
            name = self.py_func.__name__.removesuffix("_kernel")
            detail = ", ".join([*(f"{k}={getattr(v, '__name__', v)}" for k, v in constants.items()),
                                *([mode] if mode != "plain" else [])])
            announce = f"{name} kernel" + (f" [{detail}]" if detail else "")
            dispatcher_ = _specialized_body(self.py_func, constants, tag, announce, self.nrt)
            found = self._bodies[cache_key] = KernelBody(dispatcher_, mode, self.resident, self.mode == "auto",
                                                         prints)
        return found

    def launch(self, *args, block_dim: int, key: dict | None = None, datatype: dict | None = None,
               platform: "str | Platform" = "A2", trace: bool = False, checked: bool = False,
               interpret: bool | None = None):
        """Run the kernel on ``block_dim`` lanes.  A trailing TilingData instance is the tiling.

        Arrays become flat GM tensors (C-contiguous required); scalars pass as
        they are.  ``datatype`` adds compile-time constants beside the key (PyPTO's
        datatype specialization, e.g. the element type of the I/O buffers).
        Raises before any compiled code runs on a bad block_dim, key, tiling or
        argument, and KernelError if a lane fails at run time.  Returns the lanes'
        state rows (``[:, STATE_UB_TOP]`` is each lane's UB allocation), or with
        ``trace=True`` a :class:`~ascend_numba.host.trace.LaunchTrace`.

        ``checked=True`` runs the lanes one by one with every primitive verified
        and raises :class:`~ascend_numba.host.check.KernelCheckError` (naming the
        lane, primitive, rule and offsets) at the first violation, leaving the
        array arguments as they were.

        ``interpret=True`` runs the body and every primitive as plain Python (see
        :func:`~ascend_numba.interpret`; None: as ``an.interpret()`` or
        ``ASCEND_NUMBA_INTERPRET`` say), lanes one after another in lane order.
        """
        plat = get_platform(platform)
        block_dim = check_block_dim(block_dim)
        key_consts = self._key_constants(key)
        if datatype is not None and not isinstance(datatype, dict):
            raise TypeError(f"datatype must be a dict of compile-time constants, got {type(datatype).__name__}")
        if len(args) != len(self.arg_names):
            raise TypeError(f"{self!r} takes {len(self.arg_names)} arguments after ctx "
                            f"({', '.join(self.arg_names)}), got {len(args)}")
        tiling_dtype, tiling_bytes = None, None
        if args and is_tiling_class(type(args[-1])):
            tiling_dtype = numpy_dtype(type(args[-1]))
            tiling_bytes = to_array(args[-1])
            args = args[:-1]
        self._check_arg_dtypes(args)
        gm_args = tuple(self._gm_arg(a, i) for i, a in enumerate(args))
        return self.launch_prepared(gm_args, tiling_bytes, tiling_dtype, block_dim, plat,
                                    {**key_consts, **(datatype or {})}, trace=trace, checked=checked,
                                    interpret=interpret)

    def prepare(self, tiling_bytes: np.ndarray | None, tiling_dtype: np.dtype | None, block_dim: int,
                platform: Platform, constants: dict | None = None, gm_bytes: int = 0) -> "PreparedLaunch":
        """A plain launch with everything but the GM tensors fixed (see :class:`PreparedLaunch`);
        ``gm_bytes``: what the GM tensors it will get add up to."""
        return PreparedLaunch(self.body(constants or {}, tiling_dtype), block_dim, platform,
                              _tiling_view(tiling_bytes, tiling_dtype), gm_bytes)

    def launch_prepared(self, gm_args: tuple, tiling_bytes: np.ndarray | None, tiling_dtype: np.dtype | None,
                        block_dim: int, platform: Platform, constants: dict | None = None, *,
                        trace: bool = False, checked: bool = False, trace_info: dict | None = None,
                        scratch: tuple = (), interpret: bool | None = None):
        """Launch with arguments an op has already validated: flat GM arrays, serialized tiling,
        compile-time constants (key fields and datatype).  Returns the lanes' state rows, or a
        LaunchTrace (with ``trace_info`` in it) when ``trace=True``.  ``scratch``: names of
        fresh outputs a checked launch need not protect (see :func:`run_launch`); ``interpret``:
        see :meth:`launch`."""
        mode = "checked" if checked else "traced" if trace else "plain"
        body = self.body(constants or {}, tiling_dtype, mode, interpreting(interpret))
        return run_launch(body, block_dim, platform, gm_args,
                          _tiling_view(tiling_bytes, tiling_dtype),
                          trace_name=self.py_func.__name__ if trace else None, trace_info=trace_info,
                          arg_names=self.arg_names, scratch=scratch, outputs=self.outputs)

    def _check_arg_dtypes(self, args: tuple) -> None:
        """Refuse an array argument whose element type differs from the one the kernel declares
        for it or copies it to or from (its UB buffers' dtype), naming it, before anything runs."""
        if self._arg_dtypes is None:
            self._arg_dtypes = {**expected_dtypes(self.py_func), **{n: (d, f"declares it {d}") for n, d in
                                                                       self._declared_dtypes.items()}}
        for name, value in zip(self.arg_names, args):
            want = self._arg_dtypes.get(name)
            if want is None or not isinstance(value, np.ndarray):
                continue
            dtype, why = want
            if not accepts(dtype, value.dtype, declared=name in self._declared_dtypes):
                raise TypeError(f"kernel {self.py_func.__name__}: argument {name} is {value.dtype}, but the kernel "
                                f"{why}: pass a {dtype} array (or declare @kernel(dtypes={{{name!r}: ...}}))")

    @staticmethod
    def _gm_arg(value, index: int):
        if isinstance(value, np.ndarray):
            return as_gm(value, f"argument {index}")
        if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            return value
        raise TypeError(f"argument {index}: expected a numpy array or a scalar, got {type(value).__name__}")


def _tiling_view(tiling_bytes: np.ndarray | None, tiling_dtype: np.dtype | None) -> np.ndarray | None:
    # The launchers read the tiling through its record dtype, as a device kernel reads its struct.
    if tiling_dtype is None:
        return None
    return tiling_bytes.view(tiling_dtype)


class PreparedLaunch:
    """One plain (untraced, unchecked) launch with its lanes, tiling and kernel body fixed:
    calling it with the GM tensors costs little more than the lanes' work.  Ops keep one
    per problem, for harnesses that call them thousands of times on the same shapes."""

    __slots__ = ("body", "block_dim", "platform", "tiling", "gm_bytes")

    def __init__(self, body: KernelBody, block_dim: int, platform: Platform, tiling: np.ndarray | None,
                 gm_bytes: int):
        self.body = body
        self.block_dim = block_dim
        self.platform = platform
        self.tiling = tiling
        self.gm_bytes = gm_bytes

    def __call__(self, gm_args: tuple) -> np.ndarray:
        """Run the lanes on ``gm_args`` (flat GM tensors and scalars); returns the state rows, or
        raises KernelError for the first failing lane."""
        if self.body.resident or self.body.prints:
            return run_launch(self.body, self.block_dim, self.platform, gm_args, self.tiling)
        state = _lane_state(self.block_dim, self.gm_bytes)
        _launch_lanes(self.block_dim, _UB_POOL.get(self.platform.ub_size), self.platform.block_bytes, state, None,
                      gm_args, self.tiling, self.body.address(gm_args, self.tiling))
        _raise_lane_error(state, self.platform)
        return state


def _lane_state(block_dim: int, gm_bytes: int) -> np.ndarray:
    state = np.zeros((block_dim, LANE_STATE_SLOTS), np.int64)
    if gm_bytes >= STREAM_BYTES:
        state[:, STATE_STREAM] = 1
    return state


def run_launch(body: KernelBody, block_dim: int, platform: Platform, gm_args: tuple, tiling: np.ndarray | None,
               *, trace_name: str | None = None, trace_info: dict | None = None, arg_names: tuple = (),
               scratch: tuple = (), outputs: tuple = ()):
    """Run ``body`` on ``block_dim`` lanes; raise KernelError for the first failing lane, else
    return the state rows -- or, when ``trace_name`` is given, a LaunchTrace.  A checked body
    raises KernelCheckError for the first lane that broke a rule, after putting back every GM
    byte the lanes wrote, except in the arguments named in ``scratch`` (fresh outputs
    the caller drops on failure); it also raises (gm-output-unwritten) when a byte of an argument
    named in ``outputs`` was written by no lane."""
    checked = body.mode == "checked"
    if body.interpreted and tiling is not None:
        tiling = tiling.view(np.recarray)  # Python reads the record's fields as attributes
    address = body.address(gm_args, tiling)
    state = _lane_state(block_dim, sum(a.nbytes for a in gm_args if isinstance(a, np.ndarray)))
    prints = None
    if body.prints:
        prints = np.zeros((block_dim, KERNEL_PRINT_WORDS), np.int64)
        state[:, STATE_PRINT] = prints.ctypes.data + np.arange(block_dim, dtype=np.int64) * prints.strides[0]
    try:
        return _run_lanes(body, block_dim, platform, gm_args, tiling, address, state, checked, trace_name, trace_info,
                          arg_names, scratch, outputs)
    finally:
        flush_prints(prints)  # what the lanes printed, lane by lane, also when the launch failed


def _run_lanes(body, block_dim, platform, gm_args, tiling, address, state, checked, trace_name, trace_info, arg_names,
               scratch, outputs):
    """:func:`run_launch`'s lanes, with the state rows made."""
    capacity = TRACE_CAPACITY if trace_name else 0
    trace = np.zeros((block_dim, trace_row_length(capacity)), np.int64) if body.mode != "plain" else None
    if body.resident:
        _check_resident(block_dim, platform)
        barrier = barrier_lanes(block_dim)
        state[:, STATE_BARRIER] = barrier.ctypes.data
        ub_rows = _UB_POOL.resident(platform.ub_size, block_dim)
    else:
        ub_pool = _UB_POOL.get(platform.ub_size)
        if body.interpreted:
            ub_pool = ub_pool[:1]  # one host thread: the lanes in lane order
    if checked:
        if block_dim > 65534:
            raise ValueError(f"checked launches take at most 65534 lanes (each GM byte's owner is a uint16 "
                             f"lane + 1, the top value a marker), got block_dim {block_dim}")
        check = np.zeros((block_dim, CHECK_SLOTS), np.int64)
        state[:, STATE_AUTO] = body.auto
        regions, kept, names, maps = _gm_regions(gm_args, arg_names, platform.block_bytes, block_dim, scratch,
                                                 outputs)
        # Interpret mode calls the rules as Python: no table of compiled ones.
        rules = np.zeros(0, np.uint64) if body.interpreted else rule_table()
        try:
            # The UB shadow: the written-since-Init epochs, the garbage marks, the loads not yet read
            # (AUTO kernels; see kernels.check), and slack for word-sized accesses.
            if body.resident:
                shadow = np.zeros((block_dim, 3 * platform.ub_size + 64), np.uint8)
                _run_resident(_launcher(body, _run_resident_lane_checked), block_dim, ub_rows,
                              (platform.block_bytes, state, trace, check, (regions, rules), gm_args, tiling,
                               address, barrier), shadow)
            else:
                shadow, first_epoch = _CHECK_MAPS.shadow(3 * platform.ub_size + 64)
                _CHECK_MAPS.epoch = 0  # until the launch says how many lanes ran: the next one clears
                ran = _launcher(body, _launch_lanes_checked)(block_dim, ub_pool, platform.block_bytes, state, trace,
                                                             check, shadow, first_epoch, (regions, rules), gm_args,
                                                             tiling, address)
                _CHECK_MAPS.epoch = (first_epoch + ran) % 255
            failed = np.flatnonzero(check[:, CHECK_RULE])
            broken = failed.size or state[:, STATE_ERROR].any()
            left = None if broken else _garbage_left(regions, kept, names) or _unwritten_output(kept, names)
            if broken or left is not None:
                _restore(kept)
        finally:
            _clear_maps(regions, kept, maps)
        if failed.size:
            raise decode_violation(int(failed[0]), check[failed[0]], platform.ub_size, names)
        if left is not None:
            raise left
    elif body.resident:
        _run_resident(_launcher(body, _run_resident_lane), block_dim, ub_rows,
                      (platform.block_bytes, state, trace, gm_args, tiling, address, barrier))
    else:
        _launcher(body, _launch_lanes)(block_dim, ub_pool, platform.block_bytes, state, trace, gm_args, tiling,
                                       address)
    _raise_lane_error(state, platform)
    if trace_name:
        return LaunchTrace(trace_name, platform, trace, state, dict(trace_info or {}))
    return state


def _check_resident(block_dim: int, platform: Platform):
    if block_dim > platform.aiv_num:
        raise ValueError(f"block_dim {block_dim} exceeds the {platform.aiv_num} vector cores of {platform.name}: "
                         "a kernel that calls sync_all (SyncAll) needs every lane resident at once")


def _raise_lane_error(state: np.ndarray, platform: Platform):
    errors = state[:, STATE_ERROR]
    if not np.count_nonzero(errors):  # a third of .any()'s cost: this runs on every launch
        return
    lane = int(np.argmax(errors != 0))
    if state[lane, STATE_ERROR] == ERR_UB_CAPACITY:
        raise KernelError(
            f"lane {lane}: UB allocation of {state[lane, STATE_ERROR_DETAIL]} bytes exceeds "
            f"ub_size {platform.ub_size} ({platform.name})")
    if state[lane, STATE_ERROR] == ERR_TMP_TOO_SMALL:
        raise KernelError(f"lane {lane}: TTRANS temporary tile too small, it needs "
                          f"{state[lane, STATE_ERROR_DETAIL]} elements")
    if state[lane, STATE_ERROR] == ERR_SYNC_NOT_RESIDENT:
        raise KernelError(f"lane {lane}: sync_all (SyncAll) in a launch whose lanes are not all resident: call it "
                          "in the kernel function itself (the launch looks for it there) or launch a kernel "
                          "declared @kernel(resident=True)")
    if state[lane, STATE_ERROR] == ERR_SYNC_ABANDONED:
        raise KernelError(f"lane {lane}: sync_all (SyncAll) abandoned: {state[lane, STATE_ERROR_DETAIL]} lane(s) "
                          "ended without reaching it (on the device the launch hangs); every lane must call "
                          "SyncAll the same number of times")
    if state[lane, STATE_ERROR] == ERR_LANE_RAISED:
        key = int(state[lane, STATE_EXCEPTION])
        exc = raised(key) if key < 0 else raised_exception(key)
        if exc is None:
            raise KernelError(f"lane {lane}: the kernel raised an exception (status {state[lane, STATE_ERROR_DETAIL]})")
        message = str(exc)
        raise KernelError(f"lane {lane}: the kernel raised {type(exc).__name__}" + (f": {message}" if message else "")) \
            from exc
    raise KernelError(f"lane {lane}: error code {state[lane, STATE_ERROR]}")


def _span(a: np.ndarray) -> tuple[int, int]:
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def _allocation_end(a: np.ndarray) -> int:
    """Where the memory ``a`` views ends: its owning array's end (a view of a larger array ends
    inside it)."""
    base = a
    while isinstance(base.base, np.ndarray):
        base = base.base
    return _span(base)[1] if base.flags.c_contiguous else _span(a)[1]


def _gm_regions(args: tuple, arg_names: tuple, block_bytes: int, block_dim: int, scratch: tuple,
                outputs: tuple = ()):
    """The region table of the array arguments (see ``kernels.check``: address, bytes, owner map,
    bytes a read may reach, owner width, backup, bytes a write may reach, garbage map, dirty,
    reader map, written and read since the last SyncAll, maps touched, owner and reader
    summaries), the arrays it points into as :class:`_RegionMaps` (kept alive by the caller,
    used to restore and to find garbage left), each region's name for messages, and the pooled
    bytes holding the zeroed maps.  Arguments that are the same view (an in-place launch) share
    one region, named after all, backed up unless every one of them is a fresh output (``scratch``);
    a region holding an argument named in ``outputs`` must be written whole."""
    aliases: dict[tuple, list] = {}  # span -> [array, names, whether all are fresh outputs, must be written]
    for i, a in enumerate(args):
        if not isinstance(a, np.ndarray):
            continue
        name = f"{arg_names[i]} (argument {i})" if i < len(arg_names) else f"argument {i}"
        fresh = i < len(arg_names) and arg_names[i] in scratch
        group = aliases.setdefault(_span(a), [a, [], True, False])
        group[1].append(name)
        group[2] = group[2] and fresh
        group[3] = group[3] or (i < len(arg_names) and arg_names[i] in outputs)
    dtype, _top = owner_marks(block_dim)
    width = np.dtype(dtype).itemsize

    def up64(n):
        return -(-n // 64) * 64

    # Per argument, 64-byte aligned: owner and reader byte maps (lane + 1 of each byte's writer and
    # reader), garbage map (see kernels.check.carry_garbage), owner and reader summaries (int32 per
    # granule); 64 bytes of slack past the last map: small blocks are read and written a word at a time.
    sizes = [(up64(a.nbytes * width), up64(a.nbytes), up64(-(-a.nbytes // GRANULE) * 4))
             for a, *_ in aliases.values()]
    byte_maps = _CHECK_MAPS.byte_maps(sum(2 * m for m, _, _ in sizes) + 64)
    maps = _CHECK_MAPS.take(sum(g + 2 * q for _, g, q in sizes) + 64)
    backups = _CHECK_MAPS.backups(sum(g for (_, g, _), (_, _, fresh, _) in zip(sizes, aliases.values()) if not fresh)
                                  + 64)
    # Addresses from the pooled buffers' own: an array's __array_interface__ costs ~2 us a call.
    byte_maps_at, maps_at, backups_at = (_span(b)[0] for b in (byte_maps, maps, backups))
    rows, kept, names, at_bytes, at, backed = [], [], [], 0, 0, 0
    for ((start, end), (a, alias_names, fresh, must_write)), (m, g, q) in zip(aliases.items(), sizes):
        owner = byte_maps[at_bytes:at_bytes + a.nbytes * width].view(dtype)
        at_bytes += 2 * m
        garbage = maps[at:at + a.nbytes]
        granules = -(-a.nbytes // GRANULE)
        owner_sum = maps[at + g:at + g + 4 * granules].view(np.int32)
        reader_sum = maps[at + g + q:at + g + q + 4 * granules].view(np.int32)
        at += g + 2 * q
        backup = None
        if not fresh:
            backup, backed = backups[backed:backed + a.nbytes], backed + g
        kept.append(_RegionMaps(a, owner, owner_sum, backup, garbage, reader_sum, must_write))
        # GM padding (see host.check) lies past an allocation's end, not between views of one array.
        padded = -(-a.nbytes // block_bytes) * block_bytes + block_bytes
        writable = padded if end == _allocation_end(a) else a.nbytes
        rows.append((start, a.nbytes, byte_maps_at + at_bytes - 2 * m, padded, width,
                     0 if backup is None else backups_at + backed - g, writable, maps_at + at - g - 2 * q, 0,
                     byte_maps_at + at_bytes - m, 0, 0, 0, maps_at + at - 2 * q, maps_at + at - q))
        names.append(" = ".join(alias_names))
    regions = np.array(rows, np.int64).reshape(-1, REGION_COLS)
    return regions, kept, names, maps


@dataclass
class _RegionMaps:
    """A checked launch's maps of one GM argument (see :func:`_gm_regions`)."""

    array: np.ndarray
    owner: np.ndarray  # byte map, read where owner_sum is MIXED
    owner_sum: np.ndarray
    backup: np.ndarray | None
    garbage: np.ndarray
    reader_sum: np.ndarray
    must_write: bool = False  # a declared output: every byte must be written by some lane

    def written(self) -> np.ndarray:
        """Per byte, whether a lane wrote it (its owner is a lane or the before-a-SyncAll mark)."""
        n = self.array.nbytes
        whole = np.repeat(self.owner_sum > 0, GRANULE)[:n]
        mixed = np.repeat(self.owner_sum == MIXED, GRANULE)[:n]
        return whole | (mixed & (self.owner != 0))

    def writer(self, byte: int) -> int:
        """The owner mark of one byte."""
        mark = int(self.owner_sum[byte // GRANULE])
        return int(self.owner[byte]) if mark == MIXED else mark


def _clear_maps(regions: np.ndarray, kept: list, maps: np.ndarray):
    """Zero what a checked launch wrote in the pooled zeroed maps, for the next launch."""
    if maps.base is None or maps.base is not getattr(_CHECK_MAPS, "buf", None):
        return  # not pooled: dropped with the launch
    for r, region in enumerate(kept):
        touched = regions[r, REGION_TOUCHED]
        if touched & TOUCHED_OWNER:
            region.owner_sum.fill(0)
        if touched & TOUCHED_READER:
            region.reader_sum.fill(0)
        if regions[r, REGION_DIRTY]:
            region.garbage.fill(0)


def _garbage_left(regions: np.ndarray, kept: list, names: list):
    """The first GM byte a checked launch left garbage in (see ``kernels.check.carry_garbage``),
    as a KernelCheckError naming its writer, or None."""
    for r, region in enumerate(kept):
        if not regions[r, REGION_DIRTY]:
            continue
        left = np.flatnonzero(region.garbage)
        if left.size:
            byte = int(left[0])
            writer = region.writer(byte)
            # A byte written before a SyncAll keeps no lane (see kernels.check.end_phase).
            lane = -1 if writer == np.iinfo(region.owner.dtype).max else writer - 1
            return garbage_violation(lane, int(region.garbage[byte]), names[r], byte)
    return None


def _unwritten_output(kept: list, names: list):
    """The first run of bytes of a declared output no lane wrote, as a KernelCheckError naming the
    lanes that wrote the bytes on either side of it, or None."""
    for r, region in enumerate(kept):
        if not region.must_write or region.array.nbytes == 0:
            continue
        written = region.written()
        missing = np.flatnonzero(~written)
        if not missing.size:
            continue
        first = int(missing[0])
        after = np.flatnonzero(written[first:])
        end = first + int(after[0]) if after.size else written.size
        top = np.iinfo(region.owner.dtype).max

        def lane_of(byte):
            if not 0 <= byte < written.size:
                return None
            writer = region.writer(byte)
            return -1 if writer == top else writer - 1

        return unwritten_violation(names[r], first, end, written.size, lane_of(first - 1), lane_of(end))
    return None


def _restore(kept: list):
    """Put back every GM byte a failed checked launch wrote (arguments with a backup)."""
    for region in kept:
        if region.backup is not None:
            written = region.written()
            region.array.view(np.uint8)[written] = region.backup[written]


def _check_auto_rules(func: Callable, strict: bool):
    """A ``mode="auto"`` kernel is linted when it is decorated (see :mod:`ascend_numba.lint`)."""
    from ..lint import KernelRuleError, lint_function

    try:
        findings = lint_function(func, "auto")
    except (OSError, TypeError):
        return  # no source to read (a function built at run time): nothing to lint
    if findings and strict:
        raise KernelRuleError(findings)
    for finding in findings:
        warnings.warn(str(finding), stacklevel=4)


def kernel(func: Callable | None = None, *, tiling_key: type | None = None, nrt: bool = True,
           resident: bool = False, mode: str = "manual", strict: bool = True, outputs: tuple = (),
           dtypes: dict | None = None):
    """Decorate a lane function as a :class:`Kernel` (``@kernel`` or ``@kernel(tiling_key=Key)``).

    ``nrt=False`` compiles the body without Numba's reference counting: faster where arrays
    pass through many calls, for a body that allocates no array (``np.empty`` and the like
    need it; UB comes from ``alloc_buffer``).  A kernel whose own code calls ``sync_all`` runs
    its lanes all resident, each on a host thread of its own, as SyncAll needs (``block_dim``
    at most the platform's vector cores); ``resident=True`` asks for that when only a helper
    it calls does.

    ``mode``: ``"manual"`` (the kernel places its tiles and may double-buffer, as every shipped
    kernel does) or ``"auto"`` (PTO AUTO mode, seed 003): the kernel's source is linted when it
    is decorated and a broken rule raises :class:`~ascend_numba.lint.KernelRuleError` listing
    every finding (``strict=False``: a warning each).

    ``outputs``: the GM arguments the kernel writes whole; a checked launch reports a byte of one
    that no lane wrote (gm-output-unwritten: on the device it holds whatever HBM held).
    ``dtypes``: element types of GM arguments (``{"x": np.float32}``); an argument the kernel
    copies to or from a UB buffer of a literal dtype (``alloc_buffer(ctx, n, np.float32)``) is
    expected to have that dtype unless declared.  A launch refuses a mismatching array, naming it,
    before anything compiles or runs."""
    if func is None:
        return lambda f: Kernel(f, tiling_key, nrt, resident, mode, strict, outputs, dtypes)
    return Kernel(func, tiling_key, nrt, resident, mode, strict, outputs, dtypes)
