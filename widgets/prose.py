"""The assistant's prose: Markdown that grows by deltas and stays cheap.

Deltas are buffered and written at most twenty times a second (less often
as the reply grows), and each write costs what the reply's *last* block
costs, however long the reply is:

- only the text from the start of the last top-level block is parsed again
  (Textual's ``Markdown.append`` joins and re-splits the whole source and
  builds a fresh ``MarkdownIt`` per append);
- one parser for every block (``_PARSER``);
- a finished paragraph is folded into the paragraph widget before it (up to
  ``_GROUP_CHARS`` a widget; ``ProseParagraph`` wraps each folded paragraph
  once and keeps its lines), and the widget it had shows the next one: a
  500-paragraph reply is a handful of widgets, mounted rarely, so a layout
  measures few and a flush re-wraps only the live paragraph;
- a flush that leaves the live paragraph's height as it was repaints it
  without a layout (``update_in_place``);
- the last block loses its bottom margin through a class this widget moves,
  not a ``:last-child`` selector (an order-dependent selector makes Textual
  restyle every sibling on every mount: quadratic over a reply);
- a finished reply (a reopened one) is written in one go as soon as it is
  mounted, not after the streaming timer.

Text is made inert (control characters shown escaped) before it is
written; Markdown never interprets console markup.
"""

from __future__ import annotations

import asyncio

from markdown_it import MarkdownIt
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from app.stream.inert import inert

from .prose_paragraph import ProseParagraph

__all__ = ["ProseBlock", "warm_parser"]

#: One parser for every prose block: a MarkdownIt holds only its rules; each
#: parse makes its own state.
_PARSER = MarkdownIt("gfm-like")

#: Finished paragraphs are folded into one widget until it holds this many
#: characters (a fold wraps only the new paragraph; a resize re-wraps a group
#: once, which stays cheap at this size).
_GROUP_CHARS = 40_000


def _parser() -> MarkdownIt:
    return _PARSER


def warm_parser() -> None:
    """Parse a line with links once: linkify-it compiles its patterns on first
    use (tens of milliseconds), better before a reply than in its first flush."""
    _PARSER.parse("See https://example.com/a or www.example.com and `code`.\n\n- a *list*\n")


class ProseBlock(Markdown):
    DEFAULT_CSS = """
    ProseBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        background: transparent;
    }
    ProseBlock > MarkdownBlock.-last { margin-bottom: 0; }
    """

    BLOCKS = {**Markdown.BLOCKS, "paragraph_open": ProseParagraph}

    def __init__(self, text: str = "") -> None:
        super().__init__(parser_factory=_parser)
        #: The whole source, as written (joined when read).
        self._parts: list[str] = []
        self._pending: list[str] = [inert(text)] if text else []
        #: The source from the first line of the last top-level block on.
        self._tail = ""
        self._tail_line = 0
        #: The last block widget (the one still growing), and the paragraph
        #: widget just before it that finished paragraphs are folded into.
        self._last: MarkdownBlock | None = None
        self._group: ProseParagraph | None = None
        self._flushing = asyncio.Lock()
        self._scheduled = False
        self._written = 0
        #: Given its whole text (a stored reply): written once, at mount, without the timer.
        self._finished = bool(text)

    @property
    def source(self) -> str:
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def settled(self) -> bool:
        """Everything added so far is written (no delta waits for a flush)."""
        return not self._pending and not self._scheduled and not self._flushing.locked()

    def on_mount(self) -> None:
        if self._pending and self._finished:
            self._scheduled = True  # settled only once it is written
            self.call_later(self._flush)
        elif self._pending:
            self._schedule()

    def add(self, delta: str) -> None:
        if not delta:
            return
        self._pending.append(inert(delta))
        if self.is_mounted:
            self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            # a long reply appends less often (20 a second at first, 5 a second from ~40 KB)
            self.set_timer(min(0.2, 0.05 + self._written / 250_000), self._flush)

    async def _flush(self) -> None:
        self._scheduled = False
        async with self._flushing:  # a flush that waits here finds what piled up meanwhile
            if not self._pending or not self.is_attached:
                return
            text = "".join(self._pending)
            self._pending.clear()
            self._written += len(text)
            self._parts.append(text)
            async with self.lock:  # Markdown's own: its first (empty) update runs under it
                with self.app.batch_update():
                    await self._append(text)

    async def finish(self) -> None:
        """The block will not grow again: write what is pending."""
        await self._flush()

    # -- the append path -------------------------------------------------------

    async def _append(self, text: str) -> None:
        tail = self._tail + text
        tokens = _PARSER.parse(tail)
        blocks = list(self._parse_markdown(tokens))
        start = self._tail_line
        for token in reversed(tokens):
            if token.map is not None and token.level == 0:
                lines = tail.splitlines(keepends=True)
                self._tail = "".join(lines[token.map[0]:])
                self._tail_line = start + token.map[0]
                break
        else:
            self._tail = tail
        for block in blocks:
            first, end = block.source_range
            block.source_range = (first + start, end + start)
        if not blocks:
            return
        if self._last is not None:
            await self._replace_live(blocks[0])
            blocks = blocks[1:]
        fresh: list[MarkdownBlock] = []
        for block in blocks:
            last = self._last
            if isinstance(last, ProseParagraph) and isinstance(block, ProseParagraph):
                group = self._group
                if group is not None and group.chars < _GROUP_CHARS:
                    # the live paragraph is finished: it joins the group, and its widget shows the new one
                    group.fold(last.own_text)
                    last.set_content(block.own_text)
                    continue
                # the finished paragraph starts a group; the new one gets a widget of its own
                self._group = last
            else:
                self._group = None
            fresh.append(block)
            self._set_last(block)
        if fresh:
            await self.mount_all(fresh)

    async def _replace_live(self, block: MarkdownBlock) -> None:
        """The last block, re-parsed with what arrived since: update it in place."""
        last = self._last
        assert last is not None
        if isinstance(last, ProseParagraph) and isinstance(block, ProseParagraph):
            if last.folded:
                last.set_content(block.own_text)
            else:
                last.grow(block.own_text)  # most flushes keep its height: no layout of the reply
            return
        # a different kind of block: its widget is swapped for the new one
        await last.remove()
        await self.mount(block)
        self._set_last(block)

    def _set_last(self, block: MarkdownBlock) -> None:
        # a block not yet mounted is styled once, when it is (styled now as well, it would be twice: a reopened
        # reply's blocks are all new)
        if self._last is not None and self._last is not block:
            self._last.remove_class("-last", update=self._last.is_attached)
        block.add_class("-last", update=block.is_attached)
        self._last = block
