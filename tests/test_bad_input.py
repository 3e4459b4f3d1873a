"""Bad input, one test per case: a clear outcome, never a traceback."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.stream import assemble
from tests import streamgen

GOOD = streamgen.openai_chat([("text", "héllo ")] + streamgen.call_script(0, "c", "get_order", '{"order_id": "A-1"}'))


def same_as_good(body: bytes) -> None:
    assert assemble([body]).to_dict() == assemble([GOOD]).to_dict()


def test_bom() -> None:
    same_as_good(b"\xef\xbb\xbf" + GOOD)


def test_crlf_line_endings() -> None:
    same_as_good(GOOD.replace(b"\n", b"\r\n"))


def test_lone_cr_line_endings() -> None:
    same_as_good(GOOD.replace(b"\n", b"\r"))


def test_comment_lines_everywhere() -> None:
    body = b": OPENROUTER PROCESSING\n\n" + GOOD.replace(b"\n\n", b"\n: keep-alive\n\n") + b": bye\n"
    same_as_good(body)


def test_invalid_utf8_becomes_replacement_characters() -> None:
    body = streamgen.openai_chat([("text", "ok")], finish="stop").replace(b'"ok"', b'"o\xff\xfek"')
    turn = assemble([body])
    assert turn.outcome == "complete" and turn.text == "o\ufffd\ufffdk"


def test_ten_megabyte_argument() -> None:
    value = "x" * 10_000_000
    args = json.dumps({"body": value})
    body = streamgen.openai_chat(streamgen.call_script(0, "c", "create_ticket", args, 1_000_000))
    turn = assemble(streamgen.chunked(body, 65536))
    assert turn.outcome == "complete"
    assert turn.calls[0].final and len(turn.calls[0].arguments["body"]) == 10_000_000


def test_ten_thousand_deep_nesting_in_arguments() -> None:
    args = '{"a": ' + "[" * 10_000 + "]" * 10_000 + "}"
    turn = assemble([streamgen.openai_chat(streamgen.call_script(0, "c", "f", args, 500))])
    assert turn.outcome == "malformed"
    assert not turn.calls[0].final and "nesting too deep" in (turn.calls[0].problem or "")


def test_ten_thousand_deep_nesting_in_the_event_payload() -> None:
    body = b"data: " + b"[" * 10_000 + b"]" * 10_000 + b"\n\n"
    turn = assemble([GOOD[:200].rsplit(b"\n\n", 1)[0] + b"\n\n" + body])
    assert turn.outcome == "malformed" and "not JSON" in (turn.error or "")


def test_ten_thousand_deep_nesting_as_the_first_frame() -> None:
    turn = assemble([b"data: " + b'{"a":' * 10_000 + b"1" + b"}" * 10_000 + b"\n\n"])
    assert turn.outcome == "malformed" and turn.error


def test_unknown_event_types_are_ignored() -> None:
    body = streamgen.anthropic([("text", "hi")], stop_reason="end_turn")
    extra = b'event: brand_new_thing\ndata: {"type":"brand_new_thing","x":1}\n\nevent: ping\ndata: {"type":"ping"}\n\n'
    head, rest = body.split(b"\n\n", 1)
    turn = assemble([head + b"\n\n" + extra + rest])
    assert turn.outcome == "complete" and turn.text == "hi"


def test_garbage_lines_are_ignored() -> None:
    body = GOOD.replace(b"data: [DONE]", b"this is not a field\nnor: this\ndata: [DONE]")
    same_as_good(b"garbage\n\n" + body)


def test_non_json_data_is_malformed_with_the_text_shown() -> None:
    body = GOOD[:300].rsplit(b"\n\n", 1)[0] + b"\n\ndata: error: upstream failed\n\n" + GOOD
    turn = assemble([body])
    assert turn.outcome == "malformed" and "upstream failed" in (turn.error or "")


def test_rewrapped_keepalive_comment_is_malformed() -> None:
    turn = assemble([b"data: : OPENROUTER PROCESSING\n\n" + GOOD])
    assert turn.outcome == "malformed" and "OPENROUTER" in (turn.error or "")


def test_two_frames_merged_without_a_blank_line_is_malformed() -> None:
    frames = GOOD.split(b"\n\n")
    merged = frames[1][:-10] + frames[2] + b"\n\n"
    turn = assemble([frames[0] + b"\n\n" + merged + b"\n\n".join(frames[3:])])
    assert turn.outcome == "malformed"
    assert not any(c.final for c in turn.calls)


def test_empty_body() -> None:
    turn = assemble([b""])
    assert turn.outcome == "cut_off" and turn.error == "the response body was empty"
    assert turn.dialect == "unknown" and turn.blocks == []


def test_empty_chunks_list() -> None:
    assert assemble([]).outcome == "cut_off"


def test_html_error_page() -> None:
    page = b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>\n"
    turn = assemble([page])
    assert turn.outcome == "cut_off"
    assert "HTML page" in (turn.error or "") and "DOCTYPE" in (turn.error or "")


def test_json_error_body_instead_of_a_stream() -> None:
    turn = assemble([b'{"error": {"message": "Invalid API key", "type": "invalid_request_error"}}'])
    assert turn.outcome == "cut_off" and "JSON document" in (turn.error or "")


def test_error_object_alone_as_an_event() -> None:
    turn = assemble([b'data: {"error": {"message": "Rate limit reached", "code": 429}}\n\n'])
    assert turn.outcome == "provider_error" and turn.error == "Rate limit reached"


def test_frames_that_match_no_provider() -> None:
    turn = assemble([b'data: {"hello": "world"}\n\n' * 20])
    assert turn.outcome == "malformed" and "no known provider" in (turn.error or "")


def test_final_frame_without_blank_line() -> None:
    no_finish = streamgen.openai_chat(streamgen.call_script(0, "c", "get_order", '{"order_id": "A-1"}'), finish=None)
    turn = assemble([no_finish.rstrip(b"\n")])
    assert turn.outcome == "cut_off"  # [DONE] never dispatched, and no finish reason came before it
    assert not turn.calls[0].final


def test_final_done_without_blank_line_after_a_finish_reason_is_a_clean_end() -> None:
    turn = assemble([GOOD.rstrip(b"\n")])
    assert turn.outcome == "complete"  # [DONE] discarded; the finish reason and the clean end suffice


def test_null_and_wrong_typed_fields_do_not_crash() -> None:
    frames = [
        {"choices": None},
        {"choices": [None, 3, "x"]},
        {"choices": [{"index": 0, "delta": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [None, 1, {"index": 0, "function": None}]}}]},
        {"choices": [{"index": 0, "delta": {"content": 5, "tool_calls": None}}]},
    ]
    body = b"".join(b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames) + b"data: [DONE]\n\n"
    turn = assemble([body])
    assert turn.outcome in ("complete", "malformed")


def test_anthropic_events_out_of_order_do_not_crash() -> None:
    body = (
        b'data: {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{}"}}\n\n'
        b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'data: {"type":"content_block_stop","index":9}\n\n'
        b'data: {"type":"message_stop"}\n\n'
    )
    turn = assemble([body])
    assert turn.outcome == "malformed"  # a fragment with no announced call never ends


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "index",
                    "delta",
                    "choices",
                    "content_block",
                    "candidates",
                    "content",
                    "parts",
                    "functionCall",
                    "tool_calls",
                    "function",
                    "arguments",
                    "partial_json",
                    "name",
                    "id",
                    "partialArgs",
                    "jsonPath",
                    "item",
                    "output_index",
                    "response",
                    "error",
                    "message",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(
    dialect=st.sampled_from(["openai-chat", "openai-responses", "anthropic", "gemini"]),
    frames=st.lists(json_values, max_size=6),
)
def test_any_json_shape_in_any_dialect_never_raises(dialect: str, frames: list[object]) -> None:
    body = b"".join(b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames)
    turn = assemble([body], dialect=dialect)
    assert turn.outcome in ("complete", "cut_off", "malformed", "truncated", "provider_error")
    assert (
        not any(c.final for c in turn.calls) or turn.outcome != "cut_off" or all(c.ended for c in turn.calls if c.final)
    )
