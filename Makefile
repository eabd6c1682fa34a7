# privamp — two commands do all the set-up (see README.md):
#   make demo   create .venv/ if missing, install privamp (+ plots), run the main job
#   make test   create .venv/ if missing, install privamp (+ test, plots, torch, dask extras), run ruff and pytest
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

# the test stamp also installs plots, torch (the CPU build, pinned in pyproject.toml) and dask so
# that the DataLoader tests of the torch batch sampler and the LocalCluster sweep tests run in CI
$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test,plots,torch,dask]'
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

# the benchmarks' own virtualenv, so the peers never enter the test venv: privamp editable with
# the bench extra (dp-accounting, prv-accountant), plots (the figure), torch (pinned to the
# locally available CPU build by the torch extra, as in .venv: no CUDA wheels) and Opacus
BENCH_VENV := .venv-bench
BENCH_PY := $(BENCH_VENV)/bin/python
# BENCH_QUICK=1: a small subset in < 2 min (writes paths-quick.{md,png,json}); see
# benchmarks/README.md for BENCH_TIMEOUT, BENCH_REPEAT and BENCH_MEM_GIB
BENCH_QUICK ?=

$(BENCH_PY):
	$(PYTHON) -m venv $(BENCH_VENV)
	echo '*' > $(BENCH_VENV)/.gitignore
	$(BENCH_PY) -m pip install --quiet --upgrade pip

$(BENCH_VENV)/.installed-bench: pyproject.toml | $(BENCH_PY)
	$(BENCH_PY) -m pip install --quiet -e '.[bench,plots,torch]' 'opacus>=1.5,<2'
	touch $@

bench: $(BENCH_VENV)/.installed-bench
	BENCH_QUICK=$(BENCH_QUICK) $(BENCH_PY) benchmarks/bench_paths.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache .hypothesis
