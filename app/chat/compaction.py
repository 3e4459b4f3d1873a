"""Compaction (``/compact``, ``ask --compact``, ``compact = "auto"``): a conversation grown too long for
the model's window goes on from a summary, and nothing is lost.

The current model writes a summary of the older part of the path (everything before the last
``RECENT`` user messages), through an ordinary ``ChatSession`` that offers no tools and stores nothing.
The store then writes, in one transaction, a new branch after the last older entry: the summary as a
note entry (``kind = "summary"``, shown as a note, searched and exported like a message), followed by
copies of the recent entries. The original path stays in the tree (the entry after the cut has two
versions, ``‹1/2›``), with every turn, call and ledger claim it had.

What the model is told: ``history_of`` makes a summary stand for everything before it, so the next
request carries the summary plus the recent turns. What the ledger guards does not change: the older
turns are still on the path (above the summary), so a side effect that ran there and is asked for
again meets the same rule as before (``Approvals.decide``'s ``ran_before``, through ``ran_on_path``) —
and the summary names those calls with their results' gist, so the model knows they ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..rules.words import plural
from ..stream import TextBlock, ToolCallBlock
from ..stream.blocks import DISPATCHED
from ..stream.history import Entry
from ..stream.limits import one_line
from ..stream.preview import result_line, shown_result, visible_fields
from ..stream.usage import Usage, total

if TYPE_CHECKING:
    from ..store import StoredEntry, StoredTree
    from .session import ChatSession

__all__ = ["RECENT", "SUMMARY_REQUEST", "CompactionRefused", "Compacted", "split", "summary_note", "summarise",
           "compact"]

#: A tool's allow-lists (``Registry.display_specs``): the argument fields and result fields shown.
Display = Callable[[str], tuple[list[tuple[str, str]], list[tuple[str, str]]]]

#: How many of the last user messages (with everything after each) stay whole after the summary.
RECENT = 1

#: What the model is asked, after the older part of the conversation.
SUMMARY_REQUEST = (
    "Summarise the conversation so far for your own later use, so that it can continue from your summary "
    "alone: what the user wants, what was decided, the facts, names and numbers found (with their sources), "
    "and what is still open. Write notes, not a reply to the user; do not call any tool.")


class CompactionRefused(Exception):
    """Compaction did not happen; the message says why, and the conversation is unchanged."""


@dataclass(frozen=True, slots=True)
class Compacted:
    """A compaction done: the summary's entry, the new branch's last entry, how much was summarised,
    and what writing the summary cost."""

    summary: int
    last: int
    summarised: int
    kept: int
    usage: Usage | None
    model: str | None

    def words(self) -> str:
        return (f"Compacted: {plural(self.summarised, 'entry', 'entries')} summarised, the last "
                f"{plural(self.kept, 'entry', 'entries')} "
                "kept whole, on a new branch; the original path stays in the tree (‹1/2›), its calls in the "
                "ledger.")


def split(items: list[StoredEntry], recent: int = RECENT) -> tuple[list[StoredEntry], list[StoredEntry]]:
    """(the older part, the recent part) of a path: the recent part starts at its ``recent``-th last user
    message. Raises ``CompactionRefused`` when nothing older is there to summarise."""
    users = [i for i, item in enumerate(items) if getattr(item, "kind", None) == "user"]
    summaries = [i for i, item in enumerate(items) if getattr(item, "kind", None) == "summary"]
    since = [i for i in users if not summaries or i > summaries[-1]]
    if len(since) <= recent:
        raise CompactionRefused("Nothing to compact: the conversation since its start (or its last summary) is "
                                "no longer than what is kept whole.")
    cut = since[-recent]
    return items[:cut], items[cut:]


def _ran(items: list[StoredEntry]) -> list[ToolCallBlock]:
    """The calls of the older part that were handed to a tool (ran, failed, or of unknown outcome)."""
    return [block for item in items for block in getattr(item, "blocks", [])
            if isinstance(block, ToolCallBlock) and block.state in DISPATCHED and not block.provider_executed]


def summary_note(summary: str, older: list[StoredEntry], model: str | None, display: Display) -> str:
    """The note the new branch starts with: the model's summary, then each call that ran before it with
    its arguments and its result's gist — through the tool's display allow-lists, as a card shows them,
    since the note is shown, searched and exported too (the ledger keeps the whole)."""
    lines = [f"Summary of the earlier conversation ({plural(len(older), 'entry', 'entries')}, written by "
             f"{one_line(model or 'the model', 80)} when the conversation was compacted; the whole of it stays in "
             "the conversation's tree):", "", summary.strip()]
    calls = _ran(older)
    if calls:
        lines += ["", "Tool calls that already ran before this summary (their effects happened; do not run one "
                      "again unless the user asks for it again):"]
        for call in calls:
            shown, result_shown = display(call.name)
            fields = " · ".join(f"{label}: {value}" for label, value in visible_fields(call.arguments or {}, shown))
            gist = result_line(shown_result(call), result_shown if call.state == "ran" else [], 160)
            lines.append(f"- {call.name}" + (f" ({one_line(fields, 200)})" if fields else "")
                         + f" → {call.state}: {gist or 'no result recorded'}")
    return "\n".join(lines)


async def summarise(session: ChatSession, history: list[Entry]) -> tuple[str, Usage | None, str | None]:
    """The summary the session's current model writes of ``history``: (text, what it cost, who wrote it).
    Its own session offers no tools and stores nothing (the store keeps only the note)."""
    from .session import ChatSession

    writer = ChatSession(session.endpoint, session.registry, session.ledger, session.conversation, history,
                         retries=session.retries, max_rounds=1, timeouts=session.timeouts, offer_tools=False,
                         system=session.system, options=session.options, limits=session.limits,
                         backoff=session.backoff)
    writer.request_usage = session.request_usage
    try:
        done = await writer.send(SUMMARY_REQUEST)
    finally:
        await writer.aclose()
    usage = total(t.usage for t in writer.turns)
    text = "".join(b.text for t in writer.turns for b in t.blocks if isinstance(b, TextBlock)).strip()
    if done.status != "done" or not text:
        why = done.message or next((t.note for t in reversed(writer.turns) if t.note), None) or "no summary came"
        raise CompactionRefused(f"Not compacted: the summary could not be written ({one_line(why, 200)}); the "
                                "conversation is unchanged.")
    return text, usage, done.model


async def compact(session: ChatSession, store: Any, stored: StoredTree) -> Compacted:
    """Summarise the older part of ``stored``'s path (the one the session is on) and write the new
    branch; the caller puts the session at its end (``Runtime.show``)."""
    import uuid

    from ..store import history_of

    if session.busy:
        raise CompactionRefused("Not compacted: a turn is running.")
    older, recent = split(stored.items)
    session.busy = True  # nothing is sent meanwhile: the composer queues it
    try:
        text, usage, model = await summarise(session, history_of(older))
    finally:
        session.busy = False
    note = summary_note(text, older, model, session.registry.display_specs)
    last = store.add_summary(stored.id, note, older[-1].seq, uuid.uuid4().hex[:8], recent)
    return Compacted(last - len(recent), last, len(older), len(recent), usage, model)
