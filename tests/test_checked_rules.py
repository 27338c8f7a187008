"""Checked mode's rules as records (ascend_numba.checked.rules): the documentation, the compiled
reporters and the host's messages all come from them."""

import inspect
import pathlib

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.checked import report, rules
from ascend_numba.checked.messages import decode_violation

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_docs_rules_table_is_the_records():
    page = (ROOT / "docs/guide/ops.md").read_text()
    assert rules.rules_table() in page, "docs/guide/ops.md: replace its rules table with rules.rules_table()"


def test_every_rule_name_is_documented_once_and_every_form_reported():
    documented = [r.name for r in rules.RULES if r.doc is not None]
    assert len(documented) == len(set(documented))
    assert {r.name for r in rules.RULES} == set(documented)  # a form without a doc follows a documented rule
    for ident, rule in rules.REPORTED.items():
        stub = getattr(report, ident)
        assert list(inspect.signature(stub).parameters) == ["ctx", "prim", "operand", *rule.details]


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
