"""The GM side of a checked launch, on the host: the region table, the maps behind it, and what
is read back from them when the launch ends (SPEC §8).

Each GM array argument is a region: a row of :data:`REGION_DTYPE`, which compiled code reads
field by field by name (:mod:`.gm_regions`).  Behind a row are its maps, bytes from pools
reused from launch to launch:

* the owner map: per GM byte, ``lane + 1`` of its writer, ``block_num + lane + 1`` for a DMA
  atomic copy (uint16 past 126 lanes; the top value: written before the last SyncAll; top - 1: by
  several lanes' atomic copies), and the reader map,
  the same for reads (the top value: several lanes).  Each is summarized per :data:`GRANULE` bytes (one int32: the mark
  every byte of the granule has, or :data:`MIXED`: the bytes say), so a copy over whole
  granules reads and writes a summary each (see :mod:`.gm_ownership`);
* the garbage map: per GM byte, the code of the primitive that left garbage there (0: clean);
* the backup: each byte's value before its first write, so a failed launch can put the
  caller's arrays back as they were.

When the launch ends, the host reads the maps for the rules only the end can tell
(``gm-write-garbage``, ``gm-output-unwritten``), restores the arrays after a violation and
clears what the launch wrote in the pooled maps.

What "GM padding" means: the device allocator rounds a tensor up to the 32-byte block and adds
one block (``align_up(nbytes, 32) + 32``), so a DataCopy that rounds a tail up to whole blocks
stays inside the allocation.  Reads may reach that far (``readable``) and writes too where the
view ends its allocation (``writable``; writes past the tensor's bytes are dropped).  Padding
lies past an allocation's end, not between views of one array: a view that ends inside a larger
array (``out[:n]`` beside ``out[n:]``) may be read up to the limit but written only within its bytes.

Plain Python: no Numba in this module.
"""

from __future__ import annotations

import operator
import threading
from dataclasses import dataclass

import numpy as np

from ..config import CHECK_MAP_POOL_BYTES
from .messages import primitive_name
from .rules import GM_OUTPUT_UNWRITTEN, GM_WRITE_GARBAGE

__all__ = ["REGION_DTYPE", "GM_PADDING", "GRANULE", "MIXED", "TOUCHED_OWNER", "TOUCHED_READER", "owner_marks", "CheckMaps",
           "RegionMaps", "gm_regions", "CHECK_MAPS"]

REGION_DTYPE = np.dtype([
    ("addr", np.int64),         # the tensor's first byte
    ("nbytes", np.int64),       # its bytes
    ("readable", np.int64),     # bytes a read may reach (with GM padding)
    ("writable", np.int64),     # bytes a write may reach (padding only where the view ends its allocation)
    ("padding", np.int64),      # what the kernel may do in the padding: 0 nothing, 1 read, 2 read and write
    ("owner_width", np.int64),  # bytes per owner / reader mark: 1, or 2 past 126 lanes
    ("owner_map", np.int64),    # address of the owner map
    ("reader_map", np.int64),   # address of the reader map
    ("owner_sums", np.int64),   # address of the owner map's granule summaries (int32)
    ("reader_sums", np.int64),  # address of the reader map's granule summaries
    ("garbage_map", np.int64),  # address of the garbage map
    ("backup", np.int64),       # address of the backup, 0: none (a fresh output the caller drops)
    ("dirty", np.int64),        # garbage was written to the tensor (its garbage map is not all 0)
    ("written", np.int64),      # a lane wrote the tensor since the last SyncAll
    ("read", np.int64),         # a lane read it since the last SyncAll
    ("touched", np.int64),      # TOUCHED_* bits: the summaries this launch wrote
    ("fresh", np.int64),        # the caller never initialized it (an.empty, an op's output)
])
# A kernel's ``gm_padding`` (``@kernel(gm_padding=...)``) -> the region row's ``padding``.
GM_PADDING = {False: 0, "read": 1, True: 2}
_EMPTY_ROW = dict.fromkeys(REGION_DTYPE.names, 0)
_ROW_VALUES = operator.itemgetter(*REGION_DTYPE.names)  # a row's values in the table's field order
GRANULE = 256
MIXED = -1
TOUCHED_OWNER, TOUCHED_READER = 1, 2


def owner_marks(block_dim: int):
    """The owner/reader map element type for ``block_dim`` lanes and its top value: marks
    ``1 .. 2 * block_dim`` for the lanes' plain and DMA atomic writes, then two markers: atomic
    writes of several lanes (top - 1), an owner written before the last SyncAll or a byte several
    lanes read (top)."""
    dtype = np.uint8 if 2 * block_dim <= 253 else np.uint16  # checked launches take up to 32766 lanes
    return dtype, np.iinfo(dtype).max


class CheckMaps(threading.local):
    """Bytes for checked launches' maps, reused from launch to launch: a fresh map costs a page
    fault and the kernel's zeroing per page (0.84 ms for 16 MB, against 0.19 ms to clear a reused
    one).  The summaries and garbage maps must start zeroed and are cleared where a launch wrote
    them (:meth:`RegionMaps.clear`); the owner and reader byte maps need not (a byte is read only
    where its granule's summary says MIXED, and a granule is filled before it becomes that), nor
    do the backups."""

    def zeroed(self, nbytes: int) -> np.ndarray:
        """Zeroed bytes (give them back zeroed)."""
        return self._pooled("zeroed_buf", nbytes, np.zeros)

    def shadow(self, nbytes: int) -> tuple[np.ndarray, int]:
        """The UB shadow of one-lane-at-a-time launches and the epoch its next lane takes: a new
        shadow starts at epoch 0, whose lane clears it (see ``kernels.launchers``)."""
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
        return self._pooled("backup_buf", nbytes, np.empty)

    def pooled(self, maps: np.ndarray) -> bool:
        return maps.base is not None and maps.base is getattr(self, "zeroed_buf", None)

    def _pooled(self, name: str, nbytes: int, make) -> np.ndarray:
        buf = getattr(self, name, None)
        if buf is None or buf.size < nbytes:
            buf = make(nbytes, np.uint8)
            if nbytes <= CHECK_MAP_POOL_BYTES:
                setattr(self, name, buf)
        return buf[:nbytes]


CHECK_MAPS = CheckMaps()


def _up64(nbytes: int) -> int:
    return -(-nbytes // 64) * 64


class _Carver:
    """Consecutive 64-byte aligned parts of one pooled buffer, each with its address (from the
    buffer's own: an array's ``__array_interface__`` costs ~2 us a call)."""

    def __init__(self, buf: np.ndarray):
        self.buf, self.base, self.at = buf, buf.__array_interface__["data"][0], 0

    def _next(self, nbytes: int) -> int:
        """The next part's offset in the buffer (the cursor moves past it)."""
        start = self.at
        self.at = start + _up64(nbytes)
        return start

    def address(self, nbytes: int) -> int:
        """The next part's address."""
        return self.base + self._next(nbytes)

    def view(self, nbytes: int, dtype=None) -> tuple[np.ndarray, int]:
        """The next part (bytes, or elements of ``dtype``), for the host to read, and its address."""
        start = self._next(nbytes)
        part = self.buf[start:start + nbytes]
        return (part if dtype is None else part.view(dtype)), self.base + start

    @staticmethod
    def size(nbytes: list) -> int:
        return sum(map(_up64, nbytes)) + 64  # slack past the last: word-sized accesses


@dataclass
class RegionMaps:
    """A checked launch's maps of one GM argument, as the host reads them when the launch ends."""

    array: np.ndarray
    name: str
    owner: np.ndarray  # byte map, read where owner_sums is MIXED
    owner_sums: np.ndarray
    reader_sums: np.ndarray
    garbage: np.ndarray
    backup: np.ndarray | None
    must_write: bool  # a declared output: every byte must be written by some lane

    def written(self) -> np.ndarray:
        """Per byte, whether a lane wrote it (its owner is a lane or the before-a-SyncAll mark)."""
        n = self.array.nbytes
        whole = np.repeat(self.owner_sums > 0, GRANULE)[:n]
        mixed = np.repeat(self.owner_sums == MIXED, GRANULE)[:n]
        return whole | (mixed & (self.owner != 0))

    def writer(self, byte: int) -> int | None:
        """The lane that wrote one byte (-1: a lane before a SyncAll, whose marks keep no lane),
        None outside the tensor."""
        if not 0 <= byte < self.array.nbytes:
            return None
        mark = int(self.owner_sums[byte // GRANULE])
        mark = int(self.owner[byte]) if mark == MIXED else mark
        return -1 if mark == np.iinfo(self.owner.dtype).max else mark - 1

    def garbage_left(self, dirty: int):
        """gm-write-garbage: the first byte the launch left garbage in (``dirty``: the region
        table says some lane wrote garbage here), or None."""
        if not dirty:
            return None
        left = np.flatnonzero(self.garbage)
        if not left.size:
            return None
        byte = int(left[0])
        return GM_WRITE_GARBAGE.error(self.writer(byte), primitive_name(int(self.garbage[byte])), "src",
                                      {"tensor": self.name, "byte": byte})

    def unwritten(self):
        """gm-output-unwritten: the first run of bytes of a declared output no lane wrote, named
        with the lanes that wrote the bytes on either side, or None."""
        if not self.must_write or self.array.nbytes == 0 or self.owner_sums.min() > 0:
            return None  # (the last: every granule written whole by lanes)
        written = self.written()
        missing = np.flatnonzero(~written)
        if not missing.size:
            return None
        first = int(missing[0])
        after = np.flatnonzero(written[first:])
        end = first + int(after[0]) if after.size else written.size
        before, beyond = self.writer(first - 1), self.writer(end)
        lane = before if before is not None and before >= 0 else beyond if beyond is not None and beyond >= 0 else -1
        return GM_OUTPUT_UNWRITTEN.error(lane, "end of launch", "dst",
                                         {"tensor": self.name, "start": first, "end": end,
                                          "tensor_bytes": written.size, "lane_before": before, "lane_after": beyond})

    def restore(self):
        """Put back every byte the launch wrote (a region with a backup)."""
        if self.backup is not None:
            written = self.written()
            self.array.view(np.uint8)[written] = self.backup[written]

    def clear(self, touched: int, dirty: int):
        """Zero what the launch wrote in the pooled zeroed maps (``touched``, ``dirty``: the region
        table's fields), for the next launch."""
        if touched & TOUCHED_OWNER:
            self.owner_sums.fill(0)
        if touched & TOUCHED_READER:
            self.reader_sums.fill(0)
        if dirty:
            self.garbage.fill(0)


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


def gm_regions(args: tuple, arg_names: tuple, block_bytes: int, block_dim: int, scratch: tuple = (),
               outputs: tuple = (), fresh: tuple = (), gm_padding: "bool | str" = False):
    """The region table of the array arguments, their :class:`RegionMaps` (the caller keeps them
    alive for the launch) and the pooled zeroed bytes behind them.

    Arguments that are the same view (an in-place launch) share one region, named after all of
    them; it is backed up unless every one is a fresh output the caller drops on failure
    (``scratch``), holds only unwritten bytes if every one is uninitialized (``scratch`` or
    ``fresh``), and must be written whole if one is named in ``outputs``.  ``gm_padding``: what the
    kernel may do past a tensor's end, inside the padding (see :data:`GM_PADDING`)."""
    groups: dict[tuple, list] = {}  # span -> [array, names, all scratch, all fresh, must be written]
    for i, a in enumerate(args):
        if not isinstance(a, np.ndarray):
            continue
        named = i < len(arg_names)
        name = arg_names[i] if named else None
        group = groups.setdefault(_span(a), [a, [], True, True, False])
        group[1].append(f"{name} (argument {i})" if named else f"argument {i}")
        group[2] = group[2] and name in scratch
        group[3] = group[3] and (name in scratch or name in fresh)
        group[4] = group[4] or name in outputs
    dtype, _top = owner_marks(block_dim)
    width = np.dtype(dtype).itemsize
    sizes = [g[0].nbytes for g in groups.values()]
    granules = [-(-n // GRANULE) for n in sizes]
    byte_maps = _Carver(CHECK_MAPS.byte_maps(_Carver.size([n * width for n in sizes] * 2)))  # owner, reader
    # garbage maps, owner and reader summaries
    zeroed = _Carver(CHECK_MAPS.zeroed(_Carver.size([*sizes, *[4 * g for g in granules] * 2])))
    backups = _Carver(CHECK_MAPS.backups(_Carver.size([n for n, g in zip(sizes, groups.values()) if not g[2]])))
    rows, kept = [], []
    for ((start, end), (a, names, scratched, fresh_all, must_write)), g in zip(groups.items(), granules):
        nbytes = a.nbytes
        owner, owner_map = byte_maps.view(nbytes * width, dtype)
        garbage, garbage_map = zeroed.view(nbytes)
        owner_sums, owner_sums_at = zeroed.view(4 * g, np.int32)
        reader_sums, reader_sums_at = zeroed.view(4 * g, np.int32)
        backup, backup_at = (None, 0) if scratched else backups.view(nbytes)
        padded = -(-nbytes // block_bytes) * block_bytes + block_bytes
        row = {"addr": start, "nbytes": nbytes, "readable": padded,
               "writable": padded if end == _allocation_end(a) else nbytes, "owner_width": width,
               "owner_map": owner_map, "reader_map": byte_maps.address(nbytes * width),
               "owner_sums": owner_sums_at, "reader_sums": reader_sums_at, "garbage_map": garbage_map,
               "backup": backup_at, "fresh": fresh_all, "padding": GM_PADDING[gm_padding]}
        rows.append(_ROW_VALUES({**_EMPTY_ROW, **row}))
        kept.append(RegionMaps(a, " = ".join(names), owner, owner_sums, reader_sums, garbage, backup, must_write))
    return np.array(rows, REGION_DTYPE), kept, zeroed.buf
