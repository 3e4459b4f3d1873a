"""``callstream inspect``: the JSON document, the human form, the exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from tests import streamgen
from tests.conftest import ROOT, fixture_params


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True)


BLOCK_KEYS = {
    "text": {"type", "text"},
    "reasoning": {"type", "text"},
    "tool_call": {"type", "id", "name", "arguments_raw", "arguments", "final"},
}


def check_document(doc: dict[str, object]) -> None:
    assert {"dialect", "outcome", "stop_reason", "error", "blocks"} <= set(doc)
    assert doc["outcome"] in ("complete", "cut_off", "malformed", "truncated", "provider_error")
    assert isinstance(doc["dialect"], str)
    for block in doc["blocks"]:  # type: ignore[attr-defined]
        assert BLOCK_KEYS[block["type"]] <= set(block)
        if block["type"] == "tool_call":
            assert isinstance(block["name"], str) and isinstance(block["arguments_raw"], str)
            assert isinstance(block["final"], bool)
            assert (block["arguments"] is None) if not block["final"] else isinstance(block["arguments"], dict)


def test_inspect_json_document_shape(tmp_path: Path) -> None:
    path = tmp_path / "s.sse"
    path.write_bytes(
        streamgen.openai_chat(
            [("reasoning", "r"), ("text", "t")] + streamgen.call_script(0, "c", "get_order", '{"order_id":"A"}')
        )
    )
    result = run("inspect", str(path), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    check_document(doc)
    assert doc["dialect"] == "openai-chat" and doc["outcome"] == "complete" and doc["stop_reason"] == "tool_calls"
    assert doc["error"] is None
    assert doc["blocks"] == [
        {"type": "reasoning", "text": "r"},
        {"type": "text", "text": "t"},
        {
            "type": "tool_call",
            "id": "c",
            "name": "get_order",
            "arguments_raw": '{"order_id":"A"}',
            "arguments": {"order_id": "A"},
            "final": True,
        },
    ]


@pytest.mark.parametrize("path", fixture_params())
def test_inspect_json_on_every_real_fixture(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(path), "--json"]) == 0
    check_document(json.loads(capsys.readouterr().out))


def test_inspect_exit_zero_whatever_the_outcome(tmp_path: Path) -> None:
    path = tmp_path / "cut.sse"
    path.write_bytes(streamgen.openai_chat(streamgen.call_script(0, "c", "f", '{"a": 1}'), finish=None, done=False))
    result = run("inspect", str(path), "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["outcome"] == "cut_off"
    assert json.loads(result.stdout)["blocks"][0]["arguments"] is None


def test_inspect_unreadable_file_exits_2_with_one_line() -> None:
    result = run("inspect", "/nonexistent/stream.sse")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "cannot read" in result.stderr


def test_inspect_directory_exits_2(tmp_path: Path) -> None:
    result = run("inspect", str(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1


def test_inspect_unknown_dialect_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "s.sse"
    path.write_bytes(b"")
    result = run("inspect", str(path), "--dialect", "cohere")
    assert result.returncode == 2 and "unknown dialect" in result.stderr and result.stderr.count("\n") == 1


def test_inspect_forced_dialect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.sse"
    path.write_bytes(streamgen.anthropic([("text", "x")], stop_reason="end_turn"))
    assert main(["inspect", str(path), "--dialect", "anthropic", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dialect"] == "anthropic"


def test_inspect_human_output_orders_blocks_and_pretty_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.sse"
    script = (
        [("text", "Before.")]
        + streamgen.call_script(0, "c1", "search_orders", '{"status":"open","n":2}')
        + [("text", "After.")]
    )
    path.write_bytes(streamgen.anthropic(script))
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.index("Before.") < out.index("search_orders") < out.index("After.")
    assert '    "status": "open",' in out
    assert "outcome: complete" in out


def test_inspect_human_output_is_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evil = "hi\x1b[2J\x1b]52;c;ZXZpbA==\x07 \u202eevil \x9b31m"
    path = tmp_path / "s.sse"
    path.write_bytes(
        streamgen.openai_chat([("text", evil)] + streamgen.call_script(0, "c\x1b[1A", "f\x1b", '{"a":"\x1b[31m"}'))
    )
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    for bad in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert bad not in out
    assert "\\x1b[2J" in out and "\\u202e" in out


def test_help_lists_the_commands() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("chat", "ask", "inspect", "ledger", "serve-demo"):
        assert command in result.stdout


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "callstream"
    if not script.exists():
        pytest.skip(reason="callstream console script not installed in this environment (use make test)")
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("callstream ")


def test_ledger_lists_entries(home: Path) -> None:
    from app.files.paths import data_dir
    from app.ledger import SqliteLedger

    ledger = SqliteLedger(data_dir() / "callstream.db")
    ledger.claim("k" * 64, "conv-x", 3, "create_ticket", {"a": 1}, 1)
    ledger.finish("k" * 64, "ran", "ok", False, fence=1)
    ledger.close()
    result = subprocess.run([sys.executable, "-m", "app", "ledger", "--json"], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads(result.stdout)
    assert (entry["conversation"], entry["turn"], entry["tool"], entry["state"]) == ("conv-x", 3, "create_ticket",
                                                                                     "ran")
    human = subprocess.run([sys.executable, "-m", "app", "ledger"], cwd=ROOT, capture_output=True, text=True)
    assert "create_ticket" in human.stdout and "ran" in human.stdout


def test_a_closed_pipe_is_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "s.sse"
    path.write_bytes(streamgen.openai_chat([("text", "line\n" * 20000)], finish="stop"))
    result = subprocess.run(f"{sys.executable} -m app inspect {path} | head -1", shell=True, cwd=ROOT,
                            capture_output=True, text=True)
    assert "Traceback" not in result.stderr


def test_the_command_line_does_not_load_httpxs_own_command_line() -> None:
    """httpx imports its command line (click and more, 3.3 MB) when click is installed, and it is here;
    callstream's entry point keeps it out, and httpx's ``main`` still answers (as without click)."""
    probe = ("import sys, importlib.util; import app.cli, httpx; "
             "print(importlib.util.find_spec('click') is not None, 'click' in sys.modules, "
             "'httpx._main' in sys.modules and sys.modules['httpx._main'] is not None, callable(httpx.main))")
    shown = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    installed, click_loaded, cli_loaded, main_defined = shown.stdout.split()
    # the premise: click is in the lock (uvicorn needs it); were it gone, the line in app/cli could go too
    assert installed == "True"
    assert (click_loaded, cli_loaded, main_defined) == ("False", "False", "True")
