"""mkdocs hook: ``<!-- primitives-table -->`` in a page becomes the table of every primitive,
built from its declaration (``ascend_numba.host.primitives``), so the docs list what exists."""

from __future__ import annotations

from ascend_numba.host.primitives import PRIMITIVES, TENSOR_ROLES

MARKER = "<!-- primitives-table -->"


def table() -> str:
    rows = ["| Primitive | Device | Operands after `ctx` | Checked by | What it does |",
            "|---|---|---|---|---|"]
    for name, p in PRIMITIVES.items():
        operands = ", ".join(f"**{r}**" if r in TENSOR_ROLES else r for r in p.operands)
        rows.append(f"| `{name}` | {p.device} | {operands} | `{p.rule}` | {p.doc} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return markdown.replace(MARKER, table()) if MARKER in markdown else markdown
