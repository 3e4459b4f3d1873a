"""Recordings are compressed and written in batches, no larger than the
stream they hold; plain and compressed files read the same; a file cut
short reads up to the cut; damaged data is a clear error."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.store.recording import RecordingWriter, read_recording, recording_path
from tests import streamgen
from tests.conftest import ROOT

HEADER = {"conversation": "c1", "dialect": "anthropic", "provider": "test", "model": "m"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _stream(size: int) -> bytes:
    args = json.dumps({"order_id": "A-1042", "body": "The parcel left the hub on Tuesday. " * (size // 36)})
    return streamgen.anthropic([("text", "Filing it.")] + streamgen.call_script(0, "t1", "create_ticket", args, 8))


def _record(path: Path, stream: bytes, chunk: int = 512, pace: float = 0.001) -> None:
    clock = Clock()
    writer = RecordingWriter(path, HEADER, clock)
    writer.marker("user", {"text": "file it"})
    writer.marker("turn", {"turn": 0, "request": {"model": "m"}})
    writer.marker("attempt", {"turn": 0, "attempt": 1})
    for i in range(0, len(stream), chunk):
        clock.now += pace
        writer.chunk(clock.now, stream[i : i + chunk])
    writer.marker("end", {"turn": 0, "attempt": 1, "cause": "eof"})
    writer.marker("results", {"turn": 0, "calls": []})
    writer.close()


def _members(data: bytes) -> int:
    count = 0
    while data:
        member = zlib.decompressobj(wbits=31)
        member.decompress(data)
        count += 1
        data = member.unused_data
    return count


def _chunks(path: Path) -> bytes:
    return b"".join(data for _, kind, data in read_recording(path).events if kind == "o")


def test_a_recording_is_smaller_than_its_stream_and_written_in_batches(tmp_path: Path) -> None:
    stream = _stream(1_000_000)
    path = recording_path(tmp_path, "c1")
    assert path.name == "c1.ndjson.gz"
    _record(path, stream)
    data = path.read_bytes()
    assert len(data) <= len(stream) / 4
    chunks = len(stream) // 512
    assert _members(data) < chunks / 50  # a few hundred chunks per write
    assert _chunks(path) == stream
    lines = gzip.decompress(data).decode().splitlines()  # one gzip stream: any gunzip reads it
    assert json.loads(lines[0])["format"] == "callstream-recording" and len(lines) == chunks + 1 + 6


def test_a_slow_stream_reaches_the_disk_every_second(tmp_path: Path) -> None:
    path = tmp_path / "slow.ndjson.gz"
    clock = Clock()
    writer = RecordingWriter(path, HEADER, clock)
    writer.marker("attempt", {"turn": 0, "attempt": 1})
    for second in range(1, 6):
        for _ in range(4):
            clock.now += 0.25
            writer.chunk(clock.now, b"data: {}\n\n")
        # the process may die now: what arrived more than a second ago is on disk
        assert len(_chunks(path)) >= (second - 1) * 4 * len(b"data: {}\n\n") - 10
    writer.close()


def test_plain_and_compressed_recordings_read_the_same(tmp_path: Path) -> None:
    stream = _stream(20_000)
    _record(tmp_path / "a.ndjson", stream)
    _record(tmp_path / "a.ndjson.gz", stream)
    assert not (tmp_path / "a.ndjson").read_bytes().startswith(b"\x1f\x8b")
    plain, packed = read_recording(tmp_path / "a.ndjson"), read_recording(tmp_path / "a.ndjson.gz")
    assert plain.events == packed.events and plain.header["dialect"] == packed.header["dialect"]


def test_an_older_plain_recording_is_continued_plainly(tmp_path: Path) -> None:
    (tmp_path / "c1.ndjson").write_text("")
    path = recording_path(tmp_path, "c1")
    assert path.name == "c1.ndjson"
    _record(path, b"data: one\n\n")
    _record(path, b"data: two\n\n")  # a second session of the same conversation
    assert not path.read_bytes().startswith(b"\x1f\x8b")
    assert _chunks(path) == b"data: one\n\ndata: two\n\n"


@pytest.fixture(scope="module")
def many_members(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, list[object]]:
    path = tmp_path_factory.mktemp("whole") / "whole.ndjson.gz"
    _record(path, _stream(100_000), pace=0.3)  # a batch every few chunks: many members to cut through
    return path.read_bytes(), list(read_recording(path).events)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keep=st.floats(min_value=0.02, max_value=1.0))
def test_a_compressed_file_cut_short_reads_up_to_the_cut(tmp_path_factory: pytest.TempPathFactory,
                                                         many_members: tuple[bytes, list[object]],
                                                         keep: float) -> None:
    data, whole = many_members
    assert _members(data) > 50
    path = tmp_path_factory.mktemp("cut") / "cut.ndjson.gz"
    path.write_bytes(data[: max(80, int(len(data) * keep))])
    events = read_recording(path).events
    assert events == whole[: len(events)]
    assert keep < 1.0 or events == whole


def test_damaged_compressed_data_is_a_clear_error(home: Path) -> None:
    path = home / "damaged.ndjson.gz"
    _record(path, _stream(50_000))
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    result = subprocess.run([sys.executable, "-m", "app", "replay", str(path), "--headless"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "damaged" in result.stderr and "Traceback" not in result.stderr


def test_a_request_marker_with_a_big_argument_is_written_in_batches_and_redacted(tmp_path: Path) -> None:
    """A turn's request carries the history's arguments (10 MB in the worst
    case): the marker is written as it is encoded, a batch at a time, and
    redacted across the batches' seams as the whole line would be."""
    from app.stream.redact import redact, register_secret

    secret = "sk-marker-" + "q" * 30
    register_secret(secret)
    body = ("The parcel left the hub. " * 40_000) + f"key {secret} and Authorization: Bearer " + "t" * 60 + "."
    request = {"model": "m", "messages": [{"role": "assistant", "content": [{"type": "tool_use", "input":
                                                                             {"body": body, "ü": "ñ" * 9}}]}]}
    path = tmp_path / "big.ndjson.gz"
    writer = RecordingWriter(path, HEADER, Clock())
    writer.marker("turn", {"turn": 0, "request": request})
    writer.close()
    data = path.read_bytes()
    assert _members(data) > 4  # not one batch of the whole line
    text = gzip.decompress(data).decode()
    assert secret not in text and "t" * 20 not in text
    (marker,) = [data for _, kind, data in read_recording(path).events if kind == "m"]
    written = marker["request"]["messages"][0]["content"][0]["input"]
    assert written["ü"] == "ñ" * 9
    assert written["body"] == redact(body) != body  # as the whole line redacted at once
