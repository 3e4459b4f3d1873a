"""How counts and lists of calls read in messages: one definition, so no
message says "1 rounds" or "get_weather were" anywhere."""

from __future__ import annotations

from collections import Counter

__all__ = ["plural", "calls_phrase", "interrupted_note"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 round``, ``2 rounds``; ``many`` for irregular plurals."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def calls_phrase(names: list[str]) -> str:
    """Unfinished calls named once each, counted when a name repeats:
    ``get_weather``; ``get_weather, get_time``; ``2 get_weather calls``."""
    counts = Counter(names)
    return ", ".join(name if n == 1 else f"{n} {name} calls" for name, n in counts.items())


def interrupted_note(words: str, unfinished: list[str]) -> str:
    """The one-line interruption note: what happened, and which calls did not run."""
    if not unfinished:
        return f"Interrupted: {words}."
    verb, pronoun = ("was", "it was") if len(unfinished) == 1 else ("were", "they were")
    return f"Interrupted: {words} while {calls_phrase(unfinished)} {verb} being prepared; {pronoun} not run."
