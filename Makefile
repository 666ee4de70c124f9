# Two commands matter: `make demo` and `make test`. Both build .venv from
# nothing, so a fresh clone needs only Python 3.11+.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-deps lint typecheck pytest bench clean dashboard fuzz chaos

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

# The dashboard's browser bundle (esbuild; lockfile-pinned npm packages).
DASH_STAMP := src/convection/dashboard/static/dist/.built

$(DASH_STAMP): frontend/package.json frontend/package-lock.json $(wildcard frontend/src/*)
	npm ci --prefix frontend --no-audit --no-fund
	npm run --prefix frontend build
	touch $(DASH_STAMP)

dashboard: $(DASH_STAMP)

demo: $(STAMP) $(DASH_STAMP)
	$(BIN)/python -m convection.cli.demo

lint: $(STAMP)
	$(BIN)/ruff check src tests $(wildcard bench)
	$(BIN)/ruff format --check src tests $(wildcard bench)

typecheck: $(STAMP)
	$(BIN)/mypy

# System packages the tests need (a real sshd for the SSH transport).
test-deps:
	bash scripts/ensure-test-deps.sh

pytest: $(STAMP) test-deps $(DASH_STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python bench/template_bench.py

# The atheris harnesses (tests/fuzz), each for FUZZ_SECONDS (default 60).
fuzz: $(STAMP)
	$(BIN)/python tests/fuzz/run.py --seconds $${FUZZ_SECONDS:-60}

# The chaos trials (tests/chaos): CHAOS_TRIALS (default 1000) seeded trials
# from CHAOS_SEED (default 0), each a killed or paused engine; about 7 s each.
chaos: $(STAMP)
	$(BIN)/python tests/chaos/run.py --quiet --trials $${CHAOS_TRIALS:-1000} --seed $${CHAOS_SEED:-0}

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache frontend/node_modules src/convection/dashboard/static/dist
