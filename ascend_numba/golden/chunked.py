"""Golden cases larger than memory, computed chunk by chunk into preallocated files.

A case whose inputs and outputs exceed the memory limit is planned into tasks, each a plain
function of picklable arguments, so that the runner's processes or a Dask cluster can take them:

1. for ops that are not elementwise, input tasks draw element ranges of each input
   (:func:`~ascend_numba.golden.cases.generate_range`) and write them at their offsets;
2. chunk tasks compute contiguous ranges of the outputs with the op itself (the op's
   :class:`~ascend_numba.ops.registry.Chunking`; an elementwise op's chunk draws and writes its
   own input ranges too) and write them at their offsets;
3. meanwhile the runner hashes each file's written prefix as it grows (:class:`PrefixHash`),
   reading it back while the page cache still holds it.

Files are written with ``pwrite`` into a hidden work directory (never mapped for writing, so a
worker's memory holds one chunk, not the files); ``case.json`` is written last and the directory
renamed into place, so an interrupted case never looks complete.
"""

from __future__ import annotations

import concurrent.futures
import errno
import functools
import hashlib
import math
import mmap
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..memory import parse_size
from .cases import (DTYPES, INPUT_BLOCK, REGISTRY, Case, case_bytes, generate_range, parse_cases,
                    physical_memory)
from .store import little_endian, output_file

__all__ = ["DEFAULT_MEMORY_LIMIT", "MAX_CHUNK_BYTES", "parse_memory_limit", "chunk_budget", "needs_chunks",
           "CaseFiles", "plan_tasks", "write_inputs", "compute_chunk", "write_pieces",
           "PrefixHash"]

DEFAULT_MEMORY_LIMIT = "50%"
# The most one chunk holds (inputs and outputs): past this, bigger chunks buy no speed, and a
# case on a cluster wants many tasks.
MAX_CHUNK_BYTES = 128 << 20
_HASH_BLOCK = 16 << 20


def parse_memory_limit(text: str) -> int:
    """Bytes from ``"50%"`` (of this machine's RAM), ``"8GiB"``, ``"512MB"`` or a plain count."""
    text = str(text).strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", text)
    if match:
        share = float(match.group(1))
        if not 0 < share <= 100:
            raise ValueError(f"--memory-limit: a share of memory must be in (0, 100]%, got {text!r}")
        return int(physical_memory() * share / 100)
    limit = parse_size(text, "--memory-limit")
    if limit <= 0:
        raise ValueError(f"--memory-limit: must be positive, got {text!r}")
    return limit


def chunk_budget(memory_limit: int) -> int:
    """The bytes of inputs and outputs one chunk may hold: a quarter of the limit (the kernel's
    own buffers, the input draws and the write-back take the rest), at most MAX_CHUNK_BYTES."""
    return max(1, min(memory_limit // 4, MAX_CHUNK_BYTES))


def needs_chunks(case: Case, memory_limit: int) -> bool:
    """Whether the case runs in chunks: it is larger than the limit and its op can."""
    return REGISTRY[case.op].chunking is not None and case_bytes(case) > memory_limit


@dataclass(frozen=True)
class CaseFiles:
    """Where a case's files are, relative to its directory, with their shapes."""

    inputs: dict  # input name -> (relative path, shape)
    outputs: dict  # output name -> (relative path, shape)

    @classmethod
    def of(cls, case: Case) -> CaseFiles:
        spec = REGISTRY[case.op]
        shapes = {n: s.shape for n, s in case.inputs.items()}
        out_shapes = spec.output_shapes(shapes, case.attrs, DTYPES[case.dtype].itemsize)
        return cls({n: (f"input/{n}.bin", tuple(s)) for n, s in shapes.items()},
                   {n: (f"output/{output_file(i, n)}", tuple(out_shapes[n])) for i, n in enumerate(spec.outputs)})

    def all(self) -> dict:
        """Relative path -> shape, inputs first."""
        return {rel: shape for rel, shape in (*self.inputs.values(), *self.outputs.values())}

    def preallocate(self, root: Path, itemsize: int) -> None:
        """Every file at its final size (sparse until written)."""
        for sub in ("input", "output"):
            (root / sub).mkdir(exist_ok=True)
        for rel, shape in self.all().items():
            with open(root / rel, "wb") as f:
                f.truncate(math.prod(shape) * itemsize)


def plan_tasks(case: Case, root: Path, memory_limit: int) -> list[list[tuple]]:
    """The case's tasks in phases, each ``(function, *arguments)``; every task of a phase may
    run at once, on any worker that sees ``root``."""
    spec = REGISTRY[case.op]
    doc, where = case.to_dict(), str(root)
    itemsize = DTYPES[case.dtype].itemsize
    budget = chunk_budget(memory_limit)
    shapes = {n: s.shape for n, s in case.inputs.items()}
    chunks = spec.chunking.plan(spec, shapes, case.attrs, itemsize, budget, INPUT_BLOCK)
    compute = [(compute_chunk, doc, where, chunk) for chunk in chunks]
    if spec.chunking.elementwise:
        return [compute]
    per = max(INPUT_BLOCK, budget // itemsize // INPUT_BLOCK * INPUT_BLOCK)
    draws = [(write_inputs, doc, where, name, start, min(per, math.prod(shape) - start))
             for name, shape in shapes.items() for start in range(0, math.prod(shape), per)]
    return [draws, compute]


def _case(doc: dict) -> Case:
    return parse_cases({"cases": [doc]})[0]


def _write_at(root: Path, rel: str, offset: int, arr: np.ndarray, keep: bool) -> tuple:
    """Write ``arr``'s bytes at byte ``offset`` of an existing file (never created here: a task
    whose case was abandoned fails instead of writing into a removed directory); returns the
    piece written, ``(relative path, offset, bytes, the bytes written if keep else None)``."""
    data = memoryview(little_endian(arr).reshape(-1).view(np.uint8))
    path = root / rel
    fd = os.open(path, os.O_WRONLY)
    try:
        lo, hi = -(-offset // DIRECT_ALIGN) * DIRECT_ALIGN, (offset + len(data)) // DIRECT_ALIGN * DIRECT_ALIGN
        if hi - lo >= DIRECT_MIN_BYTES and _write_direct(path, fd, data[lo - offset:hi - offset], lo):
            _pwrite_all(fd, data[:lo - offset], offset)
            _pwrite_all(fd, data[hi - offset:], hi)
        else:
            _pwrite_all(fd, data, offset)
    finally:
        os.close(fd)
    return rel, offset, arr.nbytes, data if keep else None


def _pwrite_all(fd: int, data: memoryview, position: int) -> None:
    while data:
        written = os.pwrite(fd, data, position)
        data, position = data[written:], position + written


# Chunked cases write past the page cache (O_DIRECT): on this project's machines the kernel's copy
# into the page cache was the slowest step of a case larger than memory (0.6-1.1 GB/s a core,
# against 1.8 GB/s for direct writes with no copy), and a case larger than memory would only
# push everything else out of the cache.  Whole aligned blocks go direct through a page-aligned
# buffer of the writing thread; the unaligned ends of a piece (shared with its neighbours'
# pages) and filesystems without O_DIRECT (tmpfs) take the page cache.
DIRECT_ALIGN = 4096
DIRECT_MIN_BYTES = 1 << 20
_DIRECT_BUFFER = 16 << 20
_direct = threading.local()


def _write_direct(path: Path, fd: int, data: memoryview, position: int) -> bool:
    """Write whole aligned blocks with O_DIRECT (``fd``, the file opened for buffered writes,
    takes the rest of a short write); False, with nothing written, where the file system does
    not take direct writes."""
    try:
        direct = os.open(path, os.O_WRONLY | getattr(os, "O_DIRECT", 0))
    except OSError:
        return False
    try:
        buf = getattr(_direct, "buffer", None)
        if buf is None:
            buf = _direct.buffer = mmap.mmap(-1, _DIRECT_BUFFER)  # page-aligned, as O_DIRECT needs
        staged, source = np.frombuffer(buf, np.uint8), np.frombuffer(data, np.uint8)
        done = 0
        while done < len(source):
            n = min(_DIRECT_BUFFER, len(source) - done)
            staged[:n] = source[done:done + n]
            try:
                written = os.pwrite(direct, memoryview(buf)[:n], position + done)
            except OSError as e:
                if e.errno != errno.EINVAL or done:
                    raise
                return False  # opened, but the file system refuses direct writes
            done += written
            if written != n:
                break
        _pwrite_all(fd, data[done:], position + done)  # after a short write: the page cache
        return True
    finally:
        os.close(direct)


def write_pieces(root: Path, pieces: list[tuple], keep: bool = False) -> list[tuple]:
    """Write ``(relative path, byte offset, array)`` pieces now; returns what was written (with
    its bytes when ``keep``: a runner in this process hashes them without reading them back)."""
    return [_write_at(root, rel, offset, arr, keep) for rel, offset, arr in pieces]


def write_inputs(case_doc: dict, root: str, name: str, start: int, count: int, write=write_pieces):
    """Draw elements ``[start, start + count)`` of input ``name`` into its file.  ``write`` takes
    the pieces (default :func:`write_pieces`: written before returning what was written)."""
    case = _case(case_doc)
    rel, _ = CaseFiles.of(case).inputs[name]
    values = generate_range(case, name, start, count)
    return write(Path(root), [(rel, start * values.itemsize, values)])


def compute_chunk(case_doc: dict, root: str, chunk, write=write_pieces):
    """Compute one chunk of a case's outputs into their files (with an elementwise op, draw
    its input ranges too); ``write`` as for :func:`write_inputs`."""
    case = _case(case_doc)
    spec = REGISTRY[case.op]
    files = CaseFiles.of(case)
    dtype = DTYPES[case.dtype]
    root = Path(root)
    pieces = []
    if spec.chunking.elementwise:
        inputs = {n: generate_range(case, n, chunk.start, chunk.count) for n in case.inputs}
        pieces += [(files.inputs[n][0], chunk.start * dtype.itemsize, values) for n, values in inputs.items()]
    else:
        # Mapped read-only for this chunk only: the pages it reads leave with the map.
        inputs = {n: np.memmap(root / rel, dtype, "r", shape=shape) for n, (rel, shape) in files.inputs.items()}
    outputs = spec.chunking.compute(spec, inputs, case.attrs, chunk)
    pieces += [(files.outputs[n][0], offset * dtype.itemsize, values) for n, (offset, values) in outputs.items()]
    return write(root, pieces)


@functools.cache
def _hash_pool() -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="ascend-numba-hash")


class PrefixHash:
    """The sha256 of a file written in pieces in any order.

    Each time the written prefix grows, the new part is hashed on a thread of the hash pool (one
    task at a time per file, in order; not the I/O pool, where it would hold up the next chunk's
    input draws): from the piece's bytes when the writer kept them (a runner in this process),
    else read back from the file while the page cache still holds what was just written.  Kept
    bytes waiting for the hash are bounded by ``max_waiting``: past it, the writer waits.
    """

    def __init__(self, path: Path, size: int, max_waiting: int = MAX_CHUNK_BYTES):
        self.path, self.size, self.max_waiting = path, size, max_waiting
        self._sha = hashlib.sha256()
        self._hashed = 0  # bytes hashed (written by the running task only)
        self._prefix = 0  # bytes written contiguously from the start
        self._pieces: dict[int, tuple] = {}  # start -> (end, kept bytes or None), past the prefix
        self._queue: list[tuple] = []  # (start, end, kept bytes or None) of the prefix, not yet hashed
        self._waiting = 0  # kept bytes not yet hashed (counted down when a task ends)
        self._task = None

    def written(self, offset: int, nbytes: int, data=None) -> None:
        """Bytes ``[offset, offset + nbytes)`` are in the file (``data``: those bytes, if kept)."""
        if nbytes:
            self._pieces[offset] = (offset + nbytes, data)
            self._waiting += nbytes if data is not None else 0
        while self._prefix in self._pieces:
            end, kept = self._pieces.pop(self._prefix)
            self._queue.append((self._prefix, end, kept))
            self._prefix = end
        if self._waiting > self.max_waiting:
            self._finish_task()
        self._start_task()

    def _finish_task(self) -> None:
        if self._task is not None:
            self._waiting -= self._task.result()
            self._task = None

    def _start_task(self) -> None:
        if self._task is not None:
            if not self._task.done():
                return
            self._finish_task()
        if self._queue:
            segments, self._queue = self._queue, []
            self._task = _hash_pool().submit(self._hash, segments)

    def _hash(self, segments: list[tuple]) -> int:
        """Hash the segments in order; returns the kept bytes hashed."""
        kept_bytes = 0
        for start, end, kept in segments:
            if kept is None:
                self._read_back(end)
            else:
                self._sha.update(kept)
                self._hashed = end
                kept_bytes += end - start
        return kept_bytes

    def _read_back(self, end: int) -> None:
        with open(self.path, "rb", buffering=0) as f:
            f.seek(self._hashed)
            while self._hashed < end:
                block = f.read(min(_HASH_BLOCK, end - self._hashed))
                if not block:
                    raise OSError(f"{self.path}: ends at {self._hashed} bytes, expected {end}")
                self._sha.update(block)
                self._hashed += len(block)

    def hexdigest(self) -> str:
        """The sum, once every byte is written."""
        if self._prefix != self.size:
            raise RuntimeError(f"{self.path}: {self._prefix} of {self.size} bytes written in order")
        self._finish_task()
        self._hash(self._queue)
        self._queue = []
        return self._sha.hexdigest()
