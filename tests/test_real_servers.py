"""Wire formats as real servers speak them (issue 14, parts 1–3).

The llama-server streams are real bytes captured from llama.cpp's server with
parallel calls (tests/captures/README.md says how). The Mistral, Ollama and
Gemini-compatible bodies are written frame by frame in the shapes those
servers send (research/reliability.md §2.4 Q6–Q8, Q18): calls with no
``index``, whole calls in one chunk, ``finish_reason: "stop"`` after a
complete call.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from app.net.stream import Timeouts, stream_once
from app.stream import StreamParser, Turn, assemble
from tests.faultserver import FaultServer, Reply

CAPTURES = Path(__file__).parent / "captures"
CHAT = (CAPTURES / "llama-server-chat-parallel.sse").read_bytes()
RESPONSES = (CAPTURES / "llama-server-responses-parallel.sse").read_bytes()
MESSAGES = (CAPTURES / "llama-server-messages-parallel.sse").read_bytes()
EXPECTED = [("get_weather", {"city": "Paris"}), ("get_time", {"city": "Tokyo"})]

#: The capture without its ``data: [DONE]`` frame: the shape of a server that never sends it.
DONE = b"data: [DONE]\n\n"
CHAT_NO_DONE = CHAT.replace(DONE, b"")


def calls(turn: Turn) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in turn.calls if c.final]


def chunk(delta: dict[str, object], finish: str | None = None, **extra: object) -> bytes:
    payload = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


# -- the captures ------------------------------------------------------------------


def test_llama_server_chat_parallel_calls_capture() -> None:
    assert CHAT.count(DONE) == 1 and b'"index":1' in CHAT
    turn = assemble([CHAT])
    assert turn.outcome == "complete" and turn.stop_reason == "tool_calls"
    assert calls(turn) == EXPECTED


def test_llama_server_responses_parallel_calls_without_output_index() -> None:
    """No output_index on any event; every output_item.done comes at the end."""
    assert b"output_index" not in RESPONSES
    turn = assemble([RESPONSES])
    assert turn.outcome == "complete", turn.error
    assert calls(turn) == EXPECTED
    assert all(c.id and c.id.startswith("call_") for c in turn.calls)  # call_id, not the item id


def test_llama_server_responses_capture_at_every_split_gives_the_same_turn() -> None:
    whole = assemble([RESPONSES]).to_dict()
    for cut in range(1, len(RESPONSES), 7):
        assert assemble([RESPONSES[:cut], RESPONSES[cut:]]).to_dict() == whole, cut


def test_responses_item_id_links_to_the_output_index_it_was_announced_with() -> None:
    """A server that sends output_index on the announcement only: the item id finds the slot."""
    def event(payload: dict[str, object]) -> bytes:
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    body = b"".join([
        event({"type": "response.created", "response": {"id": "r"}}),
        event({"type": "response.output_item.added", "output_index": 0,
               "item": {"id": "fc_a", "type": "function_call", "call_id": "call_a", "name": "f", "arguments": ""}}),
        event({"type": "response.output_item.added", "output_index": 1,
               "item": {"id": "fc_b", "type": "function_call", "call_id": "call_b", "name": "f", "arguments": ""}}),
        event({"type": "response.function_call_arguments.delta", "item_id": "fc_a", "delta": '{"x": 1}'}),
        event({"type": "response.function_call_arguments.delta", "item_id": "fc_b", "delta": '{"x": 2}'}),
        event({"type": "response.function_call_arguments.done", "item_id": "fc_b", "arguments": '{"x": 2}'}),
        event({"type": "response.function_call_arguments.done", "item_id": "fc_a", "arguments": '{"x": 1}'}),
        event({"type": "response.completed", "response": {"id": "r", "status": "completed"}}),
    ])
    turn = assemble([body])
    assert turn.outcome == "complete", turn.error
    assert [(c.id, c.arguments) for c in turn.calls] == [("call_a", {"x": 1}), ("call_b", {"x": 2})]


def test_llama_server_messages_parallel_calls_capture() -> None:
    turn = assemble([MESSAGES])
    assert turn.outcome == "complete" and turn.stop_reason == "tool_use"
    assert calls(turn) == EXPECTED


# -- chat without [DONE]: both sides of the line --------------------------------------


def test_chat_without_done_after_finish_reason_and_a_clean_end_is_complete() -> None:
    turn = assemble([CHAT_NO_DONE])
    assert turn.outcome == "complete" and turn.stop_reason == "tool_calls"
    assert calls(turn) == EXPECTED


@pytest.mark.parametrize("cause", ["disconnect", "timeout", "cancelled"])
def test_chat_without_done_after_finish_reason_then_a_reset_or_timeout_is_cut_off(cause: str) -> None:
    parser = StreamParser()
    parser.feed(CHAT_NO_DONE)
    turn = parser.close(cause)
    assert turn.outcome == "cut_off" and turn.cause == cause
    assert not any(c.final for c in turn.calls)


def test_chat_clean_end_before_the_finish_reason_is_cut_off() -> None:
    before_finish = CHAT_NO_DONE[: CHAT_NO_DONE.index(b'"finish_reason":"tool_calls"')].rsplit(b"\n\n", 1)[0] + b"\n\n"
    turn = assemble([before_finish])
    assert turn.outcome == "cut_off" and not any(c.final for c in turn.calls)


def _over_http(reply: Reply) -> Turn:
    async def go() -> Turn:
        with FaultServer() as server:
            server.replies.append(reply)
            async with httpx.AsyncClient() as client:
                return await stream_once(client, server.url + "/v1/chat/completions", {}, {}, StreamParser(),
                                         Timeouts(2.0, 2.0, 10.0), lambda updates: None)

    return asyncio.run(go())


def test_chat_without_done_over_http_a_clean_chunked_end_is_complete() -> None:
    turn = _over_http(Reply(CHAT_NO_DONE, chunk=97))
    assert turn.outcome == "complete" and calls(turn) == EXPECTED


@pytest.mark.parametrize("fault", ["drop", "reset"])
def test_chat_without_done_over_http_a_drop_or_reset_after_the_finish_reason_is_cut_off(fault: str) -> None:
    reply = Reply(CHAT_NO_DONE, chunk=97, cut_at=len(CHAT_NO_DONE)) if fault == "drop" else \
        Reply(CHAT_NO_DONE, chunk=97, reset=True)
    turn = _over_http(reply)
    assert turn.outcome == "cut_off" and turn.cause == "disconnect"
    assert not any(c.final for c in turn.calls)


# -- calls without index, and finish_reason "stop" after a complete call ----------------


def test_mistral_whole_calls_without_index_and_the_finish_in_the_same_chunk() -> None:
    body = chunk({"role": "assistant", "content": ""}) + chunk(
        {"content": None, "tool_calls": [
            {"id": "D681PevKs", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "Qa9bC7dEf", "function": {"name": "get_time", "arguments": '{"city": "Tokyo"}'}},
        ]},
        "tool_calls", usage={"prompt_tokens": 90, "total_tokens": 120, "completion_tokens": 30},
    ) + DONE
    turn = assemble([body])
    assert turn.outcome == "complete" and calls(turn) == EXPECTED
    assert [c.id for c in turn.calls] == ["D681PevKs", "Qa9bC7dEf"]


def test_ollama_v1_whole_call_without_index_then_finish_stop() -> None:
    body = chunk({"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_m4a5j3ab", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]}, system_fingerprint="fp_ollama") + \
        chunk({"role": "assistant", "content": ""}, "stop") + DONE
    turn = assemble([body])
    assert turn.outcome == "complete" and turn.stop_reason == "stop"
    assert calls(turn) == [("get_weather", {"city": "Paris"})]


def test_ollama_v1_parallel_calls_all_at_index_zero_with_distinct_ids() -> None:
    body = chunk({"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_a1", "index": 0, "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]}) + \
        chunk({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_b2", "index": 0, "type": "function",
             "function": {"name": "get_time", "arguments": '{"city":"Tokyo"}'}}]}) + \
        chunk({"role": "assistant", "content": ""}, "stop") + DONE
    turn = assemble([body])
    assert turn.outcome == "complete" and calls(turn) == EXPECTED


def test_gemini_openai_compatible_calls_without_index_split_arguments_and_finish_stop() -> None:
    signature = {"extra_content": {"google": {"thought_signature": "CiQB0e2Kb1"}}}
    body = chunk({"role": "assistant", "tool_calls": [
        {**signature, "id": "function-call-1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city":'}}]}) + \
        chunk({"tool_calls": [{"function": {"arguments": ' "Paris"}'}}]}) + \
        chunk({"tool_calls": [{"id": "function-call-2", "type": "function",
                               "function": {"name": "get_time", "arguments": '{"city": "Tokyo"}'}}]}, "stop") + DONE
    turn = assemble([body])
    assert turn.outcome == "complete" and turn.stop_reason == "stop"
    assert calls(turn) == EXPECTED


def test_finish_stop_after_a_complete_call_without_done_and_a_clean_end_is_complete() -> None:
    body = chunk({"tool_calls": [{"id": "c1", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
                 "stop")
    turn = assemble([body])
    assert turn.outcome == "complete" and calls(turn) == [("get_weather", {"city": "Paris"})]


def test_the_openai_sdk_helper_refuses_the_llama_server_responses_capture() -> None:
    """The oracle fails where callstream does not: its accumulator keys by output_index."""
    import openai

    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=RESPONSES))
    client = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1", max_retries=0,
                           http_client=httpx.Client(transport=transport))
    with pytest.raises(Exception, match="output index"):  # noqa: B017 - the SDK's own message is the point
        with client.responses.stream(model="m", input="x") as stream:
            for _ in stream:
                pass
