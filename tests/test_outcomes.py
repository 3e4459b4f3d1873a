"""The outcome rules: `complete` only with the terminal marker; cut_off,
truncated, malformed, provider_error otherwise; and when a call is final."""

from __future__ import annotations

import json

import pytest

from app.stream import StreamParser, assemble, parse_arguments
from app.stream.strictjson import StrictJSONError
from tests import streamgen
from tests.streamgen import ENCODERS

ONE_CALL = [("text", "Sure. ")] + streamgen.call_script(0, "c1", "get_order", '{"order_id": "A-7"}')


@pytest.mark.parametrize("dialect", list(ENCODERS))
def test_complete_needs_the_terminal_marker(dialect: str) -> None:
    body = ENCODERS[dialect](ONE_CALL)
    assert assemble([body]).outcome == "complete"


@pytest.mark.parametrize(
    "dialect,kwargs",
    [
        ("openai-chat", {"finish": None, "done": False}),
        ("anthropic", {"stop": False}),
        ("openai-responses", {"final": None}),
        ("gemini", {"finish": None}),
    ],
)
def test_no_terminal_marker_is_cut_off(dialect: str, kwargs: dict[str, object]) -> None:
    turn = assemble([ENCODERS[dialect](ONE_CALL, **kwargs)])
    assert turn.outcome == "cut_off"
    assert turn.cause == "eof" and turn.error
    assert turn.text == "Sure. "  # the prose received is kept


@pytest.mark.parametrize("finish", ["tool_calls", "stop"])
def test_openai_chat_finish_then_a_clean_end_without_done_is_complete(finish: str) -> None:
    turn = assemble([streamgen.openai_chat(ONE_CALL, finish=finish, done=False)])
    assert turn.outcome == "complete" and turn.stop_reason == finish
    assert turn.calls[0].final and turn.calls[0].arguments == {"order_id": "A-7"}


@pytest.mark.parametrize("cause", ["disconnect", "timeout", "cancelled"])
def test_openai_chat_finish_then_a_reset_or_timeout_is_cut_off(cause: str) -> None:
    parser = StreamParser()
    parser.feed(streamgen.openai_chat(ONE_CALL, done=False))
    turn = parser.close(cause)
    assert turn.outcome == "cut_off" and turn.cause == cause
    assert not turn.calls[0].final and "being prepared" in (turn.calls[0].problem or "")


def test_openai_chat_length_then_a_clean_end_is_truncated() -> None:
    turn = assemble([streamgen.openai_chat(ONE_CALL, finish="length", done=False)])
    assert turn.outcome == "truncated" and not turn.calls[0].final


def test_openai_chat_clean_end_after_a_finish_frame_without_its_blank_line_is_cut_off() -> None:
    """The finish reason must have arrived: a final frame never terminated is discarded."""
    body = streamgen.openai_chat(ONE_CALL, done=False).rstrip(b"\n")
    turn = assemble([body])
    assert turn.outcome == "cut_off" and not turn.calls[0].final


@pytest.mark.parametrize(
    "dialect,kwargs,reason",
    [
        ("openai-chat", {"finish": "length"}, "length"),
        ("anthropic", {"stop_reason": "max_tokens"}, "max_tokens"),
        ("openai-responses", {"final": "response.incomplete"}, "max_output_tokens"),
        ("gemini", {"finish": "MAX_TOKENS"}, "MAX_TOKENS"),
    ],
)
def test_length_finish_is_truncated_and_no_call_is_final(dialect: str, kwargs: dict[str, object], reason: str) -> None:
    turn = assemble([ENCODERS[dialect](ONE_CALL, **kwargs)])
    assert turn.outcome == "truncated" and turn.stop_reason == reason
    assert turn.calls and not any(c.final for c in turn.calls)


def test_call_ended_before_a_cut_off_stays_final_and_the_open_one_does_not() -> None:
    script = streamgen.call_script(0, "a", "create_ticket", '{"title": "x"}') + [
        ("start", 1, "b", "create_ticket"),
        ("args", 1, '{"title": "y'),
    ]
    turn = assemble([streamgen.anthropic(script, stop_reason=None, stop=False)])
    assert turn.outcome == "cut_off"
    assert [c.final for c in turn.calls] == [True, False]


@pytest.mark.parametrize("cause", ["disconnect", "timeout", "cancelled"])
def test_close_with_a_transport_cause_is_cut_off_and_says_so(cause: str) -> None:
    parser = StreamParser()
    parser.feed(streamgen.openai_chat(ONE_CALL, done=False)[:400])
    turn = parser.close(cause)
    assert turn.outcome == "cut_off" and turn.cause == cause
    assert {"disconnect": "connection dropped", "timeout": "timed out", "cancelled": "cancelled"}[cause] in turn.error


def test_end_over_unparseable_arguments_is_malformed() -> None:
    script = streamgen.call_script(0, "c", "get_order", '{"order_id": "A-7",}')
    for dialect in ("openai-chat", "anthropic", "openai-responses"):
        turn = assemble([ENCODERS[dialect](script)])
        assert turn.outcome == "malformed", dialect
        assert not turn.calls[0].final and turn.error and "get_order" in turn.error


@pytest.mark.parametrize(
    "body,message",
    [
        (
            b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
            b'data: {"error":{"message":"upstream overloaded","type":"server_error"}}\n\n',
            "upstream overloaded",
        ),
        (
            b'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n'
            b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
            "Overloaded",
        ),
        (
            b'data: {"type":"response.created","response":{}}\n\n'
            b'data: {"type":"error","code":"server_error","message":"boom"}\n\n',
            "boom",
        ),
        (
            b'data: {"type":"response.created","response":{}}\n\n'
            b'data: {"type":"response.failed","response":{"error":{"code":"x","message":"it failed"}}}\n\n',
            "it failed",
        ),
        (
            b'data: {"candidates":[{"content":{"parts":[{"text":"a"}]}}]}\n\n'
            b'data: {"error":{"code":503,"message":"The model is overloaded","status":"UNAVAILABLE"}}\n\n',
            "The model is overloaded",
        ),
    ],
    ids=["openai-chat", "anthropic", "responses-error", "responses-failed", "gemini"],
)
def test_error_event_is_provider_error_with_the_message(body: bytes, message: str) -> None:
    turn = assemble([body])
    assert turn.outcome == "provider_error"
    assert turn.error == message


def test_error_after_a_call_started_leaves_it_not_final() -> None:
    body = streamgen.anthropic(
        [("start", 0, "t", "create_ticket"), ("args", 0, '{"title":')], stop_reason=None, stop=False
    )
    body += b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    turn = assemble([body])
    assert turn.outcome == "provider_error" and not turn.calls[0].final
    assert turn.calls[0].problem and "error" in turn.calls[0].problem


def test_nothing_after_the_terminal_marker_changes_the_turn() -> None:
    body = (
        streamgen.openai_chat([("text", "a")], finish="stop")
        + b'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n'
    )
    turn = assemble([body])
    assert turn.outcome == "complete" and turn.text == "a"


def test_parser_reports_finished_at_the_terminal_marker() -> None:
    parser = StreamParser()
    body = streamgen.openai_chat([("text", "a")], finish="stop")
    parser.feed(body[:-5])
    assert not parser.finished
    parser.feed(body[-5:])
    assert parser.finished


def test_anthropic_spliced_second_message_is_malformed() -> None:
    body = streamgen.anthropic(ONE_CALL[:3], stop_reason=None, stop=False)
    body += b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_other"}}\n\n'
    body += streamgen.anthropic(ONE_CALL).split(b"\n\n", 1)[1]
    turn = assemble([body])
    assert turn.outcome == "malformed" and "spliced" in (turn.error or "")
    assert not any(c.final for c in turn.calls)


def test_anthropic_duplicated_message_start_with_the_same_id_is_ignored() -> None:
    body = streamgen.anthropic(ONE_CALL)
    first = body.split(b"\n\n", 1)[0] + b"\n\n"
    assert assemble([first + body]).outcome == "complete"


def test_gemini_malformed_function_call_finish_is_malformed() -> None:
    body = b'data: {"candidates":[{"content":{"parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL"}]}\n\n'
    assert assemble([body]).outcome == "malformed"


def test_gemini_partial_args_still_open_at_finish_is_not_final() -> None:
    body = (
        b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"w","willContinue":true}}]}}]}\n\n'
        b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.city",'
        b'"stringValue":"Par","willContinue":true}],"willContinue":true}}]},"finishReason":"STOP"}]}\n\n'
    )
    turn = assemble([body])
    assert turn.outcome == "malformed" and not turn.calls[0].final
    assert turn.calls[0].arguments_raw == '{"city":"Par'


def test_gemini_partial_args_typed_values_and_nesting() -> None:
    pieces = [
        {"jsonPath": "$.n", "numberValue": 3},
        {"jsonPath": "$.ok", "boolValue": True},
        {"jsonPath": "$.none", "nullValue": None},
        {"jsonPath": "$.deep.list[0].k", "stringValue": 'a"b', "willContinue": True},
        {"jsonPath": "$.deep.list[0].k", "stringValue": "c"},
        {"jsonPath": "$.deep.list[1].k", "stringValue": "d"},
        {"jsonPath": "$['odd key']", "stringValue": "e"},
    ]
    frames = [{"functionCall": {"name": "f", "willContinue": True}}]
    frames += [{"functionCall": {"partialArgs": [p], "willContinue": True}} for p in pieces]
    frames += [{"functionCall": {}}]
    body = (
        b"".join(
            b"data: " + json.dumps({"candidates": [{"content": {"parts": [f]}}]}).encode() + b"\n\n" for f in frames
        )
        + b'data: {"candidates":[{"content":{"parts":[]},"finishReason":"STOP"}]}\n\n'
    )
    turn = assemble([body])
    assert turn.outcome == "complete"
    assert turn.calls[0].arguments == {
        "n": 3,
        "ok": True,
        "none": None,
        "deep": {"list": [{"k": 'a"bc'}, {"k": "d"}]},
        "odd key": "e",
    }


@pytest.mark.parametrize(
    "text,why",
    [
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('{"a": NaN}', "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ('{"a": -Infinity}', "Infinity"),
        ('{"a": "\\ud800"}', "lone surrogate"),
        ('{"a": "\\udc00x"}', "lone surrogate"),
        ("[1, 2]", "expected an object"),
        ('"x"', "expected an object"),
        ("null", "expected an object"),
        ('{"a": 1}{"a": 1}', "Extra data"),
        ('{"a": 1', "Expecting"),
        ("", "empty"),
        ('{"a": "tab\there"}', "control character"),
    ],
)
def test_strict_parse_refuses(text: str, why: str) -> None:
    with pytest.raises(StrictJSONError, match=why):
        parse_arguments(text)


def test_strict_parse_accepts_surrogate_pairs_and_nested_duplicates_in_different_objects() -> None:
    assert parse_arguments('{"e": "\\ud83d\\ude00", "x": {"a": 1}, "y": {"a": 2}}') == {
        "e": "\U0001f600",
        "x": {"a": 1},
        "y": {"a": 2},
    }


def test_a_call_with_duplicate_keys_is_not_final() -> None:
    turn = assemble([streamgen.openai_chat(streamgen.call_script(0, "c", "f", '{"path":"a","path":"b"}'))])
    assert turn.outcome == "malformed" and "duplicate key" in (turn.calls[0].problem or "")


def test_provider_executed_calls_are_never_final() -> None:
    body = (
        b'data: {"type":"message_start","message":{"id":"m"}}\n\n'
        b'data: {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s1",'
        b'"name":"web_search","input":{}}}\n\n'
        b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":'
        b'"{\\"query\\": \\"x\\"}"}}\n\n'
        b'data: {"type":"content_block_stop","index":0}\n\n'
        b'data: {"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result",'
        b'"tool_use_id":"s1","content":[]}}\n\n'
        b'data: {"type":"content_block_stop","index":1}\n\n'
        b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n'
        b'data: {"type":"message_stop"}\n\n'
    )
    turn = assemble([body])
    assert turn.outcome == "complete"
    call = turn.calls[0]
    assert call.provider_executed and not call.final and call.provider_result["type"] == "web_search_tool_result"
    assert turn.to_dict()["blocks"][0]["provider_executed"] is True
