# The two commands of the README: `make run` and `make test`. Both set up
# everything they need (a virtualenv in .venv with the exact pins of
# requirements.lock) on a machine that has only python3, make and git.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup run test test-all fuzz bench bench-tui bench-warming bench-mcp bench-memory bench-attach bench-ledger bench-limits bench-search bench-startup bench-many-calls bench-long bench-fork bench-compare typecheck lint contracts clean peers-mcp peers-litellm peers-startup peers peers-everything peers-conformance

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

# Peers are not our dependencies: each one gets its own virtualenv under
# .venv-peers/NAME with exactly what peers/NAME.txt pins, and the tests that
# need one skip without it.
PEERS := .venv-peers

$(PEERS)/%/.stamp: peers/%.txt
	test -x $(PEERS)/$*/bin/python || $(PYTHON) -m venv $(PEERS)/$*
	$(PEERS)/$*/bin/python -m pip install --quiet --disable-pip-version-check -r $<
	touch $@

# Real published MCP servers for tests/test_mcp_real.py.
peers-mcp: $(PEERS)/mcp-time/.stamp $(PEERS)/mcp-git/.stamp

# The LiteLLM proxy for tests/test_litellm.py.
peers-litellm: $(PEERS)/litellm/.stamp

# Other chat clients, for their start-up times beside ours in bench-startup.
peers-startup: $(PEERS)/llm/.stamp $(PEERS)/elia/.stamp $(PEERS)/oterm/.stamp

# The programs whose files `callstream import` reads, for the import corpus
# (scripts/make_import_corpus.py) and tests/test_import_real.py: llm at versions
# across its schema change (.venv-peers/llm-V), Claude Code and Codex CLI from npm
# (exact pins in peers/writers/package-lock.json, into peers/writers/node_modules).
LLM_WRITERS := 0.26 0.30 0.32 0.36
peers/writers/node_modules/.stamp: peers/writers/package.json peers/writers/package-lock.json
	cd peers/writers && npm ci --no-audit --no-fund
	touch $@

peers-writers: $(foreach v,$(LLM_WRITERS),$(PEERS)/llm-$(v)/.stamp) peers/writers/node_modules/.stamp

# The MCP reference server (npm @modelcontextprotocol/server-everything, exact pins in
# peers/everything/package-lock.json) for tests/test_mcp_everything.py, which skips without it.
peers/everything/node_modules/.stamp: peers/everything/package.json peers/everything/package-lock.json
	cd peers/everything && npm ci --no-audit --no-fund
	touch $@

peers-everything: peers/everything/node_modules/.stamp

# The official MCP conformance suite (client scenarios) and the node 22 it needs (npm's `node`
# package), pinned in peers/conformance/package-lock.json, for tests/test_conformance.py.
peers/conformance/node_modules/.stamp: peers/conformance/package.json peers/conformance/package-lock.json
	cd peers/conformance && npm ci --no-audit --no-fund
	touch $@

peers-conformance: peers/conformance/node_modules/.stamp

# every peer
peers: peers-mcp peers-litellm peers-startup peers-writers peers-everything peers-conformance

run: setup
	$(BIN)/callstream

# The layer contracts of pyproject.toml ([tool.importlinter]); `make test` runs them first.
contracts: setup
	$(BIN)/lint-imports

test: setup contracts
	$(BIN)/python -m pytest -q

test-all: setup contracts
	$(BIN)/python -m pytest -q --run-slow

bench: setup
	$(BIN)/python benchmarks/bench_assemble.py

# Before and after in one run: make bench-compare REF=<commit> [TARGETS="bench bench-tui bench-startup"]
bench-compare: setup
	scripts/bench_compare.sh $(REF) $(TARGETS)

# bench-NAME runs benchmarks/bench_NAME.py (a dash in NAME is an underscore in the file).
BENCHES := bench-fork bench-tui bench-warming bench-ledger bench-search bench-mcp bench-limits bench-memory bench-startup bench-attach \
           bench-many-calls bench-long

$(BENCHES): bench-%: setup
	$(BIN)/python benchmarks/bench_$(subst -,_,$*).py $(BENCH_ARGS)

bench-many-calls: BENCH_ARGS := --all

fuzz: setup
	FUZZ_EXAMPLES=5000 FUZZ_SECONDS=600 $(BIN)/python -m pytest -q tests/test_fuzz.py

typecheck: setup
	$(BIN)/mypy

lint: setup
	$(BIN)/ruff check app widgets tests benchmarks scripts

clean:
	rm -rf $(VENV) $(PEERS) .pytest_cache .mypy_cache .hypothesis
