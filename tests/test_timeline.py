"""The modelled device timeline (host.timeline): its invariants, its Perfetto export, and the seed's
24 measured AscendC times as the error bound."""

import dataclasses
import json
import pathlib
import sys

import ml_dtypes
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.benchtrack import (
    path_choice_table, seed_launch_floor_us, seed_order_disagreements, seed_table,
)
from ascend_numba.host.timeline import GRANULE, MTE2, MTE3, PIPES
from ascend_numba.host.trace import (
    DIR_IN, DIR_LOCAL, DIR_OUT, F_DIRECTION, F_DST_HI, F_DST_LO, F_SRC1_HI, F_SRC1_LO, F_SRC_HI,
    F_SRC_LO, TRACE_UB_BASE,
)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import vector_add as va  # noqa: E402


def _launches():
    """Traced launches of every kind of kernel: each Tile path, ApplyAdamW (vector ops), TTRANS, a user kernel."""
    out = {}
    for path, (shape, reps) in {"split_mult": ((8, 5), (1, 700)), "doubling": ((64, 8), (1, 4)),
                                "build": ((96, 8), (3, 3)), "gather": ((200, 3), (2, 5)),
                                "per_row": ((300, 100), (2, 3))}.items():
        _, out[f"tile-{path}"] = an.tile(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), reps,
                                         path=path, block_dim=4, trace=True)
    var, m, v, g = (np.full(5000, 0.5, ml_dtypes.bfloat16) for _ in range(4))
    (_, _, _), out["adamw"] = an.apply_adamw(var, m, v, 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, g, block_dim=3,
                                             trace=True)
    _, out["ttrans"] = an.transpose2d(np.ones((300, 517), np.float32), trace=True)
    x = np.arange(1003, dtype=np.float32)
    tiling = va.plan_add(1003, 4, an.get_platform("A2"), tile_elems=64)
    out["vector_add"] = va.vector_add.launch(x, x, np.zeros_like(x), tiling, block_dim=4, key={"UseScale": 0},
                                             trace=True)
    return out


NAMES = ["tile-split_mult", "tile-doubling", "tile-build", "tile-gather", "tile-per_row", "adamw", "ttrans",
         "vector_add"]


@pytest.fixture(scope="module")
def launches():
    return _launches()


@pytest.mark.parametrize("name", NAMES)
def test_no_pipe_overlaps_itself(launches, name):
    tl = launches[name].timeline()
    assert len(tl.slices) and (tl.slices["busy_end"] >= tl.slices["start"]).all()
    assert (tl.slices["end"] >= tl.slices["busy_end"]).all()
    for lane in np.unique(tl.slices["lane"]):
        for pipe in range(len(PIPES)):
            s = tl.slices[(tl.slices["lane"] == lane) & (tl.slices["pipe"] == pipe)]  # program order
            assert (s["start"][1:] >= s["busy_end"][:-1] - 1e-9).all(), (name, lane, PIPES[pipe])


def _conflicts(trace, lane, i, j) -> bool:
    """Brute force: does call j (later) conflict with call i on the lane?"""
    ev = trace.events(lane)
    base, size = int(trace.rows[lane, TRACE_UB_BASE]), trace.platform.ub_size

    def blocks(lo, hi):
        lo, hi = int(lo), int(hi)
        if hi <= lo or lo < base or hi > base + size:
            return set()
        return set(range((lo - base) // GRANULE, -(-(hi - base) // GRANULE)))

    def reads(e):
        return blocks(e[F_SRC_LO], e[F_SRC_HI]) | blocks(e[F_SRC1_LO], e[F_SRC1_HI])

    a, b = ev[i], ev[j]
    wa, wb = blocks(a[F_DST_LO], a[F_DST_HI]), blocks(b[F_DST_LO], b[F_DST_HI])
    if wa & reads(b) or wb & (reads(a) | wa):
        return True
    gm_raw = a[F_DIRECTION] == DIR_OUT and b[F_DIRECTION] == DIR_IN
    return bool(gm_raw and a[F_DST_LO] < b[F_SRC_HI] and b[F_SRC_LO] < a[F_DST_HI])


@pytest.mark.parametrize("name", ["tile-per_row", "tile-gather", "adamw", "vector_add", "ttrans"])
def test_every_hand_off_is_respected(launches, name):
    trace = launches[name]
    tl = trace.timeline()
    for lane in np.unique(tl.slices["lane"])[:2]:
        s = tl.slices[tl.slices["lane"] == lane]
        n = min(len(s), 150)
        for j in range(n):
            for i in range(j):
                if _conflicts(trace, lane, i, j):
                    assert s["start"][j] >= s["end"][i] - 1e-9, (name, lane, i, j)


@pytest.mark.parametrize("name", NAMES)
def test_bytes_and_calls_are_conserved(launches, name):
    trace = launches[name]
    tl, totals = trace.timeline(), trace.totals()
    assert len(tl.slices) == sum(len(trace.events(lane)) for lane in range(trace.block_dim))
    for direction, key in ((DIR_IN, "gm_to_ub"), (DIR_OUT, "ub_to_gm"), (DIR_LOCAL, "ub_to_ub")):
        these = tl.slices["direction"] == direction
        assert int(tl.slices["bytes"][these].sum()) == totals[f"bytes_{key}"]
        assert int(these.sum()) == totals[f"calls_{key}"]
    assert int((tl.slices["pipe"] == MTE2).sum()) == totals["calls_gm_to_ub"]
    mte3 = totals["calls_ub_to_gm"] + totals["calls_ub_to_ub"] - totals["gather"]  # Gather runs on Vector
    assert int((tl.slices["pipe"] == MTE3).sum()) == mte3


def test_double_buffered_tiles_overlap_their_pipes():
    # PerRow batches alternate between halves of the buffer: the next CopyIn runs during this CopyOut.
    _, trace = an.tile(np.ones((4096, 1024), np.float32), (1, 2), block_dim=2, trace=True)
    tl = trace.timeline()
    busy = tl.pipe_busy_ns()
    assert trace.info["path"] == "per_row"
    assert (tl.lane_ns < busy[:, MTE2] + busy[:, MTE3]).all()
    assert tl.modelled_ns == pytest.approx(tl.launch_floor_ns + tl.lane_ns.max())


def test_cores_divide_the_shared_gm_bandwidth():
    x = np.ones((4096, 1024), np.float32)
    narrow = dataclasses.replace(an.get_platform("A2"), shared_gm_bytes_per_ns=8.0)
    _, wide_trace = an.tile(x, (1, 2), block_dim=8, trace=True)
    _, narrow_trace = an.tile(x, (1, 2), block_dim=8, trace=True, platform=narrow)
    moved = narrow_trace.totals()["bytes_gm_to_ub"] + narrow_trace.totals()["bytes_ub_to_gm"]
    # 8 cores share 8 B/ns: the launch cannot take less than its bytes over the shared bandwidth, split
    # between MTE2 and MTE3 running side by side.
    assert narrow_trace.timeline().lane_ns.max() * 2 >= moved / 8.0
    assert narrow_trace.modelled_us > 5 * wide_trace.modelled_us


def test_a_lane_past_the_trace_capacity_is_scaled_and_said():
    _, trace = an.tile(np.ones((4096, 3), np.int8), (1, 5000), block_dim=1, trace=True)
    tl = trace.timeline()
    assert any("past the trace capacity" in note for note in tl.notes)
    assert tl.lane_ns[0] > tl.slices["end"].max()


def test_perfetto_export_follows_the_trace_event_format(launches, tmp_path):
    trace = launches["adamw"]
    doc = trace.timeline().to_chrome_trace(tmp_path / "adamw.json")
    assert json.loads((tmp_path / "adamw.json").read_text()) == json.loads(json.dumps(doc))
    assert set(doc) == {"traceEvents", "displayTimeUnit", "otherData"} and doc["displayTimeUnit"] in ("ns", "ms")
    names = {}
    for e in doc["traceEvents"]:
        assert e["ph"] in ("M", "X", "s", "f") and isinstance(e["pid"], int)
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name") and isinstance(e["args"]["name"], str)
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "X":
            assert isinstance(e["name"], str) and isinstance(e["tid"], int)
            assert e["ts"] >= 0 and e["dur"] > 0 and isinstance(e["args"]["bytes"], int)
        else:
            assert isinstance(e["id"], int) and e["ts"] >= 0 and isinstance(e["tid"], int)
    assert set(names.values()) == set(PIPES)
    tracks = {names[(e["pid"], e["tid"])] for e in doc["traceEvents"] if e["ph"] == "X"}
    assert {"MTE2", "Vector", "MTE3"} <= tracks
    flows = [e for e in doc["traceEvents"] if e["ph"] in ("s", "f")]
    assert flows and len(flows) % 2 == 0
    assert doc["otherData"]["timing"] == "modelled, not measured"


@pytest.fixture(scope="module")
def seed_rows():
    return seed_table()


def test_seed_table_errors_are_bounded(seed_rows):
    errors = [abs(r["error"]) for r in seed_rows]
    assert len(errors) == 24
    assert np.median(errors) <= 0.20
    assert max(errors) <= 0.50


def test_seed_table_orders_the_dtypes_as_the_seed(seed_rows):
    assert seed_order_disagreements(seed_rows) == []


def test_launch_floor_is_the_one_read_from_the_seed(seed_rows):
    assert seed_launch_floor_us(seed_rows) == pytest.approx(an.get_platform("A2").launch_floor_ns / 1e3, abs=0.02)


@pytest.fixture(scope="module")
def path_rows():
    return path_choice_table()


def test_model_picks_the_planners_path_on_every_seed_shape(path_rows):
    rows = path_rows
    assert len(rows) == 24 and all(r["planner"] in r["modelled_us"] for r in rows)
    assert [(r["dtype"], r["case"], r["model"]) for r in rows if r["model"] != r["planner"]] == []


def test_data_copy_pad_is_costed_by_its_bytes_whatever_its_bursts():
    # msKPP's MOV rule: 256 bursts of 4 bytes cost what one 1 KiB copy costs.
    from ascend_numba.host.timeline import _dma_paths, _replay
    from ascend_numba.host.trace import DIR_IN, DIR_OUT, EVENT_DATA_COPY, EVENT_DATA_COPY_PAD

    paths = _dma_paths("910b")
    ub = 1 << 20
    ends = []
    for kind, count in ((EVENT_DATA_COPY_PAD, 256), (EVENT_DATA_COPY, 1)):
        # GM -> UB into [ub, ub + 8192), then UB -> GM out of it
        events = np.array([[kind, DIR_IN, 1024, count, ub, ub + 8192, 0, 0, 0, 0],
                           [kind, DIR_OUT, 1024, count, 0, 0, ub, ub + 8192, 0, 0]], np.int64)
        ends.append(_replay(0, events, ub, 192 * 1024, paths, 1e9, 1.8)["end"][-1])
    assert ends[0] == pytest.approx(ends[1])


def test_the_benchmarks_page_shows_what_seed_table_prints(seed_rows, path_rows, monkeypatch):
    from click.testing import CliRunner

    from ascend_numba import cli
    from ascend_numba.cli import main

    # The rows the tests above computed (A2, 24 lanes: the command's defaults); this test checks
    # what the command prints of them against the page.
    monkeypatch.setattr(cli, "seed_table", lambda platform: seed_rows if platform == "A2" else None)
    monkeypatch.setattr(cli, "path_choice_table", lambda platform: path_rows if platform == "A2" else None)

    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md").read_text()
    shown = page.split("ascend-numba seed-table\n```\n\n<!-- example: output -->\n```\n", 1)[1].split("\n```", 1)[0]
    result = CliRunner().invoke(main, ["seed-table"])
    assert result.exit_code == 0 and result.output.rstrip("\n") == shown
