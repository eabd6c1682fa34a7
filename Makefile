# privamp — two commands do all the set-up (see README.md):
#   make demo   create .venv/ if missing, install privamp (+ plots), run the main job
#   make test   create .venv/ if missing, install privamp (+ test, plots, torch, dask extras), run ruff and pytest
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_OUT ?= demo-output

.PHONY: demo test lint clean

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

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache .hypothesis
