"""A streamed reply renders as Textual's Markdown renders the whole text,
however the deltas fell, while holding far fewer widgets."""

from __future__ import annotations

import random

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static
from textual.widgets._markdown import MarkdownBlock

from widgets.prose import ProseBlock

PARAGRAPH = "The parcel left the hub on **Tuesday** and has not been scanned since; a trace takes days. "

DOCUMENT = "\n\n".join([
    PARAGRAPH * 2,
    "## Where it is",
    PARAGRAPH,
    "A paragraph that becomes a heading\n===",
    "- one\n- two with `code`\n- three",
    PARAGRAPH * 3,
    "```python\nprint('hi')\n\nprint('there')\n```",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    *(f"Paragraph {i}. " + PARAGRAPH for i in range(40)),
    "> quoted\n> twice",
    "last words",
]) + "\n"


class Reference(Markdown):
    """What the prose used to be: Textual's Markdown, the last block without its margin."""

    DEFAULT_CSS = """
    Reference { margin: 1 0 0 0; padding: 0 1; background: transparent; }
    Reference > MarkdownBlock:last-child { margin-bottom: 0; }
    """


class Holder(App[None]):
    def __init__(self, widget: Markdown) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield VerticalScroll(self.widget, Static("(what follows the reply)"))  # shows the last margin


async def _screen(widget: Markdown, pieces: list[str] | None) -> tuple[list[str], int]:
    app = Holder(widget)
    async with app.run_test(size=(90, 400)) as pilot:
        if pieces is not None:
            assert isinstance(widget, ProseBlock)
            for piece in pieces:
                widget.add(piece)
                if random.random() < 0.3:
                    await widget._flush()
            await widget.finish()
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        lines = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]
        return lines, len(widget.query(MarkdownBlock))


@pytest.mark.parametrize("cut", ["whole", "every 7", "random", "one character"])
async def test_streamed_prose_renders_as_markdown_renders_the_whole(cut: str) -> None:
    random.seed(cut)
    text = DOCUMENT if cut != "one character" else DOCUMENT[:1500]
    expected, reference_blocks = await _screen(Reference(text), None)
    if cut == "whole":
        pieces = [text]
    elif cut == "every 7":
        pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    elif cut == "random":
        points = sorted(random.sample(range(1, len(text)), 300))
        pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    else:
        pieces = list(text)
    shown, blocks = await _screen(ProseBlock(), pieces)
    assert shown == expected
    if cut != "one character":
        assert blocks < reference_blocks / 2  # finished paragraphs share widgets


async def test_stored_prose_renders_as_markdown_renders_it() -> None:
    expected, _ = await _screen(Reference(DOCUMENT), None)
    app = Holder(ProseBlock(DOCUMENT))
    async with app.run_test(size=(90, 400)) as pilot:
        widget = app.widget
        assert isinstance(widget, ProseBlock)
        await widget.finish()
        await pilot.pause()
        assert [s.text.rstrip() for s in app.screen._compositor.render_strips()] == expected
        assert widget.source == DOCUMENT
