"""Real published MCP servers from PyPI as stdio subprocesses (``make peers-mcp``
installs them, pinned, under .venv-peers/; these tests skip without them):
``mcp-server-time`` and ``mcp-server-git`` on a temporary repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.chat.session import ChatSession
from app.ledger import SqliteLedger as Ledger
from app.mcp import attach_servers, open_hub
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.mcp import parse_servers
from app.stream.dialects.schemas import DIALECT_NAMES, problems
from app.tools.base import ToolContext
from app.tools.registry import Registry
from tests import streamgen
from tests.conftest import ROOT
from tests.faultserver import FaultServer, Reply

PEERS = ROOT / ".venv-peers"
TIME = PEERS / "mcp-time" / "bin" / "mcp-server-time"
GIT = PEERS / "mcp-git" / "bin" / "mcp-server-git"


def need(program: Path) -> None:
    if not program.exists():
        pytest.skip(reason=f"{program.name} is not installed in {program.parents[1]} (make peers-mcp)")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git = ["git", "-C", str(path), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    return path


def commits(repo: Path) -> int:
    out = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"], capture_output=True, text=True)
    return int(out.stdout.strip())


async def registry_for(tables: dict[str, Any], tmp_path: Path) -> Registry:
    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers(tables, "test"), tmp_path / "logs"))
    await registry.settled()
    return registry


async def test_mcp_server_time_lists_read_only_tools_and_answers(tmp_path: Path) -> None:
    need(TIME)
    registry = await registry_for({"time": {"command": str(TIME), "args": ["--local-timezone", "UTC"]}}, tmp_path)
    try:
        status = registry.source.statuses()[0]
        assert status.state == "ready", status.line()
        tool = registry.get("time__get_current_time")
        assert tool is not None and tool.read_only
        answer = json.loads(await tool.run({"timezone": "Europe/London"}, ToolContext("k")))
        assert answer["timezone"] == "Europe/London"
        for listed in status.tools:
            for dialect in DIALECT_NAMES:
                assert problems(dialect, listed.input_schema) == [], (listed.name, dialect)
    finally:
        await registry.aclose()


async def test_mcp_server_git_commits_once_across_a_cut_off(tmp_path: Path, repo: Path) -> None:
    need(GIT)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True)
    args = json.dumps({"repo_path": str(repo), "message": "add a.txt"})
    call = [("text", "Committing. ")] + streamgen.call_script(0, "c1", "git__git_commit", args)
    body = streamgen.anthropic(call)
    with FaultServer() as server:
        # the stream dies after the call ended (it was dispatched): the next request continues from it
        server.replies.append(Reply(body[: body.index(b"message_delta")], chunk=64))
        server.replies.append(Reply(streamgen.anthropic([("text", "Committed.")], stop_reason="end_turn")))
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@example.invalid"}
        registry = await registry_for({"git": {"command": str(GIT), "args": ["--repository", str(repo)],
                                               "env": env, "approval": "never"}}, tmp_path)
        session = ChatSession(Endpoint("anthropic", server.url, "m", "test"), registry,
                              Ledger(tmp_path / "l.db"), "conv-git", backoff=0.01,
                              timeouts=Timeouts(5.0, 5.0, 30.0))
        try:
            done = await session.send("commit it")
        finally:
            await session.aclose()
            await registry.aclose()
    assert done.status == "done", done
    assert session.turns[0].note and session.turns[0].blocks[1].state == "ran"  # type: ignore[union-attr]
    assert commits(repo) == 2  # the first commit plus exactly one from the tool
    assert "add a.txt" in json.dumps(server.requests[-1]["body"])
