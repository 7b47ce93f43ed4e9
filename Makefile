# Dynamic Tools — every entry point. `make run` and `make test` install what is missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := backend/.venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
RUNTIME_DIR ?= .runtime

export HOST PORT

.PHONY: install run test lint fmt typecheck bench clean

$(STAMP): backend/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e 'backend[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	mkdir -p $(RUNTIME_DIR)
	REGISTRY_CONFIG_PATH=$${REGISTRY_CONFIG_PATH:-$(CURDIR)/$(RUNTIME_DIR)/registry/config.yaml} \
	DATA_DIR=$${DATA_DIR:-$(CURDIR)/$(RUNTIME_DIR)/data} \
	SEED_EXAMPLES_FROM=$${SEED_EXAMPLES_FROM:-$(CURDIR)/examples/travel} \
	$(VENV)/bin/dynamic-tools serve --host $(HOST) --port $(PORT)

test: $(STAMP)
	cd backend && .venv/bin/python -m pytest $(PYTEST_ARGS)
	cd backend && .venv/bin/lint-imports

lint: $(STAMP)
	cd backend && .venv/bin/ruff check src tests bench && .venv/bin/ruff format --check src tests bench

fmt: $(STAMP)
	cd backend && .venv/bin/ruff format src tests bench && .venv/bin/ruff check --fix src tests bench

typecheck: $(STAMP)
	cd backend && .venv/bin/mypy

bench: $(STAMP)
	$(PY) -m pip install --quiet --no-deps 'bfcl-eval==2026.3.23'
	cd backend && .venv/bin/python -m bench

clean:
	rm -rf $(VENV) $(RUNTIME_DIR)
