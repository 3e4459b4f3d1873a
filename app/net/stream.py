"""One streamed request: POST, read chunks, hand each to the recorder and
then to the parser, until the stream's terminal marker, a fault, or the
turn's deadline.

Timeouts are explicit and fit slow models: connect, read between two chunks
(a model that thinks for a minute is not a dead connection), and an overall
deadline per attempt so a trickle that never goes quiet still ends. A fault
after the response started is not an exception to the caller: the parser is
closed with its cause (``disconnect``, ``timeout``, ``cancelled``) and the
turn says what happened. A fault before it started is a ``RequestFailed``
that says whether a retry may help.

Redirects are followed only within the request's own origin (scheme, host and
port) and only as 307/308, which keep the method and the body: a key header
never goes anywhere else (httpx strips only ``Authorization`` on a cross-origin
hop; ``x-api-key`` and ``x-goog-api-key`` would follow, with the whole
conversation). Any other redirect is a stated failure naming its target.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from ..stream import StreamParser, Turn, Update
from ..stream.jsonreuse import Reuse
from ..stream.limits import full_text, loads, one_line
from ..stream.redact import redact
from .inflate import ACCEPT_ENCODING, InflateError, inflater_for
from .overflow import OVERFLOW_OFFER, overflow_words

__all__ = ["Timeouts", "RequestFailed", "Recorder", "CancelledWithTurn", "stream_once", "retry_after_seconds"]


@dataclass(slots=True)
class Timeouts:
    connect: float = 10.0
    read: float = 120.0
    deadline: float = 600.0


class Recorder(Protocol):
    """The recording tap: every raw chunk, with its arrival time, before
    parsing; and markers (a user message, a turn and its request, an attempt
    and how it ended, the results that followed) at the caller's clock."""

    def chunk(self, at: float, data: bytes) -> None: ...

    def marker(self, kind: str, info: dict[str, Any]) -> None: ...


class RequestFailed(Exception):
    """The request failed before a stream began (no bytes of a reply)."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None, detail: str | None = None, overflow: bool = False) -> None:
        message = one_line(redact(message))
        super().__init__(message)
        #: One capped line, redacted: what notes, cards and the history say.
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        #: The whole reply body (``full_text``: redacted, capped), for the details.
        self.detail = full_text(detail)
        #: What the turn's ``cause`` is: no answer at all, or a request too long for the context window.
        self.cause = "unreachable" if status is None else "context_overflow" if overflow else None


_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_HOPS = 5


def _seconds(value: float) -> float | None:
    return min(max(value, 0.0), 60.0) if math.isfinite(value) else None


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """``retry-after-ms``, ``retry-after`` (seconds or an HTTP date), capped at
    60 s; a value that is none of those (``garbage``, ``nan``) is ignored."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            value = _seconds(float(raw_ms) / 1000)
        except ValueError:
            value = None
        if value is not None:
            return value
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return _seconds(float(raw))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return _seconds(parsed.timestamp() - time.time())


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


def _redirect_target(request: httpx.Request, response: httpx.Response, hops: int) -> httpx.URL:
    """Where a same-origin 307/308 leads; any other redirect is a RequestFailed."""
    location = response.headers.get("location", "")
    try:
        target = request.url.join(location)
    except (httpx.InvalidURL, ValueError):
        raise RequestFailed(f"HTTP {response.status_code}: a redirect to an unusable address") from None
    here = f"{request.url.scheme}://{request.url.netloc.decode('ascii', 'replace')}"
    there = f"{target.scheme}://{target.netloc.decode('ascii', 'replace')}"
    if _origin(target) != _origin(request.url):
        raise RequestFailed(f"HTTP {response.status_code}: the provider redirected to {there}; callstream follows "
                            f"redirects only within {here}, so nothing was sent there (set base_url to the address "
                            "that answers)", response.status_code)
    if response.status_code not in (307, 308):
        raise RequestFailed(f"HTTP {response.status_code}: a redirect that would turn the request into a GET "
                            f"({target}); set base_url to the address that answers", response.status_code)
    if hops >= _MAX_HOPS:
        raise RequestFailed(f"HTTP {response.status_code}: more than {_MAX_HOPS} redirects", response.status_code)
    return target


#: A body up to this size keeps the chunks its Content-Length was counted from and sends them: writing it
#: again cost more than holding it (a 500-exchange history is about 300 KB, 17 ms an encoding, twice a
#: request); a larger one (a history carrying a 10 MB argument) is written again as it is sent.
KEEP_BELOW = 1 << 20

#: Every request body's writer: the history items a body shares with the one before are written from
#: their text (``jsonreuse``), so a request's JSON costs what it adds, not the whole history again.
_REUSE = Reuse()


class _JSONBody(httpx.AsyncByteStream):
    """A JSON body written as it is sent, about 64 KB at a time, each piece
    once the socket took the one before: a history that carries a 10 MB
    argument costs the request no copy of its size (neither a ``str`` nor
    the ``bytes`` of it, nor asyncio's transport buffer holding what it
    could not send at once). The Content-Length is counted the same way
    beforehand, so the server sees an ordinary body; a body of at most
    ``KEEP_BELOW`` bytes keeps what that count wrote and sends it."""

    def __init__(self, body: dict[str, Any]) -> None:
        self._write = _REUSE.writer(body)
        self.size = 0
        #: The chunks counted, while they are at most ``KEEP_BELOW`` bytes; None once they were more.
        self.kept: list[bytes] | None = []
        for chunk in self._write():
            self.size += len(chunk)
            if self.kept is not None and self.size <= KEEP_BELOW:
                self.kept.append(chunk)
            else:
                self.kept = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.kept if self.kept is not None else self._write():
            yield chunk


def _json_request(client: httpx.AsyncClient, url: str | httpx.URL, headers: dict[str, str] | httpx.Headers,
                  body: dict[str, Any], timeout: httpx.Timeout) -> httpx.Request:
    """POST ``body`` as JSON, the text httpx's ``json=`` writes, streamed (``_JSONBody``)."""
    content = _JSONBody(body)
    kept = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length", "host")}
    return client.build_request("POST", url, content=content, timeout=timeout,
                                headers={**kept, "Content-Type": "application/json",
                                         "Content-Length": str(content.size)})


async def _send(client: httpx.AsyncClient, request: httpx.Request, body: dict[str, Any],
                timeout: httpx.Timeout) -> httpx.Response:
    """Send, following same-origin 307/308 redirects only (see the module's docstring)."""
    hops = 0
    while True:
        try:
            response = await client.send(request, stream=True, follow_redirects=False)
        except (httpx.ConnectTimeout, httpx.PoolTimeout):
            raise RequestFailed(f"could not connect: no answer within {timeout.connect:g} s",
                                retryable=True) from None
        except httpx.ReadTimeout:  # connected, the request sent: the server is silent, not unreachable
            raise RequestFailed(f"the server took the request but sent no response within {timeout.read:g} s "
                                "(the read timeout)", retryable=True) from None
        except httpx.TimeoutException:
            raise RequestFailed(f"the request could not be sent within {timeout.write:g} s",
                                retryable=True) from None
        except httpx.ConnectError as exc:
            raise RequestFailed(f"could not connect: {_short(exc)}", retryable=True) from None
        except httpx.TransportError as exc:
            raise RequestFailed(f"the connection dropped before a response ({_short(exc)})",
                                retryable=True) from None
        if response.status_code not in _REDIRECTS or "location" not in response.headers:
            return response
        await response.aclose()
        target = _redirect_target(request, response, hops)
        hops += 1
        request = _json_request(client, target, request.headers, body, timeout)


def _provider_message(status: int, body: bytes) -> tuple[str, bool]:
    """The error's one line, and whether it says the request does not fit the context window."""
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = loads(text)
    except ValueError:
        payload = None
    overflow = overflow_words(status, payload)
    if overflow is not None:
        # the offer before the provider's words: the line is capped, the details keep the whole body
        return (f"HTTP {status}: the conversation is too long for the model's context window; {OVERFLOW_OFFER} "
                f"(the provider: {overflow})"), True
    return _message_of(status, text, payload), False


def _message_of(status: int, text: str, payload: Any) -> str:
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            message = error.get("message") or error.get("type")
            if message:
                return f"HTTP {status}: {message}"
        elif isinstance(error, str):
            return f"HTTP {status}: {error}"
    first = text.splitlines()[0] if text else ""
    return f"HTTP {status}" + (f": {first}" if first else "")


async def stream_once(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    parser: StreamParser,
    timeouts: Timeouts,
    on_updates: Callable[[list[Update]], None],
    recorder: Recorder | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Turn:
    """Run one attempt; returns the closed turn, or raises RequestFailed."""
    timeout = httpx.Timeout(connect=timeouts.connect, read=timeouts.read, write=timeouts.connect, pool=timeouts.connect)
    response: httpx.Response | None = None
    cause = "eof"  # stays so only when the body ended cleanly: the clean end a dialect may take as its marker
    detail: str | None = None
    try:
        async with asyncio.timeout(timeouts.deadline):
            request = _json_request(client, url, {"accept-encoding": ACCEPT_ENCODING, **headers}, body, timeout)
            response = await _send(client, request, body, timeout)
            try:
                if response.status_code != 200:
                    data = await _read_head(response, 20_000)
                    message, overflow = _provider_message(response.status_code, data)
                    raise RequestFailed(message, response.status_code, response.status_code in _RETRYABLE_STATUS,
                                        retry_after_seconds(response.headers), data.decode("utf-8", "replace"),
                                        overflow)
                inflater = inflater_for(response.headers.get("content-encoding", ""))
                reads = response.aiter_bytes() if inflater is None else response.aiter_raw()

                def take(chunk: bytes) -> None:
                    """One piece of the body: recorded as it came, then parsed."""
                    at = clock()
                    if recorder is not None:
                        recorder.chunk(at, chunk)
                    updates = parser.feed(chunk, at)
                    if updates:
                        on_updates(updates)

                async for data in reads:
                    for chunk in (data,) if inflater is None else inflater.feed(data):
                        take(chunk)
                        if parser.finished:
                            break  # the stream said all it will (or a limit stopped it): read no more
                    if parser.finished:
                        break  # do not wait for the socket
                    # a socket that always has data ready never yields on its own: let the
                    # screen and the keyboard have the loop between two chunks
                    await asyncio.sleep(0)
                else:
                    rest = inflater.flush() if inflater is not None else b""
                    if rest:
                        take(rest)
            except httpx.ReadTimeout:
                cause, detail = "timeout", f"no data for {timeouts.read:g} s (the read timeout)"
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError, httpx.DecodingError) as exc:
                cause, detail = "disconnect", f"the connection dropped ({_short(exc)})"
            except InflateError as exc:
                cause, detail = "disconnect", str(exc)
    except TimeoutError:
        cause, detail = "timeout", f"the turn took longer than its {timeouts.deadline:g} s deadline"
    except asyncio.CancelledError:
        if response is not None:
            await asyncio.shield(response.aclose())
        turn = parser.close("cancelled", clock())
        on_updates(parser.updates())
        raise CancelledWithTurn(turn) from None
    finally:
        if response is not None and not response.is_closed:
            await asyncio.shield(response.aclose())
    turn = parser.close(cause, clock(), detail)
    on_updates(parser.updates())
    return turn


async def _read_head(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of an error body (an endless error page stops there)."""
    data = bytearray()
    inflater = inflater_for(response.headers.get("content-encoding", ""))
    try:
        async for raw in response.aiter_bytes() if inflater is None else response.aiter_raw():
            for piece in (raw,) if inflater is None else inflater.feed(raw):
                data += piece
                if len(data) >= limit:
                    return bytes(data[:limit])
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError, httpx.DecodingError, InflateError):
        pass  # what arrived before the fault is the message
    return bytes(data[:limit])


def _short(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


class CancelledWithTurn(asyncio.CancelledError):
    """Cancellation that still hands back the turn, closed as ``cancelled``."""

    def __init__(self, turn: Turn) -> None:
        super().__init__()
        self.turn = turn

