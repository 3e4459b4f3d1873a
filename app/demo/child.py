"""The demo model's own process (``process.py`` starts it): ``python -m app.demo.child FD SPEED``.

It serves on the listening socket it inherits as file descriptor ``FD`` and ends when its standard
input reaches its end: the app closed it, or the app is gone (a crash, a kill), whose end of the pipe
the system closes. It prints nothing: the app's screen is the terminal it would print on.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading

from .server import DemoServer

__all__ = ["main"]


def main(argv: list[str]) -> int:
    fd, speed = int(argv[0]), float(argv[1])
    listening = socket.socket(fileno=fd)
    server = DemoServer(speed=speed)

    async def serve() -> None:
        await server.open(sock=listening)
        loop = asyncio.get_running_loop()
        ended = asyncio.Event()

        def watch() -> None:  # the app's end of the pipe: nothing is written to it, so read returns at its close
            sys.stdin.buffer.read()
            loop.call_soon_threadsafe(ended.set)

        threading.Thread(target=watch, name="app-gone", daemon=True).start()
        try:
            await ended.wait()
        finally:
            await server.close()

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
