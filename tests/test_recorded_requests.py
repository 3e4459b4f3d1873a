"""A turn's request is recorded as what it adds to the one before; it reads back whole (issue 31).

Each request carries the whole history: recorded whole, a recording grew with
the square of the conversation, and writing a request of 500 exchanges took
~30 ms of every round on the event loop. ``app/store/recorded_requests.py``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.store.recording import RecordingError, RecordingWriter, read_recording
from app.stream.jsonwrite import plain

HEADER = {"conversation": "c1", "dialect": "openai-chat", "provider": "test", "model": "m"}


def record(path: Path, requests: list[dict[str, Any]]) -> None:
    writer = RecordingWriter(path, HEADER)
    for turn, request in enumerate(requests):
        writer.marker("turn", {"turn": turn, "request": request})
        writer.marker("end", {"turn": turn, "attempt": 1, "cause": "eof"})
    writer.close()


def read_back(path: Path) -> list[Any]:
    return [data["request"] for _, kind, data in read_recording(path).events if kind == "m" and data["kind"] == "turn"]


def lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()[1:]]


def conversation(exchanges: int) -> list[dict[str, Any]]:
    """The requests of a conversation: each the history so far, and the same tools."""
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    history: list[dict[str, Any]] = []
    requests = []
    for n in range(exchanges):
        history = [*history, {"role": "user", "content": f"Show me order A-{n}. " * 20}]
        requests.append({"model": "m", "stream": True, "messages": history, "tools": tools})
        history = [*history, {"role": "assistant", "content": f"Order A-{n} shipped on Tuesday. " * 20}]
    return requests


def test_a_long_conversation_reads_back_whole(tmp_path: Path) -> None:
    requests = conversation(60)
    path = tmp_path / "c1.ndjson.gz"
    record(path, requests)
    assert read_back(path) == requests


def test_each_request_after_the_first_is_written_as_what_it_adds(tmp_path: Path) -> None:
    requests = conversation(60)
    path = tmp_path / "c1.ndjson.gz"
    record(path, requests)
    turns = [event[2] for event in lines(path) if event[1] == "m" and event[2]["kind"] == "turn"]
    assert "same_start" not in turns[0] and turns[0]["request"] == requests[0]
    for n, marker in enumerate(turns[1:], start=1):
        shared = len(requests[n - 1]["messages"])  # all of the request before: the history so far
        assert marker["same_start"] == {"messages": shared, "tools": 1}
        assert marker["request"]["messages"] == requests[n]["messages"][shared:]
        assert marker["request"]["tools"] == []
    # the file grows with the conversation, not with its square: the last marker is as long as the first
    sizes = [len(json.dumps(marker)) for marker in turns]
    assert sizes[-1] < 2 * sizes[1]


def test_a_branch_shares_only_the_start_it_has_in_common(tmp_path: Path) -> None:
    """An edited message or a regenerated reply sends a history that leaves the last one's path."""
    first, second, third = conversation(3)
    edited = {**third, "messages": [*second["messages"][:1], {"role": "user", "content": "Something else."}]}
    path = tmp_path / "c1.ndjson.gz"
    record(path, [first, second, third, edited, third])
    assert read_back(path) == [first, second, third, edited, third]


def test_a_process_appending_to_the_file_writes_its_first_request_whole(tmp_path: Path) -> None:
    requests = conversation(4)
    path = tmp_path / "c1.ndjson.gz"
    record(path, requests[:2])
    record(path, requests[2:])  # a second process, the same conversation
    turns = [event[2] for event in lines(path) if event[1] == "m" and event[2]["kind"] == "turn"]
    assert ["same_start" in marker for marker in turns] == [False, True, False, True]
    assert read_back(path) == requests


_ITEM = st.sampled_from(["a", "b", "c"]) | st.integers(0, 3) | st.fixed_dictionaries({"k": st.text(max_size=3)})
_ITEMS = st.lists(_ITEM, max_size=6)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(st.lists(st.fixed_dictionaries({"messages": _ITEMS, "tools": _ITEMS, "model": st.sampled_from(["m", "n"])},
                                      optional={"input": _ITEMS | st.text(max_size=3)}), min_size=1, max_size=6))
def test_any_run_of_requests_reads_back_as_written(tmp_path: Path, requests: list[dict[str, Any]]) -> None:
    path = tmp_path / "c1.ndjson.gz"
    path.unlink(missing_ok=True)
    record(path, requests)
    assert read_back(path) == [plain(request) for request in requests]


def _write_lines(path: Path, markers: list[dict[str, Any]]) -> None:
    header = {"format": "callstream-recording", "version": 1, **HEADER}
    path.write_text("\n".join(json.dumps(line) for line in [header, *([0, "m", marker] for marker in markers)]) + "\n")


@pytest.mark.parametrize("same", [["messages"], {"messages": "2"}, {"messages": -1}, {"messages": True}])
def test_a_same_start_that_is_not_a_count_is_a_clear_error(tmp_path: Path, same: Any) -> None:
    path = tmp_path / "bad.ndjson"
    _write_lines(path, [{"kind": "turn", "turn": 0, "request": {"messages": [1]}},
                        {"kind": "turn", "turn": 1, "request": {"messages": [2]}, "same_start": same},
                        {"kind": "end", "turn": 1}])
    with pytest.raises(RecordingError, match="line 3.*same_start"):
        read_recording(path)


def test_a_same_start_with_no_request_before_it_reads_as_written(tmp_path: Path) -> None:
    """A file cut or edited so the request it builds on is gone: what it holds is read, no more."""
    path = tmp_path / "cut.ndjson"
    _write_lines(path, [{"kind": "turn", "turn": 1, "request": {"messages": [2]}, "same_start": {"messages": 5}}])
    assert read_back(path) == [{"messages": [2]}]


def test_a_same_start_longer_than_the_list_before_takes_what_there_is(tmp_path: Path) -> None:
    path = tmp_path / "long.ndjson"
    _write_lines(path, [{"kind": "turn", "turn": 0, "request": {"messages": [1], "tools": "none"}},
                        {"kind": "turn", "turn": 1, "request": {"messages": [2], "tools": [3]},
                         "same_start": {"messages": 10**6, "tools": 4}}])
    assert read_back(path) == [{"messages": [1], "tools": "none"}, {"messages": [1, 2], "tools": [3]}]
