"""MCP, measured in one run (make bench-mcp):

1. Start-up with three stdio servers (the fixture server, ``tests/mcp_fixture.py``):
   time until the chat screen takes keys (the first prompt) with and without
   them configured, and time until all three have listed their tools against
   one server alone (they start in parallel: the ratio stays near 1, not 3).
2. The round trip of a trivial call (the fixture's read-only ``lookup``) through
   callstream's MCP tool (``Tool.run``: the connection, the key in ``_meta``,
   result mapping) against the SDK's own ``Client.call_tool`` on the same
   server, interleaved. Also, for information, the whole dispatcher path
   (ledger claim with ``synchronous=FULL`` and result) for the same call.
3. A large result over stdio (issue 24 item 12): time until one N MB answer
   line has been read, by the SDK's ``stdio_client`` (the reference: it holds
   the line whole, joining each chunk to the text before it) and by
   callstream's ``bounded_stdio`` (``app/mcp/transports.py``: a line past the
   cap is kept as head and tail, cut to ``tool_output_bytes``).
4. A call to an OAuth-protected Streamable HTTP server with a valid token
   (tests/oauth_server.py: the SDK's bearer check on the server, callstream's
   OAuth provider on the client, signed in once with ``mcp login``) against
   the same server without auth, interleaved: the overhead of sign-in's
   machinery on every call (issue 25: budget 1 ms median).
5. Inlining a 4 KB schema whose shared ``$ref``s name 2**40 nodes for Gemini
   (issue 24 item 13): bounded at ``MAX_INLINED`` nodes (unbounded, it never
   finishes: no reference can be measured).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.mcp import attach_servers, open_hub  # noqa: E402
from app.settings.mcp import parse_servers  # noqa: E402
from app.tools.base import ToolContext  # noqa: E402
from app.tools.registry import Registry  # noqa: E402


def servers(count: int) -> dict[str, dict[str, object]]:
    return {f"s{i}": {"command": sys.executable, "args": ["-m", "tests.mcp_fixture", "stdio"], "cwd": str(ROOT),
                      "startup_timeout": 120} for i in range(count)}


async def listed(count: int) -> float:
    hub = open_hub(parse_servers(servers(count), "bench"), Path(tempfile.mkdtemp()) / "logs")
    started = time.perf_counter()
    hub.start()
    await hub.wait_settled()
    elapsed = time.perf_counter() - started
    assert all(s.state == "ready" for s in hub.statuses()), [s.line() for s in hub.statuses()]
    await hub.close()
    return elapsed * 1000


async def first_prompt(count: int) -> tuple[float, float]:
    """Time until the chat screen's input has focus; and until the servers listed their tools."""
    from app.settings.config import Config
    from app.settings.mcp import parse_servers as parse
    from app.settings.profiles import ProviderProfile
    from app.tui.app import make_app
    from widgets.prompt_input import PromptInput

    home = tempfile.mkdtemp(prefix="callstream-bench-")
    os.environ["CALLSTREAM_HOME"] = home
    os.environ["CALLSTREAM_CONFIG"] = os.path.join(home, "none.toml")
    config = Config(providers={"demo": ProviderProfile(name="demo", provider="demo")}, default="demo",
                    mcp=parse(servers(count), "bench"))
    started = time.perf_counter()
    app = make_app(config=config)
    prompt_at = tools_at = 0.0
    async with app.run_test(size=(100, 40)) as pilot:
        while not isinstance(app.focused, PromptInput):
            await pilot.pause(0.005)
        prompt_at = time.perf_counter() - started
        hub = app.runtime.mcp
        if hub is not None:
            await hub.wait_settled()
        tools_at = time.perf_counter() - started
    return prompt_at * 1000, tools_at * 1000


async def round_trips(n: int) -> tuple[list[float], list[float], list[float]]:
    from app.ledger import SqliteLedger
    from app.tools.dispatcher import Dispatcher

    registry = Registry([])
    hub = open_hub(parse_servers(servers(1), "bench"), Path(tempfile.mkdtemp()) / "logs")
    attach_servers(registry, hub)
    await registry.settled()
    connection = hub.servers[0]
    client = connection.client
    tool = registry.get("s0__lookup")
    assert tool is not None
    ledger = SqliteLedger(Path(tempfile.mkdtemp()) / "ledger.db")
    ours, sdk, dispatched = [], [], []
    for i in range(n + 20):
        t0 = time.perf_counter()
        await client.call_tool("lookup", {"q": f"x{i}"})
        t1 = time.perf_counter()
        await tool.run({"q": f"x{i}"}, ToolContext(f"key-{i}"))
        t2 = time.perf_counter()
        dispatcher = Dispatcher(registry, ledger, "bench", i, lambda update: None)
        dispatcher.submit(0, "s0__lookup", {"q": f"x{i}"})
        await dispatcher.wait()
        t3 = time.perf_counter()
        if i >= 20:  # warm-up rounds dropped
            sdk.append((t1 - t0) * 1000)
            ours.append((t2 - t1) * 1000)
            dispatched.append((t3 - t2) * 1000)
    ledger.close()
    await registry.aclose()
    return sdk, ours, dispatched


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def oauth_round_trips(n: int) -> tuple[list[float], list[float]]:
    """Milliseconds per call of ``whoami``: (without auth, with a valid token)."""
    import subprocess

    ports = [_free_port() for _ in range(3)]
    server = subprocess.Popen([sys.executable, "-m", "tests.oauth_server", str(ports[0]), str(ports[1]),
                               "--open", str(ports[2])], cwd=ROOT, stderr=subprocess.DEVNULL)
    home = Path(tempfile.mkdtemp(prefix="callstream-bench-oauth-"))
    config = home / "config.toml"
    config.write_text(f'[mcp.prot]\nurl = "http://127.0.0.1:{ports[1]}/mcp"\n'
                      f'[mcp.open]\nurl = "http://127.0.0.1:{ports[2]}/mcp"\n')
    env = dict(os.environ, CALLSTREAM_HOME=str(home / "data"), CALLSTREAM_CONFIG=str(config),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
               BROWSER=f"{sys.executable} {ROOT / 'scripts' / 'conformance_browser.py'} %s")
    os.environ.update({key: env[key] for key in ("CALLSTREAM_HOME", "CALLSTREAM_CONFIG", "PYTHON_KEYRING_BACKEND")})
    try:
        for _ in range(600):  # until both listen (the server imports the SDK first)
            if subprocess.run([sys.executable, "-m", "app", "mcp", "login", "prot"], cwd=ROOT, env=env,
                              capture_output=True, check=False).returncode == 0:
                break
            await asyncio.sleep(0.1)
        else:
            raise SystemExit("bench-mcp: could not sign in to the test authorization server")
        registry = Registry([])
        hub = open_hub(parse_servers({"prot": {"url": f"http://127.0.0.1:{ports[1]}/mcp"},
                                      "open": {"url": f"http://127.0.0.1:{ports[2]}/mcp"}}, "bench"),
                       home / "logs")
        attach_servers(registry, hub)
        await registry.settled()
        assert all(s.state == "ready" for s in hub.statuses()), [s.line() for s in hub.statuses()]
        protected, open_ = registry.get("prot__whoami"), registry.get("open__whoami")
        assert protected is not None and open_ is not None
        plain, signed = [], []
        for i in range(n + 20):
            took = {}
            for tool in (open_, protected) if i % 2 else (protected, open_):  # each goes first half the time
                started = time.perf_counter()
                await tool.run({}, ToolContext(f"{tool.name}-{i}"))
                took[tool.name] = (time.perf_counter() - started) * 1000
            if i >= 20:  # warm-up rounds dropped
                plain.append(took[open_.name])
                signed.append(took[protected.name])
        await registry.aclose()
        return plain, signed
    finally:
        server.terminate()
        server.wait(10)


async def read_line(size: int, ours: bool) -> float:
    """Milliseconds until a child's one ``size``-byte answer line is read."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from app.mcp.transports import bounded_stdio

    code = ("import sys; out = sys.stdout.buffer; out.write(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
            "{\"content\":[{\"type\":\"text\",\"text\":\"'); block = b'x' * (1 << 20); "
            f"[out.write(block) for _ in range({size >> 20})]; out.write(b'\"}}]}}}}\\n'); out.flush(); "
            "sys.stdin.read()")
    params = StdioServerParameters(command=sys.executable, args=["-c", code])
    started = time.perf_counter()
    transport = bounded_stdio(params, sys.stderr, 1 << 20, print) if ours else stdio_client(params)
    async with transport as (read, _write):
        await read.receive()
        elapsed = time.perf_counter() - started
    return elapsed * 1000


def ref_graph() -> tuple[float, int]:
    import json

    from app.stream.dialects.schemas import adapt

    defs: dict[str, object] = {"d0": {"type": "string"}}
    for i in range(1, 40):
        defs[f"d{i}"] = {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{i - 1}"},
                                                         "b": {"$ref": f"#/$defs/d{i - 1}"}}}
    schema = {"type": "object", "properties": {"root": {"$ref": "#/$defs/d39"}}, "$defs": defs}
    started = time.perf_counter()
    adapted = adapt("gemini", schema)
    return (time.perf_counter() - started) * 1000, len(json.dumps(adapted))


def median(values: list[float]) -> float:
    return statistics.median(values)


async def main() -> None:
    trials = int(os.environ.get("BENCH_TRIALS", "3"))
    one = [await listed(1) for _ in range(trials)]
    three = [await listed(3) for _ in range(trials)]
    bare = [await first_prompt(0) for _ in range(trials)]
    full = [await first_prompt(3) for _ in range(trials)]
    print(f"\nStart-up (ms, median of {trials}; stdio fixture servers, each a fresh Python + SDK import)\n")
    print("| measure | reference | with three servers | ratio |")
    print("|---|---|---|---|")
    print(f"| tools listed: one server vs three in parallel | {median(one):.0f} | {median(three):.0f} | "
          f"{median(three) / median(one):.2f} |")
    prompt_bare, prompt_full = median([b[0] for b in bare]), median([f[0] for f in full])
    print(f"| first prompt (input has focus): no servers vs three | {prompt_bare:.0f} | {prompt_full:.0f} | "
          f"{prompt_full / prompt_bare:.2f} |")
    print(f"| tools listed after the app started (three servers) | — | {median([f[1] for f in full]):.0f} | — |")

    n = int(os.environ.get("BENCH_CALLS", "300"))
    sdk, ours, dispatched = await round_trips(n)
    overhead = [o - s for o, s in zip(ours, sdk, strict=True)]
    print(f"\nRound trip of a trivial MCP call over stdio (ms, {n} calls, interleaved)\n")
    print("| path | median | p90 |")
    print("|---|---|---|")
    for label, values in (("SDK Client.call_tool (reference)", sdk), ("callstream MCP tool (Tool.run)", ours),
                          ("callstream dispatcher (+ ledger claim and result, fsync)", dispatched)):
        ordered = sorted(values)
        print(f"| {label} | {median(values):.3f} | {ordered[int(len(ordered) * 0.9)]:.3f} |")
    print(f"\ncallstream's overhead over the SDK: median {median(overhead):.3f} ms "
          f"(ratio {median(ours) / median(sdk):.2f}); budget 2 ms: {'met' if median(overhead) <= 2 else 'MISSED'}")

    plain, signed = await oauth_round_trips(n)
    extra = [b - a for a, b in zip(plain, signed, strict=True)]
    print(f"\nA call over Streamable HTTP, with and without OAuth (ms, {n} calls each, interleaved; the same "
          "server, tests/oauth_server.py)\n")
    print("| path | median | p90 |")
    print("|---|---|---|")
    for label, values in (("the server without auth (reference)", plain),
                          ("the OAuth-protected server, valid token", signed)):
        ordered = sorted(values)
        print(f"| {label} | {median(values):.3f} | {ordered[int(len(ordered) * 0.9)]:.3f} |")
    apart = median(signed) - median(plain)
    print(f"\nOAuth's overhead per call: median of the paired differences {median(extra):.3f} ms, difference of "
          f"the medians {apart:.3f} ms (ratio {median(signed) / median(plain):.2f}); budget 1 ms: "
          f"{'met' if max(median(extra), apart) <= 1 else 'MISSED'}")

    print(f"\nOne large answer line read over stdio (ms, median of {trials}; tool_output_bytes 1 MiB)\n")
    print("| answer | SDK stdio_client (reference) | callstream bounded_stdio | ratio |")
    print("|---|---|---|---|")
    for mb in (4, 16, 32):
        sdk_ms = median([await read_line(mb << 20, False) for _ in range(trials)])
        ours_ms = median([await read_line(mb << 20, True) for _ in range(trials)])
        print(f"| {mb} MB | {sdk_ms:.0f} | {ours_ms:.0f} | {ours_ms / sdk_ms:.2f} |")

    took, size = ref_graph()
    print(f"\nA 4 KB schema of shared $refs (2**40 nodes inlined) adapted for Gemini: {took:.0f} ms, "
          f"{size} bytes (bounded; unbounded it does not finish)")


if __name__ == "__main__":
    os.chdir(ROOT)
    asyncio.run(main())
