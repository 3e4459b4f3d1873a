"""Hostile input at the command line, one test per input (issue 13's first
proof): each ends in a stated failure — its words, its exit code, no
traceback — and the conversation saved before it is still there, unchanged.

``saved`` makes a real conversation with the embedded demo model first.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store.recording import read_recording
from tests import streamgen
from tests.conftest import run_cli as run
from tests.faultserver import FaultServer, Reply
from tests.waiting import wait_for


class Saved:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.data = home / "home"
        code, out, err = run("ask", "Look up order A-1042", "--json")
        assert code == 0, err
        self.id = json.loads(out)["conversation"]
        self.export = self.exported()

    def exported(self) -> str:
        code, out, err = run("export", self.id)
        assert code == 0, err
        return out

    def intact(self, alone: bool = False) -> None:
        """What was saved before is still there, unchanged (``alone``: and nothing else was stored)."""
        assert self.exported() == self.export
        code, out, _ = run("transcripts", "--json")
        ids = [row["id"] for row in json.loads(out)]
        assert code == 0 and self.id in ids
        assert not alone or ids == [self.id]


@pytest.fixture
def saved(home: Path) -> Iterator[Saved]:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    yield Saved(home)


def stated(result: tuple[int, str, str], code: int, *words: str) -> str:
    got, out, err = result
    assert "Traceback" not in out + err
    assert got == code, (got, out, err)
    for word in words:
        assert word in err, (word, err)
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    return err


def _export_with(saved: Saved, tmp: Path, change: dict[str, object] | None = None,
                 item: dict[str, object] | None = None) -> Path:
    document = json.loads(saved.export)
    document["conversation"]["id"] = "f" * 32
    document["conversation"].update(change or {})
    if item is not None:
        turn = next(i for i in document["items"] if i["kind"] == "turn")
        turn.update(item)
    path = tmp / "hostile.json"
    path.write_text(json.dumps(document))
    return path


# -- ids are never paths ------------------------------------------------------------

def test_import_whose_id_climbs_out_of_the_data_dir_is_refused(saved: Saved, tmp_path: Path) -> None:
    path = _export_with(saved, tmp_path, {"id": "../../outside"})
    stated(run("import", str(path)), 2, "conversation id '../../outside' is not valid",
           "ASCII letters, digits, '_' and '-'")
    saved.intact(alone=True)
    code, _, err = run("ask", "again", "--conversation", "../../outside")
    assert code == 2 and "is not valid" in err
    assert not (tmp_path / "outside.ndjson").exists() and not (saved.data.parent / "outside.ndjson").exists()


def test_import_whose_id_is_an_absolute_path_is_refused(saved: Saved, tmp_path: Path) -> None:
    path = _export_with(saved, tmp_path, {"id": str(tmp_path / "abs")})
    stated(run("import", str(path)), 2, "is not valid")
    saved.intact(alone=True)
    assert not list(tmp_path.glob("abs*"))


def test_ask_conversation_that_is_a_path_is_refused(saved: Saved) -> None:
    stated(run("ask", "hi", "--conversation", "../x"), 2, "conversation id '../x' is not valid")
    saved.intact(alone=True)


def test_export_id_that_is_a_path_is_refused(saved: Saved) -> None:
    stated(run("export", "/etc/passwd"), 2, "conversation id '/etc/passwd' is not valid")
    saved.intact(alone=True)


def test_export_prefix_with_a_like_wildcard_matches_nothing(saved: Saved) -> None:
    stated(run("export", "_" * 4), 2, "no stored conversation '____'")
    saved.intact(alone=True)


# -- imports ----------------------------------------------------------------------------

def test_import_of_a_hundred_thousand_deep_document(saved: Saved, tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    stated(run("import", str(path)), 2, "is not JSON that callstream reads",
           "nesting too deep (deeper than 100 levels)")
    saved.intact(alone=True)


def test_import_with_a_turn_of_ten_to_the_thirty(saved: Saved, tmp_path: Path) -> None:
    path = _export_with(saved, tmp_path, item={"turn": 10**30})
    stated(run("import", str(path)), 2, "item 1.turn must be a whole number from 0 to 1000000000")
    saved.intact(alone=True)


def test_import_with_created_nan(saved: Saved, tmp_path: Path) -> None:
    path = _export_with(saved, tmp_path, {"created": "nan"})
    stated(run("import", str(path)), 2, "conversation.created must be a finite number of seconds")
    saved.intact(alone=True)


def test_import_with_a_block_that_is_not_an_object(saved: Saved, tmp_path: Path) -> None:
    path = _export_with(saved, tmp_path, item={"blocks": [5]})
    stated(run("import", str(path)), 2, "item 1 has a damaged block: a block that is not an object")
    saved.intact(alone=True)


def test_import_of_a_file_that_is_not_text(saved: Saved, tmp_path: Path) -> None:
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    stated(run("import", str(path)), 2, "is not a text file")
    saved.intact(alone=True)


# -- recordings ------------------------------------------------------------------------

def _recording(tmp: Path, *lines: object, header: dict[str, object] | None = None) -> Path:
    head = {"format": "callstream-recording", "version": 1, "dialect": "openai-chat", **(header or {})}
    path = tmp / "hostile.ndjson"
    path.write_text("\n".join([json.dumps(head), *(line if isinstance(line, str) else json.dumps(line)
                                                   for line in lines)]) + "\n")
    return path


def test_recording_with_a_nan_interval(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, '[NaN, "o", "data: x\\n\\n"]', [0, "m", {"kind": "user", "text": "x"}])
    stated(run("replay", str(path), "--headless", "--idle-limit", "1"), 2,
           "line 2 is not a recording event", "not a finite number of seconds")
    saved.intact(alone=True)


def test_recording_with_an_interval_of_1e400(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, '[1e400, "o", "data: x\\n\\n"]', [0, "m", {"kind": "user", "text": "x"}])
    stated(run("replay", str(path), "--headless", "--idle-limit", "1"), 2, "line 2", "not a finite number")
    saved.intact(alone=True)


def test_recording_with_bad_base64(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, [0, "b", "!!!not base64!!!"], [0, "m", {"kind": "user", "text": "x"}])
    stated(run("replay", str(path), "--headless"), 2, "line 2 is not a recording event")
    saved.intact(alone=True)


def test_recording_with_a_hundred_thousand_deep_line(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, "[" * 100_000 + "]" * 100_000, [0, "m", {"kind": "user", "text": "x"}])
    stated(run("replay", str(path), "--headless"), 2, "line 2", "nesting too deep (deeper than 100 levels)")
    saved.intact(alone=True)


def test_recording_whose_header_dialect_is_a_path(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, [0, "m", {"kind": "user", "text": "x"}], header={"dialect": "../../etc"})
    stated(run("replay", str(path), "--headless"), 2, "unknown dialect '../../etc'")
    saved.intact(alone=True)


def test_recording_whose_conversation_id_is_a_path(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, [0, "m", {"kind": "user", "text": "x"}], header={"conversation": "../../x"})
    stated(run("replay", str(path), "--headless"), 2, "conversation id '../../x' is not valid")
    saved.intact(alone=True)


def test_recording_with_an_impossible_turn_number(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, [0, "m", {"kind": "turn", "turn": 10**30, "request": None}])
    stated(run("replay", str(path), "--headless"), 2, "line 2", "its turn is not a turn number")
    saved.intact(alone=True)


def test_recording_with_retries_that_are_not_a_number(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, [0, "m", {"kind": "user", "text": "x"}], header={"retries": "many"})
    stated(run("replay", str(path), "--headless"), 2, "retries must be a whole number from 0 to 10")
    saved.intact(alone=True)


def test_a_torn_last_line_still_replays(saved: Saved, tmp_path: Path) -> None:
    path = _recording(tmp_path, [0, "m", {"kind": "user", "text": "x"}])
    with path.open("a") as f:
        f.write('[0.1, "o", "data: {\\"cho')
    code, out, err = run("replay", str(path), "--headless")
    # the recording ends inside the first stream: replayed up to there, a stated failure (exit 1, as ask)
    assert code == 1 and "Traceback" not in out + err and "Interrupted" in out + err
    saved.intact(alone=True)


def test_recording_chunks_in_base64_replay_as_bytes(saved: Saved, tmp_path: Path) -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"\xc3\xa9"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    path = _recording(tmp_path, [0, "m", {"kind": "user", "text": "x"}],
                      [0, "m", {"kind": "turn", "turn": 0, "request": None}],
                      [0, "m", {"kind": "attempt", "turn": 0, "attempt": 1}],
                      [0, "b", base64.b64encode(body[:60]).decode()], [0, "b", base64.b64encode(body[60:]).decode()],
                      [0, "m", {"kind": "end", "turn": 0, "attempt": 1, "cause": "eof"}])
    code, out, err = run("replay", str(path), "--headless")
    assert code == 0, err
    assert "é" in out


# -- providers that send what no provider should --------------------------------------

@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as srv:
        yield srv


def _provider(saved: Saved, server: FaultServer, dialect: str = "openai-chat", extra: str = "",
              retries: int = 0) -> str:
    url = server.url + ("/v1" if dialect.startswith("openai") else "")
    with (saved.home / "config.toml").open("a") as f:
        f.write(f'\n[providers.hostile]\nprovider = "{dialect}"\nmodel = "m"\nbase_url = "{url}"\n'
                f'key_env = "CALLSTREAM_HOSTILE_KEY"\nretries = {retries}\n{extra}')
    return "hostile"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLSTREAM_HOSTILE_KEY", "hostile-test-key-0123456789")


def test_error_body_nineteen_thousand_brackets_deep(saved: Saved, server: FaultServer) -> None:
    server.replies.append(Reply(b"[" * 19_000, status=400))
    err = stated(run("ask", "hi", "--provider", _provider(saved, server)), 1, "HTTP 400")
    assert len(err) < 400  # one capped line, not 19,000 brackets
    saved.intact()


def test_proxy_traceback_becomes_one_capped_line(saved: Saved, server: FaultServer) -> None:
    trace = "Traceback (most recent call last):\n" + "".join(
        f'  File "/srv/litellm/proxy/route_{i}.py", line {i}, in handler\n    raise ProxyError()\n' for i in range(60))
    server.replies.append(Reply(json.dumps({"error": {"message": trace}}).encode(), status=500))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    turn = json.loads(out)["turns"][0]
    assert "\n" not in turn["error"] and len(turn["error"]) <= 300 and turn["error"].endswith("…")
    saved.intact()


def test_retry_after_garbage_is_ignored(saved: Saved, server: FaultServer) -> None:
    server.replies.append(Reply(b'{"error": {"message": "slow down"}}', status=429, headers={"Retry-After": "garbage"}))
    server.replies.append(Reply(streamgen.openai_chat([("text", "recovered")], finish="stop")))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server, retries=1), "--no-tools")
    # the garbage header is ignored: the retry waits its own backoff, and the turn goes on
    assert code == 0 and "recovered" in out and "Traceback" not in err
    assert "Attempt 1 failed: HTTP 429: slow down. Retrying in" in err
    saved.intact()


def test_retry_after_garbage_values_parse_to_nothing() -> None:
    import httpx

    from app.net.stream import retry_after_seconds

    for value in ("garbage", "nan", "inf", "-inf", "Mon, 99 Foo 2026 99:99:99 GMT", "1e400", "\x00"):
        assert retry_after_seconds(httpx.Headers({"retry-after": value})) in (None, 0.0, 60.0), value
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "nan", "retry-after": "2"})) == 2.0


def test_arguments_six_hundred_deep_are_not_run(saved: Saved, server: FaultServer) -> None:
    args = '{"order_id": "A-1042", "x": ' + "[" * 600 + "]" * 600 + "}"
    server.replies.append(Reply(streamgen.openai_chat(streamgen.call_script(0, "c1", "get_order", args, 97))))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    turn = json.loads(out)["turns"][0]
    call = next(b for b in turn["blocks"] if b["type"] == "tool_call")
    assert turn["outcome"] == "malformed" and call["state"] == "not run"
    assert "nesting too deep (deeper than 100 levels)" in call["result"]
    saved.intact()


def test_tool_result_a_hundred_thousand_deep_goes_to_gemini_as_text(saved: Saved, server: FaultServer) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    tool = (f'[tools.deep]\ncommand = ["python3", "-c", "print(\'{deep[:1]}\' * 100000 + \'{deep[-1:]}\' * 100000)"]\n'
            'read_only = true\n')
    _provider(saved, server, "gemini", "\n" + tool)
    server.replies.append(Reply(streamgen.gemini(streamgen.call_script(0, "c1", "deep", "{}"))))
    server.replies.append(Reply(streamgen.gemini([("text", "done")])))
    code, out, err = run("ask", "hi", "--provider", "hostile", "--json")
    assert code == 0, err
    assert "Traceback" not in err
    parts = server.requests[1]["body"]["contents"][-1]["parts"]
    response = parts[0]["functionResponse"]["response"]["result"]
    assert isinstance(response, str) and response.strip() == deep
    saved.intact()


# -- the config file ----------------------------------------------------------------------

def _config(saved: Saved, text: str) -> None:
    with (saved.home / "config.toml").open("a") as f:
        f.write("\n" + text + "\n")


def test_config_tool_schema_that_is_not_a_schema(saved: Saved) -> None:
    _config(saved, '[tools.broken]\ncommand = ["true"]\nparameters = { type = "object", required = 5 }')
    stated(run("ask", "hi"), 2, "tools.broken.parameters is not a valid JSON Schema", "the tool 'broken'")
    saved.intact(alone=True)


def test_config_demo_speed_fast(saved: Saved) -> None:
    _config(saved, '[providers.quick]\nprovider = "demo"\nspeed = "fast"')
    stated(run("ask", "hi"), 2, "providers.quick.speed must be a number from 0", "'fast'")
    saved.intact(alone=True)


def test_config_nested_five_thousand_deep(saved: Saved) -> None:
    _config(saved, "deep = " + "[" * 5000 + "]" * 5000)
    stated(run("ask", "hi"), 2, "nested too deep to read")
    saved.intact(alone=True)


def test_config_limit_that_is_not_a_number(saved: Saved) -> None:
    _config(saved, '[limits]\nevent_bytes = "lots"')
    stated(run("ask", "hi"), 2, "limits.event_bytes must be a whole number of bytes")
    saved.intact(alone=True)


# -- limits, stated when hit ------------------------------------------------------------

def test_an_endless_line_stops_at_the_event_limit(saved: Saved, server: FaultServer) -> None:
    _config(saved, "[limits]\nevent_bytes = 65536")
    server.replies.append(Reply(b"data: " + b"x" * 2_000_000, chunk=8192))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    turn = json.loads(out)["turns"][0]
    assert turn["outcome"] == "malformed"
    assert turn["error"] == ("the stream was stopped: an SSE line longer than 64 KiB (limits.event_bytes in the "
                             "config)")
    (recording,) = (saved.data / "recordings").glob(f"{json.loads(out)['conversation']}.ndjson*")
    assert recording.stat().st_size < 400_000  # the recording stopped with the stream
    saved.intact()


def test_a_gzip_bomb_of_text_stops_at_the_content_limit(saved: Saved, server: FaultServer) -> None:
    import gzip

    _config(saved, "[limits]\ncontent_bytes = 1048576")
    frame = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"a" * 900 + b'"}}]}\n\n'
    bomb = gzip.compress(frame * 20_000)  # 19 MB of stream in about 60 KB
    assert len(bomb) < 200_000
    server.replies.append(Reply(bomb, headers={"Content-Encoding": "gzip"}, chunk=4096))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    turn = json.loads(out)["turns"][0]
    assert turn["error"] == ("the stream was stopped: the reply's text and arguments passed 1 MiB "
                             "(limits.content_bytes in the config)")
    saved.intact()


def test_a_gzip_bomb_is_decompressed_only_as_far_as_the_limit(saved: Saved, server: FaultServer) -> None:
    """Each decompression step yields at most 64 KiB (httpx inflates a whole
    read: 4 KB of this bomb would be 4 MB at once), so what reaches the
    parser, the recording and the store stops within a step of the limit."""
    import gzip

    from app.net.inflate import PIECE

    _config(saved, "[limits]\ncontent_bytes = 1048576")
    frame = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"a" * 900 + b'"}}]}\n\n'
    server.replies.append(Reply(gzip.compress(frame * 20_000), headers={"Content-Encoding": "gzip"}, chunk=65536))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    conversation = json.loads(out)["conversation"]
    code, exported, _ = run("export", conversation)
    (turn,) = [i for i in json.loads(exported)["items"] if i["kind"] == "turn"]
    text = "".join(b["text"] for b in turn["blocks"] if b["type"] == "text")
    assert 1 << 20 < len(text) <= (1 << 20) + PIECE
    recording = read_recording(next((saved.data / "recordings").glob(f"{conversation}.ndjson*")))
    received = sum(len(data) for _, kind, data in recording.events if kind in ("o", "b"))
    assert received <= (1 << 20) * len(frame) // 900 + 2 * PIECE
    saved.intact()


def test_a_body_that_does_not_decompress_is_a_stated_failure(saved: Saved, server: FaultServer) -> None:
    import gzip

    good = gzip.compress(streamgen.openai_chat([("text", "Hello there.")], finish="stop"))
    server.replies.append(Reply(good[:40] + b"\x00garbage" * 50, headers={"Content-Encoding": "gzip"}))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    turn = json.loads(out)["turns"][0]
    assert turn["outcome"] == "cut_off" and "the response body does not decompress" in turn["error"], turn
    saved.intact()


def test_compressed_bodies_decompress_piece_by_piece() -> None:
    import gzip
    import zlib

    from app.net.inflate import PIECE, InflateError, inflater_for

    text = bytes(range(256)) * 4000 + b"a" * 3_000_000
    two_members = gzip.compress(text[:500_000]) + gzip.compress(text[500_000:])
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    cases = {"gzip": two_members, "x-gzip": gzip.compress(text), "deflate": zlib.compress(text),
             "Deflate": raw.compress(text) + raw.flush()}
    for encoding, body in cases.items():
        inflater = inflater_for(encoding)
        assert inflater is not None
        pieces = [piece for start in range(0, len(body), 7000) for piece in inflater.feed(body[start:start + 7000])]
        pieces.append(inflater.flush())
        assert b"".join(pieces) == text, encoding
        assert max(map(len, pieces)) <= PIECE
    assert inflater_for("") is None and inflater_for("br") is None and inflater_for("identity") is None
    broken = inflater_for("gzip")
    assert broken is not None
    with pytest.raises(InflateError, match="does not decompress"):
        list(broken.feed(b"\x1f\x8b\x08\x00" + b"\xff" * 100))


def test_a_gzip_bomb_of_keep_alives_stops_at_the_body_limit(saved: Saved, server: FaultServer) -> None:
    import gzip

    _config(saved, "[limits]\nbody_bytes = 1048576")
    bomb = gzip.compress(b": keep-alive\n\n" * 1_000_000)  # 15 MB of comments that carry nothing
    server.replies.append(Reply(bomb, headers={"Content-Encoding": "gzip"}, chunk=4096))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    turn = json.loads(out)["turns"][0]
    assert turn["error"] == ("the stream was stopped: the response body passed 1 MiB (after decompression; "
                             "limits.body_bytes in the config)")
    saved.intact()


def test_tool_output_past_the_limit_is_cut_with_a_marker(saved: Saved, server: FaultServer) -> None:
    tool = '[tools.loud]\ncommand = ["python3", "-c", "print(\'y\' * 3000000)"]\nread_only = true\n'
    _provider(saved, server, extra="\n[limits]\ntool_output_bytes = 65536\n\n" + tool)
    server.replies.append(Reply(streamgen.openai_chat(streamgen.call_script(0, "c1", "loud", "{}"))))
    server.replies.append(Reply(streamgen.openai_chat([("text", "ok")], finish="stop")))
    code, out, err = run("ask", "hi", "--provider", "hostile", "--json")
    assert code == 0, err
    call = next(b for b in json.loads(out)["turns"][0]["blocks"] if b["type"] == "tool_call")
    assert call["state"] == "ran"
    assert call["result"] == "y" * 65536 + f"\n[… {3_000_001 - 65536} bytes cut]"
    sent = server.requests[1]["body"]["messages"][-1]["content"]
    assert sent.endswith(f"[… {3_000_001 - 65536} bytes cut]")
    saved.intact()


# -- machine output is terminal-safe -----------------------------------------------------

def test_ask_json_and_export_escape_c1_controls_and_bidi_overrides(saved: Saved, server: FaultServer) -> None:
    hostile = "ok \x9b2J \x1b]52;c;AAAA\x07 \u202egnp.exe\u202c \u2066x\u2069 \x7f"
    server.replies.append(Reply(streamgen.openai_chat([("text", hostile)], finish="stop")))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json", "--no-tools")
    assert code == 0, err
    for text in (out, run("export", json.loads(out)["conversation"])[1]):
        assert not any(ch in text for ch in "\x9b\x1b\x07\u202e\u202c\u2066\u2069\x7f")
        assert "\\u009b" in text and "\\u202e" in text
        document = json.loads(text)  # the same document: only its spelling changed
        strings: list[str] = []
        stack: list[object] = [document]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str):
                strings.append(item)
        assert hostile in strings
    saved.intact()


# -- one display-safe summary everywhere --------------------------------------------------

def test_a_rejected_call_never_shows_an_unlisted_value_in_ask_or_the_export(saved: Saved,
                                                                            server: FaultServer) -> None:
    tool = ('[tools.lookup_user]\ncommand = ["true"]\ndisplay = ["query"]\n'
            'parameters = { type = "object", properties = { query = { type = "string" }, '
            'secret = { type = "string" } }, required = ["query"] }\n')
    _provider(saved, server, extra="\n" + tool)
    args = json.dumps({"query": "ada", "secret": {"password": "hunter2-xyzzy"}})
    server.replies.append(Reply(streamgen.openai_chat(streamgen.call_script(0, "c1", "lookup_user", args))))
    server.replies.append(Reply(streamgen.openai_chat([("text", "Sorry.")], finish="stop")))
    code, out, err = run("ask", "hi", "--provider", "hostile")
    assert code == 0, err
    assert "lookup_user · rejected" in out and "an unlisted field: wrong type" in out
    assert "hunter2" not in out + err
    assert "hunter2" in json.dumps(server.requests[1]["body"])  # the model itself is told exactly what was wrong
    conversation = json.loads(run("transcripts", "--json")[1])[0]["id"]
    markdown = run("export", conversation, "--format", "markdown")[1]
    assert "rejected" in markdown and "hunter2" not in markdown
    saved.intact()


# -- an error's whole text: one line in notes, cards and the history; all of it in the details -------------------

_TRACE = "Traceback (most recent call last):\n" + "".join(
    f'  File "/srv/litellm/proxy/route_{i}.py", line {i}, in handler\n    raise ProxyError()\n' for i in range(60)
) + "litellm.exceptions.ProxyError: upstream said hostile-test-key-0123456789 is wrong"


def _error_events(dialect: str) -> bytes:
    """A stream that starts well, then carries the provider's error event (each dialect's own shape)."""
    error = {"type": "server_error", "message": _TRACE}
    if dialect == "anthropic":
        head = streamgen.anthropic([("text", "Let me look. ")], stop_reason=None, stop=False)
        return head + b"event: error\ndata: " + json.dumps({"type": "error", "error": error}).encode() + b"\n\n"
    if dialect == "openai-chat":
        head = streamgen.openai_chat([("text", "Let me look. ")], finish=None, done=False)
        return head + b"data: " + json.dumps({"error": error}).encode() + b"\n\n"
    if dialect == "openai-responses":
        head = streamgen.openai_responses([("text", "Let me look. ")], final=None)
        failed = {"type": "response.failed", "response": {"id": "r1", "status": "failed", "error": error}}
        return head + b"event: response.failed\ndata: " + json.dumps(failed).encode() + b"\n\n"
    head = streamgen.gemini([("text", "Let me look. ")], finish=None)
    return head + b"data: " + json.dumps({"error": {"code": 500, "message": _TRACE, "status": "INTERNAL"}}).encode() \
        + b"\n\n"


@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat", "openai-responses", "gemini"])
def test_an_error_event_mid_stream_keeps_its_whole_text_in_the_details(saved: Saved, server: FaultServer,
                                                                       dialect: str) -> None:
    server.replies.append(Reply(_error_events(dialect)))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server, dialect), "--json")
    assert code == 1 and "Traceback" not in err
    document = json.loads(out)
    turn = document["turns"][0]
    assert turn["outcome"] == "provider_error", turn
    assert "\n" not in turn["error"] and len(turn["error"]) <= 300  # the one line
    assert "\n" not in turn["note"] and len(turn["note"]) <= 400
    detail = turn["detail"]  # ask --json: the whole text
    assert "route_59.py" in detail and "litellm.exceptions.ProxyError" in detail
    assert "hostile-test-key-0123456789" not in out and "[redacted]" in detail
    code, exported, _ = run("export", document["conversation"])  # and stored with the turn
    (stored,) = [i for i in json.loads(exported)["items"] if i["kind"] == "turn"]
    assert stored["detail"] == detail and stored["error"] == turn["error"]
    code, markdown, _ = run("export", document["conversation"], "--format", "markdown")
    assert code == 0 and "route_59.py" in markdown
    saved.intact()


def test_an_http_error_body_is_kept_whole_in_the_details(saved: Saved, server: FaultServer) -> None:
    server.replies.append(Reply(json.dumps({"error": {"message": _TRACE}}).encode(), status=500))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    document = json.loads(out)
    turn = document["turns"][0]
    assert "\n" not in turn["error"] and len(turn["error"]) <= 300
    assert "route_59.py" in turn["detail"] and "hostile-test-key-0123456789" not in out
    code, exported, _ = run("export", document["conversation"])
    (stored,) = [i for i in json.loads(exported)["items"] if i["kind"] == "turn"]
    assert stored["detail"] == turn["detail"]
    saved.intact()


def test_an_error_detail_a_hundred_thousand_deep_or_huge_is_capped_text(saved: Saved, server: FaultServer) -> None:
    from app.stream.limits import DETAIL_CHARS, full_text

    deep = full_text("[" * 100_000)
    assert deep is not None and deep.startswith("[[[") and deep.endswith("bytes cut]")
    assert len(deep) < DETAIL_CHARS + 40
    assert full_text('{"error": {"message": "x"}}') == '{\n  "error": {\n    "message": "x"\n  }\n}'
    server.replies.append(Reply(b'data: {"error": {"message": "' + b"y" * 200_000 + b'"}}\n\n'))
    code, out, err = run("ask", "hi", "--provider", _provider(saved, server), "--json")
    assert code == 1 and "Traceback" not in err
    assert len(json.loads(out)["turns"][0]["detail"]) < DETAIL_CHARS + 40
    saved.intact()


async def test_the_tui_shows_an_errors_whole_text_under_its_note_live_and_reopened(saved: Saved,
                                                                                 server: FaultServer) -> None:
    from textual.widgets import Collapsible

    from app.settings.config import load_config
    from app.tui.app import make_app
    from widgets.error_details import ErrorDetails
    from widgets.prompt_input import PromptInput

    provider = _provider(saved, server, "anthropic")
    server.replies.append(Reply(_error_events("anthropic")))
    config = load_config()
    config.default = provider
    app = make_app(config=config)
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.query_one(PromptInput).text = "hi"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query(ErrorDetails) and not app.session.busy,
                       "the failed turn's details")
        (details,) = app.screen.query(ErrorDetails)
        assert "route_59.py" in details.text and "hostile-test-key-0123456789" not in details.text
        assert isinstance(details, Collapsible) and details.collapsed
        conversation = app.session.conversation
    reopened = make_app(config=config, conversation=conversation)
    async with reopened.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: reopened.screen.query(ErrorDetails), "the reopened turn's details")
        (again,) = reopened.screen.query(ErrorDetails)
        assert again.text == details.text
