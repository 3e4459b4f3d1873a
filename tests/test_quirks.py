"""Each server quirk of DESIGN.md ("Server quirks"), absorbed by the assembler,
one test each, named after it. Where the official SDK gets the quirk wrong,
the test says so and shows it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.stream import assemble
from tests import oracles

BASE = {"id": "chatcmpl-q", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chunk(
    *tool_calls: dict[str, Any], content: str | None = None, finish: str | None = None, choices: bool = True
) -> bytes:
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls:
        delta["tool_calls"] = list(tool_calls)
    payload = {**BASE, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else []}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def tc(index: int | None = None, id: str | None = None, name: str | None = None, args: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function"}
    if index is not None:
        out["index"] = index
    if id is not None:
        out["id"] = id
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    out["function"] = function
    return out


DONE = b"data: [DONE]\n\n"


def calls(body: bytes) -> list[tuple[str | None, str, Any, bool]]:
    turn = assemble([body])
    return [(c.id, c.name, c.arguments, c.final) for c in turn.calls]


def test_quirk_repeated_id_and_name_on_every_chunk() -> None:
    body = b"".join(
        [
            chunk(tc(0, "call_1", "read_file", "")),
            chunk(tc(0, "call_1", "read_file", '{"path":')),
            chunk(tc(0, "call_1", "read_file", '"a.rs"}')),
            chunk(finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("call_1", "read_file", {"path": "a.rs"}, True)]
    # the openai SDK concatenates every string field: "call_1call_1call_1"
    sdk = oracles.openai_chat(body)["calls"][0]
    assert sdk["name"] == "read_fileread_fileread_file"


def test_quirk_whole_arguments_resent_in_final_chunk() -> None:
    body = b"".join(
        [
            chunk(tc(0, "c", "weather", "")),
            chunk(tc(0, None, None, '{"city": ')),
            chunk(tc(0, None, None, '"Paris"}')),
            chunk(tc(0, None, None, '{"city": "Paris"}'), finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("c", "weather", {"city": "Paris"}, True)]


def test_quirk_resent_arguments_that_differ_are_refused() -> None:
    body = b"".join(
        [
            chunk(tc(0, "c", "weather", '{"city": "Paris"}')),
            chunk(tc(0, None, None, '{"city": "Lyon!"}'), finish="tool_calls"),
            DONE,
        ]
    )
    turn = assemble([body])
    assert turn.outcome == "malformed"
    assert not turn.calls[0].final


def test_quirk_empty_object_placeholder_then_real_object() -> None:
    body = b"".join(
        [
            chunk(tc(0, "c", "stock", "{}")),
            chunk(tc(0, None, None, '{"stock":')),
            chunk(tc(0, None, None, '"MSFT"}'), finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("c", "stock", {"stock": "MSFT"}, True)]


def test_quirk_missing_index() -> None:
    body = b"".join(
        [
            chunk(tc(None, "c1", "a", "")),
            chunk(tc(None, None, None, '{"x":')),
            chunk(tc(None, None, None, "1}")),
            chunk(tc(None, "c2", "b", '{"y":2}')),
            chunk(finish="stop"),
            DONE,
        ]
    )
    assert calls(body) == [("c1", "a", {"x": 1}, True), ("c2", "b", {"y": 2}, True)]
    # the openai SDK crashes on a tool call delta without an index
    with pytest.raises((RuntimeError, TypeError)):
        oracles.openai_chat(body)


def test_quirk_index_always_zero_while_ids_differ() -> None:
    body = b"".join(
        [
            chunk(tc(0, "c1", "read", '{"path":"a.rs"}')),
            chunk(tc(0, "c2", "read", '{"path":"b.rs"}')),
            chunk(finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("c1", "read", {"path": "a.rs"}, True), ("c2", "read", {"path": "b.rs"}, True)]
    # the openai SDK merges them into one call, "c1c2" / "readread", whose
    # arguments are two documents that do not parse
    with pytest.raises(json.JSONDecodeError):
        oracles.openai_chat(body)


def test_quirk_id_only_on_first_chunk_then_empty_string() -> None:
    body = b"".join(
        [
            chunk(tc(0, "call_x", "lookup", "")),
            chunk(tc(0, "", None, '{"q":')),
            chunk(tc(0, "", None, '"z"}')),
            chunk(finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("call_x", "lookup", {"q": "z"}, True)]


def test_quirk_name_split_across_chunks() -> None:
    body = b"".join(
        [
            chunk(tc(0, "c", "edit_ex", "")),
            chunk(tc(0, None, "isting_file", '{"f":1}')),
            chunk(finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("c", "edit_existing_file", {"f": 1}, True)]


def test_quirk_name_arrives_after_id_and_arguments() -> None:
    body = b"".join(
        [
            chunk(tc(0, "c", None, '{"a":')),
            chunk(tc(0, None, "late_name", "1}")),
            chunk(finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("c", "late_name", {"a": 1}, True)]


def test_quirk_arguments_as_an_object() -> None:
    body = b"".join(
        [
            chunk(tc(0, "c", "weather", {"city": "Oslo", "days": 3})),
            chunk(finish="tool_calls"),
            DONE,
        ]
    )
    assert calls(body) == [("c", "weather", {"city": "Oslo", "days": 3}, True)]


def test_quirk_no_argument_tool_with_no_delta() -> None:
    body = b"".join([chunk(tc(0, "c", "now")), chunk(finish="tool_calls"), DONE])
    assert calls(body) == [("c", "now", {}, True)]
    anthropic_body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1"}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"tool_use","id":"t1","name":"now","input":{}}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assert calls(anthropic_body) == [("t1", "now", {}, True)]


def test_quirk_no_argument_tool_not_final_when_cut_off() -> None:
    body = chunk(tc(0, "c", "now"))  # no finish, no [DONE]
    turn = assemble([body])
    assert turn.outcome == "cut_off" and not turn.calls[0].final


def test_quirk_arguments_only_in_the_done_event() -> None:
    events = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "function_call", "id": "fc", "call_id": "call_9", "name": "get", "arguments": ""},
        },
        {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "fc", "arguments": '{"id": 9}'},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    body = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    assert calls(body) == [("call_9", "get", {"id": 9}, True)]


def test_quirk_done_event_differs_from_deltas_is_refused() -> None:
    events = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "function_call", "id": "fc", "call_id": "c", "name": "get", "arguments": ""},
        },
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"id": 9}'},
        {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": '{"id": 8}'},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    body = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
    turn = assemble([body])
    assert turn.outcome == "malformed" and not turn.calls[0].final


def test_quirk_finish_reason_stop_with_complete_calls() -> None:
    body = b"".join([chunk(tc(0, "c", "f", '{"a":1}')), chunk(finish="stop"), DONE])
    assert calls(body) == [("c", "f", {"a": 1}, True)]


def test_quirk_tool_calls_reported_for_calls_cut_off_by_the_output_limit() -> None:
    body = b"".join([chunk(tc(0, "c", "create_ticket", '{"title": "Refund for ord')), chunk(finish="tool_calls"), DONE])
    turn = assemble([body])
    assert turn.outcome == "malformed"
    assert not turn.calls[0].final and "do not parse" in (turn.calls[0].problem or "")


def test_quirk_two_entries_with_the_same_index_in_one_chunk() -> None:
    body = b"".join([chunk(tc(0, "c", "f", '{"a":'), tc(0, None, None, "1}")), chunk(finish="tool_calls"), DONE])
    assert calls(body) == [("c", "f", {"a": 1}, True)]


def test_quirk_finish_reason_repeated_in_a_trailing_usage_chunk() -> None:
    usage = {
        **BASE,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        "usage": {"total_tokens": 5},
    }
    body = b"".join(
        [
            chunk(tc(0, "c", "f", '{"a":1}')),
            chunk(finish="tool_calls"),
            b"data: " + json.dumps(usage).encode() + b"\n\n",
            DONE,
        ]
    )
    assert calls(body) == [("c", "f", {"a": 1}, True)]


def test_quirk_empty_choices_chunks_are_skipped() -> None:
    body = b"".join([chunk(choices=False), chunk(content="hi"), chunk(finish="stop"), chunk(choices=False), DONE])
    turn = assemble([body])
    assert turn.outcome == "complete" and turn.text == "hi"


def test_quirk_anthropic_max_tokens_inside_tool_use_is_truncated_not_final() -> None:
    """The SDK's partial parse yields a plausible input here; we refuse it."""
    body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","type":"message","role":"assistant",'
        b'"content":[],"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"tool_use","id":"t1","name":"write","input":{}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"{\\"lines\\": [\\"a\\", \\"b"}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},'
        b'"usage":{"output_tokens":5}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    turn = assemble([body])
    assert turn.outcome == "truncated" and not turn.calls[0].final
    sdk = oracles.anthropic_messages(body)["calls"][0]
    assert sdk["arguments"] == {"lines": ["a"]}  # a valid-looking input from a cut-off call
