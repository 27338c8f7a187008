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

import hashlib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..memory import parse_size
from .cases import (DTYPES, INPUT_BLOCK, REGISTRY, Case, case_bytes, generate_range, io_pool, parse_cases,
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


def _write_at(root: Path, rel: str, offset: int, arr: np.ndarray) -> tuple[str, int, int]:
    """Write ``arr``'s bytes at byte ``offset`` of an existing file (never created here: a task
    whose case was abandoned fails instead of writing into a removed directory); returns the
    piece written, ``(relative path, offset, bytes)``."""
    data = memoryview(little_endian(arr).reshape(-1).view(np.uint8))
    piece, position = (rel, offset, arr.nbytes), offset
    fd = os.open(root / rel, os.O_WRONLY)
    try:
        while data:
            written = os.pwrite(fd, data, position)
            data, position = data[written:], position + written
    finally:
        os.close(fd)
    return piece


def write_pieces(root: Path, pieces: list[tuple]) -> list[tuple]:
    """Write ``(relative path, byte offset, array)`` pieces now; returns what was written."""
    return [_write_at(root, rel, offset, arr) for rel, offset, arr in pieces]


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


class PrefixHash:
    """The sha256 of a file written in pieces in any order.

    Each time the written prefix grows, the new part is read back and hashed on the I/O threads
    (one read at a time per file, in order), while the page cache still holds what was just
    written: the hash costs no second pass over the disk unless it falls behind the writes.
    """

    def __init__(self, path: Path, size: int):
        self.path, self.size = path, size
        self._sha = hashlib.sha256()
        self._hashed = 0  # bytes hashed (written by the running read only)
        self._prefix = 0  # bytes written contiguously from the start
        self._pieces: dict[int, int] = {}  # start -> end of pieces written past the prefix
        self._reading = None

    def written(self, offset: int, nbytes: int) -> None:
        if nbytes:
            self._pieces[offset] = offset + nbytes
        while self._prefix in self._pieces:
            self._prefix = self._pieces.pop(self._prefix)
        self._read_more()

    def _read_more(self) -> None:
        if self._reading is not None:
            if not self._reading.done():
                return
            self._reading.result()
        self._reading = io_pool().submit(self._hash_to, self._prefix) if self._hashed < self._prefix else None

    def _hash_to(self, end: int) -> None:
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
        while self._hashed < self.size or self._reading is not None:
            if self._reading is not None:
                self._reading.result()
                self._reading = None
            if self._hashed < self.size:
                self._hash_to(self.size)
        return self._sha.hexdigest()
