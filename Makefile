# One virtual environment, made on first use; every target below sets it up first.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed

.PHONY: setup demo test test-compat test-aarch64 docs lint-kernels bench bench-torch bench-compare bench-report warmup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/ascend-numba golden examples/cases.yaml --out out/golden

# The supported-version matrix (noxfile.py): the compat subset on the lowest and the highest
# supported Python and dependencies, each in a venv of its own; results in .nox/compat-*.json.
test-compat: setup
	$(PY) -m pip install -q -e '.[compat]'
	PYENV_VERSION="$$(pyenv versions --bare 2>/dev/null | tr '\n' ':')" $(VENV)/bin/nox

# The ARM run (not CI): this checkout on an arm64 Debian root filesystem under qemu user-mode
# emulation, its op/mode bits compared with this host's (scripts/test-aarch64.sh; needs root).
test-aarch64: setup
	scripts/test-aarch64.sh

# The documentation site (docs/, mkdocs.yml) into site/, strict: a broken link or reference fails.
docs: setup
	$(PY) -m pip install -q -e '.[docs]'
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The shipped kernels and the examples against the kernel rules of their mode (seed 003); the
# suite runs the same check (tests/test_lint.py).
lint-kernels: setup
	$(VENV)/bin/ascend-numba lint ascend_numba examples

# Whole test files per worker, one worker per core: compiling the kernels is most of the run.  Files
# in collection order, the registry tests last (tests/conftest.py): each op's kernels compile once.
test: setup
	$(PY) -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

# Each run is saved (.benchmarks/, with commit and machine) for bench-compare and bench-report.
bench: setup
	$(PY) -m pytest bench --benchmark-only --benchmark-columns=median,iqr,rounds --benchmark-sort=name -q \
		--benchmark-autosave

# The newest saved run against the WINDOW runs before it (or BASE=0003); non-zero when a tracked
# ratio fell more than THRESHOLD below the baseline's lowest.
WINDOW    ?= 3
THRESHOLD ?= 0.15
bench-compare: setup
	$(VENV)/bin/ascend-numba bench-compare --window $(WINDOW) --threshold $(THRESHOLD) $(if $(BASE),--baseline $(BASE))

# A chart of the tracked path speedups and op-vs-NumPy ratios across the saved runs.
bench-report: setup
	$(PY) -m pip install -q -e '.[report]'
	$(VENV)/bin/ascend-numba bench-report --page docs/performance.md --out docs/performance.png --match 'vs per_row' \
		--match 'vs numpy'
	$(VENV)/bin/ascend-numba seed-table

# Compile every kernel specialization ahead of time (a CI image, a container).
warmup: setup
	$(VENV)/bin/ascend-numba warmup --workers 2 --modes plain,traced,checked

# Optional comparisons against PyTorch (CPU build, from the machine's wheel cache or PyPI).
bench-torch: setup
	$(PY) -m pip install -q 'torch==2.13.0'
	$(MAKE) bench

clean:
	rm -rf $(VENV) .pytest_cache .benchmarks .hypothesis out
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
