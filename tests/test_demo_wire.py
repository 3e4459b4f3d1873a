"""The demo speaks each wire format as its real server does, so real clients
and proxies understand it (issue 14, parts 4–6): Gemini streams partialArgs
only when asked and reads snake_case; Responses results as input_text parts
and failures; usage everywhere; each fault once per conversation; the
ledger's reuse on the default dialect; no self-contradictions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.demo.server import DemoServer
from app.runtime.wiring import open_runtime
from app.stream.dialects.gemini import STREAM_ARGUMENTS
from app.stream.history import Entry, User
from tests.conversations import converse, demo_config
from tests.demo_client import SUPPORT_TOOLS, request_body, run_turn, url_for


@pytest.fixture
def server() -> Iterator[DemoServer]:
    with DemoServer(speed=0) as srv:
        yield srv


def post(server: DemoServer, dialect: str, body: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The stream's JSON payloads, in order."""
    with httpx.stream("POST", url_for(server.base_url, dialect, path), json=body, timeout=20) as response:
        assert response.status_code == 200, response.read()
        text = b"".join(response.iter_raw()).decode()
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def gemini_calls(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p["functionCall"] for payload in payloads for c in payload.get("candidates", [])
            for p in c["content"]["parts"] if "functionCall" in p]


# -- Gemini ----------------------------------------------------------------------------


def test_gemini_sends_whole_args_unless_streamed_arguments_are_asked_for(server: DemoServer) -> None:
    path, body = request_body("gemini", [User("Show me order A-1042")])
    whole = gemini_calls(post(server, "gemini", body, path))
    assert whole == [{"name": "get_order", "args": {"order_id": "A-1042"}}]
    streamed = gemini_calls(post(server, "gemini", {**body, **STREAM_ARGUMENTS}, path))
    assert any("partialArgs" in c for c in streamed) and not any("args" in c for c in streamed)


def test_gemini_snake_case_stream_function_call_arguments_is_read(server: DemoServer) -> None:
    path, body = request_body("gemini", [User("Show me order A-1042")])
    body["tool_config"] = {"function_calling_config": {"stream_function_call_arguments": True}}
    assert any("partialArgs" in c for c in gemini_calls(post(server, "gemini", body, path)))


def test_gemini_snake_case_history_is_read_and_the_model_sees_its_calls(server: DemoServer) -> None:
    """What LiteLLM sends: function_call / function_response / parameters_json_schema."""
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Show me order A-1042"}]},
            {"role": "model", "parts": [{"function_call": {"name": "get_order", "args": {"order_id": "A-1042"}}}]},
            {"role": "user", "parts": [{"function_response": {"name": "get_order", "response": {
                "result": {"order_id": "A-1042", "status": "late", "placed": "2026-11-03"}}}}]},
        ],
        "tools": [{"function_declarations": [
            {"name": t.name, "description": t.description, "parameters_json_schema": t.parameters}
            for t in SUPPORT_TOOLS]}],
    }
    payloads = post(server, "gemini", body, "/v1beta/models/demo:streamGenerateContent?alt=sse")
    text = "".join(p.get("text", "") for payload in payloads for c in payload["candidates"]
                   for p in c["content"]["parts"])
    assert not gemini_calls(payloads)  # it does not call get_order again
    assert "A-1042 (late, placed 2026-11-03)" in text


# -- Responses ---------------------------------------------------------------------------


def test_responses_function_call_output_as_input_text_parts_is_joined(server: DemoServer) -> None:
    body = {"model": "demo", "stream": True, "input": [
        {"role": "user", "content": "Show me order A-1042"},
        {"type": "function_call", "call_id": "c1", "name": "get_order", "arguments": '{"order_id": "A-1042"}'},
        {"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_text", "text": '{"order_id": "A-1042", '},
            {"type": "input_text", "text": '"status": "late", "placed": "2026-11-03"}'}]},
    ], "tools": [{"type": "function", "name": t.name, "parameters": t.parameters} for t in SUPPORT_TOOLS]}
    payloads = post(server, "openai-responses", body, "/responses")
    text = "".join(p.get("delta", "") for p in payloads if p["type"] == "response.output_text.delta")
    assert "A-1042 (late, placed 2026-11-03)" in text


def test_responses_invalid_args_recovers_after_an_error_result(home: object) -> None:
    session = converse(["/demo invalid-args"], demo_config("openai-responses"))
    calls = [b for t in session.turns for b in t.blocks if b.type == "tool_call"]
    assert [c.state for c in calls] == ["rejected", "ran"]
    assert calls[1].arguments["order_id"] == "A-1042"


# -- usage -----------------------------------------------------------------------------------


def test_chat_sends_a_usage_chunk_only_when_asked(server: DemoServer) -> None:
    path, body = request_body("openai-chat", [User("Show me order A-1042")])
    asked = post(server, "openai-chat", body, path)  # callstream asks (stream_options.include_usage)
    assert asked[-1]["choices"] == [] and asked[-1]["usage"]["total_tokens"] > 0
    body.pop("stream_options")
    plain = post(server, "openai-chat", body, path)
    assert all("usage" not in p for p in plain)


@pytest.mark.parametrize("dialect", ["openai-responses", "anthropic", "gemini"])
def test_usage_in_every_other_format(server: DemoServer, dialect: str) -> None:
    path, body = request_body(dialect, [User("Show me order A-1042")])
    payloads = post(server, dialect, body, path)
    if dialect == "openai-responses":
        usage = payloads[-1]["response"]["usage"]
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    elif dialect == "anthropic":
        assert payloads[0]["message"]["usage"]["input_tokens"] > 0
        assert next(p for p in payloads if p["type"] == "message_delta")["usage"]["output_tokens"] > 0
    else:
        assert payloads[-1]["usageMetadata"]["totalTokenCount"] > 0


# -- faults once per conversation -------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["openai-chat", "anthropic"])
def test_a_fault_plays_once_per_conversation_not_once_per_server(server: DemoServer, dialect: str) -> None:
    history: list[Entry] = [User("/demo cutoff")]
    for _conversation in range(2):
        first = run_turn(server.base_url, dialect, history)
        assert first.outcome == "cut_off" and first.cause == "disconnect"
        retry = run_turn(server.base_url, dialect, history)
        assert retry.outcome == "complete"


# -- retry-after-dispatch on the default dialect -----------------------------------------------


def test_retry_after_dispatch_on_chat_files_the_ticket_once(home: object) -> None:
    """Chat calls end only with the stream, so on chat the scenario breaks the stream after the ticket
    call (the lookup's arguments do not parse): the ticket ran in a failed turn, and Ctrl+R continues
    from it — filed once — instead of a drop that would leave nothing run to protect."""
    from app.tools.approvals import Approvals

    runtime = open_runtime(config=demo_config("openai-chat"))
    session = runtime.session(None, approvals=Approvals.from_config(runtime.config, approve="create_ticket"))

    async def go() -> None:
        try:
            first = await session.send("/demo retry-after-dispatch")
            assert first.status == "failed" and session.can_retry()
            assert (await session.retry_last()).status == "done"
        finally:
            await session.aclose()
            runtime.close()

    asyncio.run(go())
    failed = session.turns[0]
    assert failed.result is not None and failed.result.outcome == "malformed"
    assert [(b.name, b.state) for b in failed.blocks if b.type == "tool_call"] == [
        ("create_ticket", "ran"), ("get_order", "not run")]
    assert "starting at at" not in (failed.note or "")
    every = [b for t in session.turns for b in t.blocks if b.type == "tool_call" and b.name == "create_ticket"]
    assert sum(1 for b in every if b.state == "ran" and not b.reused) == 1  # filed once
    ticket = json.loads(every[0].result or "{}")["ticket"]
    assert ticket in session.history[-1].text  # the answer quotes the ticket that was filed


# -- the demo does not contradict itself -----------------------------------------------------------


def test_one_order_found_is_named_not_one_of_them(server: DemoServer, home: object) -> None:
    session = converse(["Show me order A-1042"], demo_config())
    reply = session.history[-1]
    assert "Want me to open a ticket for A-1042?" in reply.text and "one of them" not in reply.text


@pytest.mark.parametrize("answer", ["Yes, open a ticket", "yes please", "Open a ticket"])
def test_a_yes_to_the_offered_ticket_opens_it_for_the_order_offered(server: DemoServer, home: object,
                                                                    answer: str) -> None:
    """The reply offers a ticket for the one order it found; the answer (no order named) opens the ticket
    for that order, not for whatever a search for "open" orders finds first."""
    session = converse(["Show me order A-1042", answer], demo_config())
    tickets = [b for t in session.turns for b in t.blocks if b.type == "tool_call" and b.name == "create_ticket"]
    assert len(tickets) == 1 and tickets[0].arguments["order_id"] == "A-1042"
    assert "A-1042" in session.history[-1].text


def test_a_new_request_after_an_offer_is_not_taken_for_a_yes(server: DemoServer, home: object) -> None:
    """A message that names a customer asks something new, even when it asks for a ticket: the search
    runs, and the ticket is for what it finds (A-1042 is Ada Lovelace's late order), not the one offered."""
    session = converse(["Show me order A-1043",
                        "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."],
                       demo_config())
    blocks = [b for t in session.turns for b in t.blocks if b.type == "tool_call"]
    assert "search_orders" in [b.name for b in blocks]
    tickets = [b for b in blocks if b.name == "create_ticket"]
    assert len(tickets) == 1 and tickets[0].arguments["order_id"] == "A-1042"


def test_a_yes_to_nothing_offered_opens_no_ticket(server: DemoServer, home: object) -> None:
    session = converse(["Yes please"], demo_config())
    assert not [b for t in session.turns for b in t.blocks if b.type == "tool_call" and b.name == "create_ticket"]


def test_the_ticket_body_states_the_date_get_order_returned_and_quotes_the_user(home: object) -> None:
    message = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."
    session = converse([message], demo_config())
    blocks = [b for t in session.turns for b in t.blocks if b.type == "tool_call"]
    late = json.loads(blocks[1].result or "{}")
    placed = next(o["placed"] for o in late["orders"] if o["order_id"] == "A-1042")
    body = blocks[2].arguments["body"]
    assert f"placed {placed}." in body and f'"{message}"' in body


@pytest.mark.parametrize("scenario", ["cutoff", "retry-after-dispatch", "truncated"])
def test_scenario_tickets_state_no_date_or_words_nobody_gave(server: DemoServer, scenario: str) -> None:
    turn = run_turn(server.base_url, "anthropic", [User(f"/demo {scenario}")])
    raw = turn.calls[0].arguments_raw
    assert "placed" not in raw and "Where is my parcel" not in raw and "Request to support" not in raw


def test_no_order_lists_the_same_product_twice(home: object) -> None:
    from app.demo.orders import SupportStore
    from app.files.paths import data_dir

    store = SupportStore(data_dir() / "support.db")
    for n in range(1001, 1061):
        items = store.get_order(f"A-{n}")["items"]
        skus = [i["sku"] for i in items]
        assert len(skus) == len(set(skus)), (n, skus)
