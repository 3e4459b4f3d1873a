"""The multi-line input: Enter sends, Ctrl+J (or Shift+Enter where the
terminal reports it) starts a new line, Up/Down at the first/last line walk
the prompt history, Tab completes a slash command (and ``/attach``'s path).
A paste the screen recognises (``offer``: one file's path, as a dropped file
arrives) into an empty box becomes what the screen offers instead (``/attach
PATH``, which Enter confirms); any other paste is typed as it came.

The widget never throws text away by itself: Enter posts ``Submitted`` and
the screen decides (send it, queue it, or keep it and say why) and clears the
box with ``accept()``. The history is a list the screen hands in and saves;
the widget only walks it. A key the screen has a use for just now
(``lends``: the approval keys while a call awaits an answer) is not an empty
box's: it reaches the screen's binding instead of being typed. A box with
text in it types every key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

__all__ = ["PromptInput"]


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 10;
        width: 1fr;
        border: round $primary 50%;
        padding: 0 1;
    }
    PromptInput:focus { border: round $accent; }
    """

    @dataclass
    class Submitted(Message):
        text: str

    def __init__(self, history: list[str] | None = None,
                 complete: Callable[[str], str | None] | None = None,
                 offer: Callable[[str], str | None] | None = None) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, highlight_cursor_line=False, tab_behavior="focus",
                         placeholder="Ask something — /help for commands (Enter sends, Ctrl+J newline)")
        #: Earlier prompts, oldest first (the screen loads and saves it).
        self.prompt_history: list[str] = history if history is not None else []
        #: Where Up/Down is in the history (len(history): the draft being typed).
        self._position = len(self.prompt_history)
        self._draft = ""
        #: Slash-command completion: the text so far → the completed text, or None.
        self._complete = complete
        #: A paste into an empty box → what to put there instead (a dropped file: ``/attach PATH``), or None.
        self._offer = offer
        #: Keys the screen takes from the box just now (set by the screen; None: the box types every key).
        self.lends: Callable[[str], bool] | None = None

    async def _on_paste(self, event: events.Paste) -> None:
        if self._offer is not None and not self.text.strip() and not self.read_only:
            offered = self._offer(event.text)
            if offered is not None:
                event.prevent_default()
                event.stop()
                self.text = offered
                self.cursor_location = (0, len(offered))
        # otherwise TextArea's own handler types the paste (Textual calls each class's handler in turn)

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if self.lends is not None and not self.text and self.lends(key):
            # the screen's binding applies (an approval key while a call waits), but only to an empty
            # box: a person typing a follow-up when a card starts waiting keeps their words, and no
            # 'a' of theirs writes an allow rule
            return False
        return super().check_consume_key(key, character)

    def accept(self, remember: bool = True) -> None:
        """The screen took the text: clear the box (and remember the prompt)."""
        text = self.text
        if remember and text.strip() and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)
        self._position = len(self.prompt_history)
        self._draft = ""
        self.clear()

    def _walk(self, step: int) -> bool:
        target = self._position + step
        if not 0 <= target <= len(self.prompt_history):
            return False
        if self._position == len(self.prompt_history):
            self._draft = self.text
        self._position = target
        self.text = self.prompt_history[target] if target < len(self.prompt_history) else self._draft
        last = self.document.line_count - 1
        self.cursor_location = (last, len(self.document.get_line(last))) if step > 0 or target == len(
            self.prompt_history) else (0, len(self.document.get_line(0)))
        return True

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            if self.text.strip():
                self.post_message(self.Submitted(self.text))
            return
        if event.key in ("shift+enter", "ctrl+j"):
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        row, _ = self.cursor_location
        if event.key == "up" and row == 0 and self._walk(-1):
            event.prevent_default()
            event.stop()
            return
        if event.key == "down" and row == self.document.line_count - 1 and self._walk(+1):
            event.prevent_default()
            event.stop()
            return
        if event.key == "tab" and self._complete is not None:
            completed = self._complete(self.text)
            if completed is not None:
                event.prevent_default()
                event.stop()
                self.text = completed
                self.cursor_location = (0, len(completed))
                return
        await super()._on_key(event)
