# One virtual environment, made on first use; every target below sets it up first.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed

.PHONY: setup demo test bench bench-torch clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/ascend-numba golden examples/cases.yaml --out out/golden

# Whole test files per worker, one worker per core: compiling the kernels is most of the run.
test: setup
	$(PY) -m pytest -q -n auto --dist loadfile

bench: setup
	$(PY) -m pytest bench --benchmark-only --benchmark-columns=median,iqr,rounds --benchmark-sort=name -q

# Optional comparisons against PyTorch (CPU build, from the machine's wheel cache or PyPI).
bench-torch: setup
	$(PY) -m pip install -q 'torch==2.13.0'
	$(MAKE) bench

clean:
	rm -rf $(VENV) .pytest_cache .benchmarks .hypothesis out
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
