"""The LiteLLM proxy (a real translating gateway, pinned in peers/litellm.txt,
installed by ``make peers`` into .venv-peers/litellm) in front of
``serve-demo``, routing to each of the demo's four wire formats. callstream
talks OpenAI chat to the proxy, which talks chat, Anthropic Messages or
Gemini to the demo; for the demo's Responses format callstream talks Responses
to the proxy (LiteLLM 1.79.3's chat-to-Responses bridge ends the stream at
the first message item, so a preamble's calls never reach a chat client). Through every route the README example
finishes: both searches and one ticket, each run once (issue 14, proof 2).
Skips, saying why, where the proxy is not installed.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import app.demo.server as demo_server
from app.demo.server import DemoServer
from tests.conftest import ROOT
from tests.waiting import wait_until_sync

LITELLM = ROOT / ".venv-peers" / "litellm" / "bin" / "litellm"
EXAMPLE = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."

pytestmark = pytest.mark.skipif(
    not LITELLM.exists(), reason=f"the LiteLLM proxy is not installed ({LITELLM} absent; run: make peers-litellm)")

#: proxy model name → (LiteLLM model, upstream base, the demo route it must reach, what callstream speaks)
ROUTES = {
    "demo-chat": ("openai/demo", "/v1", "openai-chat", "openai-chat"),
    "demo-responses": ("openai/demo", "/v1", "openai-responses", "openai-responses"),
    "demo-anthropic": ("anthropic/demo", "", "anthropic", "openai-chat"),
    "demo-gemini": ("gemini/demo", "", "gemini", "openai-chat"),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def routes_seen() -> dict[str, list[str]]:
    return {}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, routes_seen: dict[str, list[str]]) -> Iterator[str]:
    """serve-demo's server and a LiteLLM proxy in front of it; yields the proxy's /v1 URL."""
    original = demo_server._route

    def recording_route(method: str, path: str) -> str | None:
        dialect = original(method, path)
        routes_seen.setdefault(dialect or "none", []).append(path)
        return dialect

    demo_server._route = recording_route  # type: ignore[assignment]
    demo = DemoServer(speed=0).start()
    home = tmp_path_factory.mktemp("litellm")
    config = home / "config.yaml"
    lines = ["model_list:"]
    for name, (model, suffix, _, _) in ROUTES.items():
        lines += [f"  - model_name: {name}",
                  f"    litellm_params: {{model: {model}, api_base: \"{demo.base_url}{suffix}\", api_key: demo}}"]
    lines += ["litellm_settings:", "  telemetry: false"]
    config.write_text("\n".join(lines) + "\n")
    port = _free_port()
    # LITELLM_SALT_KEY: its /v1/responses signs the response ids it hands out and fails without one
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
           "LITELLM_SALT_KEY": "sk-callstream-test-only",
           "NO_PROXY": "127.0.0.1,localhost"}
    log = (home / "litellm.log").open("w")
    process = subprocess.Popen([str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, env=env, cwd=home)
    def live() -> bool:
        if process.poll() is not None:
            pytest.skip(reason="the LiteLLM proxy exited at start: "
                               + (home / "litellm.log").read_text()[-300:].replace("\n", " "))
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health/liveliness", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until_sync(live, "the LiteLLM proxy to answer /health/liveliness", timeout=180)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        demo.stop()
        demo_server._route = original  # type: ignore[assignment]


@pytest.mark.parametrize("model", list(ROUTES))
def test_readme_example_finishes_through_litellm(proxy: str, model: str, home: Path,
                                                 routes_seen: dict[str, list[str]]) -> None:
    from app.cli.ask import run_ask

    (home / "config.toml").write_text(
        f'default = "proxy"\n[providers.proxy]\nprovider = "{ROUTES[model][3]}"\nmodel = "{model}"\n'
        f'base_url = "{proxy}"\nmax_rounds = 5\nread_timeout = 60\n'
        'tools = ["search_orders", "get_order", "create_ticket"]\n'  # the demo's support tools, on another provider
    )
    upstream = ROUTES[model][2]
    before = len(routes_seen.get(upstream, []))
    out, err = io.StringIO(), io.StringIO()
    run_ask(EXAMPLE, as_json=True, out=out, err=err, approve="create_ticket")
    document = json.loads(out.getvalue())
    assert document["status"] == "done", (document["status"], err.getvalue(),
                                          [(t["outcome"], t.get("error")) for t in document["turns"]])
    calls = [b for t in document["turns"] for b in t["blocks"] if b["type"] == "tool_call"]
    assert sorted((c["name"], c["arguments"].get("status")) for c in calls) == [
        ("create_ticket", None), ("search_orders", "late"), ("search_orders", "open")]
    assert all(c["state"] == "ran" and not c.get("reused") for c in calls)
    assert len(document["turns"]) == 3  # searches, ticket, answer: no loop to max_rounds
    ticket = next(c for c in calls if c["name"] == "create_ticket")
    assert ticket["arguments"]["order_id"] == "A-1042"
    assert "T-1" in document["turns"][-1]["blocks"][-1]["text"]  # the answer quotes the real ticket number
    assert len(routes_seen.get(upstream, [])) - before == 3, routes_seen  # every round went through this route
