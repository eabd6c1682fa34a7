# privamp — two commands do all the set-up (see README.md):
#   make demo   create .venv/ if missing, install privamp (+ plots), run the main job
#   make test   create .venv/ if missing, install privamp (+ test, plots, torch, dask, opacus,
#               dp_accounting extras), run ruff and pytest
#   make docs   build the documentation site into docs/_build/html (warnings are errors) and run
#               its {doctest} examples and tutorials
#   make bench  create .venv-bench/ if missing (privamp + the peers), regenerate benchmarks/results/paths.{md,png}
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_OUT ?= demo-output

.PHONY: demo test lint clean bench package-check oldest-deps docs

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

$(VENV)/.installed-docs: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[docs]'
	touch $@

# the site (HTML, -W: a warning fails the build; the tutorials are executed by sphinx-gallery),
# then the pages' {doctest} examples; docs/_build/html/index.html is the entry page
docs: $(VENV)/.installed-docs
	$(PY) -m sphinx -b html -W --keep-going -q docs docs/_build/html
	$(PY) -m sphinx -b doctest -W -q docs docs/_build/doctest

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
	HYPOTHESIS_PROFILE=$(HYPOTHESIS_PROFILE) $(PY) -m pytest -n $(PYTEST_WORKERS) --durations=30

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

# the package as users get it: build the sdist and the wheel, install the wheel (not the
# checkout) into a fresh virtualenv and run the command line and the library from it
WHEEL_VENV := .venv-wheel
package-check: $(VENV)/.installed-test
	rm -rf dist $(WHEEL_VENV)
	$(PY) -m pip install --quiet 'build>=1'
	$(PY) -m build --sdist --wheel --outdir dist .
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install --quiet dist/privamp-*.whl
	cd /tmp && $(CURDIR)/$(WHEEL_VENV)/bin/python $(CURDIR)/scripts/smoke_installed.py

# the oldest NumPy the metadata admits (numpy>=2.0), with the oldest SciPy that runs on it, and
# the core's tests (no extras)
OLDEST_VENV := .venv-oldest
OLDEST_TESTS := tests/test_pld.py tests/test_profiles.py tests/test_ledger.py \
	tests/test_rdp_accountant.py tests/test_mechanisms.py tests/test_amplification.py \
	tests/test_cli_accounting.py
oldest-deps: pyproject.toml
	test -x $(OLDEST_VENV)/bin/python || $(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install --quiet 'numpy==2.0.*' 'scipy==1.13.*' \
		'pytest>=8,<10' 'pytest-xdist>=3.5,<4' 'hypothesis>=6.100,<7' 'mpmath>=1.3,<2'
	$(OLDEST_VENV)/bin/python -m pip install --quiet --no-deps -e .
	$(OLDEST_VENV)/bin/python -c "import numpy, scipy; print('numpy', numpy.__version__, 'scipy', scipy.__version__)"
	HYPOTHESIS_PROFILE=$(HYPOTHESIS_PROFILE) $(OLDEST_VENV)/bin/python -m pytest -q \
		-n $(PYTEST_WORKERS) -p no:cacheprovider $(OLDEST_TESTS)

clean:
	rm -rf $(VENV) $(WHEEL_VENV) $(OLDEST_VENV) dist $(DEMO_OUT) .pytest_cache .ruff_cache .hypothesis \
		docs/_build docs/api/generated docs/tutorials docs/sg_execution_times.rst docs/images
