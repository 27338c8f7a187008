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
This module is the kernel API; the launchers (shared by all kernels: they call a body through
its address) are :mod:`.launchers`, running a launch is :mod:`.run`, the UB pool :mod:`.pools`
and checked mode :mod:`ascend_numba.checked`.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import re
import sys
import types as pytypes
import warnings
from typing import Callable

import numba
import numpy as np
from numba import types

from ..host.errors import KernelError
from ..host.platform import Platform, check_block_dim, get_platform
from ..host.primitives import PRIMITIVES
from ..host.tiling import is_tiling_class, numpy_dtype, tiling_bytes
from ..host.tiling_key import tiling_key_schema
from ..checked.regions import GM_PADDING
from ..memory import take_fresh
from .._numba_compat import NumbaCompatError, compat_error_in
from .._numba_compat.jit import argument_key, compiled_code_digest, dispatcher, function_address
from .arguments import accepts, as_gm_dtype, copy_types_agree, expected_dtypes
from .primitives.atomic import NEEDS_ATOMIC_LANE
from .primitives.dma import ELEMENT_TYPE_MISMATCH
from .interpret import interpreting, python_function
from .lane import LANE_TYPES
from .entry import entry_signature, kernel_entry, payload_packer
from .launchers import body_signature
from .primitives.debug import PRINT_NAMES, prints_enabled
from .run import PreparedLaunch, run_launch

__all__ = ["Kernel", "KernelBody", "PreparedLaunch", "kernel", "KernelError", "as_gm", "check_block_dim",
           "compile_messages", "body_signature", "constant"]


def as_gm(array: np.ndarray, name: str = "tensor") -> np.ndarray:
    """The flat GM view of a C-contiguous array; fp16/bf16/fp8 become uint views of their width."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name}: expected a numpy.ndarray, got {type(array).__name__}")
    dtype = array.dtype
    raw = _GM_VIEWS.get(dtype)
    if raw is None:
        if dtype.hasobject or dtype.itemsize == 0:
            raise TypeError(f"{name}: dtype {dtype} is not a fixed-size element type a GM tensor can hold")
        if not dtype.isnative:
            raise TypeError(f"{name}: dtype {dtype} is not in this host's byte order; the device's tensors "
                            "are little-endian (use array.astype(array.dtype.newbyteorder('=')))")
        raw = _GM_VIEWS[dtype] = as_gm_dtype(dtype)
    if not array.flags.c_contiguous:
        raise ValueError(f"{name}: GM tensors must be C-contiguous (use numpy.ascontiguousarray)")
    flat = array if array.ndim == 1 else array.reshape(-1)
    return flat if raw == dtype else flat.view(raw)


# dtype -> the element type its GM view has (as_gm_dtype), for the dtypes launches have seen.
_GM_VIEWS: dict = {}


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


_PACKAGE = __name__.split(".")[0] + "."


def _names_read_with_helpers(func: Callable) -> set[str]:
    """The names ``func`` reads (see :func:`_names_read`) and those its jitted helpers read (those
    it names as globals); a primitive of this package under another name counts by its own."""
    names, seen, todo = set(), set(), [func]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        read = _names_read(f)
        names |= read
        for name in read:
            helper = getattr(f.__globals__.get(name), "py_func", None)
            if not isinstance(helper, pytypes.FunctionType):
                continue
            if helper.__module__.startswith(_PACKAGE):
                names.add(helper.__name__)
            else:
                todo.append(helper)
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


# The DMA atomic's setters, by their names and the device's.
_ATOMIC_SETTERS = frozenset(name for p in PRIMITIVES.values() if p.name.startswith("set_atomic_")
                            for name in (p.name, p.device))


def _arg_key(gm_args: tuple):
    """What decides the body's argument types, at a fraction of numba.typeof's cost."""
    key = argument_key(gm_args)
    if key is not None:
        return key
    return tuple((a.dtype, a.ndim, a.flags.c_contiguous, a.flags.f_contiguous) if type(a) is np.ndarray
                 else type(a) for a in gm_args)


class KernelBody:
    """One specialization of a kernel body (compile-time constants, tiling layout, lane mode)
    and the address of its compiled code for each set of argument types."""

    interpreted = False

    def __init__(self, dispatcher, mode: str, resident: bool = False, auto: bool = False, prints: bool = False,
                 arg_names: tuple = (), atomics: bool = False):
        self.dispatcher = dispatcher
        self.arg_names = arg_names  # the kernel's GM arguments, for messages
        self.mode = mode
        self.prints = prints  # compiled with kprint / dump_tensor on: its launches get print rows
        self.resident = resident  # every lane on a thread of its own (the kernel calls sync_all)
        self.auto = auto  # an AUTO-mode kernel: checked launches apply the AUTO rules too
        self._entries: dict[tuple, tuple] = {}  # argument key -> (entry address, body address, packer)
        # The context type the body compiles for (lane.LANE_TYPES): a plain body gets an AtomicLane
        # only when it sets a DMA atomic, named in the kernel's code or found while typing it.
        self._lane = "atomic" if mode == "plain" and atomics else mode

    def bind(self, gm_args: tuple, tiling: np.ndarray | None) -> tuple:
        """``(payload, entry, body)``, the launchers' last arguments: the payload of these GM
        arguments, and the addresses of the entry that unpacks it and of the body compiled for
        them (compiled, or loaded from the on-disk cache, on first use; see :mod:`.entry`)."""
        key = _arg_key(gm_args)
        found = self._entries.get(key)
        if found is None:
            record = types.none if tiling is None else numba.typeof(tiling).dtype
            args = numba.typeof(gm_args)
            lane = self._lane  # read once: another thread's launch may switch it to "atomic"
            sig = body_signature(LANE_TYPES[lane], args, record)
            error = self._compile(sig)
            if error is not None:
                if lane != "plain" or NEEDS_ATOMIC_LANE not in str(error):
                    self._raise_compile_error(error, gm_args)
                self._lane = "atomic"  # it sets a DMA atomic somewhere its source did not name
                sig = body_signature(LANE_TYPES["atomic"], args, record)
                error = self._compile(sig)
                if error is not None:
                    self._raise_compile_error(error, gm_args)
            cres = self.dispatcher.overloads[sig]
            if cres.signature.return_type != types.none:
                raise TypeError(f"kernel {self.dispatcher.py_func.__name__} returns a value; kernels return nothing")
            entry_sig = entry_signature(sig)
            kernel_entry.compile(entry_sig)
            found = self._entries[key] = (function_address(kernel_entry.overloads[entry_sig]), function_address(cres),
                                          payload_packer(sig))
        entry, body, pack = found
        return pack(gm_args, tiling), entry, body

    def _compile(self, sig) -> Exception | None:
        """Compile (or load) ``sig``; the exception that stopped it, outside its handler, so a
        retry's error does not chain the first one."""
        try:
            self.dispatcher.compile(sig)
        except Exception as exc:  # noqa: BLE001 - the caller decides: retry, translate or raise
            return exc
        return None

    def _raise_compile_error(self, exc: Exception, gm_args: tuple):
        if ELEMENT_TYPE_MISMATCH in str(exc):
            raise TypeError(_mismatch_message(self.dispatcher.py_func.__name__, str(exc), gm_args,
                                              self.arg_names)) from None
        compat = compat_error_in(exc)
        if compat is None:
            raise exc
        raise NumbaCompatError(str(compat)) from None


class InterpretedBody(KernelBody):
    """A kernel body in interpret mode: the lane function as Python (see :mod:`.interpret`);
    its "address" is that function, which the interpreted launchers call."""

    interpreted = True

    def __init__(self, function, mode: str, resident: bool = False, auto: bool = False, prints: bool = False):
        super().__init__(None, mode, resident, auto, prints)
        self.function = function

    def bind(self, gm_args: tuple, tiling: np.ndarray | None) -> tuple:
        return (gm_args, None if tiling is None else tiling[0]), 0, self.function


class Kernel:
    """A lane function plus its optional TilingKey schema; compiles one body per key, tiling
    layout and lane mode (plain, traced, checked)."""

    def __init__(self, func: Callable, tiling_key: type | None = None, nrt: bool = True, resident: bool = False,
                 mode: str = "manual", strict: bool = True, outputs: tuple = (), dtypes: dict | None = None,
                 gm_padding: "bool | str" = False):
        if not callable(func):
            raise TypeError("kernel() expects a function")
        if gm_padding not in GM_PADDING or isinstance(gm_padding, int) and not isinstance(gm_padding, bool):
            raise ValueError(f"gm_padding must be False, 'read' or True, got {gm_padding!r}")
        self.gm_padding = gm_padding
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
        self._arg_dtypes: dict[tuple, dict] = {}  # per compile-time constants: declared and inferred
        self._arg_dtypes_passed: set = set()  # (constants, argument dtypes) that passed the check
        self._keys_seen: dict = {}  # a launch key, with its values' types -> its validated constants
        self._constants = _constants_read(func)
        # What the kernel calls, itself or in the jitted helpers it names; a helper reached otherwise
        # (an overload, a module attribute) is not seen here.
        called = _names_read_with_helpers(func)
        # SyncAll needs every lane resident at once: a kernel calling sync_all gets a launch that
        # runs each lane on a thread of its own (a helper not seen here needs resident=True).
        self.resident = resident or bool({"sync_all", "ib_wait", "ib_set"} & called)
        # Sets a DMA atomic; one not seen here is found when typing the body for a plain Lane fails.
        self.atomics = bool(_ATOMIC_SETTERS & called)
        self._prints = any(n in PRINT_NAMES for n in called)  # lanes get a print buffer
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
        # A key seen before is not validated again; the values' types are in the memo's key, as a
        # True must not pass for a 1 that did.
        try:
            seen_key = tuple((k, type(v), v) for k, v in key.items()) if type(key) is dict else None
            found = self._keys_seen.get(seen_key)
        except TypeError:  # an unhashable value: validated below, not remembered
            seen_key = found = None
        if found is None:
            found = dict(self.key_schema.validate_concrete(key))
            if seen_key is not None and len(self._keys_seen) < 1024:
                self._keys_seen[seen_key] = found
        return dict(found)

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
                                                         prints, self.arg_names, self.atomics)
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
        and raises :class:`~ascend_numba.checked.messages.KernelCheckError` (naming the
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
        tiling_dtype, tiling_array = None, None
        if args and is_tiling_class(type(args[-1])):
            tiling_dtype = numpy_dtype(type(args[-1]))
            tiling_array = tiling_bytes(args[-1])
            args = args[:-1]
        constants = {**key_consts, **(datatype or {})}
        self._check_arg_dtypes(args, constants)
        gm_args = tuple(self._gm_arg(a, i) for i, a in enumerate(args))
        return self.launch_prepared(gm_args, tiling_array, tiling_dtype, block_dim, plat, constants, trace=trace,
                                    checked=checked, interpret=interpret)

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
        fresh outputs a checked launch need not protect (see
        :func:`~ascend_numba.checked.run.run_checked`); ``interpret``: see :meth:`launch`.
        Arguments from ``an.empty`` no launch has taken are fresh for this one (their bytes are
        the kernel's from then on)."""
        fresh = tuple(self.arg_names[i] for i in take_fresh(gm_args) if i < len(self.arg_names))
        mode = "checked" if checked else "traced" if trace else "plain"
        body = self.body(constants or {}, tiling_dtype, mode, interpreting(interpret))
        return run_launch(body, block_dim, platform, gm_args,
                          _tiling_view(tiling_bytes, tiling_dtype),
                          trace_name=self.py_func.__name__ if trace else None, trace_info=trace_info,
                          arg_names=self.arg_names, scratch=scratch, outputs=self.outputs, fresh=fresh,
                          gm_padding=self.gm_padding)

    def _check_arg_dtypes(self, args: tuple, constants: dict) -> None:
        """Refuse an array argument whose element type differs from the one the kernel declares
        for it or moves it through (its UB buffers' dtype, along every path with this launch's
        compile-time constants folded), naming it, before anything runs."""
        key = tuple(sorted(constants.items(), key=lambda kv: kv[0]))
        passed = (key, tuple(a.dtype if isinstance(a, np.ndarray) else None for a in args))
        if passed in self._arg_dtypes_passed:
            return
        expected = self._arg_dtypes.get(key)
        if expected is None:
            expected = self._arg_dtypes[key] = {
                **expected_dtypes(self.py_func, constants),
                **{n: (d, f"declares it {d}") for n, d in self._declared_dtypes.items()}}
        self._raise_for_arg_dtypes(args, expected)
        if len(self._arg_dtypes_passed) < 1024:
            self._arg_dtypes_passed.add(passed)

    def _raise_for_arg_dtypes(self, args: tuple, expected: dict) -> None:
        for name, value in zip(self.arg_names, args):
            want = expected.get(name)
            if want is None or not isinstance(value, np.ndarray):
                continue
            dtype, why = want
            declared = name in self._declared_dtypes
            if not (accepts(dtype, value.dtype, declared=True) if declared else copy_types_agree(dtype, value.dtype)):
                raise TypeError(f"kernel {self.py_func.__name__}: argument {name} is {value.dtype}, but the kernel "
                                f"{why}: pass a {dtype} array (or declare @kernel(dtypes={{{name!r}: ...}}))")

    @staticmethod
    def _gm_arg(value, index: int):
        if isinstance(value, np.ndarray):
            return as_gm(value, f"argument {index}")
        if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            return value
        raise TypeError(f"argument {index}: expected a numpy array or a scalar, got {type(value).__name__}")


def _mismatch_message(kernel_name: str, error: str, gm_args: tuple, arg_names: tuple) -> str:
    """The compiled copy's refusal (see ``dma._one_element_type``) as the user's launch: which
    copy, and which arguments hold each side's element type."""
    line = next(ln for ln in error.splitlines() if ELEMENT_TYPE_MISMATCH in ln)
    # Numba colours its messages when colorama is installed (the docs' extras bring it): not ours to keep.
    detail = re.sub(r"\x1b\[[0-9;]*m", "", line[line.index("a DataCopy"):]).strip()
    words = detail.split()
    sides = {words[-4], words[-1]}  # "got dst <a> and src <b>"
    names = arg_names or tuple(f"#{i}" for i in range(len(gm_args)))
    named = [f"{n} ({a.dtype})" for n, a in zip(names, gm_args) if isinstance(a, np.ndarray) and str(a.dtype) in sides]
    return (f"kernel {kernel_name}: {detail}; the GM arguments of those types: "
            f"{', '.join(named) or 'none'}. Pass arrays of the element type the kernel reads, or declare "
            "@kernel(dtypes={...}) so the launch names the argument")


def _tiling_view(tiling_bytes: np.ndarray | None, tiling_dtype: np.dtype | None) -> np.ndarray | None:
    # The launchers read the tiling through its record dtype, as a device kernel reads its struct.
    if tiling_dtype is None:
        return None
    return tiling_bytes.view(tiling_dtype)


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
           dtypes: dict | None = None, gm_padding: "bool | str" = False):
    """Decorate a lane function as a :class:`Kernel` (``@kernel`` or ``@kernel(tiling_key=Key)``).

    ``nrt=False`` compiles the body without Numba's reference counting: faster where arrays
    pass through many calls, for a body that allocates no array (``np.empty`` and the like
    need it; UB comes from ``alloc_buffer``).  A kernel that calls ``sync_all``, itself or in a
    jitted helper it names, runs its lanes all resident, each on a host thread of its own, as
    SyncAll needs (``block_dim`` at most the platform's vector cores); ``resident=True`` asks for
    that when the call is reached otherwise (an overload, a module attribute).

    ``mode``: ``"manual"`` (the kernel places its tiles and may double-buffer, as every shipped
    kernel does) or ``"auto"`` (PTO AUTO mode, seed 003): the kernel's source is linted when it
    is decorated and a broken rule raises :class:`~ascend_numba.lint.KernelRuleError` listing
    every finding (``strict=False``: a warning each).

    ``outputs``: the GM arguments the kernel writes whole; a checked launch reports a byte of one
    that no lane wrote (gm-output-unwritten: on the device it holds whatever HBM held).
    ``dtypes``: element types of GM arguments (``{"x": np.float32}``); an argument the kernel
    copies to or from a UB buffer of a literal dtype (``alloc_buffer(ctx, n, np.float32)``) is
    expected to have that dtype unless declared.  A launch refuses a mismatching array, naming it,
    before anything compiles or runs.

    ``gm_padding``: whether the kernel relies on the device allocator's GM padding (a tensor's
    bytes rounded up to the 32-byte block, plus a block): False (default), a checked launch
    reports any read or write past a tensor's end (gm-past-end); ``"read"``, reads may reach into
    the padding (a tail read as whole blocks, only its real bytes written back); True, writes too.
    Plain launches never let a write past the end reach the caller's memory either way."""
    args = (tiling_key, nrt, resident, mode, strict, outputs, dtypes, gm_padding)
    if func is None:
        return lambda f: Kernel(f, *args)
    return Kernel(func, *args)
