# The two commands of the README: `make serve` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SERVE_ARGS ?=

.PHONY: serve test test-compat lint format clean bench docs dist image image-test starts lists

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
	$(BIN)/ruff check src tests pytest_plugin bench mkdocs_hooks.py
	$(BIN)/ruff format --check src tests pytest_plugin bench mkdocs_hooks.py
	$(BIN)/mypy --strict src pytest_plugin

test: lint
	$(BIN)/pytest -q -n 2

# make test-compat: the files where the mock meets its dependencies, at the lowest and the
# newest versions pyproject.toml allows, on Python 3.10 and 3.13 (.ci/compat.py; docs/layout.md
# "Tested versions"); FULL=1: the whole suite in each of the four; BUDGET=seconds: start no
# cell the time left cannot cover (.ci/run); MISSING=skip: a Python not found is skipped
test-compat: $(VENV)/.installed-test
	$(BIN)/pip install --quiet uv
	FULL=$(FULL) CELLS="$(CELLS)" TESTS="$(TESTS)" BUDGET="$(BUDGET)" MISSING="$(MISSING)" \
		$(BIN)/python .ci/compat.py

# make bench: quick (one round, short runs, up to 10k submissions); make bench FULL=1: the lot
bench: $(VENV)/.installed
	$(BIN)/python bench/run.py $(if $(filter 1,$(FULL)),--full)

# make starts: write the start states shipped with the package again (src/idv_mock/backend/
# starts/, the default start: no seeding on a first use); needed after any change to the
# seeding code, schemas or Faker (tests/test_prebuilt_start.py fails until then)
starts: $(VENV)/.installed
	$(BIN)/python -c "from idv_mock.backend import prebuilt; prebuilt.main()"

# make lists: the schema lists that name every webhook trigger, rewritten from the webhook
# table of schemas/api.json (tests/test_one_list.py fails until they agree)
lists: $(VENV)/.installed
	$(BIN)/python -c "from idv_mock.ground import operations; operations.write_derived()"

# make docs: the docs site (mkdocs.yml, docs/) into site/, strictly (a broken link fails)
docs: $(VENV)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# make dist: the wheel and the sdist into dist/ (DIST=folder for another), to install into
# another project: pip install 'path/to/idv-mock/dist/idv_mock-<version>-py3-none-any.whl[pytest]'
# (README "Installing into your own project"; tests/test_package.py builds them this way)
DIST ?= dist

dist: $(VENV)/.installed-test
	rm -rf $(DIST)
	$(BIN)/python -m build --outdir $(DIST) .

# The container image (Dockerfile): podman or docker; BASE any image with python3 and venv,
# e.g. make image BASE=localhost/debian-py:base CONTAINER_BUILD_ARGS='-v /etc/ssl/certs/...'
CONTAINER ?= podman
IMAGE ?= idv-mock:latest
BASE ?= python:3.12-slim
CONTAINER_BUILD_ARGS ?=

image:
	$(CONTAINER) build $(CONTAINER_BUILD_ARGS) --build-arg BASE=$(BASE) -t $(IMAGE) .

# builds against a local Debian base (made with mmdebstrap when missing), runs the image and
# asks the API, the form and the dashboard; skips with the reason when podman is missing
image-test: $(VENV)/.installed-test
	IDV_MOCK_IMAGE_TEST=1 $(BIN)/pytest -q -p no:randomly -rs tests/test_image.py

format: $(VENV)/.installed-test
	$(BIN)/ruff format src tests pytest_plugin bench mkdocs_hooks.py
	$(BIN)/ruff check --fix src tests pytest_plugin bench mkdocs_hooks.py

clean:
	rm -rf $(VENV) .venv-compat build dist site .pytest_cache .mypy_cache .ruff_cache
