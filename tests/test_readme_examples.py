"""The README's examples run: every ``python`` block executes, in order, in one namespace per
file (a session, as a reader would type them), in a scratch directory; a block followed by a
plain block marked ``<!-- example: output -->`` prints exactly that (``...`` stands for any lines).
A ``python``, ``sh`` or ``console`` block that cannot run here is marked right above its fence
with ``<!-- example: excerpt: why -->`` (a piece of a larger file, a command this machine or CI
should not run), and the reason must be given: nothing is skipped silently."""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md"]
_FENCE = re.compile(r"^```(\w*)\s*$")
_MARK = re.compile(r"^<!-- example: (excerpt|output)(?:: (.*?))? -->$")


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    code: str
    mark: str | None
    reason: str | None


def blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start = i
        i += 1
        while i < len(lines) and lines[i] != "```":
            i += 1
        mark = _MARK.match(lines[start - 1]) if start else None
        out.append(Block(path, start + 1, fence.group(1), "\n".join(lines[start + 1:i]) + "\n",
                         mark.group(1) if mark else None, (mark.group(2) or "").strip() if mark else None))
        i += 1
    return out


ALL = [b for path in FILES for b in blocks(path)]
CODE = [b for b in ALL if b.lang in ("python", "sh", "console")]


@pytest.mark.parametrize("block", CODE, ids=[f"{b.path.name}:{b.line}" for b in CODE])
def test_every_example_runs_or_says_why_not(block):
    if block.mark == "excerpt":
        assert block.reason, f"{block.path.name}:{block.line}: an excerpt must say why it does not run"
    else:
        assert block.lang == "python" and block.mark is None, (
            f"{block.path.name}:{block.line}: a {block.lang} block must run (python) or be marked "
            "<!-- example: excerpt: why -->")


def _matches(shown: str, printed: str) -> bool:
    """``printed`` lines against ``shown`` ones, a ``...`` line matching any lines."""
    pattern = "\n".join(".*?" if line.strip() == "..." else re.escape(line) for line in shown.strip().splitlines())
    return re.fullmatch(pattern, printed.strip(), re.S) is not None


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_the_python_examples_run_and_print_what_they_show(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    items = blocks(path)
    ran = 0
    for k, block in enumerate(items):
        if block.lang != "python" or block.mark == "excerpt":
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block.code, f"{path.name}:{block.line}", "exec"), namespace)  # noqa: S102 - the docs' code
        ran += 1
        shown = items[k + 1] if k + 1 < len(items) and items[k + 1].mark == "output" else None
        if shown is not None:
            assert _matches(shown.code, printed.getvalue()), (
                f"{path.name}:{block.line} printed:\n{printed.getvalue()}\nthe README shows:\n{shown.code}")
    assert ran > 0
