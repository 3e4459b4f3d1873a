"""The demo model the app talks to runs in a process of its own: it answers at once, keeps no secret
of the app's environment, and ends with the app, even one that died."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.demo.process import DemoProcess
from app.runtime.endpoint import open_endpoint
from app.settings.profiles import ProviderProfile
from app.stream.history import User
from tests.demo_client import run_turn

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="Linux's pidfd waits for a process's end; the "
                                "demo's own process is POSIX's (elsewhere it runs in a thread, as before)")


def _gone(pid: int, deadline: float = 30.0) -> bool:
    """Whether process ``pid`` has ended, waited for as a state: its pidfd turns readable when it does."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], deadline)[0])
    finally:
        os.close(fd)


def test_the_demo_endpoint_is_served_by_a_child_process_that_ends_when_closed() -> None:
    endpoint = open_endpoint(ProviderProfile(name="demo", provider="demo", demo_speed=0.0))
    closer = endpoint.closer
    server = getattr(closer, "__self__", None)
    assert isinstance(server, DemoProcess)
    child = server._child
    assert child is not None and child.pid != os.getpid()
    turn = run_turn(endpoint.base_url.removesuffix("/v1"), "openai-chat", [User("Show me order A-1042")])
    assert turn.outcome == "complete", turn.error  # (sent at once: the child's socket queued it while it started)
    endpoint.close()
    assert child.returncode is not None


def test_the_demo_s_process_keeps_no_secret_of_the_app_s_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo-child-must-not-hold-this")
    monkeypatch.setenv("CALLSTREAM_PG_PASSWORD", "hunter2-demo-child")
    server = DemoProcess(speed=0).start()
    try:
        assert server._child is not None
        environ = Path(f"/proc/{server._child.pid}/environ").read_bytes()
        assert b"sk-demo-child" not in environ and b"hunter2" not in environ
        assert httpx.get(server.base_url + "/v1/models", timeout=30).status_code == 200
    finally:
        server.stop()


def test_the_demo_s_process_ends_when_the_app_dies(tmp_path: Path) -> None:
    """Why: an app killed (or crashed) closes nothing; the child must not outlive it, serving a port."""
    script = ("import os, sys\n"
              "from app.demo.process import DemoProcess\n"
              "server = DemoProcess(speed=0).start()\n"
              "print(server._child.pid, server.port, flush=True)\n"
              "sys.stdin.readline()\n"
              "os._exit(9)  # no stop, no cleanup: as a kill would\n")
    app = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[1])
    assert app.stdout is not None and app.stdin is not None
    pid, port = map(int, app.stdout.readline().split())
    assert httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=30).status_code == 200
    app.stdin.write("\n")
    app.stdin.flush()
    assert app.wait(30) == 9
    assert _gone(pid)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5)
