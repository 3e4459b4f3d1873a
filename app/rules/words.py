"""How counts and lists of calls read in messages: one definition, so no
message says "1 rounds" or "get_weather were" anywhere; and the words a call
of unknown outcome is told with, wherever that outcome is found (the
dispatcher, a reopened turn the process did not live to finish)."""

from __future__ import annotations

from collections import Counter

__all__ = ["plural", "calls_phrase", "interrupted_note", "UNKNOWN_ADVICE", "UNKNOWN_OUTCOME", "CANCELLED_UNKNOWN"]

UNKNOWN_ADVICE = ("Its outcome is unknown: do not assume it succeeded or failed, and do not repeat it without "
                  "asking the user.")
#: A call claimed in the ledger with no result recorded: the program stopped while it ran.
UNKNOWN_OUTCOME = ("Error: this call was started earlier but no result was recorded (the program stopped while it "
                   "ran). " + UNKNOWN_ADVICE)
#: A side-effecting call cancelled while it ran.
CANCELLED_UNKNOWN = ("Error: this call was cancelled while it ran, so it may or may not have happened. "
                     + UNKNOWN_ADVICE)


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
