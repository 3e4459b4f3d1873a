"""A paragraph of prose, which can also hold the finished paragraphs after it.

A long reply's finished paragraphs are folded into one widget so a layout
measures few widgets. Folding by joining their text into one ``Content``
made every fold re-wrap and re-render the whole group (12,000 characters,
each fold); here each folded paragraph is wrapped once, at the widget's
width, and kept as lines (Textual's line API: ``render_line`` and
``get_content_height``), so a fold costs what the new paragraph costs and a
repaint draws only the lines on screen. A new width or style renders the
group again, once.

While text is being selected in it the widget draws the joined text the
usual way (the selection needs the whole text at once).

It is a public ``MarkdownBlock`` with what Textual's own paragraph adds (the
margin below a top-level paragraph), so it needs no private Textual class.
"""

from __future__ import annotations

from typing import Any

from textual.app import RenderResult
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets.markdown import MarkdownBlock

from .in_place import update_in_place

__all__ = ["ProseParagraph"]

_GAP = Content("\n\n")


class ProseParagraph(MarkdownBlock):
    SCOPED_CSS = False
    DEFAULT_CSS = """
    Markdown > ProseParagraph {
         margin: 0 0 1 0;
    }
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: This paragraph's own text (the folded ones are ``_folded``).
        self._text = Content()
        #: Paragraphs folded in after this one's own (``_text``).
        self._folded: list[Content] = []
        self._folded_chars = 0
        self._joined: Content | None = None
        #: What they were rendered for (width, style) → the lines of ``[_text, *_folded]``
        #: rendered so far and how many paragraphs they hold. Two entries: a layout measures
        #: with and without the scrollbar's width.
        self._renders: dict[tuple[object, ...], tuple[list[Strip], int]] = {}

    @property
    def chars(self) -> int:
        """Characters shown: this paragraph and every one folded into it."""
        return len(self._text.plain) + self._folded_chars

    @property
    def own_text(self) -> Content:
        """This paragraph's own text (without the paragraphs folded into it)."""
        return self._text

    @property
    def folded(self) -> bool:
        """Finished paragraphs were folded in after this one's own."""
        return bool(self._folded)

    def fold(self, content: Content) -> None:
        """A finished paragraph joins the end of this widget."""
        self._folded.append(content)
        self._folded_chars += len(content.plain) + 2
        self._joined = None
        self.refresh(layout=True)

    def set_content(self, content: Content) -> None:
        self._text = content
        self._renders.clear()
        self._joined = None
        super().set_content(content)

    def grow(self, content: Content) -> None:
        """The live paragraph, re-parsed with what arrived since (nothing folded in):
        repainted, laid out only when its height changed (``update_in_place``)."""
        self._text = content
        update_in_place(self, content)

    # -- what Textual asks -------------------------------------------------------

    def render(self) -> RenderResult:
        """The joined text (selection, copy): built only when asked for."""
        if not self._folded:
            return super().render()
        if self._joined is None:
            joined = self._text
            for content in self._folded:
                joined = joined + _GAP + content
            self._joined = joined
        return self._joined

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self._folded or not width:
            return super().get_content_height(container, viewport, width)
        return len(self._lines_at(width))

    def render_line(self, y: int) -> Strip:
        if not self._folded or self._whole_text_needed():
            return super().render_line(y)
        width = self.size.width
        lines = self._lines_at(width)
        return lines[y] if 0 <= y < len(lines) else Strip.blank(width, self.visual_style.rich_style)

    # -- the lines -----------------------------------------------------------------

    def _whole_text_needed(self) -> bool:
        return self.text_selection is not None or self.screen._selecting

    def _lines_at(self, width: int) -> list[Strip]:
        style = self.visual_style
        key = (width, style, self.link_style)
        lines, rendered = self._renders.pop(key, ([], 0))
        while len(self._renders) > 1:  # the oldest goes
            del self._renders[next(iter(self._renders))]
        paragraphs = [self._text, *self._folded]
        for content in paragraphs[rendered:]:
            if rendered:
                lines.append(Strip.blank(width, style.rich_style))  # the gap between paragraphs
            lines.extend(Visual.to_strips(self, content, width, None, style))
            rendered += 1
        self._renders[key] = (lines, rendered)
        return lines
