"""What request building shares across dialects: turning history entries
into the text a provider is shown. Pure data, like the rest of the core."""

from __future__ import annotations

from typing import Any

from ..history import Assistant, ToolResult
from ..limits import loads

__all__ = ["assistant_text", "result_value", "tool_images_words"]


def assistant_text(entry: Assistant) -> str:
    """The assistant's prose, with an interruption note as its last line.

    The note is how the next request learns that a call never ran: no call
    and no result are invented for it (brief chapter 8).
    """
    if entry.note:
        return (entry.text.rstrip() + "\n\n" if entry.text.strip() else "") + f"[{entry.note}]"
    return entry.text


def result_value(content: str) -> Any:
    """A tool result as a JSON value where it is one (Gemini wants objects)."""
    try:
        return loads(content)
    except ValueError:
        return content


def tool_images_words(results: list[ToolResult]) -> str:
    """The text that comes with tool images sent in a user-side message, on a
    wire whose tool results take no images: whose they are."""
    names = ", ".join(dict.fromkeys(r.name for r in results if r.images))
    return f"[The image{'s' if sum(len(r.images) for r in results) > 1 else ''} returned by {names}, " \
           "which this provider takes only from the user side.]"
