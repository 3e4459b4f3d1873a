"""The conversation loop over real HTTP: retries, stated failures, the
interruption note, cancellation, and exactly-once across retries."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.chat.events import AttemptFailed, AttemptStarted, ChatEvent, ExchangeDone
from app.chat.providers import Endpoint
from app.chat.session import ChatSession
from app.config import CommandToolConfig
from app.conversation import Assistant, ToolResult, User
from app.ledger import SqliteLedger
from app.net.stream import Timeouts
from app.tools.base import Tool, ToolContext
from app.tools.command import command_tool
from app.tools.registry import Registry
from tests import streamgen
from tests.faultserver import FaultServer, Reply


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with FaultServer() as srv:
        yield srv


def session_for(server: FaultServer, tmp_path: Path, dialect: str = "anthropic", registry: Registry | None = None,
                **kwargs: Any) -> ChatSession:
    endpoint = Endpoint(dialect, server.url, "m", "test")
    return ChatSession(endpoint, registry or Registry.default(tmp_path), SqliteLedger(tmp_path / "ledger.db"), "conv-1",
                       backoff=0.01, timeouts=Timeouts(2.0, 2.0, 10.0), **kwargs)


def send(session: ChatSession, text: str, events: list[ChatEvent] | None = None) -> ExchangeDone:
    if events is not None:
        session.listeners.append(events.append)

    async def go() -> ExchangeDone:
        try:
            return await session.send(text)
        finally:
            await session.aclose()

    return asyncio.run(go())


TEXT_ONLY = [("text", "Hello there.")]
ORDER_CALL = [("text", "Checking. ")] + streamgen.call_script(0, "t1", "get_order", '{"order_id": "A-1042"}')


def test_a_plain_reply(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(TEXT_ONLY, stop_reason="end_turn")))
    session = session_for(server, tmp_path)
    assert send(session, "hi").status == "done"
    assert session.history == [User("hi"), Assistant("Hello there.")]


def test_a_call_runs_and_its_result_goes_into_the_next_request(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL)))
    server.replies.append(Reply(streamgen.anthropic([("text", "It is late.")], stop_reason="end_turn")))
    session = session_for(server, tmp_path)
    assert send(session, "where is A-1042?").status == "done"
    second = server.requests[1]["body"]["messages"]
    assert second[1]["content"][1] == {"type": "tool_use", "id": "t1", "name": "get_order",
                                        "input": {"order_id": "A-1042"}}
    result = second[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "t1"
    assert json.loads(result["content"])["order"]["customer"] == "Ada Lovelace"
    call = session.turns[0].blocks[1]
    assert call.state == "ran" and set(call.timings) >= {"waiting", "running", "ran"}


def test_429_then_success_retries_with_a_note(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(b'{"error":{"message":"slow down"}}', status=429, headers={"Retry-After": "0"}))
    server.replies.append(Reply(streamgen.anthropic(TEXT_ONLY, stop_reason="end_turn")))
    events: list[ChatEvent] = []
    session = session_for(server, tmp_path)
    assert send(session, "hi", events).status == "done"
    notes = [e.message for e in events if isinstance(e, AttemptFailed)]
    assert notes == ["Attempt 1 failed: HTTP 429: slow down. Retrying in 0.0 s."]
    assert session.turns[0].attempts == 2


def test_a_4xx_is_not_retried_and_shows_the_provider_message(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(b'{"error":{"message":"model not found: m"}}', status=404))
    session = session_for(server, tmp_path)
    done = send(session, "hi")
    assert done.status == "failed" and len(server.requests) == 1
    assert session.turns[0].result.error == "HTTP 404: model not found: m"  # type: ignore[union-attr]


def test_a_cut_off_retry_replaces_the_failed_attempts_prose(server: FaultServer, tmp_path: Path) -> None:
    first = streamgen.anthropic([("text", "Half a thought")], stop_reason=None, stop=False)
    server.replies.append(Reply(first, cut_at=len(first)))
    server.replies.append(Reply(streamgen.anthropic([("text", "A whole thought.")], stop_reason="end_turn")))
    events: list[ChatEvent] = []
    session = session_for(server, tmp_path)
    assert send(session, "hi", events).status == "done"
    assert [e.attempt for e in events if isinstance(e, AttemptStarted)] == [1, 2]
    assert [b.text for b in session.turns[0].blocks] == ["A whole thought."]
    assert session.history[-1] == Assistant("A whole thought.")


def test_retries_exhausted_is_a_stated_failure_with_the_note(server: FaultServer, tmp_path: Path) -> None:
    body = streamgen.anthropic([("text", "Filing it. ")] + streamgen.call_script(0, "t1", "create_ticket",
                                                                              '{"order_id": "A-1042", "subj'),
                               stop_reason=None, stop=False)
    for _ in range(3):
        server.replies.append(Reply(body, cut_at=len(body)))
    session = session_for(server, tmp_path, retries=2)
    done = send(session, "file a ticket")
    assert done.status == "failed" and len(server.requests) == 3
    note = "Interrupted: the connection dropped while create_ticket was being prepared; it was not run."
    assert session.turns[0].note == note
    assert session.history[-1] == Assistant("Filing it. ", [], note)  # prose + note, no call, no result
    call = session.turns[0].blocks[1]
    assert call.state == "not run"


def test_truncated_and_malformed_are_not_retried(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL[:3], stop_reason="max_tokens")))
    session = session_for(server, tmp_path)
    assert send(session, "x").status == "failed" and len(server.requests) == 1
    assert session.turns[0].note and "output limit" in session.turns[0].note


def test_schema_rejection_is_answered_in_band_and_the_conversation_goes_on(server: FaultServer,
                                                                          tmp_path: Path) -> None:
    bad = streamgen.call_script(0, "t1", "create_ticket", '{"order_id": 1042}')
    server.replies.append(Reply(streamgen.anthropic(bad)))
    server.replies.append(Reply(streamgen.anthropic([("text", "Sorry.")], stop_reason="end_turn")))
    session = session_for(server, tmp_path)
    assert send(session, "x").status == "done"
    call = session.turns[0].blocks[0]
    assert call.state == "rejected" and "is not of type 'string'" in (call.result or "")
    tool_result = server.requests[1]["body"]["messages"][2]["content"][0]
    assert tool_result["is_error"] is True and "Nothing was run" in tool_result["content"]


def test_cancel_mid_stream_is_a_stated_failure(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL), chunk=20, delay=0.2))
    session = session_for(server, tmp_path)

    async def go() -> ExchangeDone:
        task = asyncio.create_task(session.send("x"))
        await asyncio.sleep(0.5)
        session.cancel()
        try:
            return await task
        finally:
            await session.aclose()

    done = asyncio.run(go())
    assert done.status == "cancelled"
    assert session.turns[0].note and session.turns[0].note.startswith("Interrupted: the turn was cancelled")
    assert all(b.state == "not run" for b in session.turns[0].blocks if b.type == "tool_call")


def test_cancel_while_a_tool_runs_records_it_failed_cancelled(server: FaultServer, tmp_path: Path) -> None:
    started = asyncio.Event()

    async def slow(arguments: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    registry = Registry([Tool("get_order", "", {"type": "object"}, slow, read_only=False)])
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL)))
    session = session_for(server, tmp_path, registry=registry)

    async def go() -> ExchangeDone:
        task = asyncio.create_task(session.send("x"))
        await asyncio.wait_for(started.wait(), 10)
        session.cancel()
        try:
            return await task
        finally:
            await session.aclose()

    assert asyncio.run(go()).status == "cancelled"
    call = session.turns[0].blocks[1]
    assert call.state == "failed" and "cancelled" in (call.result or "")
    assert isinstance(session.history[-1], ToolResult)  # it did start: its real (failed) result is kept


def test_a_command_tool_appends_exactly_once_across_three_retries(server: FaultServer, tmp_path: Path) -> None:
    log = tmp_path / "appended.txt"
    script = tmp_path / "append.py"
    script.write_text("import json, os, sys\nargs = json.load(sys.stdin)\n"
                      f"open({str(log)!r}, 'a').write(os.environ['CALLSTREAM_IDEMPOTENCY_KEY'] + ' ' + args['line']"
                      " + '\\n')\nprint('ok')\n")
    tool = command_tool(CommandToolConfig("append_line", [sys.executable, str(script)],
                                          parameters={"type": "object", "properties": {"line": {"type": "string"}},
                                                      "required": ["line"]}))
    registry = Registry([tool])
    call = streamgen.call_script(0, "t1", "append_line", '{"line": "hello"}')
    dying = streamgen.anthropic([("text", "Appending. ")] + call + [("start", 1, "t2", "append_line")],
                                stop_reason=None, stop=False)
    for _ in range(3):  # the call ends, it is dispatched, then the stream dies
        server.replies.append(Reply(dying, cut_at=len(dying)))
    server.replies.append(Reply(streamgen.anthropic([("text", "Appending. ")] + call)))
    server.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
    session = session_for(server, tmp_path, registry=registry, retries=3)
    assert send(session, "append hello").status == "done"
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].endswith(" hello")
    assert session.turns[0].attempts == 4
    final_call = session.turns[0].blocks[1]
    assert final_call.state == "ran" and final_call.reused


def test_round_limit(server: FaultServer, tmp_path: Path) -> None:
    for i in range(3):
        server.replies.append(Reply(streamgen.anthropic(streamgen.call_script(0, f"t{i}", "get_order",
                                                                             '{"order_id": "A-1042"}'))))
    session = session_for(server, tmp_path, max_rounds=3)
    done = send(session, "loop forever")
    assert done.status == "round_limit" and "3 rounds" in (done.message or "")


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_every_dialect_through_the_loop(server: FaultServer, tmp_path: Path, dialect: str) -> None:
    encode = streamgen.ENCODERS[dialect]
    server.replies.append(Reply(encode(ORDER_CALL)))
    server.replies.append(Reply(encode([("text", "It is late.")], **({"finish": "stop"} if dialect == "openai-chat"
                                                                      else {}))))
    session = session_for(server, tmp_path, dialect=dialect)
    assert send(session, "where is A-1042?").status == "done"
    assert isinstance(session.history[2], ToolResult) and "Ada Lovelace" in session.history[2].content
    assert session.history[-1] == Assistant("It is late.")
