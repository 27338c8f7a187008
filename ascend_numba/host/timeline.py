"""Modelled device time: each core's pipes (MTE2, Vector, MTE3, Scalar) replayed from a traced launch.

A traced lane logs every primitive call it makes with the address ranges it wrote and read
(:mod:`.trace`).  This module replays those calls on the device's pipes and says when each one
would run on the chip:

* **Pipes.**  A GM->UB copy runs on MTE2; UB->GM and UB->UB copies on MTE3 (msKPP's pipe map,
  ``GetPipeByIO`` in ``csrc/core/arch/arch_info.cpp``); Gather, the vector ops and TTRANS on the
  Vector pipe; SetValue on Scalar.  A pipe runs its calls in program order, one at a time.
* **Hand-offs.**  A call waits until every earlier call of its core that it conflicts with has
  completed: one that wrote what it reads, or read or wrote what it writes (UB in 32-byte blocks;
  a GM read waits for the core's earlier GM writes over it).  That is what a kernel's queues
  (``EnQue``/``DeQue``) and flags enforce on the device, so double-buffered tiles overlap as they
  do there: the next tile's CopyIn writes the other buffer and waits for nothing.
* **Copies.**  One copy of ``b`` bytes alone takes ``b / rate(b)``, ``rate`` being msKPP's
  measured table for its path at that size (:mod:`.device_rates`; below the smallest size listed,
  1 KiB, it takes as long as 1 KiB: the time is latency).  Its pipe is busy only ``b / peak`` (the
  table's highest rate); the rest is latency, during which the next copy on the pipe proceeds.  A
  DataCopyPad is costed by its bytes whatever its bursts, as msKPP costs a MOV (``MovPref.time``
  in ``mskpp/prof_data/mov_prof.py``: the moved size over the table's rate at that size).
* **Shared GM bandwidth.**  The cores that move GM bytes divide ``Platform.shared_gm_bytes_per_ns``
  equally: a core's GM copy streams at the lower of its own peak and its share.
* **Vector.**  ``sizeof(input) * elements / rate(elements)`` cycles, msKPP's formula and table for
  the instruction (Gather: VGATHER's; TTRANS, which msKPP does not list: two VCOPY passes, its
  block transpose and the copy of its rows out); SetValue one cycle.
* **Launch floor.**  ``Platform.launch_floor_ns`` is added to the slowest core's time.

The model leaves out bank conflicts, scalar-unit stalls and instruction issue, cache effects (GM
traffic is charged at the L2-resident rate whatever the footprint) and cross-core ordering
(SyncAll).  A lane that logged fewer calls than it made (the trace capacity) has its time scaled
by calls made over calls logged.  See ``docs/benchmarks.md`` for how far to trust a ratio.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import numpy as np

from .device_rates import CLOCK_MHZ, DMA_GIB_PER_S, VECTOR_BYTES_PER_CYCLE
from .trace import (
    DIR_IN, DIR_LOCAL, DIR_NAMES, DIR_OUT, DIR_SCALAR, EVENT, EVENT_GATHER, EVENT_NAMES, EVENT_SET_VALUE,
    EVENT_TTRANS, EVENT_FIELDS, TRACE_CALLS_IN, TRACE_CALLS_OUT, TRACE_EVENT_COUNT, TRACE_UB_BASE,
)

__all__ = ["Timeline", "build_timeline", "PIPES"]

PIPES = ("MTE2", "Vector", "MTE3", "Scalar")
MTE2, VECTOR, MTE3, SCALAR = range(4)
GRANULE = 32        # UB conflicts are tracked per 32-byte block
GIB = 1024 ** 3

_EVENT_LIST = list(EVENT)
# msKPP instruction of each vector primitive; the element width picks the FP16 or FP32 table.
_INSTRUCTION = {"duplicate": "VECTORDUP", "adds": "VADDS", "muls": "VMULS", "add": "VADD", "sub": "VSUB",
                "mul": "VMUL", "div": "VDIV", "vmax": "VMAX", "vsqrt": "VSQRT", "vabs": "VABS"}
_CASTS = {"cast_f16_to_f32": "VCONV_FP16_FP32", "cast_f32_to_f16": "VCONV_FP32_FP16",
          "cast_bf16_to_f32": "VCONV_BF16_FP32", "cast_f32_to_bf16": "VCONV_FP32_BF16"}


def _table(name: str):
    """A msKPP vector table as sorted arrays (elements, bytes per cycle)."""
    rows = sorted(VECTOR_BYTES_PER_CYCLE[name].items())
    return np.array([r[0] for r in rows], float), np.array([r[1] for r in rows], float)


@functools.cache
def _vector_table(kind: int, itemsize: int):
    name = _EVENT_LIST[kind]
    if kind == EVENT_GATHER:
        return _table("VGATHER_UINT32_UINT32" if itemsize >= 4 else "VGATHER_UINT16_UINT16")
    if kind == EVENT_TTRANS:
        return _table("VCOPY_UINT32_UINT32" if itemsize >= 4 else "VCOPY_UINT16_UINT16")
    if name in _CASTS:
        return _table(_CASTS[name])
    w = "FP32" if itemsize >= 4 else "FP16"  # 1-byte tiles are charged by their bytes at FP16's rate
    instruction = _INSTRUCTION[name]
    return _table(next(c for c in (f"{instruction}_{w}_{w}_{w}", f"{instruction}_{w}_{w}")
                       if c in VECTOR_BYTES_PER_CYCLE))


@dataclass(frozen=True, eq=False)
class _DmaPath:
    """One DMA path's table: time alone of a copy of ``b`` bytes, and the peak rate (bytes/ns)."""

    sizes: np.ndarray     # bytes
    rates: np.ndarray     # bytes per ns
    peak: float           # the highest rate (a field: a replay asks for it once per copy)

    @classmethod
    def of(cls, name: str) -> "_DmaPath":
        rows = sorted(DMA_GIB_PER_S[name].items())
        rates = np.array([v * GIB / 1e9 for _, v in rows])
        return cls(np.array([k * 1024.0 for k, _ in rows]), rates, float(rates.max()))

    @functools.lru_cache(maxsize=4096)
    def alone_ns(self, nbytes: float) -> float:
        b = max(nbytes, self.sizes[0])  # below the smallest size the time is latency
        return b / float(np.interp(b, self.sizes, self.rates))


@functools.cache
def _dma_paths(rates: str) -> dict:
    # The 910_95 lists GM<->UB only: its UB->UB copies use the 910B table.
    return {DIR_IN: _DmaPath.of(f"GM_TO_UB/{rates}"), DIR_OUT: _DmaPath.of(f"UB_TO_GM/{rates}"),
            DIR_LOCAL: _DmaPath.of(f"UB_TO_UB/{rates}" if f"UB_TO_UB/{rates}" in DMA_GIB_PER_S else "UB_TO_UB/910b")}


@dataclass
class Timeline:
    """When each logged call of a launch runs on its core's pipes (modelled, not measured).

    ``slices`` holds one row per logged call: ``lane``, ``event`` (its index in the lane's log),
    ``pipe`` (index into :data:`PIPES`), ``kind``, ``direction``, ``bytes``, ``start``,
    ``busy_end`` (the pipe is free again), ``end`` (its result is complete), all in ns from the
    lane's start, and ``waited_for`` (the event whose completion it waited for, -1 for none).
    """

    kernel: str
    slices: np.ndarray
    lane_ns: np.ndarray          # each lane's modelled time (scaled where calls went unlogged)
    launch_floor_ns: float
    notes: tuple = ()

    @property
    def modelled_ns(self) -> float:
        """The launch: the launch floor plus the slowest core."""
        return self.launch_floor_ns + (float(self.lane_ns.max()) if self.lane_ns.size else 0.0)

    @property
    def modelled_us(self) -> float:
        return self.modelled_ns / 1e3

    def pipe_busy_ns(self) -> np.ndarray:
        """(lanes, pipes): how long each pipe of each core is busy."""
        busy = np.zeros((self.lane_ns.size, len(PIPES)))
        np.add.at(busy, (self.slices["lane"], self.slices["pipe"]), self.slices["busy_end"] - self.slices["start"])
        return busy

    def to_chrome_trace(self, path=None) -> dict:
        """Trace-event JSON for Perfetto or chrome://tracing: a process per core, a track per pipe
        (as ``msprof op simulator`` shows them), a slice per call, an arrow from each call to the one
        it waited for.  Times are modelled, not measured."""
        events = []
        lanes = sorted(set(int(x) for x in self.slices["lane"]))
        for lane in lanes:
            events.append({"name": "process_name", "ph": "M", "pid": lane, "args": {"name": f"core {lane}"}})
            for p, pipe in enumerate(PIPES):
                events.append({"name": "thread_name", "ph": "M", "pid": lane, "tid": p, "args": {"name": pipe}})
        by_key = {}
        for s in self.slices:
            lane, index = int(s["lane"]), int(s["event"])
            kind, direction = int(s["kind"]), int(s["direction"])
            name = EVENT_NAMES[kind] + (f" {DIR_NAMES[direction]}" if DIR_NAMES[direction] else "")
            ts, dur = round(float(s["start"]) / 1e3, 4), round(max(float(s["end"] - s["start"]), 0.1) / 1e3, 4)
            events.append({"name": name, "cat": PIPES[int(s["pipe"])], "ph": "X", "pid": lane, "tid": int(s["pipe"]),
                           "ts": ts, "dur": dur,
                           "args": {"bytes": int(s["bytes"]), "event": index,
                                    "busy_us": round(float(s["busy_end"] - s["start"]) / 1e3, 4)}})
            by_key[(lane, index)] = s
        flow = 0
        for s in self.slices:
            waited = int(s["waited_for"])
            if waited < 0:
                continue
            src = by_key.get((int(s["lane"]), waited))
            if src is None:
                continue
            flow += 1
            events.append({"name": "hand-off", "cat": "dependency", "ph": "s", "id": flow, "pid": int(src["lane"]),
                           "tid": int(src["pipe"]), "ts": round(float(src["end"]) / 1e3 - 0.0001, 4)})
            events.append({"name": "hand-off", "cat": "dependency", "ph": "f", "bp": "e", "id": flow,
                           "pid": int(s["lane"]), "tid": int(s["pipe"]), "ts": round(float(s["start"]) / 1e3, 4)})
        doc = {"traceEvents": events, "displayTimeUnit": "ns",
               "otherData": {"timing": "modelled, not measured", "kernel": self.kernel,
                             "modelled_us": round(self.modelled_us, 3),
                             "launch_floor_us": self.launch_floor_ns / 1e3, "notes": list(self.notes)}}
        if path is not None:
            with open(path, "w") as f:
                json.dump(doc, f)
        return doc


def _pipe_of(kind: int, direction: int) -> int:
    if direction == DIR_IN:
        return MTE2
    if direction in (DIR_OUT, DIR_LOCAL) and kind != EVENT_GATHER:
        return MTE3
    if direction == DIR_SCALAR or kind == EVENT_SET_VALUE:
        return SCALAR
    return VECTOR


@functools.cache
def _vector_ns(kind: int, nbytes: int, count: int, clock_ghz: float) -> float:
    if kind == EVENT_SET_VALUE:
        return 1 / clock_ghz
    if count <= 0:
        return 0.0
    itemsize = max(nbytes // count, 1)
    elements, rates = _vector_table(kind, itemsize)
    rate = float(np.interp(count, elements, rates))
    cycles = nbytes / rate * (2 if kind == EVENT_TTRANS else 1)
    return cycles / clock_ghz


_SLICE = np.dtype([("lane", np.int32), ("event", np.int32), ("pipe", np.int8), ("kind", np.int16),
                   ("direction", np.int8), ("bytes", np.int64), ("start", np.float64), ("busy_end", np.float64),
                   ("end", np.float64), ("waited_for", np.int32)])


def build_timeline(trace) -> Timeline:
    """Replay a :class:`~.trace.LaunchTrace` on the device's pipes (see the module doc)."""
    platform = trace.platform
    paths = _dma_paths(platform.rates)
    clock_ghz = CLOCK_MHZ[platform.rates] / 1e3
    rows = trace.rows
    moves_gm = rows[:, TRACE_CALLS_IN] + rows[:, TRACE_CALLS_OUT] > 0
    gm_share = platform.shared_gm_bytes_per_ns / max(int(moves_gm.sum()), 1)
    slices, lane_ns, notes = [], np.zeros(trace.block_dim), []
    for lane in range(trace.block_dim):
        events = trace.events(lane)
        if not len(events):
            continue
        lane_slices = _replay(lane, events, int(rows[lane, TRACE_UB_BASE]), platform.ub_size, paths, gm_share,
                              clock_ghz)
        slices.append(lane_slices)
        made = int(rows[lane, TRACE_EVENT_COUNT])
        t = float(lane_slices["end"].max())
        if made > len(events):
            notes.append(f"lane {lane}: {made - len(events)} of {made} calls past the trace capacity; its time "
                         f"is scaled by {made / len(events):.2f}")
            t *= made / len(events)
        lane_ns[lane] = t
    data = np.concatenate(slices) if slices else np.zeros(0, _SLICE)
    return Timeline(trace.kernel, data, lane_ns, platform.launch_floor_ns, tuple(notes))


def _replay(lane, events, ub_base, ub_size, paths, gm_share, clock_ghz) -> np.ndarray:
    rows = []
    pipe_free = [0.0] * len(PIPES)
    # Each distinct UB range calls used (in whole 32-byte blocks), with the latest completion of a
    # call that wrote it and of one that read it, and those calls: a kernel touches a few dozen.
    ranges = {}
    # Each range a call used: the ranges overlapping it, in the order they first appeared (a call
    # meets a few of the dozens; scanning them all per call was most of a replay's time).
    touching: dict = {}
    order: dict = {}

    def overlapping(r):
        found = touching.get(r)
        if found is None:
            found = touching[r] = [q for q in ranges if q[0] < r[1] and r[0] < q[1]]
        return found

    def entry_of(r):
        entry = ranges.get(r)
        if entry is None:
            entry = ranges[r] = [0.0, -1, 0.0, -1]
            order[r] = len(order)
            for q, found in touching.items():
                if q[0] < r[1] and r[0] < q[1]:
                    found.append(r)
        return entry
    # The core's UB->GM copies so far: their GM ranges, completion and event.
    gw_lo, gw_hi = np.zeros(len(events), np.int64), np.zeros(len(events), np.int64)
    gw_end, gw_by, k = np.zeros(len(events)), np.zeros(len(events), np.int32), 0
    gw_span = (1 << 64, 0)  # the lowest and highest GM byte the writes cover (none yet: empty)
    ub_end = ub_base + ub_size

    def in_ub(lo, hi):
        if hi <= lo or lo < ub_base or hi > ub_end:
            return None
        lo -= (lo - ub_base) % GRANULE
        return lo, hi + (-(hi - ub_base)) % GRANULE

    assert events.shape[1] == EVENT_FIELDS == 10  # the fields below, in host.trace's F_* order
    for i, (kind, direction, nbytes, count, d_lo, d_hi, s_lo, s_hi, t_lo, t_hi) in enumerate(events.tolist()):
        pipe = _pipe_of(kind, direction)
        ready, waited = pipe_free[pipe], -1
        write = in_ub(d_lo, d_hi)
        reads = [r for r in (in_ub(s_lo, s_hi), in_ub(t_lo, t_hi)) if r is not None]
        met = [q for r in (*reads, *([write] if write is not None else ())) for q in overlapping(r)]
        if len(reads) + (write is not None) > 1:
            met = sorted(set(met), key=order.__getitem__)
        for lo, hi in met:
            w_end, w_by, r_end, r_by = ranges[(lo, hi)]
            for r_lo, r_hi in reads:                         # read after write
                if lo < r_hi and r_lo < hi and w_end > ready:
                    ready, waited = w_end, w_by
            if write is not None and lo < write[1] and write[0] < hi:
                if r_end > ready:                            # write after read
                    ready, waited = r_end, r_by
                if w_end > ready:                            # write after write
                    ready, waited = w_end, w_by
        # A GM read after this core's GM write over it (most reads are of other tensors: the span
        # of the writes rules them out without a scan).
        if direction == DIR_IN and k and s_lo < gw_span[1] and gw_span[0] < s_hi:
            over = np.where((gw_lo[:k] < s_hi) & (s_lo < gw_hi[:k]), gw_end[:k], -1.0)
            j = int(np.argmax(over))
            if over[j] > ready:
                ready, waited = float(over[j]), int(gw_by[j])
        if pipe in (MTE2, MTE3):
            path = paths[direction]
            peak = path.peak if direction == DIR_LOCAL else min(path.peak, gm_share)
            busy = nbytes / peak
            end = ready + busy + max(path.alone_ns(nbytes) - nbytes / path.peak, 0.0)
        else:
            busy = _vector_ns(kind, nbytes, count, clock_ghz)
            end = ready + busy
        pipe_free[pipe] = ready + busy
        rows.append((lane, i, pipe, kind, direction, nbytes, ready, ready + busy, end, waited))
        for r in reads:
            entry = entry_of(r)
            if end > entry[2]:
                entry[2], entry[3] = end, i
        if write is not None:
            entry = entry_of(write)
            if end > entry[0]:
                entry[0], entry[1] = end, i
        if direction == DIR_OUT:
            gw_lo[k], gw_hi[k], gw_end[k], gw_by[k] = d_lo, d_hi, end, i
            gw_span = (min(gw_span[0], d_lo), max(gw_span[1], d_hi))
            k += 1
    return np.array(rows, _SLICE)
