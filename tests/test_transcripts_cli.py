"""``callstream transcripts``, ``export`` and ``import`` from the shell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.fixture
def conversation(home: Path) -> str:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    result = cli("ask", "Show me order A-1042", "--provider", "demo", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["conversation"]


def test_transcripts_lists_the_conversation(conversation: str) -> None:
    rows = json.loads(cli("transcripts", "--json").stdout)
    assert [r["id"] for r in rows] == [conversation] and rows[0]["turns"] == 2
    assert "Show me order A-1042" in cli("transcripts").stdout


def test_export_json_then_import_gives_the_same_conversation(conversation: str, home: Path) -> None:
    exported = cli("export", conversation[:8])
    assert exported.returncode == 0
    document = json.loads(exported.stdout)
    assert document["format"] == "callstream-transcript" and document["conversation"]["id"] == conversation
    path = home / "t.json"
    path.write_text(exported.stdout)
    again = cli("import", str(path))
    assert again.returncode == 2 and "already stored" in again.stderr
    document["conversation"]["id"] = "copy-1"
    path.write_text(json.dumps(document))
    assert cli("import", str(path)).returncode == 0
    copy = json.loads(cli("export", "copy-1").stdout)
    assert copy["items"] == document["items"]


def test_export_markdown_shows_allow_listed_fields(conversation: str) -> None:
    text = cli("export", conversation, "--format", "markdown").stdout
    assert "## You" in text and "- **get_order** — ran" in text and "  - Order: A-1042" in text


def test_export_unknown_id(home: Path) -> None:
    result = cli("export", "nope")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "no stored conversation" in result.stderr


@pytest.mark.parametrize("content,message", [
    ("not json", "is not JSON"),
    ('{"format": "something-else"}', "not a callstream transcript export"),
    ('{"format": "callstream-transcript", "version": 9}', "unsupported transcript version"),
    ('{"format": "callstream-transcript", "version": 1, "conversation": {"id": "x"}, "items": [{"kind": "??"}]}',
     "neither a user message nor a turn"),
    ('{"format": "callstream-transcript", "version": 1, "conversation": {"id": "y"}, '
     '"items": [{"kind": "turn", "blocks": [{"type": "tool_call"}]}]}', "damaged"),
])
def test_import_bad_files_fail_clearly_and_store_nothing(home: Path, content: str, message: str) -> None:
    path = home / "bad.json"
    path.write_text(content)
    result = cli("import", str(path))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert json.loads(cli("transcripts", "--json").stdout) == []


def test_import_missing_file(home: Path) -> None:
    result = cli("import", str(home / "missing.json"))
    assert result.returncode == 2 and "cannot read" in result.stderr


def test_ask_continues_a_stored_conversation(conversation: str) -> None:
    result = cli("ask", "Thanks", "--provider", "demo", "--conversation", conversation[:6], "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["conversation"] == conversation and document["turns"][0]["index"] == 2
    missing = cli("ask", "hi", "--conversation", "nonexistent")
    assert missing.returncode == 2 and "no stored conversation" in missing.stderr
