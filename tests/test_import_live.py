"""The real programs, run now against the scripted model, write files that import whole (issue 27).

tests/test_import_real.py checks the committed corpus; this runs Claude Code,
Codex CLI and llm 0.36 once each (the smallest script: a prompt, a tool
call, its result, an answer) so a change in what they write shows up here
before the corpus is regenerated. Each test skips, saying why, where
``make peers-writers`` has not installed the program.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scripts.make_import_corpus import LLM_TOOLS, NODE_BIN, QUIET, ROOT, model, run
from tests.conftest import run_cli
from tests.conversations import stored
from tests.test_import_real import claude_source, codex_source, llm_sources, merged, shown

SCRIPT = {"prompts": [{"key": "Look around", "moves": [[
    {"say": "Listing."},
    {"call": ["Bash", "exec_command", "clock"], "args": {"command": "ls", "description": "List"},
     "args_by_name": {"exec_command": {"cmd": "ls"}, "clock": {}}}]], "done": "One file."}]}


def _need(program: Path) -> None:
    if not program.exists():
        pytest.skip(reason=f"{program.name} is not installed in {program.parent} (make peers-writers)")


def _imports_whole(path: Path, expected: list) -> None:
    code, printed, err = run_cli("import", str(path))
    assert code == 0, err
    ids = [line.split()[2] for line in printed.splitlines() if line.startswith("imported conversation")]
    for conversation, source in zip(ids, expected, strict=True):
        got = shown(stored(conversation))
        assert merged(got.seq) == merged(source.seq) and got.results == source.results
        assert got.usage == source.usage


def test_claude_code_writes_a_session_that_imports_whole(home: Path, tmp_path: Path) -> None:
    _need(NODE_BIN / "claude")
    work, private = tmp_path / "work", tmp_path / "claude-home"
    work.mkdir()
    private.mkdir()
    with model(SCRIPT, tmp_path, work) as port:
        env = {**os.environ, **QUIET, "HOME": str(private),
               "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "scripted-key"}
        run([str(NODE_BIN / "claude"), "--model", "claude-sonnet-4-5", "-p", "Look around",
             "--allowedTools", "Bash(ls:*)"], env, work)
    session = next((private / ".claude" / "projects").rglob("*.jsonl"))
    _imports_whole(session, [claude_source(session)])


def test_codex_writes_a_rollout_that_imports_whole(home: Path, tmp_path: Path) -> None:
    _need(NODE_BIN / "codex")
    work, codex_home = tmp_path / "work", tmp_path / "codex-home"
    work.mkdir()
    codex_home.mkdir()
    with model(SCRIPT, tmp_path, work) as port:
        (codex_home / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "local"\napproval_policy = "never"\n'
            'sandbox_mode = "workspace-write"\n[model_providers.local]\nname = "local"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_KEY"\n')
        env = {**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(codex_home),
               "SCRIPTED_KEY": "scripted-key"}
        run([str(NODE_BIN / "codex"), "exec", "--skip-git-repo-check", "Look around"], env, work)
    rollout = next((codex_home / "sessions").rglob("rollout-*.jsonl"))
    _imports_whole(rollout, [codex_source(rollout)])


def test_llm_writes_a_logs_db_that_imports_whole(home: Path, tmp_path: Path) -> None:
    binary = ROOT / ".venv-peers" / "llm-0.36" / "bin" / "llm"
    _need(binary)
    user = tmp_path / "llm"
    user.mkdir()
    (user / "tools.py").write_text(LLM_TOOLS)
    with model(SCRIPT, tmp_path, user) as port:
        (user / "extra-openai-models.yaml").write_text(
            f"- model_id: scripted\n  model_name: scripted\n  api_base: http://127.0.0.1:{port}/v1\n"
            "  api_key_name: scripted\n  supports_tools: true\n")
        env = {**os.environ, "LLM_USER_PATH": str(user), "OPENAI_API_KEY": "scripted-key",
               "HOME": str(tmp_path)}
        run([str(binary), "-m", "scripted", "--functions", str(user / "tools.py"), "Look around"], env, user)
    _imports_whole(user / "logs.db", llm_sources(user / "logs.db"))
    assert json.dumps(llm_sources(user / "logs.db")[0].seq).count('"call"') == 1
