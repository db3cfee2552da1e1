# Portico — the two commands of the README, plus lint and bench.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the gateway's hot modules compiled with mypyc (src/portico/native.py); used only while current
NATIVE := build/native/manifest.json
NATIVE_SOURCES := $(shell find src/portico/gateway -name '*.py' -o -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp') \
	src/portico/native.py scripts/build_native.py

# the web console (web/console): built with Vite when missing or stale, never committed
CONSOLE := web/console
CONSOLE_MODULES := $(CONSOLE)/node_modules/.package-lock.json
CONSOLE_BUILD := $(CONSOLE)/dist/index.html
CONSOLE_SOURCES := $(shell find $(CONSOLE)/src -type f 2>/dev/null) $(CONSOLE)/index.html \
	$(CONSOLE)/vite.config.ts $(CONSOLE)/tsconfig.json $(CONSOLE)/package-lock.json

# the developer portal (web/portal): the same rules
PORTAL := web/portal
PORTAL_MODULES := $(PORTAL)/node_modules/.package-lock.json
PORTAL_BUILD := $(PORTAL)/dist/index.html
PORTAL_SOURCES := $(shell find $(PORTAL)/src -type f 2>/dev/null) $(PORTAL)/index.html \
	$(PORTAL)/vite.config.ts $(PORTAL)/tsconfig.json $(PORTAL)/package-lock.json

.PHONY: run test test-web test-sqlite test-postgresql test-interpreted lint bench native web \
	system-packages clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(NATIVE): $(STAMP) $(NATIVE_SOURCES)
	$(BIN)/python scripts/build_native.py

## native: compile the gateway's hot modules (make run, test and bench do it when needed)
native: $(NATIVE)

$(CONSOLE_MODULES): $(CONSOLE)/package-lock.json
	cd $(CONSOLE) && npm ci --no-audit --no-fund --loglevel=error

$(CONSOLE_BUILD): $(CONSOLE_MODULES) $(CONSOLE_SOURCES)
	cd $(CONSOLE) && npm run --silent build

$(PORTAL_MODULES): $(PORTAL)/package-lock.json
	cd $(PORTAL) && npm ci --no-audit --no-fund --loglevel=error

$(PORTAL_BUILD): $(PORTAL_MODULES) $(PORTAL_SOURCES)
	cd $(PORTAL) && npm run --silent build

## web: build the web console and the developer portal (make run and test do it when needed)
web: $(CONSOLE_BUILD) $(PORTAL_BUILD)

## run: install, migrate the embedded SQLite store, bootstrap, and serve on 127.0.0.1:9180
## (the web console at /console/, the developer portal at /portal/)
run: $(STAMP) $(NATIVE) $(CONSOLE_BUILD) $(PORTAL_BUILD)
	$(BIN)/portico db upgrade
	$(BIN)/portico bootstrap
	$(BIN)/portico serve --no-migrate

system-packages:
	@bash scripts/ensure-system-packages.sh

## test: the front ends' component tests, the whole suite on SQLite, then the tests that use
## the store on a throwaway PostgreSQL cluster (the gateway compiled), then the gateway's
## tests once more on its interpreted modules; each run in TEST_WORKERS processes (xdist)
test: $(STAMP) system-packages $(CONSOLE_BUILD) $(PORTAL_BUILD) test-web test-sqlite \
	test-postgresql test-interpreted

## test-web: the console's and the portal's component tests (Vitest, jsdom)
test-web: $(CONSOLE_MODULES) $(PORTAL_MODULES)
	cd $(CONSOLE) && npm test --silent
	cd $(PORTAL) && npm test --silent

# One worker per core of the 2-core CI machine (make test TEST_WORKERS=4 on a bigger one).
# worksteal: an idle worker takes queued tests from a busy one, so a slow module does not
# leave the other core idle at the end. The scope schedulers are refused (tests/conftest.py).
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist worksteal

test-sqlite: $(STAMP) $(NATIVE)
	PORTICO_REQUIRE_NATIVE=1 $(BIN)/pytest --db=sqlite $(XDIST)

test-postgresql: $(STAMP) $(NATIVE) system-packages
	PORTICO_REQUIRE_NATIVE=1 $(BIN)/pytest --db=postgresql $(XDIST)

test-interpreted: $(STAMP)
	PORTICO_NATIVE=0 $(BIN)/pytest --db=sqlite $(XDIST) tests/gateway

## lint: ruff, mypy and the import contracts of pyproject.toml (layering, no import cycle), all clean
lint: $(STAMP) $(CONSOLE_MODULES) $(PORTAL_MODULES)
	$(BIN)/ruff check src tests bench migrations
	$(BIN)/ruff format --check src tests bench migrations
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache --no-logo
	cd $(CONSOLE) && npm run --silent lint
	cd $(PORTAL) && npm run --silent lint

## bench: benchmarks, printed with ratios against their reference
bench: $(STAMP) $(NATIVE)
	@bash scripts/ensure-bench-packages.sh
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache $(CONSOLE)/node_modules $(CONSOLE)/dist \
		$(PORTAL)/node_modules $(PORTAL)/dist
