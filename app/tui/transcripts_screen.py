"""Saved transcripts: a list (title, date, model, turns) filtered as you type;
Enter opens one in the chat screen, in the shape it was shown in."""

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


class TranscriptsScreen(Screen[str | None]):
    DEFAULT_CSS = """
    TranscriptsScreen { layout: vertical; }
    TranscriptsScreen #heading { padding: 0 1; background: $panel; }
    TranscriptsScreen Input { margin: 0 1; }
    TranscriptsScreen OptionList { height: 1fr; margin: 0 1; }
    """

    BINDINGS = [Binding("escape", "dismiss_none", "Back", show=True)]

    def __init__(self, lister: Any) -> None:
        super().__init__()
        self._lister = lister

    def compose(self) -> ComposeResult:
        yield Static(Content("Saved transcripts — type to filter, Enter opens, Esc goes back"), id="heading")
        yield Input(placeholder="filter by text")
        yield OptionList()
        yield Footer()

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    def _fill(self, text: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
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

    @on(Input.Changed)
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value.strip())

    @on(Input.Submitted)
    def _first(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.option_count and not options.get_option_at_index(0).disabled:
            self.dismiss(options.get_option_at_index(0).id)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
