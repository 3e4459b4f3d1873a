"""How much room is left in the model's context window: what the next request will use, against the
model's input limit (``rules.prices.PriceBook.window``). The one estimate the status line's meter,
``/compact``'s advice and ``ask --max-cost`` all read.

The next request carries the whole path. Its size is the provider's own count where one exists —
the input of the last turn on the path that reported one, plus that turn's reply (it goes back as
history; reasoning does not) — and an estimate for what was added after it (tool results, the next
message): ``CHARS_PER_TOKEN`` characters a token, the rule of thumb every provider's tokenizer
documentation gives for English text and JSON. With no count at all, the whole path is estimated so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..stream.history import Assistant, Entry, ToolResult, ToolSpec, User
from ..stream.jsonwrite import text_size
from ..stream.usage import Usage

__all__ = ["Room", "CHARS_PER_TOKEN", "WARN_AT", "estimate_tokens", "next_request", "room_words"]

#: Characters per token, for what no provider has counted yet.
CHARS_PER_TOKEN = 4

#: The meter turns to a warning at this share of the window (and says "full" from 100 %).
WARN_AT = 0.8


@dataclass(frozen=True, slots=True)
class Room:
    """The next request's size in tokens (``counted``: how much of it the provider counted), and the
    model's window (``None``: unknown, then no share is said)."""

    used: int
    window: int | None
    counted: int = 0

    @property
    def share(self) -> float | None:
        return self.used / self.window if self.window else None

    @property
    def warning(self) -> bool:
        share = self.share
        return share is not None and share >= WARN_AT


def estimate_tokens(entries: Iterable[Entry], system: str | None = None, tools: Sequence[ToolSpec] = ()) -> int:
    """What the provider has not counted: characters over ``CHARS_PER_TOKEN``, rounded up."""
    chars = len(system or "")
    for entry in entries:
        if isinstance(entry, User):
            chars += len(entry.text)
        elif isinstance(entry, Assistant):
            chars += len(entry.text) + len(entry.note or "")
            chars += sum(len(c.name) + text_size(c.arguments) for c in entry.calls)
        elif isinstance(entry, ToolResult):
            chars += len(entry.content) + len(entry.name)
    for spec in tools:
        chars += len(spec.name) + len(spec.description) + text_size(spec.parameters)
    return -(-chars // CHARS_PER_TOKEN)


def next_request(history: Sequence[Entry], path_usage: Sequence[Usage | None], system: str | None = None,
                 tools: Sequence[ToolSpec] = ()) -> tuple[int, int]:
    """(tokens the next request will carry, how many of them a provider counted). ``path_usage``: the
    usage of each turn on the path, oldest first (one ``Assistant`` in ``history`` each)."""
    # an input count of 0 is no count (every request carries tokens; a server that says 0 did not count)
    known = [i for i, u in enumerate(path_usage) if u is not None and u.input]
    answers = [i for i, e in enumerate(history) if isinstance(e, Assistant)]
    if not known or len(answers) < len(path_usage):
        return estimate_tokens(history, system, tools), 0
    last = known[-1]
    usage = path_usage[last]
    assert usage is not None and usage.input is not None
    reply = max((usage.output or 0) - (usage.reasoning or 0), 0)
    anchor = answers[len(answers) - (len(path_usage) - last)]
    counted = usage.input + reply
    return counted + estimate_tokens(history[anchor + 1:]), counted


def path_usage(session: Any) -> list[Usage | None]:
    """The usage of each turn the next request tells, oldest first: the stored path's, then what this
    session ran (a re-issued turn counts once, as it last ran). After a compaction's summary only the
    turns after it are told, and a count made before it (a recent turn's copy) measured the whole old
    history: it is no count of this one (``None``)."""
    stored = getattr(session, "stored", None)
    items = stored.items if stored is not None else []
    cut = max((i for i, item in enumerate(items) if getattr(item, "kind", None) == "summary"), default=-1)
    before = {item.turn for item in items[:cut + 1] if hasattr(item, "turn")}
    stale: set[int] = set()
    if cut >= 0 and stored is not None:
        stale = {e.turn for e in stored.tree if hasattr(e, "turn") and e.seq < items[cut].seq}
    turns: dict[int, Usage | None] = {}
    for item in items[cut + 1:]:
        if hasattr(item, "turn"):
            turns[item.turn] = None if item.turn in stale else item.usage
    for record in session.turns:
        if record.index not in before:
            turns.pop(record.index, None)
            turns[record.index] = None if record.index in stale else record.usage
    return [usage for index, usage in turns.items() if index in session.path_turns]


def room_of(session: Any, window: int | None) -> Room:
    """The session's next request against ``window``."""
    tools = session.registry.specs() if session.offer_tools else []
    used, counted = next_request(session.history, path_usage(session), session.system, tools)
    return Room(used, window, counted)


def _short(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M".replace(".0M", "M")
    if tokens >= 1000:
        return f"{tokens / 1000:.0f}k"
    return str(tokens)


def room_words(room: Room | None) -> str:
    """The meter: ``context 12% of 128k``; near the limit ``context 85% of 128k — /compact``; past it
    ``context full (131k of 128k) — /compact``; "" where the window is unknown."""
    if room is None or not room.window:
        return ""
    share = room.used / room.window
    if share >= 1:
        return f"context full ({_short(room.used)} of {_short(room.window)}) — /compact"
    words = f"context {share:.0%} of {_short(room.window)}"
    return words + " — /compact" if room.warning else words
