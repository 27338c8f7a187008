"""Per-lane traces of a launch (trace=True): counters, a summary, a Chrome / Perfetto export.

Lanes record, in an int64 row each, counters and a log of primitive events
(kind, direction, bytes).  Durations in the exported trace come from the cost
model on the Platform -- each copy costs ``dma_setup_ns`` plus its bytes over
``gm_bytes_per_ns`` (GM side) or ``ub_bytes_per_ns`` (UB to UB, Gather) -- and are
labelled as modelled, not measured.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from .platform import Platform
from .primitives import PRIMITIVES

__all__ = ["LaunchTrace", "TRACE_COUNTERS", "TRACE_EVENTS", "TRACE_EVENT_COUNT", "COUNTER_NAMES"]

(TRACE_DATA_COPY, TRACE_DATA_COPY_PAD, TRACE_GATHER, TRACE_CALLS_IN, TRACE_CALLS_OUT, TRACE_CALLS_LOCAL,
 TRACE_BYTES_IN, TRACE_BYTES_OUT, TRACE_BYTES_LOCAL, TRACE_WORK) = range(10)
TRACE_COUNTERS = 16
TRACE_EVENT_COUNT = TRACE_COUNTERS   # events recorded (may exceed the capacity: the rest are counted only)
TRACE_EVENTS = TRACE_COUNTERS + 1    # first (kind, direction, bytes) triple
# The primitives a traced lane logs, each with a counter, in declaration order (host.primitives).
_LOGGED = [p for p in PRIMITIVES.values() if p.trace == "copy"]
EVENT = {p.name: code for code, p in enumerate(_LOGGED)}
EVENT_DATA_COPY, EVENT_DATA_COPY_PAD, EVENT_GATHER = EVENT["data_copy"], EVENT["data_copy_pad"], EVENT["gather"]
DIR_IN, DIR_OUT, DIR_LOCAL = 0, 1, 2  # GM->UB, UB->GM, UB->UB

COUNTER_NAMES = (*EVENT, "calls_gm_to_ub", "calls_ub_to_gm", "calls_ub_to_ub",
                 "bytes_gm_to_ub", "bytes_ub_to_gm", "bytes_ub_to_ub", "work")
_EVENT_NAMES = tuple(p.device for p in _LOGGED)
_DIR_NAMES = ("GM->UB", "UB->GM", "UB->UB")


def trace_row_length(capacity: int) -> int:
    return TRACE_EVENTS + 3 * capacity


@dataclass
class LaunchTrace:
    """What each lane of one launch did."""

    kernel: str
    platform: Platform
    rows: np.ndarray                 # (block_dim, row length) int64, as the lanes wrote them
    state: np.ndarray                # the lanes' state rows (UB top, errors, TTRANS path counts)
    info: dict = field(default_factory=dict)   # op-level facts (path, plan, ...)

    @property
    def ub_high_water(self) -> np.ndarray:
        """Bytes of UB each lane bound."""
        return self.state[:, 0].copy()

    @property
    def block_dim(self) -> int:
        return self.rows.shape[0]

    @property
    def capacity(self) -> int:
        return (self.rows.shape[1] - TRACE_EVENTS) // 3

    def counter(self, name: str) -> np.ndarray:
        """One counter for every lane (``COUNTER_NAMES``)."""
        return self.rows[:, COUNTER_NAMES.index(name)].copy()

    def totals(self) -> dict[str, int]:
        return {name: int(self.rows[:, i].sum()) for i, name in enumerate(COUNTER_NAMES)}

    def events(self, lane: int) -> np.ndarray:
        """The lane's recorded (kind, direction, bytes) events, up to the capacity."""
        n = min(int(self.rows[lane, TRACE_EVENT_COUNT]), self.capacity)
        return self.rows[lane, TRACE_EVENTS:TRACE_EVENTS + 3 * n].reshape(n, 3)

    def _cost_ns(self, direction: int, nbytes) -> np.ndarray:
        p = self.platform
        bandwidth = p.ub_bytes_per_ns if direction == DIR_LOCAL else p.gm_bytes_per_ns
        return p.dma_setup_ns + np.asarray(nbytes, dtype=np.float64) / bandwidth

    def modelled_ns(self) -> np.ndarray:
        """Modelled busy time of each lane (every call, logged or not)."""
        p = self.platform
        t = np.zeros(self.block_dim)
        for direction, (calls, nbytes) in enumerate(((TRACE_CALLS_IN, TRACE_BYTES_IN),
                                                     (TRACE_CALLS_OUT, TRACE_BYTES_OUT),
                                                     (TRACE_CALLS_LOCAL, TRACE_BYTES_LOCAL))):
            bandwidth = p.ub_bytes_per_ns if direction == DIR_LOCAL else p.gm_bytes_per_ns
            t += self.rows[:, calls] * p.dma_setup_ns + self.rows[:, nbytes] / bandwidth
        return t

    def summary(self) -> str:
        """A readable table: one line per lane, then totals and the load balance."""
        work = self.rows[:, TRACE_WORK]
        model = self.modelled_ns()
        lines = [f"{self.kernel} on {self.block_dim} lanes ({self.platform.name})"
                 + "".join(f", {k}={v}" for k, v in self.info.items() if np.isscalar(v) or isinstance(v, str)),
                 f"{'lane':>5} {'work':>9} {'GM->UB':>14} {'UB->GM':>14} {'UB->UB':>9} {'gather':>7} "
                 f"{'UB bytes':>9} {'model us':>9}"]
        for i in range(self.block_dim):
            r = self.rows[i]
            lines.append(f"{i:>5} {r[TRACE_WORK]:>9} {r[TRACE_CALLS_IN]:>6}/{_mb(r[TRACE_BYTES_IN]):>7} "
                         f"{r[TRACE_CALLS_OUT]:>6}/{_mb(r[TRACE_BYTES_OUT]):>7} {r[TRACE_CALLS_LOCAL]:>9} "
                         f"{r[TRACE_GATHER]:>7} {self.ub_high_water[i]:>9} {model[i] / 1e3:>9.1f}")
        busy = (work > 0) | (self.rows[:, TRACE_CALLS_IN:TRACE_CALLS_LOCAL + 1].sum(axis=1) > 0)
        t = self.totals()
        lines.append(f"total: work {t['work']}, GM->UB {t['calls_gm_to_ub']} calls {_mb(t['bytes_gm_to_ub'])}, "
                     f"UB->GM {t['calls_ub_to_gm']} calls {_mb(t['bytes_ub_to_gm'])}, "
                     f"UB->UB {t['calls_ub_to_ub']} calls, gather {t['gather']}")
        if busy.any():
            lines.append(f"balance: {int(busy.sum())}/{self.block_dim} lanes busy, work max/mean "
                         f"{work.max()}/{work[busy].mean():.1f}, modelled time max/mean "
                         f"{model.max() / 1e3:.1f}/{model[busy].mean() / 1e3:.1f} us (modelled, not measured)")
        dropped = int(np.maximum(self.rows[:, TRACE_EVENT_COUNT] - self.capacity, 0).sum())
        if dropped:
            lines.append(f"{dropped} events past the per-lane capacity of {self.capacity} were counted, not logged")
        return "\n".join(lines)

    def to_chrome_trace(self, path: str | None = None) -> dict:
        """Trace-event JSON (chrome://tracing, Perfetto): one track per lane, one slice per primitive.

        Durations are modelled (see the module doc), not measured.
        """
        events = [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": f"{self.kernel} (modelled)"}}]
        for lane in range(self.block_dim):
            events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": lane, "args": {"name": f"lane {lane}"}})
            t = 0.0
            for kind, direction, nbytes in self.events(lane):
                dur = float(self._cost_ns(int(direction), nbytes))
                events.append({"name": f"{_EVENT_NAMES[kind]} {_DIR_NAMES[direction]}", "ph": "X", "pid": 0,
                               "tid": lane, "ts": t / 1e3, "dur": dur / 1e3, "args": {"bytes": int(nbytes)}})
                t += dur
        p = self.platform
        doc = {"traceEvents": events, "displayTimeUnit": "ns",
               "otherData": {"timing": "modelled, not measured",
                             "cost_model": f"{p.dma_setup_ns} ns per copy + bytes / {p.gm_bytes_per_ns} B/ns (GM) "
                                           f"or / {p.ub_bytes_per_ns} B/ns (UB)",
                             "kernel": self.kernel, **{k: str(v) for k, v in self.info.items()}}}
        if path is not None:
            with open(path, "w") as f:
                json.dump(doc, f)
        return doc


def _mb(nbytes) -> str:
    nbytes = int(nbytes)
    return f"{nbytes / 1e6:.1f}MB" if nbytes >= 100_000 else f"{nbytes}B"
