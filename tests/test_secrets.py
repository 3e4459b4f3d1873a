"""Keys stay secret (issue 13's second proof): providers that echo the key in
their errors, a redirect to another origin, and afterwards not one file under
the data dir holds the key, nothing printed shows it, and the other origin
never saw a key header."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import streamgen
from tests.conftest import file_bytes, run_cli
from tests.faultserver import FaultServer, Reply

DIALECTS = ["openai-chat", "openai-responses", "anthropic", "gemini"]
KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    value = "sk-test-" + uuid.uuid4().hex + uuid.uuid4().hex[:8]
    monkeypatch.setenv("CALLSTREAM_TEST_KEY", value)
    return value


@pytest.fixture
def servers() -> Iterator[tuple[FaultServer, FaultServer]]:
    with FaultServer() as first, FaultServer() as second:
        yield first, second


def _config(home: Path, base: str) -> None:
    lines = []
    for dialect in DIALECTS:
        url = base + ("/v1" if dialect.startswith("openai") else "")
        lines += [f"[providers.{dialect}-echo]", f'provider = "{dialect}"', 'model = "m"', f'base_url = "{url}"',
                  'key_env = "CALLSTREAM_TEST_KEY"', "retries = 0", ""]
    (home / "config.toml").write_text("\n".join(lines))


def _echo(key: str) -> bytes:
    return json.dumps({"error": {"message": f"Incorrect API key provided: {key}. You can find your API key at "
                                            "https://example.invalid.", "type": "invalid_request_error",
                                 "echo": {"Authorization": f"Bearer {key}", "x-api-key": key}}}).encode()



def _files_holding(root: Path, secret: str) -> list[Path]:
    needles = [secret.encode(), base64.b64encode(secret.encode())[:24], secret[8:24].encode()]
    return [p for p in root.rglob("*") if p.is_file() and any(n in file_bytes(p) for n in needles)]


def test_echoed_keys_and_a_cross_origin_redirect_leave_no_key_anywhere(
        home: Path, key: str, servers: tuple[FaultServer, FaultServer]) -> None:
    first, second = servers
    _config(home, first.url)
    printed: list[str] = []
    for dialect in DIALECTS:
        first.replies.append(Reply(_echo(key), status=401))
        code, out, err = run_cli("ask", "hello", "--provider", f"{dialect}-echo")
        assert code == 1, err
        assert "HTTP 401: Incorrect API key provided: [redacted]" in err
        printed += [out, err]
    # a stream that starts fine and then echoes the key in an error event: recorded chunk by chunk
    stream = streamgen.openai_chat([("text", f"Authorization: Bearer {key} ")], finish=None, done=False)
    first.replies.append(Reply(stream + b"data: " + _echo(key) + b"\n\n", chunk=7))
    code, out, err = run_cli("ask", "hello", "--provider", "openai-chat-echo", "--json")
    assert code == 1
    assert json.loads(out)["turns"][0]["outcome"] == "provider_error"
    printed += [out, err]
    # a redirect to another origin on 127.0.0.1
    first.replies.append(Reply(b"", status=307, headers={"Location": second.url + "/v1/chat/completions"}))
    second.replies.append(Reply(_echo(key), status=401))
    code, out, err = run_cli("ask", "hello", "--provider", "openai-chat-echo")
    assert code == 1
    assert f"the provider redirected to {second.url}" in err and "nothing was sent there" in err
    printed += [out, err]

    # every request did carry the key: the echo was real
    assert len(first.requests) == 6
    assert all(key in " ".join(r["headers"].get(h, "") for h in KEY_HEADERS) for r in first.requests)
    assert not any(h in r["headers"] for r in second.requests for h in KEY_HEADERS)
    assert second.requests == []
    assert second.replies, "the second origin was never asked"

    code, listing, _ = run_cli("transcripts", "--json")
    conversations = [row["id"] for row in json.loads(listing)]
    assert code == 0 and len(conversations) == 6
    for conversation in conversations:
        for form in ("json", "markdown"):
            code, out, err = run_cli("export", conversation, "--format", form)
            assert code == 0, err
            printed += [out, err]
    code, out, err = run_cli("ledger", "--json")
    printed += [out, err]

    data = home / "home"
    recordings = list((data / "recordings").glob("*.ndjson.gz"))
    assert len(recordings) == 6 and (data / "callstream.db").exists()
    assert "[redacted]" in "".join(file_bytes(p).decode() for p in recordings)
    assert _files_holding(data, key) == []
    assert not any(key in text or key[8:24] in text for text in printed)


def test_a_same_origin_redirect_is_followed_with_the_key(home: Path, key: str,
                                                          servers: tuple[FaultServer, FaultServer]) -> None:
    first, _ = servers
    _config(home, first.url)
    first.replies.append(Reply(b"", status=307, headers={"Location": "/v2/chat/completions"}))
    first.replies.append(Reply(streamgen.openai_chat([("text", "moved")], finish="stop")))
    code, out, err = run_cli("ask", "hello", "--provider", "openai-chat-echo", "--no-tools")
    assert code == 0, err
    assert "moved" in out
    assert [r["line"].split()[1] for r in first.requests] == ["/v1/chat/completions", "/v2/chat/completions"]
    assert first.requests[1]["headers"]["authorization"] == f"Bearer {key}"
    assert first.requests[1]["body"] == first.requests[0]["body"]


def test_a_redirect_that_would_turn_the_post_into_a_get_is_a_stated_failure(
        home: Path, key: str, servers: tuple[FaultServer, FaultServer]) -> None:
    first, _ = servers
    _config(home, first.url)
    first.replies.append(Reply(b"", status=302, headers={"Location": "/elsewhere"}))
    code, _, err = run_cli("ask", "hello", "--provider", "openai-chat-echo")
    assert code == 1
    assert "HTTP 302: a redirect that would turn the request into a GET" in err
    assert "Traceback" not in err and len(first.requests) == 1


def test_prose_cut_into_pieces_never_splits_a_secret_between_two() -> None:
    """The store writes prose a piece at a time, each redacted alone: wherever
    the flush falls, the cut ``safe_cut`` chooses never leaves a piece of a
    key (registered, or a ``Bearer``/``x-api-key`` echo) on either side."""
    from app.stream.redact import redact, register_secret, safe_cut

    secret = "sk-cut-test-" + uuid.uuid4().hex
    register_secret(secret)
    prose = "All good so far. " * 20
    text = (prose + f"Incorrect API key provided: {secret}. " + prose + 'headers: {"x-api-key": "'
            + "k" * 40 + '"} and Authorization: Bearer ' + "t" * 300 + " done. " + prose)
    whole = redact(text)
    for cut in range(1, len(text)):
        for start in (0, cut // 2):
            at = safe_cut(text, start, cut)
            assert start <= at <= cut
            stored = redact(text[:at]) + redact(text[at:])
            for fragment in (secret[12:22], secret[-10:], "k" * 12, "t" * 12):
                assert fragment not in stored, (cut, at)
            if at:
                assert stored == whole, (cut, at)


def test_safe_cut_waits_while_a_secret_may_still_be_forming() -> None:
    from app.stream.redact import safe_cut

    text = "word " * 10
    assert safe_cut(text, 0, len(text)) == 0  # all of it within reach of a key still arriving
    longer = "word " * 100
    at = safe_cut(longer, 0, len(longer))
    assert 0 < at <= len(longer) - 96 and longer[at - 1] == " "


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["word ", "x" * 70, "\n", "Authorization: Bearer " + "t" * 40, "SECRET", "ü ",
                                 '"x-api-key": "' + "k" * 20 + '"', "bearer", " key=", "abc" * 50]), max_size=120),
       st.lists(st.integers(1, 400), min_size=1, max_size=40), st.integers(100, 2000))
def test_a_text_redacted_in_pieces_is_the_whole_text_redacted(words: list[str], cuts: list[int], window: int) -> None:
    """``redact_pieces`` (a recorded request written as it is encoded) gives
    what ``redact`` of the joined text gives, wherever the pieces and the
    windows fall."""
    from app.stream.redact import redact, redact_pieces, register_secret

    secret = "sk-pieces-0123456789abcdef"
    register_secret(secret)
    text = "".join(secret if w == "SECRET" else w for w in words)
    pieces, at = [], 0
    for size in cuts * (len(text) // max(1, sum(cuts)) + 1):
        if at >= len(text):
            break
        pieces.append(text[at : at + size])
        at += size
    out = list(redact_pieces(pieces, window))
    assert "".join(out) == redact(text)
    # held a few windows, never the whole: beyond that only a run with no break in it, which may be a
    # credential still forming and is held whole (safe_cut), up to _CUT_LOOK
    run = max((len(r) for r in re.findall(r"\S+", text)), default=0)
    assert all(len(piece) <= 4 * window + 400 + run for piece in out)


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from("ab1.=/- \n\"é,"), max_size=3000), st.data())
def test_the_last_break_is_found_from_the_end_as_the_list_of_every_break_gave_it(text: str,
                                                                                  data: st.DataObject) -> None:
    """Why: ``safe_cut`` made a list of every break in 64 KiB before a cut (half
    a megabyte of ints at each cut of a big call's claim) to read its last;
    looked for from the end, the answer must be the same for any range."""
    from app.stream.redact import _NOT_TOKEN, _last_break

    low = data.draw(st.integers(0, len(text)))
    high = data.draw(st.integers(low, len(text)))
    breaks = [m.end() for m in _NOT_TOKEN.finditer(text, low, high)]
    assert _last_break(text, low, high) == (breaks[-1] if breaks else None)
