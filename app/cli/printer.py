"""How ``ask`` and ``replay --headless`` print a conversation as it happens.

Prose is printed as it streams; each call gets one line once it reaches a
terminal state (tool, state, its allow-listed fields, a one-line result);
attempt failures and interruption notes go to stderr. Everything printed
that came from the model or a tool is made inert first.

With ``markdown=True`` (stdout is a terminal) prose is rendered by Rich a
paragraph at a time: a paragraph is printed once it is complete (a blank line
outside a code fence), so nothing printed is ever redrawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..chat.events import AttemptFailed, BlockGrew, BlockOpened, CallState, ChatEvent, Notice, TurnSettled, UserSent
from ..stream import TERMINAL_STATES, ToolCallBlock
from ..stream.attachments import describe
from ..stream.inert import inert
from ..stream.preview import result_line, shown_result, visible_fields

if TYPE_CHECKING:
    from ..chat.session import ChatSession
    from ..tools.registry import Registry

__all__ = ["call_line", "result_summary", "Printer"]


def result_summary(registry: Registry, call: ToolCallBlock, limit: int = 100) -> str:
    """One line for a call's result, through the tool's result allow-list."""
    tool = registry.get(call.name)
    spec = [(f.path, f.label) for f in tool.result_display] if tool is not None and call.state == "ran" else []
    return result_line(shown_result(call), spec, limit)


def call_line(registry: Registry, call: ToolCallBlock) -> str:
    tool = registry.get(call.name)
    display = [(f.path, f.label) for f in tool.display] if tool else []
    fields = visible_fields(call.arguments or {}, display, 60) if call.arguments is not None else []
    parts = [f"{call.name or '(no name)'} · {call.state}" + (" (already ran; result from the ledger)"
                                                              if call.reused else "")]
    parts += [f"{label}: {value}" for label, value in fields]
    line = "  ⚙ " + " · ".join(parts)
    if call.result:
        line += "\n    → " + result_summary(registry, call)
    if call.other_branch is not None and not call.reused:  # a side effect repeated: what it did there (as export says)
        spec = [(f.path, f.label) for f in tool.result_display] if tool is not None else []
        line += "\n    ⚠ ran on another branch: " + result_line(call.other_branch, spec, 100)
    return inert(line)


def complete_paragraphs(text: str) -> int:
    """How much of ``text`` is whole paragraphs: up to the last blank line
    that is not inside a code fence (0 when there is none yet)."""
    cut = 0
    fenced = False
    position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not stripped and not fenced and line.endswith("\n"):
            cut = position
    return cut


class Printer:
    def __init__(self, session: ChatSession, out: TextIO, err: TextIO, markdown: bool = False) -> None:
        self.session = session
        self.out = out
        self.err = err
        self.printed: set[tuple[int, int, int]] = set()
        self.at_line_start = True
        self.markdown = markdown
        self._prose: list[str] = []

    def __call__(self, event: ChatEvent) -> None:
        if isinstance(event, BlockGrew):
            record = self.session.turns[-1]
            block = record.blocks[event.index] if event.index < len(record.blocks) else None
            if block is not None and block.type == "text" and event.delta:
                if self.markdown:
                    self._prose.append(event.delta)
                    self._render(final=False)
                else:
                    self._write(inert(event.delta))
        elif isinstance(event, UserSent):
            for item in event.attachments:  # what was attached, as sent (a downscale said)
                note = f" — {item.note}" if item.note else ""
                print(inert(f"  + {describe(item)}{note}"), file=self.err)
        elif isinstance(event, BlockOpened):
            self._render(final=True)
            if event.index > 0 and event.block.type == "text" and not self.at_line_start:
                self._write("\n")
        elif isinstance(event, CallState):
            self._render(final=True)
            record = self.session.turns[-1]
            call = record.blocks[event.index]
            key = (event.turn, record.attempts, event.index)
            if isinstance(call, ToolCallBlock) and call.state in TERMINAL_STATES and key not in self.printed:
                self.printed.add(key)
                self._newline()
                self._write(call_line(self.session.registry, call) + "\n")
        elif isinstance(event, AttemptFailed):
            self._prose.clear()  # the retry's prose replaces the failed attempt's
            self._newline()
            print(inert(f"  ! {event.message}"), file=self.err, flush=True)
        elif isinstance(event, Notice):
            self._newline()
            print(inert(f"  ! {event.message}"), file=self.err, flush=True)
        elif isinstance(event, TurnSettled):
            self._render(final=True)
            self._newline()
            if event.note:
                print(inert(f"  ! {event.note}"), file=self.err, flush=True)

    def _render(self, final: bool) -> None:
        if not self._prose:
            return
        text = "".join(self._prose)
        cut = len(text) if final else complete_paragraphs(text)
        if not cut:
            return
        self._prose = [text[cut:]] if text[cut:] else []
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=self.out, force_terminal=True, soft_wrap=False).print(Markdown(inert(text[:cut])))
        self.out.flush()
        self.at_line_start = True

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        if text:
            self.at_line_start = text.endswith("\n")

    def _newline(self) -> None:
        if not self.at_line_start:
            self._write("\n")
