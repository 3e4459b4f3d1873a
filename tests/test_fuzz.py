"""Fuzzing the three readers of untrusted bytes (issue 13's third proof): the
stream parser, the recording reader and the transcript importer. Whatever
the input, no exception escapes but the reader's own stated error, and what
the parser holds stays under its limit.

Budget: ``FUZZ_EXAMPLES`` examples per target (default 200: a few seconds
each), and at most ``FUZZ_SECONDS`` of wall time per target (default 20):
past it, the remaining examples are skipped, so CI pays at most a couple of
minutes on a loaded machine. ``make fuzz`` runs 5,000 examples, 600 s each.
"""

from __future__ import annotations

import json
import os
import string
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.store import ImportError_, Store, import_document
from app.store.recording import RecordingError, read_recording
from app.stream import StreamParser
from app.stream.limits import MAX_DEPTH, Limits
from tests import streamgen

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
SECONDS = float(os.environ.get("FUZZ_SECONDS", "20"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large, HealthCheck.filter_too_much])
_STARTED: dict[str, float] = {}


def within_budget(target: str) -> None:
    """Skip this example once ``target`` has used its ``FUZZ_SECONDS`` (the time budget)."""
    started = _STARTED.setdefault(target, time.monotonic())
    assume(time.monotonic() - started < SECONDS)
SMALL = Limits(event_bytes=2048, body_bytes=16384, tool_output_bytes=1024)
OUTCOMES = {"complete", "cut_off", "malformed", "truncated", "provider_error"}

# SSE-shaped noise: field names, separators, line ends, JSON pieces, bytes that are not UTF-8
_TOKENS = [b"data:", b"data: ", b"event:", b"id:", b"retry:", b":", b"\n", b"\r", b"\r\n", b"\n\n", b"[DONE]",
           b"{", b"}", b"[", b"]", b'"', b",", b'"type":', b'"choices":', b'"delta":', b'"tool_calls":',
           b'"index":0', b'"content_block_delta"', b'"partial_json":', b'"candidates":', b"\xef\xbb\xbf", b"\xff",
           b"\xc3", b"x" * 700, b"\\u00", b"null", b"1e400", b"NaN"]
GOOD = [streamgen.openai_chat(streamgen.call_script(0, "c", "f", '{"a": 1}')),
        streamgen.anthropic([("text", "hi")] + streamgen.call_script(0, "c", "f", '{"a": [1, 2]}')),
        streamgen.gemini([("text", "hi")] + streamgen.call_script(0, "c", "f", '{"a": "b"}'))]

noise = st.lists(st.sampled_from(_TOKENS) | st.binary(max_size=24), max_size=60).map(b"".join)
mutated = st.tuples(st.sampled_from(GOOD), st.integers(0, 10_000), noise).map(
    lambda t: t[0][: t[1] % (len(t[0]) + 1)] + t[2] + t[0][t[1] % (len(t[0]) + 1):])
streams = noise | mutated | st.binary(max_size=3000)


def _held(parser: StreamParser) -> int:
    """What the SSE decoder holds of an unfinished line or event (characters)."""
    sse = parser._sse
    return sum(map(len, sse._partial)) + sum(map(len, sse._data))


@FUZZ
@given(body=streams, cuts=st.lists(st.integers(1, 97), max_size=40),
       dialect=st.sampled_from(["auto", "openai-chat", "openai-responses", "anthropic", "gemini"]))
def test_the_stream_parser_never_raises_and_holds_no_more_than_its_limit(body: bytes, cuts: list[int],
                                                                          dialect: str) -> None:
    within_budget("test_the_stream_parser_never_raises_and_holds_no_more_than_its_limit")
    parser = StreamParser(dialect, SMALL)
    at = 0
    for size in cuts or [len(body) or 1]:
        parser.feed(body[at : at + size], float(at))
        assert _held(parser) <= SMALL.event_bytes + 97
        at += size
    parser.feed(body[at:])
    assert _held(parser) <= SMALL.event_bytes + len(body[at:])
    turn = parser.close("eof")
    assert turn.outcome in OUTCOMES
    assert turn.outcome != "complete" or turn.error is None or isinstance(turn.error, str)
    assert all(not c.final or c.ended for c in turn.calls)


def test_an_endless_line_is_held_to_the_limit() -> None:
    parser = StreamParser("auto", SMALL)
    parser.feed(b"data: ")
    for _ in range(1000):
        parser.feed(b"y" * 997)
        assert _held(parser) <= SMALL.event_bytes
    assert parser.finished and parser.close().outcome == "malformed"


_LINE = st.one_of(
    st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**20), st.text(max_size=3),
                       st.none(), st.sampled_from(["o", "b", "m", "x"]),
                       st.dictionaries(st.sampled_from(["kind", "turn", "attempt", "calls", "cause", "text"]),
                                       st.one_of(st.integers(-3, 10**12), st.text(max_size=4), st.none(),
                                                 st.lists(st.integers(), max_size=2)), max_size=4)),
             max_size=4).map(lambda v: json.dumps(v)),
    st.text(alphabet=string.printable, max_size=40),
    st.integers(1, 3 * MAX_DEPTH).map(lambda n: "[" * n + "]" * n),
    st.sampled_from(['[NaN, "o", "x"]', '[1e400, "o", "x"]', '[0, "b", "!!"]', '[0, "b", 5]', '[-1, "o", "x"]',
                     '[0, "m", {"kind": "turn", "turn": 1e30}]', '[0, "o", "data: x\\n\\n"]']),
)
_HEADER = st.fixed_dictionaries(
    {"format": st.just("callstream-recording"), "version": st.sampled_from([1, 1, 1, 2, "1", None])},
    optional={"dialect": st.sampled_from(["openai-chat", "gemini", "auto", "../../etc", 5, None]),
              "conversation": st.sampled_from(["abc", "../x", "", 7, "a" * 200]),
              "retries": st.sampled_from([0, 3, 11, -1, "x", True]),
              "max_rounds": st.sampled_from([1, 8, 0, 1000, None])})


@FUZZ
@given(header=_HEADER, lines=st.lists(_LINE, max_size=12), raw=st.booleans(), tail=st.binary(max_size=40))
def test_the_recording_reader_states_every_failure(tmp_path: Path, header: dict[str, object], lines: list[str],
                                                  raw: bool, tail: bytes) -> None:
    within_budget("test_the_recording_reader_states_every_failure")
    path = tmp_path / "fuzz.ndjson"
    head = b"" if raw else json.dumps(header).encode() + b"\n"
    path.write_bytes(head + "\n".join(lines).encode() + b"\n" + tail)
    try:
        recording = read_recording(path)
    except RecordingError as exc:
        assert str(exc)
        return
    times = [at for at, _, _ in recording.events]
    assert times == sorted(times) and all(0 <= t < float("inf") for t in times)
    assert all(isinstance(data, bytes) for _, kind, data in recording.events if kind == "o")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**40), 10**40) | st.floats() | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["kind", "turn", "text", "blocks", "type", "state", "arguments", "result", "timings",
                         "attempts", "failures", "created", "id", "name", "arguments_raw", "note", "summary"]),
        children, max_size=5),
    max_leaves=20)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "fuzz.db")


@FUZZ
@given(items=st.lists(json_values, max_size=5), meta=st.dictionaries(
    st.sampled_from(["id", "title", "created", "updated", "provider"]), json_values, max_size=5),
    conversation=st.sampled_from(["a" * 32, "../x", "b1", ""]))
def test_the_transcript_importer_states_every_failure(store: Store, items: list[object], meta: dict[str, object],
                                                     conversation: str) -> None:
    within_budget("test_the_transcript_importer_states_every_failure")
    document = {"format": "callstream-transcript", "version": 1, "conversation": {"id": conversation, **meta},
                "items": items}
    before = store.list()
    try:
        imported = import_document(store, document)
    except ImportError_ as exc:
        assert str(exc)
        assert store.list() == before  # all or nothing
        return
    loaded = store.load(imported)
    assert loaded is not None
    store.delete(imported)


@FUZZ
@given(body=st.binary(max_size=3000), encoding=st.sampled_from(["gzip", "deflate"]),
       cuts=st.lists(st.integers(1, 500), max_size=20), valid=st.booleans())
def test_the_decompressor_states_every_failure(body: bytes, encoding: str, cuts: list[int], valid: bool) -> None:
    import gzip
    import zlib

    from app.net.inflate import PIECE, InflateError, inflater_for

    within_budget("inflate")
    data = (gzip.compress(body) if encoding == "gzip" else zlib.compress(body)) if valid else body
    inflater = inflater_for(encoding)
    assert inflater is not None
    out, at = [], 0
    try:
        for size in cuts + [len(data)]:
            out += list(inflater.feed(data[at : at + size]))
            at += size
        out.append(inflater.flush())
    except InflateError as exc:
        assert not valid and "does not decompress" in str(exc)
        return
    assert all(len(piece) <= PIECE for piece in out)
    if valid:
        assert b"".join(out) == body


_SECRET = "sk-fuzz-0123456789abcdefXYZ"
_PROSE_TOKENS = [" ", "\n", "word", "Bearer ", "x-api-key: ", "Authorization: ", '"', ":", "=", _SECRET,
                 _SECRET[:9], _SECRET[9:], "tok" * 5, "é"]


@FUZZ
@given(pieces=st.lists(st.sampled_from(_PROSE_TOKENS), max_size=120), start=st.integers(0, 400),
       cut=st.integers(0, 1200))
def test_prose_cut_anywhere_never_stores_a_piece_of_a_secret(pieces: list[str], start: int, cut: int) -> None:
    from app.stream.redact import redact, register_secret, safe_cut

    within_budget("safe_cut")
    register_secret(_SECRET)
    text = "".join(pieces)
    start = min(start, len(text))
    at = safe_cut(text, start, cut)
    assert start <= at <= max(start, cut)
    if at > start:
        stored = redact(text[:at]) + redact(text[at:])
        assert _SECRET not in stored and stored == redact(text)
