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
