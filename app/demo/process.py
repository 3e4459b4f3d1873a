"""The demo model served from a process of its own, as a real provider is.

In a thread of the app it shared the interpreter's lock with the screen: at full speed every request
of a long sitting was parsed (the whole conversation, 300 KB at 400 exchanges) and answered while the
app drew, each waiting for the other (``make bench-long``'s live session: the demo's share of an
exchange grew from 40 to 130 ms over 400 exchanges, and the frames' with it). In its own process it
works on another core.

The app makes the listening socket (a free port on 127.0.0.1) and hands it to the child, so its
address is known at once and nothing waits for the child to start: a request sent before the child
listens waits in the socket's queue. The child ends when its standard input closes (``stop``, or the
app's end: the system closes the pipe of a process that died). It gets no environment but what
Python needs (no provider key, no token).

Where a socket cannot be handed to a child (not POSIX), the server runs in a thread of the app.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import DemoServer

__all__ = ["DemoProcess", "start_demo"]

#: The environment the child keeps: where Python and its locale are, nothing else.
_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH")
#: Where ``app`` is found (the child runs ``-m app.demo.child`` from there).
_ROOT = Path(__file__).resolve().parents[2]


class DemoProcess:
    """The demo model's server in a child process: ``base_url`` from the start, ``stop`` ends it."""

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self.host = "127.0.0.1"
        self.port = 0
        self._child: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> DemoProcess:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
            listening.bind((self.host, 0))
            listening.listen(128)
            self.port = listening.getsockname()[1]
            fd = listening.fileno()
            env = {name: os.environ[name] for name in _KEPT if name in os.environ}
            self._child = subprocess.Popen(
                [sys.executable, "-m", "app.demo.child", str(fd), repr(self.speed)],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(fd,), cwd=_ROOT, env=env, start_new_session=True)
        return self  # (the app's copy of the socket is closed: the child's is the only one)

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def start_demo(speed: float) -> DemoProcess | DemoServer:
    """The demo model's server, started: in its own process where it can be."""
    if os.name == "posix":
        return DemoProcess(speed).start()
    from .server import DemoServer  # (its dialects and model in the app: only here)

    return DemoServer(speed=speed).start()
