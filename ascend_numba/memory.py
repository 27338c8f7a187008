"""Result buffers: large op outputs are recycled instead of freshly mapped.

A fresh 64 MB result costs the operating system ~5 ms of page faults and zeroing on this
kind of machine, as much as the kernel that fills it (the C allocator maps every block past
32 MB anew and unmaps it on free).  Harnesses call the ops thousands of
times on the same shapes, so, like PyTorch's caching allocator, results of at least
:data:`MIN_POOLED_BYTES` come from a pool: when the last array (or view) using a buffer is
garbage-collected the buffer returns to the pool, and the next result of the same size class
reuses its already-mapped pages.  The pool holds at most :func:`output_pool_limit` bytes of
idle buffers (default 512 MiB, or ``$ASCEND_NUMBA_OUTPUT_POOL``: bytes, or with a unit such as
``64MB`` or ``2GiB``; 0 turns it off), the
least recently returned dropped first.

Results of 4 MB and more start on a 64-byte cache line, so the rows kernels write with
streaming stores are whole lines as often as the layout allows.

Every op writes every byte of its result, so a recycled buffer is never cleared.
:func:`poison_outputs` fills each result with a byte pattern before the kernel runs; the
tests turn it on so that an output byte a kernel forgot would show.
"""

from __future__ import annotations

import math
import os
import re
import threading
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from .config import ALIGNED_RESULT_BYTES, MIN_POOLED_BYTES

__all__ = ["empty", "empty_fresh", "take_fresh", "output_pool_limit", "output_pool_info", "clear_output_pool",
           "poison_outputs", "MIN_POOLED_BYTES", "parse_size"]

_SIZE_CLASS = 1 << 16
_ALIGN = 64  # a cache line

_lock = threading.RLock()
_idle: "OrderedDict[int, list[np.ndarray]]" = OrderedDict()  # size class -> idle slabs, LRU order
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}


def parse_size(text: str, what: str) -> int:
    """A byte count such as ``536870912``, ``512MB``, ``512MiB`` or ``2G`` (binary units)."""
    match = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(f"{what}: expected a byte count such as 536870912, 512MB or 2GiB, got {text!r}")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def _initial_limit() -> int:
    text = os.environ.get("ASCEND_NUMBA_OUTPUT_POOL")
    if text is None:
        return 512 << 20
    try:
        return parse_size(text, "ASCEND_NUMBA_OUTPUT_POOL")
    except ValueError as e:
        warnings.warn(f"{e}; using the default 512 MiB", RuntimeWarning, stacklevel=2)
        return 512 << 20


_state = {"limit": _initial_limit(), "held": 0, "hits": 0, "misses": 0, "poison": None}


class _Lease:
    """Owns one slab while any array uses it (NumPy keeps it as the arrays' ``base``)."""

    __slots__ = ("slab", "__array_interface__")

    def __init__(self, slab: np.ndarray, nbytes: int):
        self.slab = slab
        self.__array_interface__ = {"data": (slab.ctypes.data, False), "shape": (nbytes,), "typestr": "|u1",
                                    "version": 3}

    def __del__(self):
        try:
            _give_back(self.slab)
        except Exception:  # noqa: BLE001 - interpreter shutdown: the module may be half torn down
            pass


def empty(shape, dtype) -> np.ndarray:
    """A C-contiguous uninitialized array, from the pool when it is large enough."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < ALIGNED_RESULT_BYTES and _state["poison"] is None:
        return np.empty(shape, dtype)  # most calls of a harness: nothing else to decide
    if nbytes >= MIN_POOLED_BYTES and _state["limit"] > 0:
        size = -(-nbytes // _SIZE_CLASS) * _SIZE_CLASS
        slab = _take(size)
        if slab is None:
            slab = aligned_bytes(size)
        out = np.asarray(_Lease(slab, nbytes)).view(dtype).reshape(shape)
    elif nbytes >= ALIGNED_RESULT_BYTES:
        out = aligned_bytes(nbytes).view(dtype).reshape(shape)
    else:
        out = np.empty(shape, dtype)
    if _state["poison"] is not None and out.size:
        out.reshape(-1).view(np.uint8)[:] = _state["poison"]
    return out


# The buffers empty_fresh returned that no launch has taken yet: id -> the bytes they span.
_fresh: dict[int, tuple[int, int]] = {}


def empty_fresh(shape, dtype) -> np.ndarray:
    """An uninitialized output buffer, as ``aclrtMalloc`` gives one (``an.empty``): a checked
    launch reports a read of its bytes before a lane of the launch wrote them
    (``gm-read-unwritten-output``).  The first launch that takes it (or a view of it) ends
    that: its bytes are the kernel's from then on.  Writing it on the host first breaks the
    promise; use ``numpy.empty`` or ``numpy.zeros`` for a buffer the host fills."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = empty(shape, dtype)
    if out.nbytes:
        start = out.__array_interface__["data"][0]
        with _lock:
            _fresh[id(out)] = (start, start + out.nbytes)
        weakref.finalize(out, _forget_fresh, id(out))
    return out


def _forget_fresh(key: int):
    with _lock:
        _fresh.pop(key, None)


def take_fresh(arrays: tuple) -> tuple:
    """The positions of those of ``arrays`` (arrays or scalars) that view bytes of a buffer from
    :func:`empty_fresh` no launch has taken; those buffers are taken."""
    if not _fresh:
        return ()
    found, taken = [], set()
    with _lock:
        for i, a in enumerate(arrays):
            if isinstance(a, np.ndarray) and a.nbytes:
                start = a.__array_interface__["data"][0]
                key = next((k for k, (s, e) in _fresh.items() if s <= start and start + a.nbytes <= e), None)
                if key is not None:
                    found.append(i)
                    taken.add(key)
        for key in taken:
            del _fresh[key]
    return tuple(found)


def aligned_bytes(nbytes: int) -> np.ndarray:
    """``nbytes`` uninitialized bytes starting on a 64-byte host cache line (the C allocator returns
    big blocks 16 bytes past a page).  Results: rows the kernels write with streaming stores start
    on whole lines as often as the layout allows.  UBs (``kernels/pools.py``): a 32-byte block
    never straddles two lines."""
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = -raw.ctypes.data % _ALIGN
    return raw[start:start + nbytes]


def _take(size: int):
    with _lock:
        slabs = _idle.get(size)
        if not slabs:
            _state["misses"] += 1
            return None
        slab = slabs.pop()
        if not slabs:
            del _idle[size]
        _state["held"] -= size
        _state["hits"] += 1
        return slab


def _give_back(slab: np.ndarray):
    size = slab.nbytes
    with _lock:
        if size > _state["limit"]:
            return
        _idle.setdefault(size, []).append(slab)
        _idle.move_to_end(size)
        _state["held"] += size
        _trim(_state["limit"])


def _trim(limit: int):
    while _state["held"] > limit:
        size, slabs = next(iter(_idle.items()))
        slabs.pop(0)
        if not slabs:
            del _idle[size]
        _state["held"] -= size


def output_pool_limit(max_bytes: int | None = None) -> int:
    """The most idle bytes the pool keeps; with ``max_bytes``, set it (0 turns pooling off and
    frees the idle buffers) and return the previous limit."""
    with _lock:
        previous = _state["limit"]
        if max_bytes is not None:
            if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 0:
                raise ValueError(f"max_bytes must be a non-negative int, got {max_bytes!r}")
            _state["limit"] = int(max_bytes)
            _trim(_state["limit"])
        return previous


def output_pool_info() -> dict:
    """Idle bytes held, the limit, and how many pooled results reused a buffer (hits) or not."""
    with _lock:
        return {k: _state[k] for k in ("held", "limit", "hits", "misses")}


def clear_output_pool():
    """Free every idle buffer."""
    with _lock:
        _trim(0)


def poison_outputs(byte: int | None):
    """Fill every result :func:`empty` returns with ``byte`` (None: leave it uninitialized)."""
    if byte is not None and not 0 <= byte <= 255:
        raise ValueError(f"byte must be in 0..255 or None, got {byte!r}")
    _state["poison"] = byte
