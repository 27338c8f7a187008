"""The supported-version matrix (``make test-compat``): the compat subset of the suite on the
lowest and the highest supported version of every dependency and of Python.

* ``compat-lowest``: Python 3.10 with every runtime dependency at the lowest version
  pyproject.toml allows.
* ``compat-highest``: Python 3.13 with the newest release of each allowed.

The subset compiles every kernel family in every mode (plain, traced, checked) at least once: the
registry (every op, case, dtype and mode against its NumPy reference), the half-precision
conversions, the launch path, checked mode's corpus and the version checks and fallbacks.  Each
session has its own empty ``NUMBA_CACHE_DIR`` and writes its installed versions, result and wall
time to ``.nox/compat-<name>.json``.
"""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
import time

import nox
from packaging.requirements import Requirement


def _lowest(requirement: str) -> str:
    """``name==X`` for a requirement ``name>=X,...``: the lowest version its range allows."""
    req = Requirement(requirement)
    floor = next((spec.version for spec in req.specifier if spec.operator == ">="), None)
    if floor is None:
        raise ValueError(f"pyproject.toml: {requirement!r} has no lower bound (>=) to test")
    return f"{req.name}=={floor}"


# The runtime dependencies as pyproject.toml declares them: installed with --upgrade, each range's
# newest release; pinned to its lower bound, its oldest.
REQUIREMENTS = nox.project.load_toml("pyproject.toml")["project"]["dependencies"]
LOWEST = [_lowest(r) for r in REQUIREMENTS]
HIGHEST = REQUIREMENTS
SUBSET = ["tests/test_registry.py", "tests/test_numba_compat.py", "tests/test_half.py", "tests/test_launch.py",
          "tests/test_checked.py", "tests/test_checked_rules.py", "tests/test_interpret.py", "tests/test_primitives.py"]
TEST_TOOLS = ["pytest>=8", "hypothesis>=6.100", "pytest-xdist>=3.5"]

nox.options.sessions = ["compat"]
nox.options.reuse_existing_virtualenvs = True


@nox.session(python=["3.10", "3.13"])
def compat(session):
    pins = LOWEST if session.python == "3.10" else HIGHEST
    name = "lowest" if session.python == "3.10" else "highest"
    session.install("--upgrade", *pins, *TEST_TOOLS)
    session.install("--no-deps", "-e", ".")
    versions = json.loads(session.run(
        "python", "-c", "import json, sys; from importlib.metadata import version as v; "
        "print(json.dumps({'python': sys.version.split()[0], **{p: v(p) for p in "
        "('numba', 'llvmlite', 'numpy', 'ml_dtypes', 'click', 'PyYAML', 'tqdm')}}))", silent=True))
    session.log(f"compat-{name}: {versions}")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        result = "failed"
        try:
            session.run("python", "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider",
                        *SUBSET, *session.posargs, env={"NUMBA_CACHE_DIR": cache})
            result = "passed"
        finally:
            record = {"session": f"compat-{name}", "versions": versions, "result": result,
                      "wall_s": round(time.perf_counter() - start, 1)}
            pathlib.Path(".nox").mkdir(exist_ok=True)
            pathlib.Path(f".nox/compat-{name}.json").write_text(json.dumps(record, indent=1) + "\n")
            session.log(json.dumps(record))
