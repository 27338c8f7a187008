"""The kernel linter (seed 003's AUTO-mode rules): a corpus of broken kernels, each reported with
its code and line, clean kernels with no finding, the rules each mode applies, and the three ways
in (an.lint, the CLI, the decorator)."""

from __future__ import annotations

import pathlib
import textwrap
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import import_source
from numba import njit

import ascend_numba as an
from ascend_numba.cli import main
from ascend_numba.kernels import alloc_buffer, data_copy, muls
from ascend_numba.lint import RULES, lint_function, lint_source

ROOT = pathlib.Path(__file__).resolve().parents[1]

HEADER = "IO = constant('IO')\n"

# name -> (kernel source, the code expected, the line it is on within the source).
BROKEN = {
    "guard-on-data": ("""
@kernel(mode="auto")
def k(ctx, x, y, flags):
    buf = alloc_buffer(ctx, 64, np.float32)
    for t in range(8):
        if t == flags[0]:                      # line 6
            data_copy(ctx, buf, 0, x, t * 64, 64)
        data_copy(ctx, y, t * 64, buf, 0, 64)
""", "PTO201", 6),
    "unhoisted-condition": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    buf = alloc_buffer(ctx, 64, np.float32)
    for t in range(8):
        last = t == 7
        for s in range(4):
            if last:                           # line 8
                muls(ctx, buf, buf, 2.0, 16)
""", "PTO202", 8),
    "compound-guard": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    buf = alloc_buffer(ctx, 64, np.float32)
    if n > 16 and ctx.block_idx == 0:          # line 5
        data_copy(ctx, buf, 0, x, 0, 64)
        data_copy(ctx, y, 0, buf, 0, 64)
""", "PTO203", 5),
    "ping-pong-slot": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    buf = alloc_buffer(ctx, 128, np.float32)
    slot = 0
    for t in range(8):
        data_copy(ctx, buf, slot * 64, x, t * 64, 64)
        data_copy(ctx, y, t * 64, buf, slot * 64, 64)
        slot ^= 1                              # line 9
""", "PTO204", 9),
    "queue-depth-two": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    q = alloc_buffer(ctx, 2 * 64, np.float32)  # line 4
    data_copy(ctx, q, 0, x, 0, 64)
    data_copy(ctx, y, 0, q, 0, 64)
""", "PTO204", 4),
    "alias-in-loop": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    buf = alloc_buffer(ctx, 128, np.float32)
    for t in range(2):
        view = buf[t * 64:]                    # line 6
        data_copy(ctx, view, 0, x, t * 64, 64)
        data_copy(ctx, y, t * 64, view, 0, 64)
""", "PTO301", 6),
    "alias-retargeted": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    v = reinterpret(a, np.uint32)
    v = reinterpret(b, np.uint32)              # line 7
    data_copy(ctx, v, 0, x, 0, 64)
    data_copy(ctx, y, 0, v, 0, 64)
""", "PTO302", 7),
    "alloc-in-loop": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    for t in range(4):
        buf = alloc_buffer(ctx, 64, np.float32)  # line 5
        data_copy(ctx, buf, 0, x, t * 64, 64)
        data_copy(ctx, y, t * 64, buf, 0, 64)
""", "PTO303", 5),
    "alloc-after-copy": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    b = alloc_buffer(ctx, 64, np.float32)      # line 6
    muls(ctx, b, a, 2.0, 64)
    data_copy(ctx, y, 0, b, 0, 64)
""", "PTO303", 6),
    "alloc-twice": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    a = alloc_buffer(ctx, 32, np.float32)      # line 5
    data_copy(ctx, a, 0, x, 0, 32)
    data_copy(ctx, y, 0, a, 0, 32)
""", "PTO303", 5),
    "subtile-past-parent": ("""
@kernel
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    tail = a[32:96]                            # line 5
    data_copy(ctx, tail, 0, x, 0, 64)
    data_copy(ctx, y, 0, tail, 0, 64)
""", "PTO304", 5),
    "load-into-destination": ("""
@kernel(mode="auto")
def k(ctx, x, y, n):
    src = alloc_buffer(ctx, 64, np.float32)
    dst = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, dst, 0, y, 0, 64)           # line 6
    data_copy(ctx, src, 0, x, 0, 64)
    muls(ctx, dst, src, 2.0, 64)
    data_copy(ctx, y, 0, dst, 0, 64)
""", "PTO401", 6),
    "raw-index-write": ("""
@kernel
def k(ctx, x, y, n):
    buf = alloc_buffer(ctx, 64, np.float32)
    buf[0] = 1.0                               # line 5
    data_copy(ctx, y, 0, buf, 0, 64)
""", "PTO402", 5),
    "raw-index-read": ("""
@kernel
def k(ctx, x, y, n):
    buf = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, buf, 0, x, 0, 64)
    first = buf[3]                             # line 6
    muls(ctx, buf, buf, first, 64)
    data_copy(ctx, y, 0, buf, 0, 64)
""", "PTO402", 6),
    "load-into-a-program-destination": ("""
@vector_program
def scale(x, o, a):
    o = muls(x, a)

@kernel(mode="auto")
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    data_copy(ctx, b, 0, y, 0, 64)             # line 11: the program only writes b
    scale(ctx, 64, True, a, b, 2.0)
    data_copy(ctx, y, 0, b, 0, 64)
""", "PTO401", 11),
    "numpy-on-a-tile": ("""
@kernel
def k(ctx, x, y, n):
    buf = alloc_buffer(ctx, 64, np.float32)
    buf.fill(0.0)                              # line 5
    data_copy(ctx, y, 0, buf, 0, 64)
""", "PTO402", 5),
}

CLEAN = {
    "single-buffer-auto": """
@kernel(mode="auto")
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    for t in range(n // 64):
        if t == 0:
            data_copy(ctx, b, 0, x, 0, 64)
        data_copy(ctx, a, 0, x, t * 64, 64)
        add(ctx, b, b, a, 64)
    data_copy(ctx, y, 0, b, 0, 64)
""",
    "named-bool-and-alias-at-init": """
@kernel(mode="auto")
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    bits = reinterpret(a, np.uint32)
    head = a[0:32]
    ok = n > 16 and ctx.block_idx == 0
    if ok:
        data_copy(ctx, a, 0, x, 0, 64)
        muls(ctx, head, head, 2.0, 32)
        data_copy(ctx, y, 0, bits, 0, 64)
""",
    "loads-a-program-reads": """
@vector_program(temps=("t",))
def axpy(x, y, o, t, a):
    t = muls(x, a)
    o = add(t, y)

@kernel(mode="auto")
def k(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    t = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    data_copy(ctx, b, 0, y, 0, 64)
    axpy(ctx, 64, True, a, b, b, t, 2.0)
    data_copy(ctx, y, 0, b, 0, 64)
""",
    "loads-in-exclusive-branches": """
@kernel(mode="auto")
def k(ctx, x, y, z, n):
    a = alloc_buffer(ctx, 64, np.float32)
    b = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    if n == 64:
        data_copy(ctx, b, 0, y, 0, 64)
    else:
        data_copy(ctx, b, 0, x, 0, 64)
    add(ctx, a, a, b, 64)
    data_copy(ctx, z, 0, a, 0, 64)
""",
    "constant-branches-at-init": """
@kernel
def k(ctx, x, y, n):
    if IO == 1:
        t = alloc_buffer(ctx, 64, np.float32)
    else:
        t = alloc_buffer(ctx, 64, np.uint16)
    data_copy(ctx, t, 0, x, 0, 64)
    data_copy(ctx, y, 0, t, 0, 64)
""",
}


def _lint(source, mode=None):
    return lint_source(HEADER + textwrap.dedent(source), "k.py", mode, line_offset=0)


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_kernel_is_reported_with_its_code_and_line(name):
    source, code, line = BROKEN[name]
    found = _lint(source)
    assert [(f.code, f.line) for f in found] == [(code, line + 1)], "\n".join(map(str, found))  # +1: HEADER
    assert str(found[0]).startswith(f"k.py:{line + 1}:") and RULES[code][0] in str(found[0])


@pytest.mark.parametrize("name", list(CLEAN))
def test_clean_kernel_has_no_finding(name):
    assert _lint(CLEAN[name]) == []


@pytest.mark.parametrize("name", list(BROKEN))
def test_manual_mode_applies_only_the_rules_of_both_modes(name):
    source, code, line = BROKEN[name]
    found = [(code, line + 1)]
    assert [(f.code, f.line) for f in _lint(source, mode="auto")] == found
    assert [(f.code, f.line) for f in _lint(source, mode="manual")] == (found if "manual" in RULES[code][1] else [])


def test_the_rules_of_each_mode_are_the_documented_ones():
    """Every rule is AUTO mode's; a manual kernel keeps 3.2 and 4.2 (docs/kernels/rules.md's table)."""
    assert {code for code, (_, modes, _) in RULES.items() if "manual" in modes} == {"PTO304", "PTO402"}
    assert all("auto" in modes for _, modes, _ in RULES.values())
    rows = [line.split(" | ") for line in (ROOT / "docs/kernels/rules.md").read_text().splitlines()
            if line.startswith("| PTO")]
    assert {row[0].lstrip("| "): row[2] for row in rows} == {
        code: "both" if "manual" in modes else "auto" for code, (_, modes, _) in RULES.items()}


# The Ascend C samples' static LocalMemAllocator style: a UB tensor is bound where the sample first
# needs it, after the lane's first DataCopy (issue #49 item 3).
ADD_CUSTOM = """import numpy as np

import ascend_numba as an
from ascend_numba.kernels import add, alloc_buffer, data_copy, kernel


{decorator}
def add_custom(ctx, x, y, z, n):
    src0_local = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, src0_local, 0, x, 0, 64)
    src1_local = alloc_buffer(ctx, 64, np.float32)  # line 11
    data_copy(ctx, src1_local, 0, y, 0, 64)
    dst_local = alloc_buffer(ctx, 64, np.float32)  # line 13
    add(ctx, dst_local, src0_local, src1_local, 64)
    data_copy(ctx, z, 0, dst_local, 0, 64)
"""


def _add_custom(tmp_path, decorator):
    """The file holding ADD_CUSTOM under ``decorator``, and its kernel (imported from it)."""
    path = tmp_path / "add_custom.py"
    return path, import_source(path, ADD_CUSTOM.format(decorator=decorator)).add_custom


@pytest.mark.parametrize("decorator", ["@kernel", "@an.kernel", '@an.kernel(outputs=("z",))'])
def test_a_manual_kernel_may_bind_a_tile_after_its_first_data_copy(tmp_path, decorator):
    """3.3 (tiles bound at Init) is AUTO mode's: a manual kernel places its own tiles."""
    path, k = _add_custom(tmp_path, decorator)
    assert k.mode == "manual"
    assert lint_function(k.py_func, k.mode) == [] and an.lint(k) == []
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert (result.exit_code, result.output) == (0, "")


@pytest.mark.parametrize("decorator", ['@kernel(mode="auto", strict=False)', '@an.kernel(mode="auto", strict=False)'])
def test_an_auto_kernel_binding_a_tile_after_its_first_data_copy_breaks_3_3(tmp_path, decorator):
    with pytest.warns(UserWarning, match="PTO303"):
        path, k = _add_custom(tmp_path, decorator)
    assert k.mode == "auto"
    assert [(f.code, f.line) for f in lint_function(k.py_func, k.mode)] == [("PTO303", 11), ("PTO303", 13)]
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{path}:{line}:5: PTO303 tile '{name}' bound after the lane's first data movement: a tile's UB is bound "
        "once, at Init (3.3)" for line, name in ((11, "src1_local"), (13, "dst_local"))]


def test_every_rule_has_a_broken_kernel():
    assert {code for _, code, _ in BROKEN.values()} == set(RULES)


def test_shipped_kernels_and_examples_are_clean_in_manual_mode():
    """The kernels shipped (every op's kernel.py) and the examples break no rule of their mode."""
    files = sorted(ROOT.joinpath("ascend_numba").rglob("*.py")) + sorted(ROOT.joinpath("examples").glob("*.py"))
    found = [f for p in files for f in an.lint(p)]
    assert found == [], "\n".join(map(str, found))


def test_adamw_breaks_the_auto_rules_it_should():
    """ApplyAdamW double-buffers by hand (2.4): right for manual mode, what an AUTO kernel would
    have to give up.  Its loads all feed the vector programs that read them (no 4.1)."""
    codes = {f.code for f in an.lint(ROOT / "ascend_numba/ops/adamw/kernel.py", mode="auto")}
    assert codes == {"PTO204"}


def test_cli_prints_findings_and_exits_non_zero(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(HEADER + textwrap.dedent(BROKEN["raw-index-write"][0]))
    good = tmp_path / "good.py"
    good.write_text(HEADER + textwrap.dedent(CLEAN["single-buffer-auto"]))
    result = CliRunner().invoke(main, ["lint", str(bad), str(good)])
    assert result.exit_code == 1
    assert result.output.strip() == f"{bad}:6:5: PTO402 'buf' indexed directly: read and write UB tiles through " \
                                    "primitives (GetValue, SetValue, DataCopy, vector ops) (4.2)"
    assert CliRunner().invoke(main, ["lint", str(good)]).exit_code == 0


def _auto_ping_pong(ctx, x, y, n):
    buf = alloc_buffer(ctx, 128, np.float32)
    slot = 0
    for t in range(n // 64):
        data_copy(ctx, buf, slot * 64, x, t * 64, 64)
        data_copy(ctx, y, t * 64, buf, slot * 64, 64)
        slot ^= 1


def _auto_clean(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    muls(ctx, a, a, 2.0, 64)
    data_copy(ctx, y, 0, a, 0, 64)


def test_an_auto_kernel_is_linted_when_decorated():
    with pytest.raises(an.KernelRuleError) as caught:
        an.kernel(_auto_ping_pong, mode="auto")
    assert [f.code for f in caught.value.findings] == ["PTO204"]
    assert "test_lint.py" in str(caught.value) and "slot" in str(caught.value)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        k = an.kernel(_auto_ping_pong, mode="auto", strict=False)
    assert len(seen) == 1 and "PTO204" in str(seen[0].message)
    assert k.mode == "auto" and an.lint(k)[0].code == "PTO204"
    clean = an.kernel(_auto_clean, mode="auto")
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    clean.launch(x, y, 64, block_dim=1, checked=True)
    assert np.array_equal(y, 2 * x) and an.lint(clean) == []
    with pytest.raises(ValueError, match="mode"):
        an.kernel(_auto_clean, mode="automatic")


# ---- the dynamic half: checked launches of AUTO-mode kernels --------------------------------------

def _load_twice(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    for t in range(2):
        data_copy(ctx, a, 0, x, t * 64, 64)  # the first tile's load is overwritten unread
    data_copy(ctx, y, 0, a, 0, 64)


@njit
def _late_tile(ctx):
    return alloc_buffer(ctx, 64, np.float32)


def _tile_bound_late(ctx, x, y, n):
    a = alloc_buffer(ctx, 64, np.float32)
    data_copy(ctx, a, 0, x, 0, 64)
    b = _late_tile(ctx)  # through a helper: the source shows no alloc_buffer here
    muls(ctx, b, a, 2.0, 64)
    data_copy(ctx, y, 0, b, 0, 64)


@pytest.mark.parametrize("func, primitive, rule, details", [
    (_load_twice, "DataCopy", "redundant-load", {"ub_offset": 0, "start": 0, "end": 256}),
    (_tile_bound_late, "alloc_buffer", "tile-rebound", {"end": 512}),
], ids=["redundant-load", "tile-rebound"])
def test_auto_rules_the_source_cannot_show_are_caught_checked(func, primitive, rule, details):
    auto = an.kernel(func, mode="auto")  # statically clean
    assert an.lint(auto) == []
    x, y = np.arange(128, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(an.KernelCheckError) as caught:
        auto.launch(x, y, 128, block_dim=1, checked=True)
    err = caught.value
    assert (err.lane, err.primitive, err.rule, err.details) == (0, primitive, rule, details), str(err)
    assert (y == 0).all()
    # The same kernel in manual mode breaks no rule of its mode.
    an.kernel(func).launch(x, y, 128, block_dim=1, checked=True)
