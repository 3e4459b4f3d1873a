"""The assistant's prose, streamed through Textual's MarkdownStream.

Deltas are buffered and written at most twenty times a second (less often
as the reply grows): a fast stream costs one Markdown append per flush, not
one per token, and the whole reply is never re-rendered. Text is made inert (control characters shown escaped) before
it is written; Markdown never interprets console markup.
"""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from app.stream.inert import inert

__all__ = ["ProseBlock"]


class ProseBlock(Markdown):
    DEFAULT_CSS = """
    ProseBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        background: transparent;
    }
    ProseBlock > MarkdownBlock:last-child { margin-bottom: 0; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._pending: list[str] = [inert(text)] if text else []
        self._stream: MarkdownStream | None = None
        self._scheduled = False
        self._written = 0

    def on_mount(self) -> None:
        self._stream = Markdown.get_stream(self)
        if self._pending:
            self._schedule()

    def add(self, delta: str) -> None:
        if not delta:
            return
        self._pending.append(inert(delta))
        if self._stream is not None:
            self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            # each append re-lays out the reply's last block and mounts new ones: a long
            # reply appends less often (20 a second at first, 5 a second from ~40 KB)
            self.set_timer(min(0.2, 0.05 + self._written / 250_000), self._flush)

    async def _flush(self) -> None:
        self._scheduled = False
        if self._stream is None or not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._written += len(text)
        await self._stream.write(text)

    async def finish(self) -> None:
        """The block will not grow again: flush and stop the stream."""
        await self._flush()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None

    async def on_unmount(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
