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
index includes the key, the tiling layout and a hash of the kernel's source file,
so one key can never load another's code.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import threading
import types as pytypes
from typing import Any, Callable

import ml_dtypes
import numba
import numpy as np
from numba import get_thread_id, njit, prange

from ..host.check import CHECK_RULE, CHECK_SLOTS, decode_violation
from ..host.errors import KernelError
from ..host.platform import Platform, get_platform
from ..host.tiling import is_tiling_class, numpy_dtype, to_array
from ..host.tiling_key import tiling_key_schema
from ..host.trace import TRACE_EVENTS, LaunchTrace, trace_row_length
from ._jit import JIT_OPTIONS, TaggedCache, jit, library_digest
from .check import REGION_COLS
from .lane import (
    ERR_TMP_TOO_SMALL, ERR_UB_CAPACITY, LANE_STATE_SLOTS, STATE_ERROR, STATE_ERROR_DETAIL, STATE_STREAM,
    CheckedLane, Lane, TracedLane, _address,
)

__all__ = ["Kernel", "PreparedLaunch", "kernel", "KernelError", "as_gm", "check_block_dim", "MAX_BLOCK_DIM"]

MAX_BLOCK_DIM = 65535


def check_block_dim(block_dim, default: int | None = None) -> int:
    """``block_dim`` as an int in [1, MAX_BLOCK_DIM] (``default`` when None), else ValueError."""
    if block_dim is None and default is not None:
        return default
    if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)) \
            or not 1 <= block_dim <= MAX_BLOCK_DIM:
        raise ValueError(f"block_dim must be an int in [1, {MAX_BLOCK_DIM}], got {block_dim!r}")
    return int(block_dim)

# Device element types with no NumPy arithmetic reach kernels as unsigned ints of their width.
_RAW_VIEWS = {np.dtype(np.float16): np.uint16, np.dtype(ml_dtypes.bfloat16): np.uint16}
for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):
    if hasattr(ml_dtypes, _name):
        _RAW_VIEWS[np.dtype(getattr(ml_dtypes, _name))] = np.uint8


def as_gm(array: np.ndarray, name: str = "tensor") -> np.ndarray:
    """The flat GM view of a C-contiguous array; fp16/bf16/fp8 become uint views of their width."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name}: expected a numpy.ndarray, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise ValueError(f"{name}: GM tensors must be C-contiguous (use numpy.ascontiguousarray)")
    flat = array.reshape(-1)
    raw = _RAW_VIEWS.get(array.dtype)
    return flat.view(raw) if raw is not None else flat


def _specialized_jit(func: Callable, consts: dict, tag: str, **options):
    """Compile ``func`` with ``consts`` injected as globals (compile-time constants), cached under ``tag``."""
    scope = dict(func.__globals__)
    scope.update(consts)
    clone = pytypes.FunctionType(func.__code__, scope, func.__name__, func.__defaults__, func.__closure__)
    clone.__qualname__ = func.__qualname__
    clone.__module__ = func.__module__
    dispatcher = njit(**{**JIT_OPTIONS, **options})(clone)
    try:
        dispatcher._cache = TaggedCache(clone, tag)
    except RuntimeError:
        pass  # no cache locator for this function (no source file): compile in memory only
    return dispatcher


def _source_digest(func: Callable) -> str:
    """The kernel's source file (or bytecode when there is none) together with the library's."""
    try:
        with open(inspect.getsourcefile(func), "rb") as f:
            own = f.read()
    except (OSError, TypeError):
        own = func.__code__.co_code
    return hashlib.sha256(own + library_digest().encode()).hexdigest()


def _launch_with_tiling(block_dim, ub_pool, block_bytes, state, trace, args, tiling_bytes):
    tiling = tiling_bytes.view(TILING_DTYPE)  # noqa: F821 - injected per specialization
    threads = ub_pool.shape[0]
    per_thread = (block_dim + threads - 1) // threads
    for k in prange(per_thread * threads):
        i = _interleaved_lane(k, per_thread, threads)
        if i < block_dim:
            ctx = MAKE_LANE(i, block_dim, ub_pool[get_thread_id()], block_bytes, state[i], trace)  # noqa: F821
            LANE_BODY(ctx, *args, tiling[0])  # noqa: F821 - injected per specialization


def _launch_without_tiling(block_dim, ub_pool, block_bytes, state, trace, args, tiling_bytes):
    threads = ub_pool.shape[0]
    per_thread = (block_dim + threads - 1) // threads
    for k in prange(per_thread * threads):
        i = _interleaved_lane(k, per_thread, threads)
        if i < block_dim:
            ctx = MAKE_LANE(i, block_dim, ub_pool[get_thread_id()], block_bytes, state[i], trace)  # noqa: F821
            LANE_BODY(ctx, *args)  # noqa: F821 - injected per specialization


# Checked launches run the lanes one after another on one UB: the owner maps need no atomics,
# the first violation is always the same one, and the launch stops at the lane that found it.

def _launch_checked_with_tiling(block_dim, ub_pool, block_bytes, state, trace, check, check_info, args,
                                tiling_bytes):
    tiling = tiling_bytes.view(TILING_DTYPE)  # noqa: F821 - injected per specialization
    for i in range(block_dim):
        ctx = _make_checked_lane(i, block_dim, ub_pool[0], block_bytes, state[i], trace, check, check_info)
        LANE_BODY(ctx, *args, tiling[0])  # noqa: F821 - injected per specialization
        if check[i, CHECK_RULE] != 0 or state[i, STATE_ERROR] != 0:
            break


def _launch_checked_without_tiling(block_dim, ub_pool, block_bytes, state, trace, check, check_info, args,
                                   tiling_bytes):
    for i in range(block_dim):
        ctx = _make_checked_lane(i, block_dim, ub_pool[0], block_bytes, state[i], trace, check, check_info)
        LANE_BODY(ctx, *args)  # noqa: F821 - injected per specialization
        if check[i, CHECK_RULE] != 0 or state[i, STATE_ERROR] != 0:
            break


@jit(inline="always")
def _make_lane(i, block_dim, ub, block_bytes, state, trace):
    return Lane(i, block_dim, _address(ub), ub.size, block_bytes, _address(state))


@jit(inline="always")
def _make_traced_lane(i, block_dim, ub, block_bytes, state, trace):
    row = trace[i]
    return TracedLane(i, block_dim, _address(ub), ub.size, block_bytes, _address(state), _address(row),
                      (row.size - TRACE_EVENTS) // 3)


@jit
def _make_checked_lane(i, block_dim, ub, block_bytes, state, trace, check, check_info):
    # check_info: the UB shadow and the GM region table.  Each lane marks the shadow with its own
    # epoch, so what earlier lanes wrote reads as unwritten; the shadow is cleared every 255 lanes.
    shadow, regions = check_info
    epoch = i % 255 + 1
    if epoch == 1:
        shadow[:] = 0
    row = trace[i]
    return CheckedLane(i, block_dim, _address(ub), ub.size, block_bytes, _address(state), _address(row),
                       (row.size - TRACE_EVENTS) // 3, _address(check[i]), _address(shadow), epoch,
                       _address(regions), regions.shape[0])


@jit
def _interleaved_lane(k, per_thread, threads):
    # prange hands each host thread a contiguous run of k; mapping run position j of thread t
    # to lane j * threads + t spreads lanes round-robin, so the idle trailing lanes of a split
    # do not leave one thread with all the work.  Results never depend on this mapping.
    return (k % per_thread) * threads + k // per_thread


class _UBPool(threading.local):
    """One UB per host thread, reused by every lane that thread runs (the device's UB is not zeroed either)."""

    def get(self, ub_size: int) -> np.ndarray:
        pool = getattr(self, "pool", None)
        if pool is None or pool.shape[1] != ub_size:
            # get_thread_id() < NUMBA_NUM_THREADS whatever set_num_threads() says.
            pool = self.pool = np.empty((numba.config.NUMBA_NUM_THREADS, ub_size), np.uint8)
        return pool


_UB_POOL = _UBPool()

_NO_TILING = np.zeros(1, np.uint8)


class Kernel:
    """A lane function plus its optional TilingKey schema; compiles one launcher per key and layout."""

    def __init__(self, func: Callable, tiling_key: type | None = None):
        if not callable(func):
            raise TypeError("kernel() expects a function")
        self.py_func = func
        self.key_schema = tiling_key_schema(tiling_key) if tiling_key is not None else None
        self._launchers: dict[tuple, Any] = {}
        self._digest = _source_digest(func)
        self.arg_names = tuple(inspect.signature(func).parameters)[1:]  # after ctx
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

    def launcher(self, constants: dict, tiling_dtype: np.dtype | None, traced: bool = False, checked: bool = False):
        """The compiled launcher for one set of compile-time constants and tiling layout (cached);
        ``traced`` builds the variant whose lanes record a trace, ``checked`` the one whose
        primitives verify every access (and also record a trace)."""
        mode = "checked" if checked else "traced" if traced else "plain"
        cache_key = (tuple(constants.items()), tiling_dtype, mode)
        found = self._launchers.get(cache_key)
        if found is not None:
            return found
        layout = None if tiling_dtype is None else (tiling_dtype.descr, tiling_dtype.itemsize)
        tag = f"{self._digest}|{cache_key[0]!r}|{layout!r}|{mode}"
        body = _specialized_jit(self.py_func, constants, tag, cache=True)
        consts = {"LANE_BODY": body, "TILING_DTYPE": tiling_dtype,
                  "MAKE_LANE": _make_traced_lane if traced else _make_lane}
        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}|{tag}"
        if checked:
            template = _launch_checked_without_tiling if tiling_dtype is None else _launch_checked_with_tiling
            launcher = _specialized_jit(template, consts, name, cache=True)
        else:
            template = _launch_without_tiling if tiling_dtype is None else _launch_with_tiling
            launcher = _specialized_jit(template, consts, name, parallel=True, cache=True)
        self._launchers[cache_key] = launcher
        return launcher

    def launch(self, *args, block_dim: int, key: dict | None = None, datatype: dict | None = None,
               platform: "str | Platform" = "A2", trace: bool = False, checked: bool = False):
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
        """
        plat = get_platform(platform)
        block_dim = check_block_dim(block_dim)
        key_consts = self._key_constants(key)
        tiling_dtype, tiling_bytes = None, _NO_TILING
        if args and is_tiling_class(type(args[-1])):
            tiling_dtype = numpy_dtype(type(args[-1]))
            tiling_bytes = to_array(args[-1])
            args = args[:-1]
        gm_args = tuple(self._gm_arg(a, i) for i, a in enumerate(args))
        return self.launch_prepared(gm_args, tiling_bytes, tiling_dtype, block_dim, plat,
                                    {**key_consts, **(datatype or {})}, trace=trace, checked=checked)

    def prepare(self, tiling_bytes: np.ndarray, tiling_dtype: np.dtype | None, block_dim: int,
                platform: Platform, constants: dict | None = None, gm_bytes: int = 0) -> "PreparedLaunch":
        """A plain launch with everything but the GM tensors fixed (see :class:`PreparedLaunch`);
        ``gm_bytes``: what the GM tensors it will get add up to."""
        launcher = self.launcher(constants or {}, tiling_dtype)
        return PreparedLaunch(launcher, block_dim, platform, tiling_bytes, gm_bytes)

    def launch_prepared(self, gm_args: tuple, tiling_bytes: np.ndarray, tiling_dtype: np.dtype | None,
                        block_dim: int, platform: Platform, constants: dict | None = None, *,
                        trace: bool = False, checked: bool = False, trace_info: dict | None = None,
                        scratch: tuple = ()):
        """Launch with arguments an op has already validated: flat GM arrays, serialized tiling,
        compile-time constants (key fields and datatype).  Returns the lanes' state rows, or a
        LaunchTrace (with ``trace_info`` in it) when ``trace=True``.  ``scratch``: positions of
        fresh outputs a checked launch need not protect (see :func:`run_launch`)."""
        launcher = self.launcher(constants or {}, tiling_dtype, traced=trace, checked=checked)
        return run_launch(launcher, block_dim, platform, gm_args, tiling_bytes,
                          trace_name=self.py_func.__name__ if trace else None, trace_info=trace_info,
                          checked=checked, arg_names=self.arg_names, scratch=scratch)

    @staticmethod
    def _gm_arg(value, index: int):
        if isinstance(value, np.ndarray):
            return as_gm(value, f"argument {index}")
        if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            return value
        raise TypeError(f"argument {index}: expected a numpy array or a scalar, got {type(value).__name__}")


TRACE_CAPACITY = 4096  # events logged per lane; later ones are counted, not logged

# Launches whose GM tensors add up to this many bytes write GM with streaming (non-temporal)
# stores: output that big would only push the inputs and the UB out of the CPU caches.
STREAM_BYTES = 32 << 20


class PreparedLaunch:
    """One plain (untraced, unchecked) launch with its lanes, tiling bytes and compiled launcher
    fixed: calling it with the GM tensors costs little more than the lanes' work.  Ops keep one
    per problem, for harnesses that call them thousands of times on the same shapes."""

    __slots__ = ("launcher", "block_dim", "platform", "tiling_bytes", "gm_bytes")

    def __init__(self, launcher, block_dim: int, platform: Platform, tiling_bytes: np.ndarray, gm_bytes: int):
        self.launcher = launcher
        self.block_dim = block_dim
        self.platform = platform
        self.tiling_bytes = tiling_bytes
        self.gm_bytes = gm_bytes

    def __call__(self, gm_args: tuple) -> np.ndarray:
        """Run the lanes on ``gm_args`` (flat GM tensors, as the launcher was built for); returns
        the state rows, or raises KernelError for the first failing lane."""
        state = _lane_state(self.block_dim, self.gm_bytes)
        self.launcher(self.block_dim, _UB_POOL.get(self.platform.ub_size), self.platform.block_bytes, state,
                      _NO_TRACE, gm_args, self.tiling_bytes)
        _raise_lane_error(state, self.platform)
        return state


def _lane_state(block_dim: int, gm_bytes: int) -> np.ndarray:
    state = np.zeros((block_dim, LANE_STATE_SLOTS), np.int64)
    if gm_bytes >= STREAM_BYTES:
        state[:, STATE_STREAM] = 1
    return state


def run_launch(launcher, block_dim: int, platform: Platform, gm_args: tuple, tiling_bytes: np.ndarray, *,
               trace_name: str | None = None, trace_info: dict | None = None, checked: bool = False,
               arg_names: tuple = (), scratch: tuple = ()):
    """Execute a compiled launcher; raise KernelError for the first failing lane, else return the
    state rows -- or, for a traced launcher (``trace_name`` given), a LaunchTrace.  A checked
    launcher (``checked=True``) raises KernelCheckError for the first lane that broke a rule,
    after putting back every GM byte the lanes wrote, except in the arguments at the
    ``scratch`` positions (fresh outputs the caller drops on failure)."""
    state = _lane_state(block_dim, sum(a.nbytes for a in gm_args if isinstance(a, np.ndarray)))
    capacity = TRACE_CAPACITY if trace_name else 0
    trace = np.zeros((block_dim, trace_row_length(capacity)), np.int64) if trace_name or checked else _NO_TRACE
    ub_pool = _UB_POOL.get(platform.ub_size)
    if checked:
        check = np.zeros((block_dim, CHECK_SLOTS), np.int64)
        regions, kept, names = _gm_regions(gm_args, arg_names, platform.block_bytes, block_dim, scratch)
        check_info = (np.zeros(platform.ub_size, np.uint8), regions)
        launcher(block_dim, ub_pool, platform.block_bytes, state, trace, check, check_info, gm_args, tiling_bytes)
        failed = np.flatnonzero(check[:, CHECK_RULE])
        if failed.size or state[:, STATE_ERROR].any():
            _restore(kept)
        if failed.size:
            raise decode_violation(int(failed[0]), check[failed[0]], platform.ub_size, names)
    else:
        launcher(block_dim, ub_pool, platform.block_bytes, state, trace, gm_args, tiling_bytes)
    _raise_lane_error(state, platform)
    if trace_name:
        return LaunchTrace(trace_name, platform, trace, state, dict(trace_info or {}))
    return state


_NO_TRACE = np.zeros((1, 1), np.int64)  # plain lanes never write it


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
    raise KernelError(f"lane {lane}: error code {state[lane, STATE_ERROR]}")


def _span(a: np.ndarray) -> tuple[int, int]:
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def _gm_regions(args: tuple, arg_names: tuple, block_bytes: int, block_dim: int, scratch: tuple):
    """The region table of the array arguments (address, bytes, owner map, bytes with padding,
    owner width, backup), the arrays it points into (kept alive by the caller, used to restore)
    and each region's name for messages."""
    rows, kept, names = [], [], []
    for i, a in enumerate(args):
        if not isinstance(a, np.ndarray):
            continue
        # Lane + 1 of each byte's writer, and old values before their first write; calloc'd, so
        # the pages of bytes never written stay unmapped.
        owner = np.zeros(a.nbytes, np.uint8 if block_dim < 255 else np.uint16)
        backup = None if i in scratch else np.zeros(a.nbytes, np.uint8)
        kept.append((a, owner, backup))
        padded = -(-a.nbytes // block_bytes) * block_bytes + block_bytes  # see host.check: GM padding
        rows.append((_span(a)[0], a.nbytes, _span(owner)[0], padded, owner.itemsize,
                     0 if backup is None else _span(backup)[0]))
        names.append(f"{arg_names[i]} (argument {i})" if i < len(arg_names) else f"argument {i}")
    regions = np.array(rows, np.int64).reshape(-1, REGION_COLS)
    return regions, kept, names


def _restore(kept: list):
    """Put back every GM byte a failed checked launch wrote (arguments with a backup)."""
    for array, owner, backup in kept:
        if backup is not None:
            written = owner != 0
            array.view(np.uint8)[written] = backup[written]


def kernel(func: Callable | None = None, *, tiling_key: type | None = None):
    """Decorate a lane function as a :class:`Kernel` (``@kernel`` or ``@kernel(tiling_key=Key)``)."""
    if func is None:
        return lambda f: Kernel(f, tiling_key)
    return Kernel(func, tiling_key)
