"""Each stdio server's stderr, in its own capped log in the data dir.

A server's stderr is a pipe we read, not a file it writes: a chatty server
(Claude Code once kept 64 MB of it per server) can fill its pipe but never our
disk. The log keeps the first ``cap`` bytes of a run after the previous run's
log is moved to ``NAME.log.1``; past the cap, one line says how much was
dropped, written when the server's stderr closes. Each whole line goes
through the one redaction first: a server that prints the token it was
configured with ("token … is expired") leaves no secret in the data dir.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TextIO

from ..stream.redact import redact_bytes

__all__ = ["ServerLog", "LOG_CAP", "quiet_sdk"]

LOG_CAP = 1024 * 1024
#: A line longer than this is redacted and written in pieces this long.
_LINE = 1 << 16


class ServerLog:
    def __init__(self, path: Path, cap: int = LOG_CAP) -> None:
        self.path = path
        self.cap = cap
        self.dropped = 0
        self._thread: threading.Thread | None = None

    def open(self) -> TextIO:
        """A writable end to hand the child as its stderr; a thread copies
        what arrives into the log, up to the cap."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.path.exists():
            os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        read_fd, write_fd = os.pipe()
        self.dropped = 0
        self._thread = threading.Thread(target=self._copy, args=(read_fd,), daemon=True,
                                        name=f"mcp-log-{self.path.stem}")
        self._thread.start()
        return os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")

    def _copy(self, read_fd: int) -> None:
        written = 0
        held = b""
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            while True:
                read = os.read(read_fd, 65536)
                held += read
                cut = len(held) if not read or len(held) > _LINE else held.rfind(b"\n") + 1
                chunk, held = held[:cut], held[cut:]
                room = self.cap - written
                if room > 0 and chunk:
                    chunk = redact_bytes(chunk)  # past the cap only counted, never looked at
                    os.write(fd, chunk[:room])
                    written += min(room, len(chunk))
                self.dropped += max(0, len(chunk) - max(room, 0))
                if not read:
                    break
            if self.dropped:
                os.write(fd, f"\n[callstream: {self.dropped} more bytes of stderr dropped at the "
                             f"{self.cap}-byte cap]\n".encode())
        finally:
            os.close(fd)
            os.close(read_fd)

    def tail(self, lines: int = 5) -> str:
        """The last lines of the log, for a failed server's reason."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - 4096))
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])


class _SdkLog(logging.Handler):
    """The SDK's own log lines (a traceback for an answer it could not
    parse, a warning) into ``sdk.log`` beside the servers' logs, redacted,
    instead of on the terminal (where they would tear the TUI's screen)."""

    def __init__(self, path: Path | None) -> None:
        super().__init__(logging.WARNING)
        self.path = path
        self.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if self.path.exists() and self.path.stat().st_size > LOG_CAP:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, redact_bytes(self.format(record).encode("utf-8", "replace") + b"\n"))
            finally:
                os.close(fd)
        except OSError:
            pass  # a log that cannot be written is no reason to disturb the screen


def quiet_sdk(log_dir: Path | None) -> None:
    """Send the SDK's log (``mcp.*``) to ``log_dir/sdk.log`` (the latest data
    dir a server was opened with; nowhere before one), never to the terminal."""
    logger = logging.getLogger("mcp")
    handler = next((h for h in logger.handlers if isinstance(h, _SdkLog)), None)
    if handler is None:
        handler = _SdkLog(None)
        logger.addHandler(handler)
        logger.propagate = False
    if log_dir is not None:
        handler.path = log_dir / "sdk.log"
