"""``callstream mcp call NAME TOOL [JSON]``: one tool, without a model, on the
path a session's call takes (approval, the ledger, the output limit)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from app.cli import main
from tests.conftest import ROOT

FIXTURE = f"""
[mcp.fx]
command = {json.dumps(sys.executable)}
args = ["-m", "tests.mcp_fixture", "stdio"]
cwd = {json.dumps(str(ROOT))}
startup_timeout = 60
"""


@pytest.fixture()
def fx(home: Path) -> Path:
    path = home / "config.toml"
    path.write_text(FIXTURE)
    return path


def test_mcp_call_runs_a_read_only_tool_and_prints_its_card_line(fx: Path, capsys: pytest.CaptureFixture[str]
                                                                   ) -> None:
    assert main(["mcp", "call", "fx", "lookup", '{"q": "otters"}']) == 0
    out = capsys.readouterr().out
    assert "fx__lookup · ran" in out and "found: otters" in out


def test_mcp_call_side_effect_needs_approve(fx: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", "fx", "effect", '{"label": "x"}', "--json"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["state"] == "needs approval" and "--approve" in refused["result"]
    assert main(["mcp", "call", "fx", "effect", '{"label": "x"}', "--approve", "--json"]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert ran["state"] == "ran" and json.loads(ran["result"])["label"] == "x"
    # the call went through the ledger: claimed and recorded under its key
    with sqlite3.connect(home / "home" / "callstream.db") as db:
        states = [row[0] for row in db.execute("SELECT state FROM ledger")]
    assert "ran" in states


def test_mcp_call_tool_error_exits_1_with_the_servers_words(fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", "fx", "fail", "--json"]) == 1
    assert "the fixture always fails" in json.loads(capsys.readouterr().out)["result"]


def test_mcp_call_arguments_not_json_is_a_sentence(fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", "fx", "lookup", "{q: 1"]) != 0
    err = capsys.readouterr().err
    assert "not JSON" in err and "Traceback" not in err


def test_mcp_call_arguments_not_an_object_is_a_sentence(fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", "fx", "lookup", "[1, 2]"]) != 0
    assert "one JSON object" in capsys.readouterr().err


def test_mcp_call_unknown_server_names_the_known_ones(fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", "nope", "lookup"]) != 0
    assert "no MCP server named 'nope'" in capsys.readouterr().err


def test_mcp_call_unknown_tool_lists_the_servers_tools(fx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", "fx", "nosuch"]) != 0
    err = capsys.readouterr().err
    assert "offers no tool 'nosuch'" in err and "lookup" in err


def test_mcp_call_arguments_of_many_pieces_reach_the_server_as_they_were(fx: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The stdio writer sends a message as JSON 64 KB at a time (``transports.bounded_stdio``):
    escapes, characters beyond the BMP and the cuts between pieces arrive as the one string."""
    q = 'otters "swim"\\ é😀\n' * 12_000
    assert main(["mcp", "call", "fx", "lookup", json.dumps({"q": q}), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["state"] == "ran" and out["result"] == f"found: {q}"
