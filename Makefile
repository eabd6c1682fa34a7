# privamp — two commands do all the set-up (see README.md):
#   make demo   create .venv/ if missing, install privamp (+ plots), run the main job
#   make test   create .venv/ if missing, install privamp (+ test, plots, torch, dask, opacus,
#               dp_accounting extras), run ruff and pytest
#   make bench  create .venv-bench/ if missing (privamp + the peers), regenerate benchmarks/results/paths.{md,png}
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_OUT ?= demo-output

.PHONY: demo test lint clean bench

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-plots: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[plots]'
	touch $@

# constraints only CI needs (the local CPU build of torch), kept out of the user metadata
CONSTRAINTS := .ci/constraints.txt

# the test stamp also installs plots, torch, dask, opacus and dp_accounting so that the DataLoader
# tests of the torch batch sampler, the LocalCluster sweep tests and the integration tests run
# against the real libraries in CI
$(VENV)/.installed-test: pyproject.toml $(CONSTRAINTS) | $(PY)
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e '.[test,plots,torch,dask,opacus,dp_accounting]'
	touch $@

demo: $(VENV)/.installed-plots
	$(PY) examples/demo.py --out $(DEMO_OUT)

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check src tests examples benchmarks scripts

# property tests run derandomized (the `ci` hypothesis profile of tests/conftest.py), so that
# `make test` here and in CI draw the same examples; `HYPOTHESIS_PROFILE=default make test`
# explores new random ones
HYPOTHESIS_PROFILE ?= ci
# the suite runs on every core (pytest-xdist; CI has 2): `make test PYTEST_WORKERS=0` runs it in
# one process
PYTEST_WORKERS ?= auto
test: lint
	HYPOTHESIS_PROFILE=$(HYPOTHESIS_PROFILE) $(PY) -m pytest -n $(PYTEST_WORKERS)

# the benchmarks' own virtualenv: privamp editable with the bench extra (dp-accounting,
# prv-accountant), plots (the figure) and opacus (with torch held to the local CPU build by
# .ci/constraints.txt, as in .venv: no CUDA wheels)
BENCH_VENV := .venv-bench
BENCH_PY := $(BENCH_VENV)/bin/python
# BENCH_QUICK=1: a small subset in < 2 min (writes paths-quick.{md,png,json}); see
# benchmarks/README.md for BENCH_TIMEOUT, BENCH_REPEAT and BENCH_MEM_GIB
BENCH_QUICK ?=

$(BENCH_PY):
	$(PYTHON) -m venv $(BENCH_VENV)
	echo '*' > $(BENCH_VENV)/.gitignore
	$(BENCH_PY) -m pip install --quiet --upgrade pip

$(BENCH_VENV)/.installed-bench: pyproject.toml $(CONSTRAINTS) | $(BENCH_PY)
	$(BENCH_PY) -m pip install --quiet -c $(CONSTRAINTS) -e '.[bench,plots,opacus]'
	touch $@

bench: $(BENCH_VENV)/.installed-bench
	BENCH_QUICK=$(BENCH_QUICK) $(BENCH_PY) benchmarks/bench_paths.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache .hypothesis
