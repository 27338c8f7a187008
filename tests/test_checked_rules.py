"""Checked mode's rules as records (ascend_numba.checked.rules): the documentation, the compiled
reporters and the host's messages all come from them; and gm-read-unwritten-output, the rule
that shows how one is added (a read of bytes of a fresh output no lane has written yet)."""

import inspect
import pathlib

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba._numba_compat.extending import TWINS
from ascend_numba.checked import report, rules
from ascend_numba.checked.messages import decode_violation
from ascend_numba.kernels import alloc_buffer, data_copy, data_copy_pad, duplicate, sync_all
from ascend_numba.memory import take_fresh

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_docs_rules_table_is_the_records():
    page = (ROOT / "docs/guide/ops.md").read_text()
    assert rules.rules_table() in page, "docs/guide/ops.md: replace its rules table with rules.rules_table()"


def test_every_rule_name_is_documented_once_and_every_form_reported():
    documented = [r.name for r in rules.RULES if r.doc is not None]
    assert len(documented) == len(set(documented))
    assert {r.name for r in rules.RULES} == set(documented)  # a form without a doc follows a documented rule
    for ident, rule in rules.REPORTED.items():  # each reporter takes the rule's details by name
        twin = TWINS[getattr(report, ident)]
        assert list(inspect.signature(twin).parameters) == ["ctx", "prim", "operand", *rule.details]


@pytest.mark.parametrize("rule", rules.RULES, ids=lambda r: f"{r.name}:{len(r.details)}")
def test_a_check_row_decodes_to_named_details_and_the_records_message(rule):
    # Every record formats from its details alone (a wrong name in a template fails here).
    values = {"tensor": 1, "other_lane": 2, "limit": 64, "tensor_bytes": 32, "count": 6, "value": -3,
              "lane_before": 0, "lane_after": None}
    row = np.zeros(rules.CHECK_SLOTS, np.int64)
    row[rules.CHECK_RULE], row[rules.CHECK_PRIMITIVE] = rule.code, rules.PRIMITIVE["DataCopy"]
    row[rules.CHECK_OPERAND] = rules.OPERAND_DST
    for k, name in enumerate(rule.details):
        row[rules.CHECK_DETAILS + k] = values.get(name, 1 if name in rule.choices else 10 + k) or 0
    err = decode_violation(3, row, ["x (argument 0)", "y (argument 1)"])
    assert (err.lane, err.primitive, err.rule, err.operand) == (3, "DataCopy", rule.name, "dst")
    assert list(err.details) == list(rule.details)
    if "tensor" in rule.details:
        assert err.details["tensor"] == "y (argument 1)" and "y (argument 1)" in str(err)
    for name, choices in rule.choices.items():
        assert err.details[name] in choices
    assert str(err) == f"lane 3, DataCopy: [{rule.name}] {rule.describe('dst', err.details)}"


# ---- gm-read-unwritten-output -------------------------------------------------------------------

ROW = 64  # fp32 elements a lane accumulates: 256 bytes, one granule


@an.kernel(outputs=("y",))
def accumulates_into_output_assumed_zero(ctx, x, y):
    acc = alloc_buffer(ctx, ROW, np.float32)
    buf = alloc_buffer(ctx, ROW, np.float32)
    at = ctx.block_idx * ROW
    data_copy(ctx, acc, 0, y, at, ROW)  # bug on the device: y is whatever HBM held
    data_copy(ctx, buf, 0, x, at, ROW)
    an.kernels.add(ctx, acc, acc, buf, ROW)
    data_copy(ctx, y, at, acc, 0, ROW)


@an.kernel(outputs=("y",))
def zeroes_its_output_then_accumulates(ctx, x, y):
    acc = alloc_buffer(ctx, ROW, np.float32)
    buf = alloc_buffer(ctx, ROW, np.float32)
    at = ctx.block_idx * ROW
    duplicate(ctx, acc, 0.0, ROW)
    data_copy(ctx, y, at, acc, 0, ROW)
    for _ in range(2):
        data_copy(ctx, acc, 0, y, at, ROW)
        data_copy(ctx, buf, 0, x, at, ROW)
        an.kernels.add(ctx, acc, acc, buf, ROW)
        data_copy(ctx, y, at, acc, 0, ROW)


@an.kernel
def reads_past_what_it_wrote(ctx, x, y, written, rows, stride):
    buf = alloc_buffer(ctx, 4 * ROW, np.float32)
    data_copy(ctx, buf, 0, x, 0, written)
    data_copy_pad(ctx, y, 0, buf, 0, 1, written * 4, 0, 0)
    # rows of 8 elements, ``stride`` bytes apart in GM
    data_copy_pad(ctx, buf, 0, y, 0, rows, 32, stride - 32, 0)


@an.kernel(outputs=("y",))
def exchanges_through_a_fresh_output(ctx, x, y):
    buf = alloc_buffer(ctx, ROW, np.float32)
    at = ctx.block_idx * ROW
    data_copy(ctx, buf, 0, x, at, ROW)
    data_copy(ctx, y, at, buf, 0, ROW)
    sync_all(ctx)
    other = ((ctx.block_idx + 1) % ctx.block_num) * ROW
    data_copy(ctx, buf, 0, y, other, ROW)  # written by another lane before the barrier: initialized
    sync_all(ctx)
    data_copy(ctx, y, at, buf, 0, ROW)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_reading_a_fresh_output_before_any_lane_wrote_it_is_caught(interpret):
    x = np.arange(3 * ROW, dtype=np.float32)
    y = an.empty(3 * ROW, np.float32)
    before = y.tobytes()
    with pytest.raises(an.KernelCheckError) as caught:
        accumulates_into_output_assumed_zero.launch(x, y, block_dim=3, checked=True, interpret=interpret)
    err = caught.value
    assert (err.lane, err.primitive, err.operand, err.rule) == (0, "DataCopy", "src", "gm-read-unwritten-output")
    assert err.details == {"tensor": "y (argument 1)", "byte": 0}
    assert "byte 0 of a fresh output was read before any lane of this launch wrote it" in str(err)
    assert y.tobytes() == before


def test_the_same_kernel_on_an_initialized_output_is_clean():
    x = np.arange(3 * ROW, dtype=np.float32)
    y = np.zeros(3 * ROW, np.float32)
    accumulates_into_output_assumed_zero.launch(x, y, block_dim=3, checked=True)
    assert np.array_equal(y, x)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_a_fresh_output_the_kernel_zeroes_first_is_clean(interpret):
    x = np.arange(3 * ROW, dtype=np.float32)
    y = an.empty(3 * ROW, np.float32)
    zeroes_its_output_then_accumulates.launch(x, y, block_dim=3, checked=True, interpret=interpret)
    assert np.array_equal(y, 2 * x)


@pytest.mark.parametrize("written, rows, stride, byte", [
    (40, 1, 32, None),          # reads what it wrote (part of a granule)
    (40, 6, 32, 160),           # a gapless read past it: the first unwritten byte
    (64 * 3, 24, 32, None),     # whole granules written, read back
    (64 * 3, 26, 32, 768),      # one block past them
    (64 * 3, 3, 256, None),     # strided rows, each inside what was written
    (40, 3, 96, 192),           # strided rows: the third starts past it
])
def test_the_first_unwritten_byte_read_is_named(written, rows, stride, byte):
    x = np.arange(4 * ROW, dtype=np.float32)
    y = an.empty(4 * ROW, np.float32)
    if byte is None:
        reads_past_what_it_wrote.launch(x, y, written, rows, stride, block_dim=1, checked=True)
        return
    with pytest.raises(an.KernelCheckError) as caught:
        reads_past_what_it_wrote.launch(x, y, written, rows, stride, block_dim=1, checked=True)
    assert (caught.value.rule, caught.value.details["byte"]) == ("gm-read-unwritten-output", byte)


def test_bytes_written_before_a_sync_all_are_initialized():
    x = np.arange(4 * ROW, dtype=np.float32)
    y = an.empty(4 * ROW, np.float32)
    exchanges_through_a_fresh_output.launch(x, y, block_dim=4, checked=True)
    assert np.array_equal(y, np.roll(x, -ROW))


def test_a_fresh_buffer_is_fresh_until_its_first_launch():
    y = an.empty(3 * ROW, np.float32)
    z = an.empty(8, np.int8)
    assert take_fresh((y[ROW:], 5, np.zeros(3))) == (0,)
    assert take_fresh((y, z, z)) == (1, 2)  # aliases of one buffer: all fresh
    assert take_fresh((z,)) == ()
    x = np.arange(3 * ROW, dtype=np.float32)
    y = an.empty(3 * ROW, np.float32)
    zeroes_its_output_then_accumulates.launch(x, y, block_dim=3)  # its bytes are the kernel's now
    accumulates_into_output_assumed_zero.launch(x, y, block_dim=3, checked=True)
    assert np.array_equal(y, 3 * x)


def test_an_ops_own_outputs_are_fresh_in_its_checked_launch(monkeypatch):
    from ascend_numba.checked import run

    tables = []
    gm_regions = run.gm_regions

    def spy(*args, **kwargs):
        table, regions, maps = gm_regions(*args, **kwargs)
        tables.append([(m.name, int(row["fresh"])) for m, row in zip(regions, table)])
        return table, regions, maps

    monkeypatch.setattr(run, "gm_regions", spy)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert np.array_equal(an.tile(x, (2, 3), checked=True), np.tile(x, (2, 3)))
    fresh = dict(tables[-1])
    assert sorted(fresh.values()) == [0, 1] and fresh[next(n for n in fresh if n.startswith("x"))] == 0
