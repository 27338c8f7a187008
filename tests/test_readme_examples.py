"""The README's and the docs' examples run: every ``python`` block executes, in order, in one
namespace per file (a session, as a reader would type them), in a scratch directory; every ``sh``
block runs line by line in a shell there (``examples/`` linked in, the project's ``ascend-numba``
on the path) and each command must succeed; a block followed by a plain block marked
``<!-- example: output -->`` prints exactly that (``...`` stands for any lines).  A block that
cannot run here is marked right above its fence with ``<!-- example: excerpt: why -->`` (a piece
of a larger file, a command this machine or CI should not run), and the reason must be given:
nothing is skipped silently."""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
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
RUNNABLE = sorted({b.path for b in CODE if b.lang == "python" and b.mark is None})
SHELL = [b for b in CODE if b.lang == "sh" and b.mark is None]


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("block", CODE, ids=[f"{_name(b.path)}:{b.line}" for b in CODE])
def test_every_example_runs_or_says_why_not(block):
    if block.mark == "excerpt":
        assert block.reason, f"{block.path.name}:{block.line}: an excerpt must say why it does not run"
    else:
        assert block.lang in ("python", "sh") and block.mark is None, (
            f"{block.path.name}:{block.line}: a {block.lang} block must run (python, sh) or be marked "
            "<!-- example: excerpt: why -->")


@pytest.mark.parametrize("block", SHELL, ids=[f"{_name(b.path)}:{b.line}" for b in SHELL])
def test_the_shell_examples_run(block, tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for line in block.code.splitlines():
        command = line.split("#")[0].strip()
        if command:
            done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, f"{_name(block.path)}:{block.line}: {command}\n{done.stdout}{done.stderr}"


def _matches(shown: str, printed: str) -> bool:
    """``printed`` lines against ``shown`` ones, a ``...`` line matching any lines."""
    pattern = "\n".join(".*?" if line.strip() == "..." else re.escape(line) for line in shown.strip().splitlines())
    return re.fullmatch(pattern, printed.strip(), re.S) is not None


def test_the_readme_and_the_pages_have_examples_that_run():
    assert ROOT / "README.md" in RUNNABLE and len(RUNNABLE) >= 3


def test_the_readme_stays_short_and_modules_stay_readable():
    """The README is at most 250 lines (tables and analyses live on the pages it links), and no
    module of the package grows past 650 lines (fusion.py was 710 before it was split)."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
    long = {p.name: n for p in (ROOT / "ascend_numba").rglob("*.py") if (n := len(p.read_text().splitlines())) > 650}
    assert not long, long


@pytest.mark.parametrize("path", RUNNABLE, ids=[_name(p) for p in RUNNABLE])
def test_the_python_examples_run_and_print_what_they_show(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    items = blocks(path)
    for k, block in enumerate(items):
        if block.lang != "python" or block.mark == "excerpt":
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block.code, f"{path.name}:{block.line}", "exec"), namespace)  # noqa: S102 - the docs' code
        shown = items[k + 1] if k + 1 < len(items) and items[k + 1].mark == "output" else None
        if shown is not None:
            assert _matches(shown.code, printed.getvalue()), (
                f"{path.name}:{block.line} printed:\n{printed.getvalue()}\nthe page shows:\n{shown.code}")


# ---- the commands the pages show are the CLI's, and the public API documents itself ----------------

_COMMAND = re.compile(r"(?:^|\$ )ascend-numba ((?:[a-z][a-z-]* ?)+)(.*)$")


def _shown_commands():
    for block in ALL:
        for line in block.code.splitlines():
            found = _COMMAND.search(line.strip())
            if found:
                yield block, found.group(1).split(), re.findall(r"--[a-z][a-z-]*", found.group(2))


def test_every_command_and_option_the_pages_show_exists():
    import click

    from ascend_numba.cli import main

    shown = list(_shown_commands())
    assert len(shown) > 10
    for block, words, options in shown:
        command = main
        for word in words:
            if not isinstance(command, click.Group) or word not in command.commands:
                break
            command = command.commands[word]
        assert command is not main, f"{_name(block.path)}:{block.line}: no command {' '.join(words)!r}"
        known = {opt for param in command.params for opt in getattr(param, "opts", [])} | {"--help"}
        for option in options:
            assert option in known, f"{_name(block.path)}:{block.line}: {command.name} has no {option}"


def test_the_public_api_is_documented():
    import inspect

    import ascend_numba as an
    import ascend_numba.kernels as kernels
    from ascend_numba.cli import main

    missing = []
    for module, names in ((an, an.__all__), (kernels, kernels.__all__)):
        for name in names:
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not (obj.__doc__ or "").strip():
                missing.append(f"{module.__name__}.{name}")
            elif hasattr(obj, "py_func") and not (obj.py_func.__doc__ or "").strip():
                missing.append(f"{module.__name__}.{name}")

    def walk(command, path):
        if not (command.help or "").strip():
            missing.append(f"ascend-numba {path}")
        for sub_name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {sub_name}".strip())

    walk(main, "")
    assert missing == []
