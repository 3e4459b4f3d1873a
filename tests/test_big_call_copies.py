"""A megabyte call is not copied whole on its way through the stream core.

Why: ``make bench-memory`` measures the peak RSS of a huge call per argument
byte on every path; each copy of the arguments held beside the call's buffer
and its parse is a byte more per byte. These are the copies found at the peak
of a 1 MB call (Gemini's whole call kept alive by its event, and its text
made by ``json.dumps``; the forming preview cutting a megabyte string out of
one fragment; the redaction's hint test lowering a megabyte at once), each
checked by what is alive or allocated, not by time.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.stream import StreamParser
from app.stream.assembler import Assembler
from app.stream.events import ArgsDelta, CallEnded, CallStarted
from app.stream.jsonscan import JSONScanner, Piece
from app.stream.preview import FormingPreview
from app.stream.redact import redact
from tests import streamgen

_BODY = "The parcel left the hub on Tuesday and has not been scanned since. " * 15_000


def test_gemini_s_whole_call_is_let_go_of_before_its_text_is_parsed() -> None:
    """Gemini sends a call whole (``args``, an object) in the frame that ends
    it: the event that carried the object must be gone when the call's text
    (made of it) is parsed at its end, or the object is a third copy."""
    args = json.dumps({"subject": "Late parcel", "body": _BODY})
    stream = streamgen.gemini(streamgen.call_script(0, "c1", "create_ticket", args, 4096))
    parser = StreamParser("gemini")
    apply = parser.assembler.apply
    alive: list[Any] = []

    def spy(event: Any) -> None:
        if isinstance(event, CallEnded):
            alive.extend(type(o.fragment).__name__ for o in gc.get_objects()
                         if isinstance(o, ArgsDelta) and not isinstance(o.fragment, str))
        apply(event)

    parser.assembler.apply = spy  # type: ignore[method-assign]
    for at in range(0, len(stream), 16384):
        parser.feed(stream[at : at + 16384])
    turn = parser.close()
    call = turn.blocks[-1]
    assert call.final and call.arguments == json.loads(args)
    assert alive == []


def test_the_forming_preview_scans_a_megabyte_fragment_a_slice_at_a_time() -> None:
    """A whole call in one fragment: the scanner cuts a string's text out of
    what it is fed, so fed the megabyte at once it made a megabyte copy to keep
    ``KEPT`` characters of it. Fed in slices, it shows what small fragments show."""
    args = json.dumps({"subject": "Late parcel", "body": _BODY, "priority": "high"})
    fed: list[int] = []

    class Counting(JSONScanner):
        def feed(self, text: str) -> list[Piece]:
            fed.append(len(text))
            return super().feed(text)

    preview = FormingPreview()
    preview._scanner = Counting()
    preview.feed(args)
    assert max(fed) <= 1 << 16
    small = FormingPreview()
    for at in range(0, len(args), 7):
        small.feed(args[at : at + 7])
    display = (("subject", "Subject"), ("body", "Body"), ("priority", "Priority"))
    assert preview.fields(display) == small.fields(display)
    assert preview.stable_top() == small.stable_top() == {"subject": "Late parcel", "priority": "high"}
    assert not preview.broken


def test_redaction_looks_for_its_hints_without_a_lowered_copy_of_the_whole_text() -> None:
    """The store redacts a call's buffer each time it writes it; its cheap
    test for credential-shaped words lowered a megabyte at once (a copy beside
    the buffer and its parse). It looks 64 KiB at a time, and finds a hint anywhere."""
    text = "x" * 1_000_000
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        assert redact(text) is text
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 300_000
    echoed = text[:700_000] + " Authorization: Bearer abcdefghijklmnop " + text[700_000:]
    assert "abcdefghijklmnop" not in redact(echoed)


def test_a_whole_call_s_text_is_made_beside_its_value_with_no_third_copy() -> None:
    """Gemini sends a call whole (an object): its text is made from it for the
    buffer. ``json.dumps`` escaped the megabyte string into one copy and joined
    the text from it into another, beside the value: three copies at once, the
    peak of a big Gemini call. Grown a piece at a time, it is the value and the text."""
    assembler = Assembler("gemini")
    assembler.apply(CallStarted(0, "c1", "create_ticket"))
    value = {"subject": "Late parcel", "body": _BODY + "line\n\t\"quoted\"", "priority": 2}
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        assembler.apply(ArgsDelta(0, value))
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    text = assembler.blocks[0].arguments_raw  # type: ignore[union-attr]
    assert text == json.dumps(value, ensure_ascii=False, allow_nan=False)
    assert peak < 1.5 * len(text)


_KEYS = st.text(alphabet=st.sampled_from('ab"\\\n\té☃\U0001f600'), max_size=8)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | st.text(alphabet=st.sampled_from('ab"\\\n\t\x01é☃\U0001f600\u2028'), max_size=40),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
                     max_leaves=20)


@given(st.dictionaries(_KEYS, _JSON, max_size=5))
def test_a_whole_call_s_text_is_what_json_dumps_writes(value: dict[str, Any]) -> None:
    """The buffer of a call that came whole is the text it always was
    (``json.dumps(value, ensure_ascii=False)``): the store, the recording's
    replay and the tests read it."""
    assembler = Assembler("gemini")
    assembler.apply(CallStarted(0, "c1", "t"))
    assembler.apply(ArgsDelta(0, value))
    assert assembler.blocks[0].arguments_raw == json.dumps(value, ensure_ascii=False)  # type: ignore[union-attr]
