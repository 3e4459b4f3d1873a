"""``callstream mcp list [--json] | import FILE | doctor`` as a user runs them."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from app.cli import main
from tests.conftest import ROOT


def write_config(home: Path, text: str) -> Path:
    path = home / "config.toml"
    path.write_text(text)
    return path


FIXTURE = f"""
[mcp.fx]
command = {json.dumps(sys.executable)}
args = ["-m", "tests.mcp_fixture", "stdio"]
cwd = {json.dumps(str(ROOT))}
startup_timeout = 60

[mcp.gone]
command = "no-such-mcp-server-xyz"
"""


def test_mcp_list_json_says_how_each_server_went(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(home, FIXTURE)
    assert main(["mcp", "list", "--json"]) == 1  # one server failed
    servers = {s["name"]: s for s in json.loads(capsys.readouterr().out)}
    assert servers["fx"]["state"] == "ready" and "effect" in servers["fx"]["tools"]
    assert servers["fx"]["ready_ms"] > 0 and servers["fx"]["log"].endswith("fx.log")
    assert servers["gone"]["state"] == "failed" and "cannot start it" in servers["gone"]["reason"]


def test_mcp_doctor_names_server_tool_and_field(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(home, FIXTURE.split("[mcp.gone]")[0])
    assert main(["mcp", "doctor"]) == 1
    out = capsys.readouterr().out
    for dialect in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        assert f"fx · bad_schema (fx__bad_schema) · {dialect}: " in out
    assert "$.properties.tags: an array schema without \"items\"" in out
    assert "effect" not in out


def test_mcp_import_adds_tables_and_keeps_variables(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(home, "# my settings\ndefault = \"demo\"\n\n[providers.demo]\nprovider = \"demo\"\n")
    source = home / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {"search": {"url": "http://127.0.0.1:9/mcp",
                                                            "headers": {"Authorization": "Bearer ${TOKEN}"}}}}))
    assert main(["mcp", "import", str(source)]) == 0
    text = config.read_text()
    assert text.startswith("# my settings\n")  # the user's lines are kept as written
    assert tomllib.loads(text)["mcp"]["search"]["headers"] == {"Authorization": "Bearer ${TOKEN}"}
    assert main(["mcp", "import", str(source)]) == 0  # again: kept, not replaced
    assert "kept the existing [mcp.search]" in capsys.readouterr().err


def test_mcp_import_of_a_file_without_servers_is_a_stated_failure(home: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    source = home / "x.json"
    source.write_text("{}")
    assert main(["mcp", "import", str(source)]) == 2
    assert 'no "mcpServers" object' in capsys.readouterr().err


def test_a_bad_mcp_table_is_one_line_not_a_traceback(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(home, "[mcp.x]\nurl = \"ftp://nope\"\n")
    assert main(["mcp", "list"]) == 2
    err = capsys.readouterr().err
    assert "mcp.x.url must be an http:// or https:// URL" in err and "Traceback" not in err


def test_mcp_import_into_an_inline_mcp_table_adds_the_servers_there(home: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(home, '# mine\nmcp = { kept = { command = "kept-server", args = ["--quiet"] } }\n')
    source = home / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "files"], "env": {"ROOT": "${HOME}"}},
        "search": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}))
    assert main(["mcp", "import", str(source)]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert f"added [mcp.files] to {config}" in out and f"added [mcp.search] to {config}" in out
    text = config.read_text()
    assert text.startswith("# mine\nmcp = { kept = { command = \"kept-server\", args = [\"--quiet\"] }")
    servers = tomllib.loads(text)["mcp"]
    assert servers["kept"] == {"command": "kept-server", "args": ["--quiet"]}  # what was there is kept
    assert servers["files"] == {"command": "npx", "args": ["-y", "files"], "env": {"ROOT": "${HOME}"}}
    assert servers["search"]["headers"] == {"Authorization": "Bearer ${TOKEN}"}
    from app.settings.config import load_config

    assert set(load_config().mcp) == {"kept", "files", "search"}  # callstream reads it back
    assert main(["mcp", "import", str(source)]) == 0  # again: kept, not replaced
    assert "kept the existing [mcp.files]" in capsys.readouterr().err
    assert config.read_text() == text
