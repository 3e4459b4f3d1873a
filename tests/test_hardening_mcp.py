"""Issue 24's MCP servers that misbehave (items 11, 12, 14): an answer lost
after the call was sent is ``unknown``, a call never sent is ``not run``, a
JSON-RPC error is a failed call in the server's words; a result past
``tool_output_bytes`` is cut with the one marker; a banner on stdout and a
tool list nested too deep are stated failures. Every server here is
``tests/hostile_mcp.py`` (raw JSON-RPC, no SDK), over stdio or Streamable
HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.mcp.wire import TAIL, LineCutter
from tests import streamgen
from tests.conftest import ROOT, run_cli
from tests.faultserver import FaultServer, Reply
from tests.hostile_mcp import acted, write_script
from tests.mcp_fixture import serving_http

OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}}
EFFECT = {"name": "effect", "description": "Changes the world.", "inputSchema": OBJECT}
READ = {"name": "read", "description": "Reads.", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}}


def provider(url: str) -> str:
    return f"""
default = "local"
[providers.local]
provider = "openai-chat"
model = "m"
base_url = "{url}/v1"
retries = 0
"""


def stdio_server(name: str, script: Path, **extra: Any) -> str:
    table = {"command": sys.executable, "args": ["-m", "tests.hostile_mcp", "stdio"], "cwd": str(ROOT),
             "env": {"HOSTILE_SCRIPT": str(script)}, "startup_timeout": 60, **extra}
    return f"[mcp.{name}]\n" + "".join(f"{k} = {json.dumps(v) if not isinstance(v, dict) else _inline(v)}\n"
                                       for k, v in table.items())


def http_server(name: str, url: str, **extra: Any) -> str:
    table = {"url": url, "startup_timeout": 60, **extra}
    return f"[mcp.{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())


def _inline(table: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in table.items()) + " }"


def calls(*pairs: tuple[str, dict[str, Any]]) -> bytes:
    script: list[Any] = []
    for slot, (tool, arguments) in enumerate(pairs):
        script += streamgen.call_script(slot, f"c{slot}", tool, json.dumps(arguments))
    return streamgen.openai_chat(script)


DONE = streamgen.openai_chat([("text", "Done.")], finish="stop")


@pytest.fixture
def model() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture
def hostile_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A hostile server over Streamable HTTP; the test writes its script (``write_script``) before a call."""
    state = tmp_path / "http"
    script = write_script(state, tools=[EFFECT, READ])
    monkeypatch.setenv("HOSTILE_SCRIPT", str(script))
    with serving_http("tests.hostile_mcp") as url:
        yield state, url


def _saved(conversations: int) -> list[str]:
    code, listing, err = run_cli("transcripts", "--json")
    assert code == 0, err
    rows = json.loads(listing)
    assert len(rows) == conversations
    return [row["id"] for row in rows]


# -- item 11: unknown, not run, failed -------------------------------------------------------------------------------


def test_a_side_effect_answered_http_502_after_the_server_acted_is_unknown(
        home: Path, model: FaultServer, hostile_http: tuple[Path, str]) -> None:
    state, url = hostile_http
    write_script(state, tools=[EFFECT], calls={"effect": [{"status": 502}]})
    (home / "config.toml").write_text(provider(model.url) + http_server("h", url, approval="never"))
    model.replies += [Reply(calls(("h__effect", {"n": 1}))), Reply(DONE)]
    code, out, err = run_cli("ask", "do it")
    assert "Traceback" not in out + err
    assert "⚙ h__effect · unknown" in out
    assert "the h server answered HTTP 502 with no result; it may have acted" in out
    assert len(acted(state)) == 1  # it had acted: unknown was the honest word
    code, ledger, _ = run_cli("ledger", "--json")
    assert [row["state"] for row in json.loads(ledger)] == ["unknown"]
    assert _saved(1)


def test_a_side_effect_whose_result_the_sdk_rejects_is_unknown(home: Path, model: FaultServer, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s", tools=[EFFECT], calls={"effect": [{"malformed": True}]})
    (home / "config.toml").write_text(provider(model.url) + stdio_server("h", script, approval="never"))
    model.replies += [Reply(calls(("h__effect", {"n": 1}))), Reply(DONE)]
    code, out, err = run_cli("ask", "do it")
    assert "Traceback" not in out + err
    assert "⚙ h__effect · unknown" in out
    assert "→ Error: the h server answered with a result callstream cannot read (content: " in out
    assert len(acted(tmp_path / "s")) == 1
    code, ledger, _ = run_cli("ledger", "--json")
    [row] = json.loads(ledger)
    assert row["state"] == "unknown" and "; it may have acted. Its outcome is unknown" in row["result"]


def test_a_json_rpc_error_answer_is_a_failed_call_in_the_servers_words(
        home: Path, model: FaultServer, tmp_path: Path) -> None:
    """-32000 is the SDK's "connection closed" and also the first server-error
    code servers use: the server's answer is its own failure, not "went away"."""
    script = write_script(tmp_path / "s", tools=[EFFECT], calls={"effect": [{"error": [-32000, "database is locked"]}]})
    (home / "config.toml").write_text(provider(model.url) + stdio_server("h", script, approval="never"))
    model.replies += [Reply(calls(("h__effect", {"n": 1}))), Reply(DONE)]
    code, out, err = run_cli("ask", "do it")
    assert "Traceback" not in out + err
    assert "⚙ h__effect · failed\n    → Error: h answered with an error: database is locked" in out
    assert "went away" not in out and "unknown" not in out
    code, listed, _ = run_cli("mcp", "list")
    assert code == 0 and "h: 2 tools" not in listed and "h: 1 tools" in listed  # still up: it never went away


def test_a_call_never_sent_because_the_restart_failed_is_not_run(
        home: Path, model: FaultServer, tmp_path: Path) -> None:
    """The server answers, then exits; starting it again fails. The next
    call was never sent: ``not run`` (it cannot have happened), not unknown."""
    script = write_script(tmp_path / "s", tools=[EFFECT], fail_start_after=1,
                          calls={"effect": [{"answer": "done once", "exit_after": True}]})
    (home / "config.toml").write_text(provider(model.url) + stdio_server("h", script, approval="never"))
    model.replies += [Reply(calls(("h__effect", {"n": 1}))), Reply(calls(("h__effect", {"n": 2}))), Reply(DONE)]
    code, out, err = run_cli("ask", "do it twice")
    assert "Traceback" not in out + err
    assert "⚙ h__effect · ran\n    → done once" in out
    assert "⚙ h__effect · not run\n    → Not run: the h server is not running, so the call was never sent" in out
    assert "unknown" not in out
    assert [entry["arguments"] for entry in acted(tmp_path / "s")] == [{"n": 1}]
    code, ledger, _ = run_cli("ledger", "--json")
    assert sorted(row["state"] for row in json.loads(ledger)) == ["cancelled", "ran"]


# -- item 12: results within [limits] --------------------------------------------------------------------------------


LIMITS = "\n[limits]\ntool_output_bytes = 65536\n"


def test_a_10_mb_mcp_result_is_cut_at_tool_output_bytes_with_the_marker(
        home: Path, model: FaultServer, tmp_path: Path) -> None:
    size = 10 * 1024 * 1024
    script = write_script(tmp_path / "s", tools=[READ], calls={"read": [{"big": size}]})
    (home / "config.toml").write_text(provider(model.url) + LIMITS + stdio_server("h", script))
    model.replies += [Reply(calls(("h__read", {"n": 1}))), Reply(DONE)]
    code, out, err = run_cli("ask", "read it")
    assert code == 0 and "Traceback" not in out + err
    assert "⚙ h__read · ran\n    → 0123456789abcdef" in out
    told = json.dumps(model.requests[1]["body"], ensure_ascii=False)
    assert "bytes cut]" in told and len(told) < 200_000  # not sent whole, and the cut is stated
    cut = int(told.split("[… ")[1].split(" bytes cut]")[0])
    assert size - 65536 <= cut < size - 65536 + 64  # what the text lost past the limit (and the answer's closing)
    conversation = _saved(1)[0]
    code, exported, _ = run_cli("export", conversation, "--format", "json")
    assert code == 0 and "bytes cut]" in exported and len(exported) < 400_000  # not stored whole, nor twice
    database = home / "home" / "callstream.db"
    assert database.stat().st_size < 2 * 1024 * 1024


def test_a_100_mb_mcp_result_over_http_is_cut_within_the_timeout_and_memory(
        home: Path, model: FaultServer, hostile_http: tuple[Path, str]) -> None:
    """Streamed by the server, never held whole here: the answer arrives cut,
    the call ends ``ran`` (not timed out at tool_timeout), and this process
    grows by far less than the answer."""
    state, url = hostile_http
    size = 100 * 1024 * 1024
    write_script(state, tools=[READ], calls={"read": [{"big": size}]})
    (home / "config.toml").write_text(provider(model.url) + LIMITS + http_server("h", url, tool_timeout=60))
    model.replies += [Reply(calls(("h__read", {"n": 1}))), Reply(DONE)]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, out, err = run_cli("ask", "read it")
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert code == 0 and "Traceback" not in out + err
    assert "⚙ h__read · ran\n    → 0123456789abcdef" in out
    told = json.dumps(model.requests[1]["body"], ensure_ascii=False)
    cut = int(told.split("[… ")[1].split(" bytes cut]")[0])
    assert size - 65536 <= cut < size - 65536 + 64  # counted as it streamed past, not guessed at
    assert len(told) < 200_000
    assert grown_kib < 48 * 1024, f"grew by {grown_kib} KiB"


# -- item 14: a banner on stdout, a list nested too deep ---------------------------------------------------------------


def test_a_stdio_server_that_prints_a_banner_on_stdout_fails_in_one_line_naming_its_log(
        home: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s", tools=[READ], banner="Welcome to Hostile MCP v1.0 (c) nobody")
    (home / "config.toml").write_text(stdio_server("chatty", script) + stdio_server("fine", script))
    code, out, err = run_cli("mcp", "list")
    assert "Traceback" not in out + err and "Failed to parse" not in out + err
    assert code == 1
    line = next(line for line in out.splitlines() if line.startswith("chatty:"))
    log = home / "home" / "mcp-logs" / "chatty.log"
    assert line == ("chatty: failed: it printed 'Welcome to Hostile MCP v1.0 (c) nobody' on stdout, where a stdio "
                    "MCP server may write only JSON-RPC messages (a banner or a log line belongs on stderr) "
                    f"(log: {log})")
    assert "fine: failed: it printed" in out  # the same script: each server says it for itself


def test_a_tool_list_nested_too_deep_is_reported_as_such_not_as_no_answer(home: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s", deep=5000)
    (home / "config.toml").write_text(stdio_server("deep", script, startup_timeout=600))
    code, out, err = run_cli("mcp", "list")
    assert code == 1 and "Traceback" not in out + err
    assert "deep: failed: connected, but tools/list failed: its answer is nested deeper than 100 levels" in out
    assert "did not" not in out  # not the start-up wait (600 s) running out


# -- the reader under both transports: any chunking, the same messages ------------------------------------------------


@given(lines=st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" ")), max_size=12),
       cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20))
def test_any_chunking_of_a_server_stream_reads_as_the_same_bounded_messages(lines: list[bytes],
                                                                           cuts: list[int]) -> None:
    """Lines up to the cap come out whole; a longer one comes out as its
    head, its tail and its true length, never held whole."""
    cap, keep = 200, 64
    stream = b"".join(line + b"\n" for line in lines)
    pieces = [stream[a:b] for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(stream)], strict=True)]
    cutter = LineCutter(cap, keep)
    out = [item for piece in pieces for item in cutter.feed(piece)] + cutter.close()
    expected: list[Any] = [line if len(line) <= cap else (line[:keep], line[-TAIL:], len(line)) for line in lines]
    assert out == expected


def test_a_side_effect_answered_with_a_body_that_is_not_json_is_unknown_without_a_traceback(
        home: Path, model: FaultServer, hostile_http: tuple[Path, str]) -> None:
    """The SDK logs a traceback for such a body: it goes to mcp-logs/sdk.log,
    not the terminal, and the call is unknown (the server may have acted)."""
    state, url = hostile_http
    write_script(state, tools=[EFFECT], calls={"effect": [{"garbage": True}]})
    (home / "config.toml").write_text(provider(model.url) + http_server("h", url, approval="never"))
    model.replies += [Reply(calls(("h__effect", {"n": 1}))), Reply(DONE)]
    code, out, err = run_cli("ask", "do it")
    assert "Traceback" not in out + err and "Error parsing JSON response" not in out + err
    assert "⚙ h__effect · unknown\n    → Error: the h server answered, but not with JSON-RPC callstream can read" in out
    assert len(acted(state)) == 1
    assert "Error parsing JSON response" in (home / "home" / "mcp-logs" / "sdk.log").read_text()
