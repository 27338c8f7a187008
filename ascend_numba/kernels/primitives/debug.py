"""Device-style printing from compiled kernels: ``kprint`` (``AscendC::printf``) and
``dump_tensor`` (``AscendC::DumpTensor``).

Each lane appends records to a print row of its own (int64 words; the launch allocates the rows
only for a kernel whose code calls these, and points the lane's state at its row); after the
launch the host prints every lane's lines whole, in lane order, each prefixed ``[block N]``, so
lines never interleave and never depend on how lanes map to host threads.  A row holds
:data:`~ascend_numba.config.KERNEL_PRINT_WORDS` words; a lane that fills it has its later records
dropped and a ``[block N] ... output truncated`` line says so.

Records (word 0 of a row: words used; word 1: 1 when records were dropped):

* printf: ``[1, format words, argument count, float mask, *format (UTF-8, 8 bytes a word),
  *arguments]``, an argument an int64 or a float64's bits (its mask bit set);
* dump: ``[2, desc, count, position (0 GM, 1 UB), address, dtype words, *dtype name, *elements]``,
  each element's bits zero-extended to a word; the name is the type the elements are shown as.

``kernel_prints(False)`` (or ``ASCEND_NUMBA_KERNEL_PRINTS=0``) turns them off when kernels
compile: both then compile to nothing, and no row is allocated.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from numba import literal_unroll, types

from ...config import KERNEL_PRINT_WORDS
from ...dtypes import TYPE_ALIASES, device_dtype_name, dtype_by_name
from ..._numba_compat.extending import overload, python_twin
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..interpret import python_function
from ..lane import STATE_PRINT, _address, _load_i64, _load_i64_py, _store_i64, _store_i64_py
from .context import in_ub

__all__ = ["kprint", "dump_tensor", "trap", "kernel_prints", "prints_enabled", "format_prints", "flush_prints",
           "PRINT_NAMES"]

PRINT_NAMES = ("kprint", "dump_tensor")  # a kernel whose code reads one of these gets print rows
_KIND_PRINTF, _KIND_DUMP = 1, 2
_HEADER = 2  # words used, dropped flag
_enabled = os.environ.get("ASCEND_NUMBA_KERNEL_PRINTS", "1") not in ("0", "")


def kernel_prints(enabled: bool | None = None) -> bool:
    """Turn ``kprint`` / ``dump_tensor`` on or off for kernels compiled from now on (a kernel's
    specialization for each setting is compiled and cached apart); returns the setting in force
    before the call (``None``: only ask)."""
    global _enabled
    before = _enabled
    if enabled is not None:
        _enabled = bool(enabled)
    return before


def prints_enabled() -> bool:
    return _enabled


def _words(text: str) -> np.ndarray:
    data = text.encode()
    return np.frombuffer(data + b"\0" * (-len(data) % 8), np.int64).copy()


def kprint(ctx, fmt, *args):
    """``AscendC::printf``: print ``fmt % args`` (C-style ``%d %f %x %s``-free conversions of
    integers and floats) from this lane, as one line ``[block N] ...`` after the launch.

    A format's trailing newline ends its line, as Ascend C formats end (``"x=%d\\n"``: one line);
    a newline inside it starts another line, prefixed as well."""
    raise NotImplementedError  # compiled only


def dump_tensor(ctx, tensor, desc, count, dtype=None):
    """``AscendC::DumpTensor``: the first ``count`` elements of a 1-D UB or GM tensor, with
    ``desc`` (an integer you choose), the element type and the position, printed after the launch.

    ``dtype`` is the element type to show, ``DumpTensor<T>``'s ``T``: a name (a string literal:
    ``"float16"``, ``"bfloat16"``, ``"fp16"``, ``"bf16"``, any NumPy or ml_dtypes type name) or a
    NumPy type (``np.float16``, a ``np.dtype``), as wide as the tensor's elements.  Lanes hold fp16
    and bf16 as their ``uint16`` bits (GM arguments, UB buffers), so nothing in the tensor tells
    them apart from ``uint16`` data: give ``dtype`` to see their values.  Without it the tensor's
    own element type is shown (a ``uint16`` tensor as integers)."""
    raise NotImplementedError  # compiled only


@jit
def _reserve(ctx, words):
    """The word index where ``words`` words of this lane's print row start, or -1 (no row, or full:
    the drop is flagged)."""
    row = _load_i64(ctx.state_addr, STATE_PRINT)
    if row == 0:
        return -1
    used = _load_i64(row, 0)
    if _HEADER + used + words > KERNEL_PRINT_WORDS:
        _store_i64(row, 1, 1)
        return -1
    _store_i64(row, 0, used + words)
    return _HEADER + used


@overload(kprint, jit_options=OVERLOAD_OPTIONS, prefer_literal=True)
def _ov_kprint(ctx, fmt, *args):
    if not isinstance(fmt, types.StringLiteral):
        return None  # the format is a compile-time constant: a string literal at the call
    if not _enabled:
        return lambda ctx, fmt, *args: None
    text = _words(fmt.literal_value)
    n = len(args)
    floats = 0
    for i, a in enumerate(args):
        if isinstance(a, types.Float):
            floats |= 1 << i
        elif not isinstance(a, (types.Integer, types.Boolean)):
            raise TypeError(f"kprint: argument {i} is {a}; it prints integers and floats")
    size = 4 + text.size + n

    def impl(ctx, fmt, *args):
        at = _reserve(ctx, size)
        if at < 0:
            return
        row = _load_i64(ctx.state_addr, STATE_PRINT)
        _store_i64(row, at, _KIND_PRINTF)
        _store_i64(row, at + 1, text.size)
        _store_i64(row, at + 2, n)
        _store_i64(row, at + 3, floats)
        for k in range(text.size):
            _store_i64(row, at + 4 + k, text[k])
        k = at + 4 + text.size
        for a in literal_unroll(args):  # arguments of several types
            _store_i64(row, k, _arg_bits(a))
            k += 1
    return impl


@python_twin(kprint)
def _kprint_py(ctx, fmt, *args):
    # Interpret mode: the same record as the compiled kprint, the setting read at the call.
    if not _enabled:
        return
    if not isinstance(fmt, str):
        raise TypeError("kprint: the format must be a string literal")
    floats = 0
    for i, a in enumerate(args):
        if isinstance(a, (float, np.floating)):
            floats |= 1 << i
        elif not isinstance(a, (int, np.integer, bool, np.bool_)):
            raise TypeError(f"kprint: argument {i} is {type(a).__name__}; it prints integers and floats")
    text = _words(fmt)
    words = [_KIND_PRINTF, text.size, len(args), floats, *(int(w) for w in text),
             *(int(np.float64(a).view(np.int64)) if floats >> i & 1 else int(a) for i, a in enumerate(args))]
    at = python_function(_reserve.py_func)(ctx, len(words))
    if at < 0:
        return
    row = _load_i64_py(ctx.state_addr, STATE_PRINT)
    for k, w in enumerate(words):
        _store_i64_py(row, at + k, w)


def _arg_bits(value):
    raise NotImplementedError  # compiled only


@overload(_arg_bits, jit_options=OVERLOAD_OPTIONS)
def _ov_arg_bits(value):
    if isinstance(value, types.Float):
        return lambda value: np.float64(value).view(np.int64)
    return lambda value: np.int64(value)


def _layout(stored: np.dtype, ndim: int, dtype) -> tuple[np.ndarray, type]:
    """A dump's element type name (as words) and the unsigned type of the elements' width, for a
    tensor of ``stored`` elements shown as ``dtype`` (None, a name or a NumPy type)."""
    if ndim != 1:
        raise TypeError("dump_tensor: the tensor must be a 1-D UB or GM tensor")
    shown = stored
    if dtype is not None:
        try:
            shown = dtype_by_name(TYPE_ALIASES.get(dtype, dtype)) if isinstance(dtype, str) else np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dump_tensor: dtype {dtype!r} is not a NumPy or ml_dtypes type") from None
        if shown.itemsize != stored.itemsize:
            raise TypeError(f"dump_tensor: dtype {shown} is {shown.itemsize} bytes wide; the tensor's {stored} "
                            f"elements are {stored.itemsize}")
    if shown.itemsize > 8:
        raise TypeError(f"dump_tensor: {shown} elements are wider than a word")
    return _words(device_dtype_name(shown)), {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[shown.itemsize]


def _dtype_argument(dtype):
    # ``dtype`` as the compiled call types it: left out, a string literal, or a NumPy type.
    if dtype is None or isinstance(dtype, (types.Omitted, types.NoneType)):
        return None
    if isinstance(dtype, types.StringLiteral):
        return dtype.literal_value
    if isinstance(dtype, types.NumberClass):
        return np.dtype(str(dtype.instance_type))
    if isinstance(dtype, types.DType):
        return np.dtype(str(dtype.dtype))
    raise TypeError(f"dump_tensor: dtype is {dtype}; give a string literal naming the type, or a NumPy type")


@jit
def _record_dump(ctx, bits, desc, count, name):
    """Append a dump record of ``bits`` (the tensor viewed as unsigned integers of its width) shown
    as the type named by ``name`` (its words)."""
    n = max(0, min(count, bits.size))
    at = _reserve(ctx, 6 + name.size + n)
    if at < 0:
        return
    row = _load_i64(ctx.state_addr, STATE_PRINT)
    _store_i64(row, at, _KIND_DUMP)
    _store_i64(row, at + 1, desc)
    _store_i64(row, at + 2, n)
    _store_i64(row, at + 3, 1 if in_ub(ctx, bits) else 0)
    _store_i64(row, at + 4, _address(bits) - ctx.ub_addr if in_ub(ctx, bits) else _address(bits))
    _store_i64(row, at + 5, name.size)
    for k in range(name.size):
        _store_i64(row, at + 6 + k, name[k])
    base = at + 6 + name.size
    for k in range(n):
        _store_i64(row, base + k, np.int64(bits[k]))


@overload(dump_tensor, jit_options=OVERLOAD_OPTIONS)
def _ov_dump_tensor(ctx, tensor, desc, count, dtype=None):
    if not isinstance(tensor, types.Array):
        raise TypeError("dump_tensor: the tensor must be a 1-D UB or GM tensor")
    if isinstance(dtype, types.UnicodeType):
        return None  # a name: Numba types the call again with its literal
    name, unsigned = _layout(np.dtype(str(tensor.dtype)), tensor.ndim, _dtype_argument(dtype))
    if not _enabled:
        return lambda ctx, tensor, desc, count, dtype=None: None

    def impl(ctx, tensor, desc, count, dtype=None):
        _record_dump(ctx, tensor.view(unsigned), desc, count, name)
    return impl


@python_twin(dump_tensor)
def _dump_tensor_py(ctx, tensor, desc, count, dtype=None):
    # Interpret mode: the compiled dump_tensor's record, the setting read at the call.
    if _enabled:
        name, unsigned = _layout(tensor.dtype, tensor.ndim, dtype)
        python_function(_record_dump.py_func)(ctx, tensor.view(unsigned), desc, count, name)


# ---- the host side ------------------------------------------------------------------------------

def _text(words: np.ndarray) -> str:
    return words.astype(np.int64).tobytes().rstrip(b"\0").decode(errors="replace")


def _format(fmt: str, values: list) -> str:
    try:
        return fmt % tuple(values) if "%" in fmt else " ".join([fmt, *map(str, values)]) if values else fmt
    except (TypeError, ValueError):
        return " ".join([fmt, *map(str, values)])


def format_prints(rows: np.ndarray) -> list[str]:
    """Every lane's records as lines, lane by lane, in order."""
    lines = []
    for lane, row in enumerate(rows):
        used, dropped, at = int(row[0]), int(row[1]), _HEADER
        while at < _HEADER + used:
            kind = int(row[at])
            if kind == _KIND_PRINTF:
                nfmt, n, floats = int(row[at + 1]), int(row[at + 2]), int(row[at + 3])
                fmt = _text(row[at + 4:at + 4 + nfmt])
                raw = row[at + 4 + nfmt:at + 4 + nfmt + n]
                values = [float(raw[i:i + 1].view(np.float64)[0]) if floats >> i & 1 else int(raw[i])
                          for i in range(n)]
                # A trailing newline ends the line (Ascend C formats end with one); others split it.
                lines += [f"[block {lane}] {part}" for part in _format(fmt.removesuffix("\n"), values).split("\n")]
                at += 4 + nfmt + n
            else:
                desc, n, in_ub, addr, nname = (int(v) for v in row[at + 1:at + 6])
                dtype = dtype_by_name(_text(row[at + 6:at + 6 + nname]))
                unsigned = f"u{dtype.itemsize}"
                data = row[at + 6 + nname:at + 6 + nname + n].astype(unsigned).view(dtype)
                if dtype.kind == "V":  # ml_dtypes' (bf16, fp8): as float32, exact, printed as floats are
                    data = data.astype(np.float32)
                lines.append(f"[block {lane}] DumpTensor: desc={desc}, addr={addr}, data_type={dtype}, "
                             f"position={'UB' if in_ub else 'GM'}, count={n}")
                lines.append(f"[block {lane}] {np.array2string(data, separator=', ', threshold=1 << 30)}")
                at += 6 + nname + n
        if dropped:
            lines.append(f"[block {lane}] ... output truncated: the lane's print buffer "
                         f"({KERNEL_PRINT_WORDS} words, config.KERNEL_PRINT_WORDS) is full")
    return lines


def flush_prints(rows: np.ndarray | None) -> None:
    """Print the lanes' lines to standard output (called by the launch)."""
    if rows is None:
        return
    lines = format_prints(rows)
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()


@jit
def trap(ctx):
    """Trap: stop the core; as in Ascend C's CPU mode, a failed assert (the launch raises
    KernelError naming the lane, ``AssertionError: Trap``)."""
    raise AssertionError("Trap")
