"""The incremental SSE decoder against the WHATWG rules (reliability.md §1.1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.stream import sse
from app.stream.sse import SSEDecoder, SSEEvent


def decode(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.close())
    return events


def datas(*chunks: bytes) -> list[str]:
    return [e.data for e in decode(*chunks)]


def test_lf_crlf_and_lone_cr_all_end_lines() -> None:
    assert datas(b"data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d\n\n") == ["a", "b", "c", "d"]


def test_cr_and_lf_split_across_chunks_make_one_line_ending() -> None:
    assert datas(b"data: x\r", b"\n\r", b"\n") == ["x"]
    assert datas(b"data: x\r", b"\ndata: y\r", b"\n\r\n") == ["x\ny"]


def test_bom_is_stripped_once_even_when_split() -> None:
    assert datas(b"\xef\xbb\xbfdata: x\n\n") == ["x"]
    assert datas(b"\xef", b"\xbb", b"\xbfdata: x\n\n") == ["x"]
    # a second BOM is an ordinary character: the field name is then unknown
    assert datas(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == ["y"]


def test_comments_are_ignored() -> None:
    assert datas(b": keep-alive\n: OPENROUTER PROCESSING\ndata: x\n: between\n\n:end\n\n") == ["x"]


def test_multiline_data_joins_with_lf_and_bare_field_adds_an_empty_line() -> None:
    assert datas(b'data: {"a":\ndata: 1}\n\n') == ['{"a":\n1}']
    assert datas(b"data\ndata\n\n") == ["\n"]


def test_one_leading_space_is_removed_and_no_more() -> None:
    assert datas(b"data:  two\n\ndata:none\n\n") == [" two", "none"]


def test_event_without_data_is_not_dispatched() -> None:
    assert decode(b"event: ping\n\n") == []


def test_event_name_and_default() -> None:
    events = decode(b"event: message_start\ndata: {}\n\ndata: 1\n\n")
    assert [e.event for e in events] == ["message_start", "message"]


def test_id_is_sticky_and_null_id_ignored_and_blank_lines_add_nothing() -> None:
    events = decode(b"id: 1\ndata: x\n\n\n\nid: a\x00b\ndata: y\n\n")
    assert [(e.id, e.data) for e in events] == [("1", "x"), ("1", "y")]


@pytest.mark.parametrize("value", [b"+5", b"1_0", b"1000x", b"  5", b""])
def test_bogus_retry_is_ignored(value: bytes) -> None:
    decoder = SSEDecoder()
    decoder.feed(b"retry: 100\n\nretry:" + value + b"\n\n")
    assert decoder.reconnection_time == 100


def test_final_event_without_blank_line_is_discarded() -> None:
    assert datas(b"data: a\n\ndata: b\n") == ["a"]
    assert datas(b"data: a\n\ndata: b") == ["a"]


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert datas(b"data: \xff\xfe ok\n\n") == ["\ufffd\ufffd ok"]


def test_truncated_multibyte_at_eof_becomes_replacement_not_error() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: \xe2\x82")
    assert decoder.close() == []


def test_unicode_line_separators_are_not_line_breaks() -> None:
    text = '{"s":"a\u2028b\u2029c\u0085d\x0be\x0cf"}'
    assert datas(b"data: " + text.encode() + b"\n\n") == [text]


def test_multibyte_split_inside_character() -> None:
    body = "data: h\u00e9llo \U0001f600\n\n".encode()
    for cut in range(1, len(body)):
        assert datas(body[:cut], body[cut:]) == ["h\u00e9llo \U0001f600"]


def test_unknown_fields_and_lines_without_colon_are_ignored() -> None:
    assert datas(b"foo: bar\ngarbage line\ndata: x\n\n") == ["x"]


SAMPLE = (
    b"\xef\xbb\xbf: hi\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r\n"
    b"id: 7\rdata: \xc3\xa9\xe2\x80\xa8\r\r"
    b"data: three\n\n"
)


def test_every_byte_offset_gives_the_same_events() -> None:
    whole = decode(SAMPLE)
    assert [e.data for e in whole] == ["one\ntwo", "\u00e9\u2028", "three"]
    for cut in range(len(SAMPLE) + 1):
        assert decode(SAMPLE[:cut], SAMPLE[cut:]) == whole


def test_one_byte_chunks_give_the_same_events() -> None:
    assert decode(*[SAMPLE[i : i + 1] for i in range(len(SAMPLE))]) == decode(SAMPLE)


@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    pieces = [SAMPLE[a:b] for a, b in zip([0, *points], [*points, len(SAMPLE)], strict=False)]
    assert decode(*pieces) == decode(SAMPLE)


def test_a_long_line_across_many_chunks_is_joined_once() -> None:
    payload = b"x" * 200_000
    body = b"data: " + payload + b"\n\n"
    decoder = SSEDecoder()
    events = []
    for i in range(0, len(body), 64):
        events.extend(decoder.feed(body[i : i + 64]))
    assert [len(e.data) for e in events] == [200_000]


def _limited(body: bytes, cuts: list[int], limit: int) -> tuple[list[str], str | None]:
    decoder = SSEDecoder(limit)
    events: list[SSEEvent] = []
    at = 0
    for cut in sorted(set(cuts)) + [len(body)]:
        events.extend(decoder.feed(body[at:cut]))
        at = cut
    events.extend(decoder.close())
    return [e.data for e in events], decoder.overflow


@given(st.lists(st.integers(min_value=0, max_value=400), max_size=30), st.integers(min_value=20, max_value=120))
def test_the_line_limit_counts_bytes_and_stops_at_the_same_line_however_the_body_is_cut(cuts: list[int],
                                                                                       limit: int) -> None:
    # "é" is two bytes: a line of 40 of them is 80 bytes, whatever a decoded piece of it counts
    body = ("data: short\n\ndata: " + "é" * 40 + "\n\ndata: after\n\n").encode()
    whole = _limited(body, [], limit)
    assert _limited(body, [c for c in cuts if c < len(body)], limit) == whole
    long_line = len("data: ") + 80
    assert whole == ((["short"], "an SSE line longer than " + f"{limit} bytes") if long_line > limit
                     else (["short", "é" * 40, "after"], None))


def test_lines_before_a_line_over_the_limit_in_one_chunk_are_still_read() -> None:
    body = b"data: a\n\ndata: b\n\ndata: " + b"y" * 500 + b"\n\n"
    assert _limited(body, [], 100) == (["a", "b"], "an SSE line longer than 100 bytes")


@settings(max_examples=25, deadline=None)
@given(ending=st.sampled_from([b"\n", b"\r\n", b"\r"]), unit=st.sampled_from(["ab", "é😀", 'x"\\']),
       before=st.sampled_from([b"", b"event: e\ndata: a\n\n", b": c\r\n"]),
       cuts=st.lists(st.integers(0, 1_200_000), max_size=6), other=st.booleans())
def test_a_line_of_megabytes_reads_as_the_same_events_however_it_is_cut(
        ending: bytes, unit: str, before: bytes, cuts: list[int], other: bool) -> None:
    """A ``data:`` line over ``_HUGE`` bytes is decoded straight from the bytes
    (``_feed_long``): the events are those of the same chunks decoded whole."""
    value = (unit * (sse._HUGE // len(unit.encode()) + 7)).encode()
    tail = b"data:tail" + ending if other else b""
    stream = (before + b"data: " + value + ending + tail + ending
              + b"data: next" + ending + ending)
    points = sorted({min(c, len(stream)) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    huge, sse._HUGE = sse._HUGE, 1 << 62  # the reference: every line decoded whole, then split
    try:
        expected = decode(*chunks)
    finally:
        sse._HUGE = huge
    assert decode(*chunks) == expected
    assert decode(stream) == expected
    assert [e.data for e in expected][-2:] == [value.decode() + ("\ntail" if other else ""), "next"]
    decoder = SSEDecoder()
    decoder.feed(stream)
    assert decoder.head == (before.decode() + "data: " + value.decode())[:512]  # what an error names


class _Counting(SSEDecoder):
    """Counts the ``data:`` values read straight from the bytes (``_feed_long``'s way)."""

    def __init__(self) -> None:
        super().__init__()
        self.straight: list[int] = []

    def _data_line(self, value: str) -> None:
        self.straight.append(len(value))
        super()._data_line(value)


def test_the_line_of_a_one_megabyte_call_is_read_straight_from_its_bytes() -> None:
    """A call of 1 MB (a line a little under a MiB: Responses' ``.done``,
    Gemini's whole call) is read a line at a time, its value decoded straight
    from the bytes, as a 10 MB one is: decoded whole, the joined bytes, their
    text, the split line and its value were all held at once, the peak of a
    1 MB call on those wires (``make bench-memory``)."""
    value = b"x" * 1_000_000
    stream = b"data: a\n\ndata: " + value + b"\n\ndata: b\n\n"
    decoder = _Counting()
    events = []
    for at in range(0, len(stream), 16384):
        events.extend(decoder.feed(stream[at : at + 16384]))
    assert [e.data for e in events] == ["a", value.decode(), "b"]
    assert decoder.straight == [len(value)]


def test_a_line_under_a_quarter_megabyte_is_decoded_with_its_chunk() -> None:
    """Lines shorter than ``_HUGE`` keep the ordinary way (a chunk's lines decoded and split in one go)."""
    value = b"y" * (sse._HUGE - 4096)
    decoder = _Counting()
    events = decoder.feed(b"data: " + value + b"\n\n")
    assert [e.data for e in events] == [value.decode()] and decoder.straight == []


def test_an_unfinished_long_line_is_held_in_pieces_of_at_least_a_big_block() -> None:
    """Why: 16 KiB chunks of a megabyte line are heap blocks whose hole, once
    the line is joined, stayed resident beside its text and its parse; joined
    as they reach ``_BIG`` bytes they are blocks glibc maps on its own and
    gives back. The bytes read are the same."""
    value = bytes(range(97, 123)) * 40_000
    decoder = SSEDecoder()
    stream = b"data: " + value
    for at in range(0, len(stream), 16384):
        assert decoder.feed(stream[at : at + 16384]) == []
    held = decoder._partial
    assert b"".join(held) == stream
    assert sum(len(p) for p in held if len(p) < sse._BIG) < sse._BIG
    assert len([p for p in held if len(p) >= sse._BIG]) <= len(stream) // sse._BIG
    assert [e.data for e in decoder.feed(b"\n\n")] == [value.decode()]


def test_a_line_cut_into_single_bytes_reads_the_same() -> None:
    """The joins take adjacent pieces only, however small the chunks."""
    line = b"data: " + "é😀x".encode() * 60_000 + b"\r\n\r\n"
    decoder = SSEDecoder()
    events = []
    for at in range(0, len(line), 7):
        events.extend(decoder.feed(line[at : at + 7]))
    assert [e.data for e in events] == [("é😀x" * 60_000)]
