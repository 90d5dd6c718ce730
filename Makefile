# The two commands of the README: `make serve` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SERVE_ARGS ?=

.PHONY: serve test test-compat lint format clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

serve: $(VENV)/.installed
	$(BIN)/idv-mock serve $(SERVE_ARGS)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests pytest_plugin bench
	$(BIN)/ruff format --check src tests pytest_plugin bench
	$(BIN)/mypy --strict src pytest_plugin

test: lint
	$(BIN)/pytest -q -n 2

# make test-compat: the files where the mock meets its dependencies, at the lowest and the
# newest versions pyproject.toml allows, on Python 3.10 and 3.13 (.ci/compat.py; README
# "Tested versions"); FULL=1: the whole suite in each of the four
test-compat: $(VENV)/.installed-test
	$(BIN)/pip install --quiet uv
	FULL=$(FULL) CELLS="$(CELLS)" TESTS="$(TESTS)" $(BIN)/python .ci/compat.py

# make bench: quick (one round, short runs, up to 10k submissions); make bench FULL=1: the lot
bench: $(VENV)/.installed
	$(BIN)/python bench/run.py $(if $(filter 1,$(FULL)),--full)

format: $(VENV)/.installed-test
	$(BIN)/ruff format src tests pytest_plugin bench
	$(BIN)/ruff check --fix src tests pytest_plugin bench

clean:
	rm -rf $(VENV) .venv-compat build dist .pytest_cache .mypy_cache .ruff_cache
