"""trace=True: per-lane counters that match the plans, what each path saves, Chrome trace JSON."""

import json
import pathlib
import sys

import ml_dtypes
import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.ops.adamw.plan import plan_adamw
from ascend_numba.host.trace import COUNTER_NAMES, DIR_IN, F_DIRECTION, F_SRC_LO, LaunchTrace

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import vector_add as va  # noqa: E402


def test_doubling_builds_rows_in_ub_and_per_row_writes_one_strided_copy_per_repeat():
    x = np.arange(65536 * 8, dtype=np.float32).reshape(65536, 8)
    reps = (1, 16)
    out, fast = an.tile(x, reps, trace=True)
    out2, slow = an.tile(x, reps, path="per_row", trace=True)
    assert fast.info["path"] == "doubling" and slow.info["path"] == "per_row"
    assert out.tobytes() == out2.tobytes() == np.tile(x, reps).tobytes()
    f, s = fast.totals(), slow.totals()
    assert f["bytes_ub_to_gm"] == s["bytes_ub_to_gm"] == out.nbytes
    assert f["calls_ub_to_ub"] > 0 == s["calls_ub_to_ub"]          # Doubling: UB -> UB copies
    assert f["calls_ub_to_gm"] == 65536                             # each row written whole
    assert s["calls_ub_to_gm"] == 16 * s["calls_gm_to_ub"]          # PerRow: a batch, then 16 strided repeats
    assert s["calls_gm_to_ub"] == sum(-(-(e - b) // 1024) for b, e in an.plan_tile((65536, 8), reps, 4).core_ranges())


def _gm_reads_from(trace, array):
    """The GM -> UB copies a traced launch made from ``array``'s bytes."""
    lo, hi = array.ctypes.data, array.ctypes.data + array.nbytes
    reads = 0
    for lane in range(trace.block_dim):
        ev = trace.events(lane)
        src = ev[ev[:, F_DIRECTION] == DIR_IN, F_SRC_LO]
        reads += int(((src >= lo) & (src < hi)).sum())
    return reads


def test_per_row_copies_consecutive_rows_of_one_source_from_the_output():
    # isRepeat (SPEC §4): output rows (i, 0..4) share one source row: read once, then copied from
    # the output already written.
    x = np.arange(3 * 100, dtype=np.float32).reshape(3, 1, 100)
    y, trace = an.tile(x, (1, 5, 3), path="per_row", block_dim=1, trace=True)
    assert y.tobytes() == np.tile(x, (1, 5, 3)).tobytes()
    assert _gm_reads_from(trace, x) == 3
    assert _gm_reads_from(trace, y) > 0
    # Rows repeated on an outer dim are not consecutive: re-read from the input (8 batches of the
    # 6 consecutive source rows), never from the output.
    x = np.arange(4 * 6 * 3, dtype=np.int8).reshape(4, 6, 3)
    y, trace = an.tile(x, (1, 2, 2), block_dim=1, trace=True)
    assert trace.info["path"] == "per_row" and y.tobytes() == np.tile(x, (1, 2, 2)).tobytes()
    assert (_gm_reads_from(trace, x), _gm_reads_from(trace, y)) == (8, 0)


@pytest.mark.parametrize("shape, reps, block_dim", [((1000, 64), (1, 8), 24), ((128,), (8192,), 24),
                                                    ((37, 3), (2, 5), 7), ((4096, 3), (1, 50), 48)])
def test_tile_work_per_lane_matches_the_split(shape, reps, block_dim):
    x = np.ones(shape, np.int16)
    _, trace = an.tile(x, reps, block_dim=block_dim, trace=True)
    plan = an.plan_tile(shape, reps, 2, block_dim=block_dim)
    expected = [end - start for start, end in plan.core_ranges()]
    assert list(trace.counter("work")) == expected
    assert (trace.ub_high_water[np.array(expected) >= 0] == 3 * plan.buffer_bytes).all()


def test_adamw_work_per_lane_matches_big_small_split():
    n = 100_003
    var, m, v, g = (np.ones(n, ml_dtypes.bfloat16) for _ in range(4))
    (_, _, _), trace = an.apply_adamw(var, m, v, 0.9, 0.99, 1e-3, 0.0, 0.9, 0.99, 1e-8, g, block_dim=7, trace=True)
    plan = plan_adamw(n, "bfloat16", "seed", False, False, 7, an.get_platform("A2"))
    assert list(trace.counter("work")) == [e - s for s, e in plan.core_ranges()]
    assert trace.totals()["bytes_ub_to_gm"] == 3 * var.nbytes
    assert (trace.ub_high_water == plan.ub_bytes).all() and trace.info["dtype"] == "bfloat16"


def test_user_kernel_trace_and_chrome_json(tmp_path):
    x = np.arange(1003, dtype=np.float32)
    tiling = va.plan_add(1003, 4, an.get_platform("A2"), tile_elems=64)
    z = np.zeros_like(x)
    trace = va.vector_add.launch(x, x, z, tiling, block_dim=4, key={"UseScale": 0}, trace=True)
    assert isinstance(trace, LaunchTrace) and np.array_equal(z, 2 * x)
    split = an.host.big_small_split(-(-1003 // 8), 4)
    ranges = [(s * 8, min(e * 8, 1003)) for s, e in split.ranges()]
    tiles = [-(-(e - s) // 64) for s, e in ranges]
    assert list(trace.counter("calls_gm_to_ub")) == [2 * t for t in tiles]
    assert list(trace.counter("calls_ub_to_gm")) == tiles
    assert trace.totals()["bytes_ub_to_gm"] == x.nbytes  # exact tail writes
    assert trace.counter("data_copy_pad").sum() == 1      # the one unaligned tail
    doc = json.loads(json.dumps(trace.to_chrome_trace(tmp_path / "t.json")))
    assert json.loads((tmp_path / "t.json").read_text()) == doc
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == sum(tiles) * 4  # two CopyIns, the Add, the CopyOut
    assert all({"name", "ts", "dur", "pid", "tid"} <= e.keys() and e["dur"] > 0 for e in slices)
    assert {e["pid"] for e in slices} == {0, 1, 2, 3} and "modelled" in doc["otherData"]["timing"]
    assert {e["name"] for e in slices} == {"DataCopy GM->UB", "Add", "DataCopy UB->GM", "DataCopyPad UB->GM"}
    assert trace.totals()["calls_vector"] == sum(tiles)
    assert list(trace.counter("work")) == [e - s for s, e in ranges]
    text = trace.summary()
    assert "balance: 4/4 lanes busy" in text and "modelled" in text


def test_trace_capacity_counts_past_the_log():
    x = np.ones((4096, 3), np.int8)
    _, trace = an.tile(x, (1, 5000), block_dim=1, trace=True)
    assert trace.rows[0, 16] > trace.capacity            # more events than logged
    assert len(trace.events(0)) == trace.capacity
    assert "counted, not logged" in trace.summary()
    assert trace.totals()["work"] == 4096 and set(COUNTER_NAMES) == set(trace.totals())


def test_transpose_and_convert_traces():
    a = np.ones((300, 517), np.float32)
    _, t = an.transpose2d(a, trace=True)
    assert t.info["vector_tiles"] + t.info["scalar_tiles"] == t.counter("work").sum()
    y, t2 = an.convert_format(np.ones((2, 20, 4, 5), np.float16), "NCHW", "NC1HWC0", trace=True)
    assert y.shape == (2, 2, 4, 5, 16) and t2.totals()["bytes_ub_to_gm"] == y.nbytes
