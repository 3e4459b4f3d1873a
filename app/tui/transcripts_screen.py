"""Saved transcripts: a list (title, date, model, turns); type to search every
conversation (sqlite FTS5, over what may be shown) and the list becomes the
matching messages; Enter opens one in the chat screen, in the shape it was
shown in — a match on its branch, at the matching message.

In the list (↓ from the search box), Delete deletes the highlighted
conversation after a confirmation and F2 renames it: the same library calls
``callstream transcripts delete`` / ``rename`` make, handed in by the app
(the screen never opens the store itself). The conversation open in the chat
screen is not deleted from here: its recording is being written; one another
callstream is in the middle of a turn on is refused by the store's one rule
(``app/store/holds.py``), which names that process, and nothing is deleted.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from ..rules.titles import clean_title
from ..rules.words import plural
from ..stream.inert import inert
from .frames import SteadyFrames

__all__ = ["TranscriptsScreen", "ConfirmDelete", "RenameDialog"]

_DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 70; max-width: 90%; height: auto; padding: 1 2; border: thick $warning;
                    background: $surface; }}
{name} .hint {{ color: $text-muted; margin-top: 1; }}
{name} .problem {{ color: $error; }}
"""


class ConfirmDelete(SteadyFrames[bool], ModalScreen[bool]):
    """y deletes, n or Esc keeps it."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="ConfirmDelete")
    BINDINGS = [Binding("y", "answer(True)", "Delete", show=True), Binding("n,escape", "answer(False)", "Keep",
                                                                           show=True)]

    def __init__(self, title: str, turns: int) -> None:
        super().__init__()
        self._title, self._turns = title, turns

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble("Delete ", (inert(self._title)[:80], "bold"),
                                          f" ({plural(self._turns, 'turn')})?"))
            yield Static(Content("Its messages and turns on every branch, and its recording, are removed. The "
                                 "idempotency ledger keeps its rows: they are the proof of what ran."))
            yield Static(Content("y deletes · n or Esc keeps it"), classes="hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class RenameDialog(SteadyFrames[str | None], ModalScreen[str | None]):
    """Enter saves the title (``clean_title``'s rule, its complaint shown in place), Esc cancels."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="RenameDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True)]

    def __init__(self, title: str) -> None:
        super().__init__()
        self._title = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content("Rename the conversation"))
            yield Input(value=self._title, placeholder="a title")
            yield Static(classes="problem")
            yield Static(Content("Enter saves · Esc cancels"), classes="hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _save(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            self.dismiss(clean_title(event.value))
        except ValueError as exc:
            self.query_one(".problem", Static).update(Content(str(exc)))

    def action_cancel(self) -> None:
        self.dismiss(None)


class TranscriptsScreen(SteadyFrames[tuple[str, int | None] | None]):
    DEFAULT_CSS = """
    TranscriptsScreen { layout: vertical; }
    TranscriptsScreen #heading { padding: 0 1; background: $panel; }
    TranscriptsScreen Input { margin: 0 1; }
    TranscriptsScreen OptionList { height: 1fr; margin: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "dismiss_none", "Back", show=True),
        Binding("down", "to_list", "List", show=False),
        Binding("delete", "delete", "Delete", show=True),
        Binding("f2", "rename", "Rename", show=True),
    ]

    def __init__(self, lister: Any, searcher: Any = None, deleter: Callable[[str], None] | None = None,
                 renamer: Callable[[str, str], None] | None = None, current: str | None = None) -> None:
        super().__init__()
        self._lister = lister
        self._searcher = searcher
        self._deleter = deleter
        self._renamer = renamer
        #: The conversation open in the chat screen (not deleted from here).
        self._current = current

    def compose(self) -> ComposeResult:
        keys = " · ↓ the list: Del deletes, F2 renames" if self._deleter or self._renamer else ""
        yield Static(Content(f"Saved transcripts — type to search them all, Enter opens{keys}, Esc goes back"),
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
        if ":" in option_id:  # a search hit: conversation:entry:n
            conversation, seq, _ = option_id.rsplit(":", 2)
            return conversation, int(seq)
        return option_id, None

    def _highlighted(self) -> str | None:
        """The conversation of the highlighted row (a conversation, or a search hit in one)."""
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return None
        option = options.get_option_at_index(options.highlighted)
        choice = None if option.disabled else self._choice(option.id)
        return choice[0] if choice else None

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

    def action_to_list(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        if options.highlighted is None and options.option_count:
            options.highlighted = 0

    def _row(self, conversation: str) -> dict[str, Any]:
        return next((row for row in self._lister(None) if row["id"] == conversation), {})

    def _refill(self) -> None:
        self._fill(self.query_one(Input).value.strip())

    def action_delete(self) -> None:
        conversation = self._highlighted()
        if conversation is None or self._deleter is None:
            return
        if conversation == self._current:
            self.notify("This conversation is open in the chat: start another (/new) to delete it.",
                        severity="warning")
            return
        row = self._row(conversation)
        title = str(row.get("title") or "(untitled)")
        deleter = self._deleter

        def answered(yes: bool | None) -> None:
            from ..store import ConversationBusy

            if not yes:
                return
            try:
                deleter(conversation)
            except ConversationBusy as exc:  # another callstream is mid-turn on it: the one rule, said here
                self.notify(str(exc), title="not deleted", severity="error", markup=False, timeout=15)
                return
            self._refill()
            self.notify(f"Deleted {inert(title)[:60]} (the ledger keeps its rows).")

        self.app.push_screen(ConfirmDelete(title, int(row.get("turns") or 0)), answered)

    def action_rename(self) -> None:
        conversation = self._highlighted()
        if conversation is None or self._renamer is None:
            return
        renamer = self._renamer

        def answered(title: str | None) -> None:
            if title is None:
                return
            renamer(conversation, title)
            self._refill()
            self.notify(f"Renamed to {inert(title)[:60]}.")

        self.app.push_screen(RenameDialog(str(self._row(conversation).get("title") or "")), answered)
