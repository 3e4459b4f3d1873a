"""Saved transcripts: a list (title, date, model, turns); type to search every
conversation (sqlite FTS5, over what may be shown) and the list becomes the
matching messages; Enter opens one in the chat screen, in the shape it was
shown in — a match on its branch, at the matching message."""

from __future__ import annotations

import datetime
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from ..stream.inert import inert
from ..words import plural

__all__ = ["TranscriptsScreen"]


class TranscriptsScreen(Screen[tuple[str, int | None] | None]):
    DEFAULT_CSS = """
    TranscriptsScreen { layout: vertical; }
    TranscriptsScreen #heading { padding: 0 1; background: $panel; }
    TranscriptsScreen Input { margin: 0 1; }
    TranscriptsScreen OptionList { height: 1fr; margin: 0 1; }
    """

    BINDINGS = [Binding("escape", "dismiss_none", "Back", show=True)]

    def __init__(self, lister: Any, searcher: Any = None) -> None:
        super().__init__()
        self._lister = lister
        self._searcher = searcher

    def compose(self) -> ComposeResult:
        yield Static(Content("Saved transcripts — type to search them all, Enter opens, Esc goes back"),
                     id="heading")
        yield Input(placeholder="search messages, replies, tool names and shown fields")
        yield OptionList()
        yield Footer()

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    def _fill(self, text: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        if text and self._searcher is not None:
            self._fill_hits(options, text)
            return
        rows = self._lister(text or None)
        for row in rows:
            when = datetime.datetime.fromtimestamp(row["updated"]).strftime("%Y-%m-%d %H:%M")
            title = inert(row["title"] or "(untitled)")
            label = Content.assemble((title[:60], "bold"), f"  ·  {when}  ·  {inert(row['model'])}  ·  "
                                     + plural(row["turns"], "turn"))
            options.add_option(Option(label, id=row["id"]))
        if not rows:
            options.add_option(Option(Content("no saved transcripts" + (" match" if text else " yet")),
                                      disabled=True))

    def _fill_hits(self, options: OptionList, text: str) -> None:
        hits = self._searcher(text)
        for hit in hits:
            when = datetime.datetime.fromtimestamp(hit.updated).strftime("%Y-%m-%d")
            title = inert(hit.title or "(untitled)")
            label = Content.assemble((title[:40], "bold"), f"  ·  {when}  ·  entry {hit.seq}\n    ",
                                     (inert(hit.snippet)[:160], "italic"))
            options.add_option(Option(label, id=f"{hit.conversation}:{hit.seq}:{len(options.options)}"))
        if not hits:
            options.add_option(Option(Content("nothing saved matches"), disabled=True))

    def _choice(self, option_id: str | None) -> tuple[str, int | None] | None:
        if option_id is None:
            return None
        if self.query_one(Input).value.strip() and self._searcher is not None:
            conversation, seq, _ = option_id.rsplit(":", 2)
            return conversation, int(seq)
        return option_id, None

    @on(Input.Changed)
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value.strip())

    @on(Input.Submitted)
    def _first(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.option_count and not options.get_option_at_index(0).disabled:
            self.dismiss(self._choice(options.get_option_at_index(0).id))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._choice(event.option.id))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
