"""Recording every stream, and replaying it through the same pipeline at any
speed: the same blocks and states as live, on time, never running a tool,
never holding a key."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.files.paths import data_dir
from app.net.endpoint import Endpoint
from app.replay.player import Replayer
from app.settings.config import Config
from app.settings.tools import CommandToolConfig
from app.store.recording import RecordingWriter, read_recording
from app.store.transcripts import Store
from app.stream import block_record
from app.tools.registry import Registry
from tests import streamgen
from tests.conftest import REAL, ROOT, file_bytes
from tests.conversations import converse, demo_config
from tests.faultserver import FaultServer, Reply
from tests.waiting import wait_for

_TIMES = ("announced_at", "ended_at", "timings")


def _shape(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in _TIMES}


def live(messages: list[str], config: Config, endpoint: Endpoint | None = None) -> tuple[str, Path]:
    session = converse(messages, config, endpoint)
    return session.conversation, data_dir() / "recordings" / f"{session.conversation}.ndjson.gz"


def replay(path: Path, speed: float, registry: Registry | None = None) -> Replayer:
    replayer = Replayer(read_recording(path), speed, None, registry)
    asyncio.run(replayer.run())
    return replayer


def demo(dialect: str) -> Config:
    return demo_config(dialect)


@pytest.mark.parametrize("dialect", ["openai-chat", "anthropic", "openai-responses", "gemini"])
def test_replay_at_any_speed_ends_with_the_blocks_and_states_of_the_live_run(home: Path, dialect: str) -> None:
    conversation, path = live(["Ada Lovelace says her order is late. Check her open and late orders and open a "
                               "ticket.", "/demo retry-after-dispatch", "/demo invalid-args", "/demo truncated"],
                              demo(dialect))
    store = Store(data_dir() / "callstream.db")
    stored = store.load(conversation)
    store.close()
    assert stored is not None
    expected = [(t.turn, t.attempts, t.outcome, [_shape(block_record(b)) for b in t.blocks])
                for t in stored.items if hasattr(t, "blocks")]
    for speed in (math.inf, 64.0):
        replayer = replay(path, speed, Registry.default(data_dir()))
        got = [(t.index, t.attempts, t.result.outcome if t.result else None,
                [_shape(block_record(b)) for b in t.blocks]) for t in replayer.session.turns]
        assert got == expected, speed


def test_replay_takes_the_recorded_time_divided_by_the_speed(home: Path) -> None:
    """Tolerance: 5% of the expected wall time (the recording lasts 2.4 s)."""
    path = home / "timed.ndjson"
    now = [0.0]
    writer = RecordingWriter(path, {"conversation": "timed", "dialect": "anthropic", "provider": "test",
                                    "model": "m"}, clock=lambda: now[0])
    body = streamgen.anthropic([("text", f"word{i} ") for i in range(24)], stop_reason="end_turn")
    frames = [f + b"\n\n" for f in body.split(b"\n\n") if f]
    writer.marker("user", {"text": "go"})
    writer.marker("turn", {"turn": 0, "request": None})
    writer.marker("attempt", {"turn": 0, "attempt": 1})
    step = 2.4 / len(frames)
    for frame in frames:
        now[0] += step
        writer.chunk(now[0], frame)
    writer.marker("end", {"turn": 0, "attempt": 1, "cause": "eof"})
    writer.marker("results", {"turn": 0, "calls": []})
    writer.close()
    recording = read_recording(path)
    assert abs(recording.duration - 2.4) < 1e-3
    for speed in (2.0, 4.0):
        replayer = Replayer(recording, speed)
        start = time.perf_counter()
        asyncio.run(replayer.run())
        elapsed = time.perf_counter() - start
        expected = recording.duration / speed
        assert abs(elapsed - expected) <= 0.05 * expected, (speed, elapsed, expected)
        assert replayer.session.turns[0].result.outcome == "complete"  # type: ignore[union-attr]


def test_a_replay_never_runs_a_tool(home: Path) -> None:
    effect = home / "effect.txt"
    script = home / "effect.py"
    script.write_text(f"open({str(effect)!r}, 'a').write('ran\\n')\nprint('done')\n")
    tool = CommandToolConfig("touch_file", [sys.executable, str(script)], "a side effect",
                             {"type": "object", "properties": {"why": {"type": "string"}}}, display=[("why", "Why")])
    call = streamgen.call_script(0, "t1", "touch_file", '{"why": "because"}')
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic([("text", "Touching. ")] + call)))
        server.replies.append(Reply(streamgen.anthropic([("text", "Touched.")], stop_reason="end_turn")))
        _, path = live(["touch it"], Config(tools={"touch_file": tool}),
                       Endpoint("anthropic", server.url, "m", "test"))
    assert effect.read_text() == "ran\n"
    replayer = replay(path, math.inf, Registry.default(data_dir(), Config(tools={"touch_file": tool})))
    assert effect.read_text() == "ran\n"  # not run again
    (card,) = [b for b in replayer.session.turns[0].blocks if b.type == "tool_call"]
    assert card.state == "ran" and card.result == "done\n"
    with pytest.raises(AssertionError, match="replays never run tools"):
        asyncio.run(replayer.registry.get("touch_file").run({}, None))  # type: ignore[arg-type, union-attr]


def test_a_recording_holds_no_key(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-proj-FAKE-KEY-never-to-be-written-42"
    monkeypatch.setenv("MY_PROVIDER_KEY", key)
    (home / "config.toml").write_text('[providers.p]\nprovider = "openai-chat"\nmodel = "m"\n'
                                      'base_url = "http://127.0.0.1:1/v1"\nkey_env = "MY_PROVIDER_KEY"\n')
    from app.settings.config import load_config

    config = load_config()
    profile = config.profile("p")
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.openai_chat([("text", "hi")], finish="stop")))
        endpoint = Endpoint("openai-chat", server.url, "m", "t", {"Authorization": f"Bearer {key}"})
        assert profile.key_variable() == "MY_PROVIDER_KEY"
        live(["hello"], config, endpoint)
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {key}"
    files = [p for p in data_dir().rglob("*") if p.is_file()]
    assert any(p.name.endswith(".ndjson.gz") for p in files)
    for path in files:
        assert key.encode() not in file_bytes(path), path


def test_replay_cli_headless_and_json(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    _, path = live(["Show me order A-1042"], demo("openai-chat"))
    headless = subprocess.run([sys.executable, "-m", "app", "replay", str(path), "--headless", "--speed", "instant"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert headless.returncode == 0, headless.stderr
    assert "⚙ get_order · ran · Order: A-1042" in headless.stdout
    document = json.loads(subprocess.run([sys.executable, "-m", "app", "replay", str(path), "--json", "--speed",
                                          "64"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout)
    assert document["replay"] is True and document["turns"][0]["blocks"][1]["state"] == "ran"


def test_replay_of_a_raw_capture_from_the_wild(home: Path) -> None:
    files = sorted((REAL / "anthropic").glob("*add-multiply*.sse")) if REAL.is_dir() else []
    if not files:
        pytest.skip(reason=f"real fixtures absent: {REAL} not found")
    result = subprocess.run([sys.executable, "-m", "app", "replay", str(files[0]), "--headless", "--speed",
                             "instant"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "⚙ add · not run" in result.stdout and "⚙ multiply · not run" in result.stdout
    assert "a replay runs nothing" in result.stdout


@pytest.mark.parametrize("content,message", [
    (None, "cannot read"),
    ('{"format": "callstream-recording", "version": 7}\n', "unsupported recording version"),
    ('{"format": "callstream-recording", "version": 1}\n[0, "o", "x"]\nnot json at all\n[0.1, "o", "y"]\n',
     "line 3 is not a recording event"),
])
def test_replay_bad_files_fail_clearly(home: Path, content: str | None, message: str) -> None:
    path = home / "bad.ndjson"
    if content is not None:
        path.write_text(content)
    result = subprocess.run([sys.executable, "-m", "app", "replay", str(path), "--headless"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_torn_last_line_ends_the_recording_there(home: Path) -> None:
    path = home / "torn.ndjson"
    path.write_text('{"format": "callstream-recording", "version": 1}\n[0, "m", {"kind": "user", "text": "x"}]\n'
                    '[0.1, "o", "data: {\\"ty')
    recording = read_recording(path)
    assert [kind for _, kind, _ in recording.events] == ["m"]


def test_bad_speed_is_a_usage_error(home: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "app", "replay", "x", "--speed", "-1"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 2 and "--speed" in result.stderr


def test_controls_pause_speed_step_and_marker(home: Path) -> None:
    _, path = live(["Show me order A-1042"], demo("anthropic"))
    asyncio.run(_controls(path))


async def _controls(path: Path) -> None:
    from app.tui.replay_app import ReplayApp

    app = ReplayApp(read_recording(path), 0.25, None, Registry.default(data_dir()))
    async with app.run_test() as pilot:
        await pilot.press("space")
        assert app.replayer.clock.paused
        before = app.replayer.clock.now()
        await pilot.press("full_stop")
        assert app.replayer.clock.now() >= before
        await pilot.press("plus", "plus")
        assert app.replayer.clock.speed == 1.0
        await pilot.press("minus")
        assert app.replayer.clock.speed == 0.5
        await pilot.press("right_square_bracket")
        await pilot.press("space")
        assert not app.replayer.clock.paused
        app.replayer.clock.set_speed(math.inf)
        await wait_for(pilot, lambda: "replay finished" in str(app.screen.query_one("StatusLine").render()),
                       "the replay to finish")


SAMPLES = {
    "two-searches": (["search_orders", "search_orders"], "done"),
    "ticket-with-escapes-and-unicode": (["search_orders", "search_orders", "create_ticket"], "done"),
    "cutoff-mid-call": (["create_ticket"], "failed"),
    "schema-rejection": (["create_ticket", "create_ticket"], "done"),
    "retry-after-dispatch": (["create_ticket", "get_order"], "done"),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_sample_recordings_replay(home: Path, name: str) -> None:
    path = ROOT / "transcripts" / f"{name}.ndjson"
    replayer = Replayer(read_recording(path), math.inf, None, Registry.default(data_dir()))
    done = asyncio.run(replayer.run())
    calls = [b.name for t in replayer.session.turns for b in t.blocks if b.type == "tool_call"]
    expected_calls, status = SAMPLES[name]
    assert calls == expected_calls and done.status == status
    states = [b.state for t in replayer.session.turns for b in t.blocks if b.type == "tool_call"]
    if name == "schema-rejection":
        assert states == ["rejected", "ran"]
    if name == "cutoff-mid-call":
        assert states == ["not run"]
    if name == "retry-after-dispatch":
        # the ticket ran before the stream dropped: the next turn continues from it, nothing is re-issued
        assert states == ["ran", "not run"] and len(replayer.session.turns) == 2


# -- a conversation that switched dialect mid-way (/model, /provider) ------------------------------------------

def switched_conversation() -> tuple[str, Path, list[str]]:
    """A live conversation on the demo model through the real runtime: openai-chat, then /model anthropic,
    then /model gemini (``Runtime.switch``, what the TUI's /model calls), each with a round of tool calls."""
    from app.runtime.wiring import open_runtime
    from app.tools.approvals import Approvals

    runtime = open_runtime(config=demo("openai-chat"))
    session = runtime.session(approvals=Approvals.from_config(runtime.config, approve="all"))
    dialects = []

    async def go() -> None:
        try:
            for model, message in ((None, "Show me order A-1042"), ("anthropic", "Show me Grace Hopper's open and "
                                   "shipped orders"), ("gemini", "Show me order A-1043")):
                if model is not None:
                    runtime.switch(session, model=model)
                dialects.append(session.endpoint.dialect)
                done = await session.send(message)
                assert done.status == "done", done.message
        finally:
            await session.aclose()
            runtime.close()

    asyncio.run(go())
    return session.conversation, data_dir() / "recordings" / f"{session.conversation}.ndjson.gz", dialects


def test_replay_follows_a_model_switch_to_another_dialect(home: Path) -> None:
    conversation, path, dialects = switched_conversation()
    assert dialects == ["openai-chat", "anthropic", "gemini"]
    markers = [data for _, kind, data in read_recording(path).events if kind == "m" and data["kind"] == "switch"]
    assert [m["dialect"] for m in markers] == ["anthropic", "gemini"]
    store = Store(data_dir() / "callstream.db")
    stored = store.load(conversation)
    store.close()
    assert stored is not None
    expected = [(t.turn, t.outcome, [_shape(block_record(b)) for b in t.blocks])
                for t in stored.items if hasattr(t, "blocks")]
    assert sum(1 for _, _, blocks in expected for b in blocks if b["type"] == "tool_call") >= 4
    replayer = replay(path, math.inf, Registry.default(data_dir()))
    got = [(t.index, t.result.outcome if t.result else None, [_shape(block_record(b)) for b in t.blocks])
           for t in replayer.session.turns]
    assert got == expected
    assert replayer.session.endpoint.dialect == "gemini"
    assert {"get_order", "search_orders"} <= set(replayer.registry.names())  # tools read from each dialect's request


def test_a_switch_marker_to_an_unknown_dialect_is_a_stated_failure(home: Path) -> None:
    path = home / "bad-switch.ndjson"
    path.write_text('{"format": "callstream-recording", "version": 1, "dialect": "openai-chat"}\n'
                    '[0, "m", {"kind": "switch", "dialect": "../../etc"}]\n[0, "m", {"kind": "user", "text": "x"}]\n')
    result = subprocess.run([sys.executable, "-m", "app", "replay", str(path), "--headless"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "switches to an unknown dialect" in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


# -- what replay accepts ------------------------------------------------------------------------------------------

def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def one_line_failure(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.mark.parametrize("content", [b"# just some notes\nnothing to see\n", b"\x89PNG\r\n\x1a\n\x00\x00binary",
                                     b"", b'{"format": "callstream-transcript", "version": 2}\n'],
                         ids=["text", "binary", "empty", "an-export"])
def test_replay_of_a_file_that_is_not_a_recording_says_so(home: Path, content: bytes) -> None:
    path = home / "not-a-recording.txt"
    path.write_bytes(content)
    one_line_failure(cli("replay", str(path), "--headless"), "is not a recording", "no SSE 'data:' line")


def test_replay_of_a_directory_says_it_cannot_read_it(home: Path) -> None:
    one_line_failure(cli("replay", str(home), "--headless"), "cannot read")


def test_replay_headless_exits_1_for_a_failed_conversation(home: Path) -> None:
    _, path = live(["/demo cutoff"], demo_config("openai-chat", retries=0))  # no retry: the turn fails
    headless = cli("replay", str(path), "--headless", "--speed", "instant")
    assert headless.returncode == 1 and "Traceback" not in headless.stderr, headless.stderr
    assert "Interrupted" in headless.stdout + headless.stderr
    as_json = cli("replay", str(path), "--json", "--speed", "instant")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["status"] != "done"


def test_replay_headless_exits_0_for_a_finished_conversation(home: Path) -> None:
    _, path = live(["Show me order A-1042"], demo("openai-chat"))
    assert cli("replay", str(path), "--headless", "--speed", "instant").returncode == 0


@pytest.mark.parametrize("speed", ["0.1", "65", "1e9", "nan", "-1", "0", "fast"])
def test_a_speed_outside_its_range_is_refused_naming_the_range(home: Path, speed: str) -> None:
    one_line_failure(cli("replay", "x", "--speed", speed), "--speed must be from 0.25 to 64, or instant", speed)


@pytest.mark.parametrize("speed", ["0.25", "64", "instant"])
def test_the_ends_of_the_speed_range_are_accepted(home: Path, speed: str) -> None:
    path = ROOT / "transcripts" / "two-searches.ndjson"
    if speed != "instant":  # a real-time play of the sample at 0.25x takes long: the parse is what is tested
        from app.rules.pacing import parse_replay_speed

        assert parse_replay_speed(speed) == float(speed)
        return
    assert cli("replay", str(path), "--headless", "--speed", speed).returncode == 0


@pytest.mark.parametrize("limit", ["-1", "3601", "nan"])
def test_an_idle_limit_outside_its_range_is_refused_naming_the_range(home: Path, limit: str) -> None:
    one_line_failure(cli("replay", "x", "--idle-limit", limit), "--idle-limit must be from 0 to 3600 seconds")


def test_replay_help_states_the_ranges(home: Path) -> None:
    text = " ".join(cli("replay", "--help").stdout.split())
    assert "0.25 to 64, or instant" in text and "from 0 to 3600" in text and "exit 0 when the conversation finished" \
        in text and "1 when it ended in a stated failure" in text


@pytest.mark.parametrize("speed", ["-1", "1001", "nan"])
def test_serve_demo_refuses_a_speed_outside_its_range(home: Path, speed: str) -> None:
    one_line_failure(cli("serve-demo", "--speed", speed, "--port", "0"), "--speed must be a number from 0 (no pauses)"
                     " to 1000")


def test_serve_demo_help_states_the_range(home: Path) -> None:
    assert "from 0 to 1000" in " ".join(cli("serve-demo", "--help").stdout.split())


@pytest.mark.parametrize("speed", ["-1", "1001", "nan"])
def test_a_demo_profile_speed_outside_its_range_is_refused(home: Path, speed: str) -> None:
    value = speed if speed != "nan" else "nan"
    (home / "config.toml").write_text(f'[providers.quick]\nprovider = "demo"\nspeed = {value}\n')
    one_line_failure(cli("ask", "hi", "--provider", "quick"), "providers.quick.speed must be a number from 0 "
                     "(no pauses) to 1000")


def test_replay_by_conversation_id_prefix(home: Path) -> None:
    conversation, _ = live(["Show me order A-1042"], demo("anthropic"))
    result = cli("replay", conversation[:5], "--headless", "--speed", "instant")
    assert result.returncode == 0 and "⚙ get_order · ran · Order: A-1042" in result.stdout, result.stderr


def test_replay_of_a_conversation_without_a_recording_says_so(home: Path) -> None:
    conversation, path = live(["Show me order A-1042"], demo("anthropic"))
    path.unlink()
    one_line_failure(cli("replay", conversation[:5], "--headless"), "has no recording")
