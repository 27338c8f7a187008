"""The house's layering: host code (``host/`` and each op's ``plan.py``) is plain Python that
knows nothing of Numba or of the compiled side, and nothing below the ops imports back up."""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "ascend_numba"
HOST = sorted([*PACKAGE.joinpath("host").rglob("*.py"), *PACKAGE.glob("ops/*/plan.py"), PACKAGE / "config.py",
               PACKAGE / "dtypes.py"])
COMPILED = sorted(PACKAGE.joinpath("kernels").rglob("*.py"))


def _imports(path: pathlib.Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module.removesuffix(".__init__")
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                names.add(".".join(base + ([node.module] if node.module else [])))
            else:
                names.add(node.module)
    return names


@pytest.mark.parametrize("path", HOST, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_host_code_is_plain_python(path):
    bad = {n for n in _imports(path) if n.split(".")[0] in ("numba", "llvmlite")
           or n.startswith(("ascend_numba.kernels", "ascend_numba.ops.registry"))
           or (n.startswith("ascend_numba.ops.") and not n.endswith(".plan"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", COMPILED, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_compiled_code_imports_no_op(path):
    bad = {n for n in _imports(path) if n.startswith(("ascend_numba.ops", "ascend_numba.golden"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"
