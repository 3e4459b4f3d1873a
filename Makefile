# The two commands of the README: `make run` and `make test`. Both set up
# everything they need (a virtualenv in .venv with the exact pins of
# requirements.lock) on a machine that has only python3, make and git.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup run test test-all fuzz bench bench-tui bench-warming bench-mcp bench-memory bench-ledger bench-limits bench-search bench-startup bench-many-calls typecheck lint clean peers-mcp peers-litellm peers

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

# Real published MCP servers for tests/test_mcp_real.py, each in its own
# virtualenv (they are peers, not our dependencies); the tests skip without them.
PEERS           := .venv-peers
MCP_TIME_PIN    := mcp-server-time==2026.10.19
MCP_GIT_PIN     := mcp-server-git==2026.10.19

$(PEERS)/mcp-time/.stamp:
	$(PYTHON) -m venv $(PEERS)/mcp-time
	$(PEERS)/mcp-time/bin/python -m pip install --quiet --disable-pip-version-check "$(MCP_TIME_PIN)"
	touch $@

$(PEERS)/mcp-git/.stamp:
	$(PYTHON) -m venv $(PEERS)/mcp-git
	$(PEERS)/mcp-git/bin/python -m pip install --quiet --disable-pip-version-check "$(MCP_GIT_PIN)"
	touch $@

peers-mcp: $(PEERS)/mcp-time/.stamp $(PEERS)/mcp-git/.stamp

# The LiteLLM proxy for tests/test_litellm.py, at the exact versions of peers/litellm.txt.
LITELLM := $(PEERS)/litellm/.installed-stamp

$(LITELLM): peers/litellm.txt
	test -x $(PEERS)/litellm/bin/python || $(PYTHON) -m venv $(PEERS)/litellm
	$(PEERS)/litellm/bin/python -m pip install --quiet --disable-pip-version-check -r peers/litellm.txt
	touch $(LITELLM)

peers-litellm: $(LITELLM)

# every peer
peers: peers-mcp peers-litellm

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

bench-ledger: setup
	$(BIN)/python benchmarks/bench_ledger.py

bench-search: setup
	$(BIN)/python benchmarks/bench_search.py

bench-mcp: setup
	$(BIN)/python benchmarks/bench_mcp.py

bench-limits: setup
	$(BIN)/python benchmarks/bench_limits.py

bench-memory: setup
	$(BIN)/python benchmarks/bench_memory.py

bench-startup: setup
	$(BIN)/python benchmarks/bench_startup.py

bench-many-calls: setup
	$(BIN)/python benchmarks/bench_many_calls.py --all

fuzz: setup
	FUZZ_EXAMPLES=5000 $(BIN)/python -m pytest -q tests/test_fuzz.py

typecheck: setup
	$(BIN)/mypy

lint: setup
	$(BIN)/ruff check app widgets tests benchmarks scripts

clean:
	rm -rf $(VENV) $(PEERS) .pytest_cache .mypy_cache .hypothesis
