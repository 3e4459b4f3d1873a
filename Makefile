# The two commands of the README: `make run` and `make test`. Both set up
# everything they need (a virtualenv in .venv with the exact pins of
# requirements.lock) on a machine that has only python3, make and git.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup run test test-all bench bench-tui bench-warming typecheck lint clean

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

run: setup
	$(BIN)/callstream

test: setup
	$(BIN)/python -m pytest -q

test-all: setup
	$(BIN)/python -m pytest -q --run-slow

bench: setup
	$(BIN)/python benchmarks/bench_assemble.py

bench-tui: setup
	$(BIN)/python benchmarks/bench_tui.py

bench-warming: setup
	$(BIN)/python benchmarks/bench_warming.py

typecheck: setup
	$(BIN)/mypy

lint: setup
	$(BIN)/ruff check app widgets tests benchmarks scripts

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .hypothesis
