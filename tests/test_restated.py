"""Responses' megabyte repeats of a call's arguments are read without their long strings, and nothing changes.

Why: ``response.output_item.done`` and ``response.completed`` repeat the whole
arguments after ``response.function_call_arguments.done``; held whole, each
10 MB repeat was the peak of a big call on that wire (``make bench-memory``).
The decoder keeps such a line without its long strings only while no call is
open; the turn must be the one the whole lines give, and a call whose
arguments come only in ``output_item.done`` must keep them.
"""

from __future__ import annotations

import gc
import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.stream import StreamParser, restated
from app.stream.events import CallEnded
from app.stream.sse import SSEEvent
from tests import streamgen

_STRING = re.compile(rb'"((?:[^"\\]|\\.)*)"', re.DOTALL)


def _emptied(text: bytes, long: int) -> bytes:
    """The reference: every JSON string longer than ``long`` bytes (escapes included) emptied, by a regex."""
    return _STRING.sub(lambda m: m.group(0) if len(m.group(1)) <= long else b'""', text)


_TEXT = st.text(alphabet=st.sampled_from('ab"\\\n\té☃\U0001f600/'), max_size=30)
_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | _TEXT,
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                       max_leaves=20)


@settings(max_examples=300)
@given(_VALUES, st.booleans(), st.lists(st.integers(min_value=1, max_value=40), max_size=30),
       st.integers(min_value=0, max_value=12))
def test_trim_empties_exactly_the_long_strings_however_the_bytes_are_cut(
        value: Any, ascii_only: bool, cuts: list[int], long: int) -> None:
    text = ("data: " + json.dumps(value, ensure_ascii=ascii_only)).encode()
    pieces, at = [], 0
    for size in cuts:
        pieces.append(text[at : at + size])
        at += size
    pieces.append(text[at:])
    trim = restated.Trim()
    original = restated.LONG
    restated.LONG = long
    try:
        got = b"".join(trim.feed(piece) for piece in pieces) + trim.end()
    finally:
        restated.LONG = original
    assert got == _emptied(text, long)


def _big_call_stream(size: int) -> tuple[bytes, str]:
    args = json.dumps({"subject": "Late parcel", "body": "The parcel left the hub. " * (size // 25)})
    return streamgen.openai_responses([("text", "Filing it.")] + streamgen.call_script(0, "c1", "create_ticket",
                                                                                       args, 4096)), args


def _run(stream: bytes, chunk: int, trim: bool) -> tuple[Any, list[bytes]]:
    parser = StreamParser("openai-responses")
    seen: list[bytes] = []
    if trim:
        ask = parser._sse.trim
        assert ask is not None

        def spy(head: bytes) -> bool | restated.Trim:
            answer = ask(head)
            if answer:
                seen.append(head[:60])
            return answer

        parser._sse.trim = spy
    else:
        parser._sse.trim = None
    for at in range(0, len(stream), chunk):
        parser.feed(stream[at : at + chunk])
    return parser.close(), seen


def _summary(turn: Any) -> Any:
    return (turn.outcome, turn.stop_reason, turn.error, turn.usage, turn.model,
            [(getattr(b, "name", None), getattr(b, "arguments", None), getattr(b, "final", None),
              getattr(b, "problem", None), getattr(b, "arguments_raw", None), getattr(b, "text", None))
             for b in turn.blocks])


def test_a_big_calls_repeats_are_trimmed_and_the_turn_is_the_one_whole_lines_give() -> None:
    stream, args = _big_call_stream(3_000_000)
    trimmed, seen = _run(stream, 16384, trim=True)
    whole, _ = _run(stream, 16384, trim=False)
    assert _summary(trimmed) == _summary(whole)
    call = trimmed.blocks[-1]
    assert call.final and call.arguments == json.loads(args) and call.arguments_raw == args
    # the .done (the strict check, made on its arguments' length and digest) and both repeats after it were trimmed
    assert [h.split(b",")[0] for h in seen] == [b'{"type":"response.function_call_arguments.done"',
                                               b'{"type":"response.output_item.done"', b'{"type":"response.completed"']


def test_arguments_that_come_only_in_output_item_done_are_kept_whole() -> None:
    """A server that sends no deltas and no ``.done``: the call is still open
    at ``output_item.done``, so that line is read whole and its arguments used."""
    stream, args = _big_call_stream(2_000_000)
    blocks = [b for b in stream.split(b"\n\n") if b"response.function_call_arguments." not in b]
    turn, seen = _run(b"\n\n".join(blocks), 16384, trim=True)
    call = turn.blocks[-1]
    assert call.final and call.restated and call.arguments == json.loads(args)
    assert [h.split(b",")[0] for h in seen] == [b'{"type":"response.completed"']


def test_a_done_whose_arguments_differ_marks_the_call() -> None:
    """The strict check is the ``.done``'s: a ``.done`` that differs from the deltas (one word, the
    same length: only the digest tells) still marks the call, though it was read as a length and digest."""
    stream, args = _big_call_stream(2_000_000)
    changed = stream.replace(b'"type":"response.function_call_arguments.done"',
                             b'"type":"response.function_call_arguments.done","x":1', 1)
    marker = b'"type":"response.function_call_arguments.done","x":1'
    start = changed.index(marker)
    body = changed.index(b"parcel", start)
    changed = changed[:body] + b"PARCEL" + changed[body + 6:]
    turn, _ = _run(changed, 16384, trim=True)
    call = turn.blocks[-1]
    assert not call.final and call.problem == "the arguments restated at the end differ from the streamed fragments"


@given(st.lists(st.text(alphabet="ab\"é", max_size=6), max_size=6), st.text(alphabet="ab\"é", max_size=30))
def test_a_buffer_is_compared_with_a_restatement_piece_by_piece_as_a_join_would(pieces: list[str], text: str) -> None:
    """Why: the ``.done`` check compares the buffer's pieces in place (no join
    of a 10 MB buffer); it must answer what comparing the joined text answers."""
    from app.stream.blocks import ToolCallBlock

    call = ToolCallBlock("c1", "t")
    for piece in pieces:
        call.add(piece)
    assert call.same_text(text) == ("".join(pieces) == text)
    assert call.same_text("".join(pieces))


def test_the_frame_of_a_restatement_is_let_go_of_before_its_call_ends() -> None:
    """The ``.done`` of a call of a few hundred kilobytes (a 1 MB call's is a
    little under a MiB) is decoded, then its frame's text goes before the
    ``CallEnded`` applies: held, it was one copy more beside the buffer and
    its parse, the peak of a 1 MB call on this wire (``make bench-memory``)."""
    stream, args = _big_call_stream(300_000)
    parser = StreamParser("openai-responses")
    apply = parser.assembler.apply
    alive: list[int] = []

    def spy(event: object) -> None:
        if isinstance(event, CallEnded) and event.arguments:
            alive.extend(len(o.data) for o in gc.get_objects() if isinstance(o, SSEEvent) and len(o.data) > 100_000)
        apply(event)  # type: ignore[arg-type]

    parser.assembler.apply = spy  # type: ignore[method-assign]
    for at in range(0, len(stream), 16384):
        parser.feed(stream[at : at + 16384])
    turn = parser.close()
    call = turn.blocks[-1]
    assert call.final and call.arguments_raw == args
    assert alive == []


def _frames_seen(stream: bytes, dialect: str = "openai-responses") -> tuple[Any, list[tuple[str, int]]]:
    """The turn, and the (type, length of its text) of every frame the dialect was handed."""
    parser = StreamParser(dialect)
    seen: list[tuple[str, int]] = []
    dialect_obj = parser._dialect
    assert dialect_obj is not None
    frame = dialect_obj.frame

    def spy(sse: SSEEvent, out: list[Any]) -> None:
        seen.append((sse.data[9:60].split('"')[0], len(sse.data)))
        frame(sse, out)

    dialect_obj.frame = spy  # type: ignore[method-assign]
    for at in range(0, len(stream), 16384):
        parser.feed(stream[at : at + 16384])
    return parser.close(), seen


def test_a_megabyte_done_is_checked_as_it_streams_never_decoded_whole() -> None:
    """Why: the ``.done`` restates a call's whole arguments for the strict
    check; decoded whole it was a megabyte of bytes, its text and its parse
    beside the call's buffer, the peak of a 1 MB call on this wire (``make
    bench-memory``). It reaches the dialect without its arguments (their length
    and digest stand for them), and the call is the one the deltas made."""
    stream, args = _big_call_stream(1_000_000)
    turn, seen = _frames_seen(stream)
    done = [size for kind, size in seen if kind == "response.function_call_arguments.done"]
    assert len(done) == 1 and done[0] < 1000
    call = turn.blocks[-1]
    assert turn.outcome == "complete" and call.final and call.problem is None
    assert call.arguments_raw == args and call.arguments == json.loads(args)


def test_a_done_with_escapes_and_every_kind_of_character_is_checked_equal() -> None:
    """Why: the check decodes the ``.done``'s string a slice at a time; a cut
    inside an escape, a surrogate pair or a UTF-8 character would make an equal
    restatement differ (and refuse a good call). Every one of those, many times
    over, written as a server that escapes non-ASCII and as one that does not."""
    body = 'quote " slash \\ line\n tab\t é ☃ \U0001f600 \u2028 /x ' * 9000
    args = json.dumps({"body": body}, ensure_ascii=False)
    for ensure_ascii in (True, False):
        stream = streamgen.openai_responses(streamgen.call_script(0, "c1", "create_ticket", args, 4096))
        if ensure_ascii:  # the same events, every non-ASCII character written as a \\u escape
            stream = b"\n".join(b"data: " + json.dumps(json.loads(line[6:]), separators=(",", ":")).encode()
                                if line.startswith(b"data: {") else line for line in stream.split(b"\n"))
            assert b"\\ud83d\\ude00" in stream
        turn, seen = _frames_seen(stream)
        done = [size for kind, size in seen if kind == "response.function_call_arguments.done"]
        assert len(done) == 1 and done[0] < 1000
        call = turn.blocks[-1]
        assert call.final, call.problem
        assert call.arguments == {"body": body}


def test_a_done_that_is_not_a_json_string_ends_the_stream_malformed() -> None:
    """Why: read whole, a ``.done`` with a broken escape in its arguments is a
    frame that is not JSON (the stream is malformed); checked as it streams it
    must end the same way, not pass as a call whose restatement differs."""
    stream, _ = _big_call_stream(600_000)
    start = stream.index(b'"type":"response.function_call_arguments.done"')
    at = stream.index(b"parcel", start)
    broken = stream[:at] + b"\\q" + stream[at + 2:]
    turn, _ = _frames_seen(broken)
    assert turn.outcome == "malformed"
    assert "not JSON" in (turn.error or "")


def test_a_call_with_no_deltas_takes_its_arguments_from_a_megabyte_done() -> None:
    """Why: the ``.done`` is checked without being held only while every open
    call has a buffer begun; a server that sends a call's arguments only in its
    ``.done`` must still have them read from there, whole."""
    stream, args = _big_call_stream(1_000_000)
    blocks = [b for b in stream.split(b"\n\n") if b"response.function_call_arguments.delta" not in b]
    turn, seen = _frames_seen(b"\n\n".join(blocks))
    done = [size for kind, size in seen if kind == "response.function_call_arguments.done"]
    assert len(done) == 1 and done[0] > 1_000_000
    call = turn.blocks[-1]
    assert call.final and call.restated and call.arguments == json.loads(args)


_DIGESTED = st.text(alphabet=st.sampled_from('ab"\\\n\t\x01é☃\U0001f600/u0123456789ABCDEF\ud83d\ude00'), max_size=60)


@settings(max_examples=300)
@given(_DIGESTED, st.booleans(), st.lists(st.integers(min_value=1, max_value=40), max_size=30),
       st.integers(min_value=1, max_value=9))
def test_a_checked_trim_keeps_what_the_whole_line_decodes_to_however_the_bytes_are_cut(
        text: str, ascii_only: bool, cuts: list[int], slice_size: int) -> None:
    """Why: what a checked trim keeps of an emptied string (its length and
    digest) must be what the whole line's string decodes to, for any cut of
    the bytes and any slice the decoder works in (escapes, surrogate pairs, lone
    surrogates and UTF-8 characters across every boundary), and the line it
    gives back the one an unchecked trim gives."""
    line = ("data: " + json.dumps({"a": text}, ensure_ascii=ascii_only)).encode("utf-8", "surrogatepass")
    pieces, at = [], 0
    for size in cuts:
        pieces.append(line[at : at + size])
        at += size
    pieces.append(line[at:])
    whole = json.loads(line[6:].decode("utf-8", "replace"))["a"]
    trim = restated.Trim(check=True)
    long, step = restated.LONG, restated._SLICE
    restated.LONG, restated._SLICE = 1, slice_size
    try:
        got = b"".join(trim.feed(piece) for piece in pieces) + trim.end()
    finally:
        restated.LONG, restated._SLICE = long, step
    assert got == _emptied(line, 1)
    escaped = len(_STRING.findall(line)[1])
    expected = [restated.Restated(*restated.text_digest([whole]))] if escaped > 1 else []
    assert trim.restated == expected
