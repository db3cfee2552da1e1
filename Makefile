# Portico — the two commands of the README, plus lint and bench.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-sqlite test-postgresql lint bench system-packages clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

## run: install, migrate the embedded SQLite store, bootstrap, and serve on 127.0.0.1:9180
run: $(STAMP)
	$(BIN)/portico db upgrade
	$(BIN)/portico bootstrap
	$(BIN)/portico serve --no-migrate

system-packages:
	@bash scripts/ensure-system-packages.sh

## test: the whole suite on SQLite, then on a throwaway PostgreSQL cluster
test: $(STAMP) system-packages test-sqlite test-postgresql

test-sqlite: $(STAMP)
	$(BIN)/pytest --db=sqlite

test-postgresql: $(STAMP) system-packages
	$(BIN)/pytest --db=postgresql

## lint: ruff and mypy, both clean
lint: $(STAMP)
	$(BIN)/ruff check src tests bench migrations
	$(BIN)/ruff format --check src tests bench migrations
	$(BIN)/mypy

## bench: benchmarks, printed with ratios against their reference
bench: $(STAMP)
	@bash scripts/ensure-bench-packages.sh
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache
