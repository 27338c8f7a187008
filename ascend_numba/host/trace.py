"""Per-lane traces of a launch (trace=True): counters, a summary, the modelled device timeline.

Lanes record, in an int64 row each, counters and a log of the primitives they call: copies,
Gather, vector ops, TTRANS and SetValue, each with the address ranges it wrote and read.
:meth:`LaunchTrace.timeline` replays that log on the device's pipes (:mod:`.timeline`); its times
are modelled, not measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .platform import Platform
from .primitives import PRIMITIVES

__all__ = ["LaunchTrace", "TRACE_COUNTERS", "TRACE_EVENTS", "TRACE_EVENT_COUNT", "COUNTER_NAMES", "EVENT_FIELDS"]

(TRACE_DATA_COPY, TRACE_DATA_COPY_PAD, TRACE_GATHER, TRACE_CALLS_IN, TRACE_CALLS_OUT, TRACE_CALLS_LOCAL,
 TRACE_BYTES_IN, TRACE_BYTES_OUT, TRACE_BYTES_LOCAL, TRACE_WORK, TRACE_CALLS_VECTOR, TRACE_BYTES_VECTOR,
 TRACE_CALLS_SCALAR, TRACE_UB_BASE) = range(14)
TRACE_COUNTERS = 16
TRACE_EVENT_COUNT = TRACE_COUNTERS   # events recorded (may exceed the capacity: the rest are counted only)
TRACE_EVENTS = TRACE_COUNTERS + 1    # the first event's fields
# An event: what ran and the address ranges [lo, hi) it wrote and read (absolute; 0, 0 for none).
# ``count`` is a copy's block count (its bursts) or a vector op's elements; ``bytes`` what it moved or read.
(F_KIND, F_DIRECTION, F_BYTES, F_COUNT, F_DST_LO, F_DST_HI, F_SRC_LO, F_SRC_HI, F_SRC1_LO,
 F_SRC1_HI) = range(10)
EVENT_FIELDS = 10
# The primitives a traced lane logs, in declaration order (host.primitives); the copies come
# first and each has a counter of its own.
_LOGGED = [p for p in PRIMITIVES.values() if p.trace]
EVENT = {p.name: code for code, p in enumerate(_LOGGED)}
COPY_EVENTS = sum(p.trace == "copy" for p in _LOGGED)
assert all(p.trace == "copy" for p in _LOGGED[:COPY_EVENTS]), "copies are declared before the other logged ops"
EVENT_DATA_COPY, EVENT_DATA_COPY_PAD, EVENT_GATHER = EVENT["data_copy"], EVENT["data_copy_pad"], EVENT["gather"]
EVENT_TTRANS, EVENT_SET_VALUE = EVENT["ttrans"], EVENT["set_value"]
DIR_IN, DIR_OUT, DIR_LOCAL, DIR_VECTOR, DIR_SCALAR = range(5)  # GM->UB, UB->GM, UB->UB, vector op, scalar op

COUNTER_NAMES = (*list(EVENT)[:COPY_EVENTS], "calls_gm_to_ub", "calls_ub_to_gm", "calls_ub_to_ub",
                 "bytes_gm_to_ub", "bytes_ub_to_gm", "bytes_ub_to_ub", "work", "calls_vector", "bytes_vector",
                 "calls_scalar")
EVENT_NAMES = tuple(p.device for p in _LOGGED)
DIR_NAMES = ("GM->UB", "UB->GM", "UB->UB", "", "")


def trace_row_length(capacity: int) -> int:
    return TRACE_EVENTS + EVENT_FIELDS * capacity


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
        return (self.rows.shape[1] - TRACE_EVENTS) // EVENT_FIELDS

    def counter(self, name: str) -> np.ndarray:
        """One counter for every lane (``COUNTER_NAMES``)."""
        return self.rows[:, COUNTER_NAMES.index(name)].copy()

    def totals(self) -> dict[str, int]:
        return {name: int(self.rows[:, i].sum()) for i, name in enumerate(COUNTER_NAMES)}

    def events(self, lane: int) -> np.ndarray:
        """The lane's logged calls, up to the capacity: one row of ``EVENT_FIELDS`` each (``F_*``)."""
        n = min(int(self.rows[lane, TRACE_EVENT_COUNT]), self.capacity)
        return self.rows[lane, TRACE_EVENTS:TRACE_EVENTS + EVENT_FIELDS * n].reshape(n, EVENT_FIELDS)

    def timeline(self):
        """The launch replayed on each core's pipes (:class:`~.timeline.Timeline`; modelled)."""
        return self._timeline

    @cached_property
    def _timeline(self):
        from .timeline import build_timeline

        return build_timeline(self)

    @property
    def modelled_us(self) -> float:
        """The launch's modelled device time: the launch floor plus the slowest core's timeline."""
        return self._timeline.modelled_us

    def modelled_ns(self) -> np.ndarray:
        """Each lane's modelled time on its pipes, without the launch floor."""
        return self._timeline.lane_ns.copy()

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
        if t["calls_vector"] or t["calls_scalar"]:
            lines.append(f"vector ops {t['calls_vector']} ({_mb(t['bytes_vector'])} read), "
                         f"scalar ops {t['calls_scalar']}")
        if busy.any():
            lines.append(f"modelled device time {self.modelled_us:.2f} us: launch floor "
                         f"{self.platform.launch_floor_ns / 1e3:.2f} us + the slowest core (timeline())")
        dropped = int(np.maximum(self.rows[:, TRACE_EVENT_COUNT] - self.capacity, 0).sum())
        if dropped:
            lines.append(f"{dropped} events past the per-lane capacity of {self.capacity} were counted, not logged")
        return "\n".join(lines)

    def to_chrome_trace(self, path: str | None = None) -> dict:
        """The timeline as trace-event JSON (Perfetto, chrome://tracing): a process per core, a
        track per pipe.  Times are modelled, not measured."""
        return self._timeline.to_chrome_trace(path)


def _mb(nbytes) -> str:
    nbytes = int(nbytes)
    return f"{nbytes / 1e6:.1f}MB" if nbytes >= 100_000 else f"{nbytes}B"
