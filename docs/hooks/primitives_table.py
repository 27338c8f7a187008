"""mkdocs hook: ``<!-- primitives-table -->`` in a page becomes the table of every primitive,
built from its declaration (``ascend_numba.host.primitives``), so the docs list what exists."""

from __future__ import annotations

from ascend_numba.host.device_api import coverage
from ascend_numba.host.primitives import PRIMITIVES, TENSOR_ROLES

MARKER = "<!-- primitives-table -->"
COVERAGE = "<!-- vector-api-coverage -->"


def table() -> str:
    rows = ["| Primitive | Device | Operands after `ctx` | Checked by | What it does |",
            "|---|---|---|---|---|"]
    for name, p in PRIMITIVES.items():
        operands = ", ".join(f"**{r}**" if r in TENSOR_ROLES else r for r in p.operands)
        rule = f"`{p.rule}`" if p.rule else "-"
        rows.append(f"| `{name}` | {p.device} | {operands} | {rule} | {p.doc} |")
    return "\n".join(rows)


def coverage_table() -> str:
    rows = coverage()
    done = sum(len(d) for _, d, _ in rows)
    total = sum(len(d) + len(m) for _, d, m in rows)
    lines = [f"{done} of the {total} instructions are declared.", "",
             "| family | declared | not yet |", "|---|---|---|"]
    lines += [f"| {family} | {', '.join(d) or '-'} | {', '.join(m) or '-'} |" for family, d, m in rows]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return markdown.replace(MARKER, table()).replace(COVERAGE, coverage_table())
