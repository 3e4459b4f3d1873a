"""``ask`` against a real llama.cpp server with a tiny real model that
streams real tool calls (../shared/real-peer). Runs when the peer is built
(``bash ../shared/real-peer/build.sh``; .ci/run builds it), skips otherwise.

The model is tiny: the test asserts on the protocol — the call forms over
several fragments, completes, and runs exactly once — never on its prose.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PEER_DIR = Path(os.environ.get("CALLSTREAM_PEER_DIR", Path.home() / ".cache" / "callstream-peer"))
START = ROOT.parent / "shared" / "real-peer" / "start.sh"


def _built() -> bool:
    return (PEER_DIR / "bin" / "llama-server").exists() and (PEER_DIR / "models" / "smollm2-135m.gguf").exists()


pytestmark = pytest.mark.skipif(
    not (_built() and START.exists()),
    reason=f"real peer not built in {PEER_DIR} (run: bash ../shared/real-peer/build.sh)",
)


@pytest.fixture(scope="module")
def peer() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = subprocess.run(["bash", str(START), str(port), str(PEER_DIR)], capture_output=True, text=True,
                             timeout=120)
    if started.returncode != 0:
        pytest.skip(reason=f"the real peer did not start: {started.stderr.strip()[:200]}")
    pid = int(started.stdout.strip().splitlines()[-1])
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.kill(pid, 15)


def test_ask_against_a_real_llama_cpp_server(peer: str, home: Path) -> None:
    from app.chat.events import BlockGrew
    from app.cli.ask import run_ask

    effect = home / "notes.txt"
    tool = home / "record_note.py"
    tool.write_text("import json, os, sys\nargs = json.load(sys.stdin)\n"
                    f"open({str(effect)!r}, 'a').write(os.environ['CALLSTREAM_IDEMPOTENCY_KEY'] + '\\n')\n"
                    "print(json.dumps({'saved': True}))\n")
    (home / "config.toml").write_text(
        'default = "peer"\n'
        f'[providers.peer]\nprovider = "openai-chat"\nmodel = "smollm2-135m"\nbase_url = "{peer}"\n'
        "max_rounds = 2\nread_timeout = 120\noptions = { temperature = 0 }\n"
        f'[tools.record_note]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(tool))}]\n'
        'description = "Record a short note in the team log"\nread_only = false\n'
        'display = ["text"]\n'
        'parameters = { type = "object", properties = { text = { type = "string", description = "the note" } },'
        ' required = ["text"] }\n'
    )
    fragments: list[str] = []
    import app.runtime.wiring as ask_module

    original = ask_module.ChatSession

    class Watching(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            self.listeners.append(lambda e: fragments.append(e.delta) if isinstance(e, BlockGrew) else None)

    ask_module.ChatSession = Watching  # type: ignore[misc]
    try:
        out, err = io.StringIO(), io.StringIO()
        run_ask("Record a note that says: buy milk", as_json=True, out=out, err=err, approve="record_note")
    finally:
        ask_module.ChatSession = original  # type: ignore[misc]
    document = json.loads(out.getvalue())
    first = document["turns"][0]
    calls = [b for b in first["blocks"] if b["type"] == "tool_call"]
    assert first["outcome"] == "complete", first
    assert calls and calls[0]["name"] == "record_note" and calls[0]["final"], first
    assert calls[0]["state"] == "ran", calls[0]
    assert len([f for f in fragments if f]) > 3  # it formed over many fragments
    assert len(effect.read_text().splitlines()) == len([c for c in calls if c["state"] == "ran"])


@pytest.mark.parametrize("name", [pytest.param("chat", marks=pytest.mark.slow), "responses",
                                  pytest.param("messages", marks=pytest.mark.slow)])
def test_llama_server_parallel_calls_in_each_of_its_formats(peer: str, name: str) -> None:
    """The requests that made tests/captures/, sent live: each format's two calls assemble and are final
    (Responses without output_index among them). The captures cover chat and messages byte for byte;
    their live runs are the slow variants (a ~450-token prompt each on a 135M model)."""
    import importlib.util

    import httpx

    from app.stream import StreamParser

    spec = importlib.util.spec_from_file_location("capture", ROOT / "tests" / "captures" / "capture.py")
    assert spec is not None and spec.loader is not None
    capture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(capture)
    path, body = capture.REQUESTS[name]
    parser = StreamParser()
    with httpx.stream("POST", peer.removesuffix("/v1") + path, json=body, timeout=120) as response:
        assert response.status_code == 200
        for chunk in response.iter_raw():
            parser.feed(chunk)
    turn = parser.close()
    assert turn.outcome == "complete", turn.error
    calls = [c for c in turn.calls if c.final]
    assert [c.name for c in calls] == ["get_weather", "get_time"]
    assert all(isinstance(c.arguments, dict) and c.arguments.get("city") for c in calls)
