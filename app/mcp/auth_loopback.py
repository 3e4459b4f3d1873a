"""The loopback redirect of a sign-in: an HTTP listener on 127.0.0.1 (a free
port unless one is asked for) that takes the one authorization response the
browser brings back, answers the browser with a short page, and hands the
code, state and issuer to the SDK's flow (which checks the state and the
issuer). Written here because the SDK leaves receiving the redirect to its
caller; asyncio's server is enough for one GET."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import parse_qs, urlsplit

__all__ = ["Loopback", "SignInRefused"]

_PAGE = ("<!doctype html><meta charset=utf-8><title>callstream</title>"
         "<p>{}</p><p>You can close this tab and go back to the terminal.</p>")


class SignInRefused(Exception):
    """The authorization server sent the browser back with an error (or
    nothing came back). Its text is the whole sentence a person reads."""

    stated = True


class Loopback:
    def __init__(self) -> None:
        self.port = 0
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def start(self, port: int = 0) -> None:
        """Listen (on ``port`` if it is free, else on any free port)."""
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        except OSError:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            writer.close()
            return
        target = head.split(b"\r\n", 1)[0].split(b" ")
        path = target[1].decode("latin-1") if len(target) > 1 else "/"
        parts = urlsplit(path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path != "/callback" or not ({"code", "error"} & set(query)):
            words, status = "Not the sign-in callback.", b"404 Not Found"
        elif "error" in query:
            words, status = "The sign-in was refused.", b"400 Bad Request"
        else:
            words, status = "Signed in.", b"200 OK"
        body = _PAGE.format(words).encode()
        writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()
        if status != b"404 Not Found" and self._result is not None and not self._result.done():
            self._result.set_result(query)

    async def wait(self, timeout: float) -> dict[str, str]:
        """The callback's query (``code``, ``state``, ``iss``); an error answer is ``SignInRefused``."""
        assert self._result is not None
        try:
            query = await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise SignInRefused(f"not signed in: no answer came back to {self.redirect_uri} "
                                f"within {timeout:g} s") from None
        finally:
            self._result = asyncio.get_running_loop().create_future()
        if "error" in query:
            detail = query.get("error_description") or ""
            raise SignInRefused(f"sign-in refused: the authorization server answered {query['error']}"
                                + (f": {detail}" if detail else ""))
        return query

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
