"""What a reply cost in tokens, as the provider reported it.

Every wire reports counts that are cumulative for the reply (OpenAI chat's
last chunk, Responses' ``response.completed``, Anthropic's ``message_delta``
after the input in ``message_start``, Gemini's ``usageMetadata`` on every
chunk), so a later report replaces an earlier one field by field
(``merged``). A count the wire never gave stays ``None``: nothing here
invents a 0, and a stream without usage has ``None`` for its usage, which
every display shows as no numbers at all.

The fields mean the same in every dialect, so sums across a ``/model``
switch add like to like:

- ``input``: the prompt's tokens, cached ones included (Anthropic counts its
  cache reads and writes apart from ``input_tokens``: they are added in;
  Gemini's tool-use prompt tokens too);
- ``output``: the reply's tokens, reasoning included (Gemini counts its
  thoughts apart from the candidates: they are added in);
- ``cached``: of ``input``, those read from the provider's cache;
- ``reasoning``: of ``output``, those spent thinking.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Usage", "count", "total", "usage_words", "exchange_cost", "Costed", "FIELDS", "NOT_REPORTED"]

#: What is shown instead of numbers where the provider reported none.
NOT_REPORTED = "no token counts from the provider"

#: The counts a usage holds, in the order they are shown and stored.
FIELDS = ("input", "output", "cached", "reasoning")

#: A count above this is not a token count (a damaged record, a hostile import).
_MAX = 10**15


def count(value: Any) -> int | None:
    """A token count from the wire: a whole number from 0 up, else ``None``
    (a string, a bool, a float, a negative number say nothing)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX:
        return None
    return value


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


@dataclass(frozen=True, slots=True)
class Usage:
    input: int | None = None
    output: int | None = None
    cached: int | None = None
    reasoning: int | None = None

    @property
    def known(self) -> bool:
        """Whether the provider said anything at all."""
        return any(getattr(self, name) is not None for name in FIELDS)

    def merged(self, later: Usage) -> Usage:
        """A later cumulative report over this one: its counts win, its gaps keep ours."""
        return Usage(*(getattr(later, n) if getattr(later, n) is not None else getattr(self, n) for n in FIELDS))

    def __add__(self, other: Usage) -> Usage:
        """Two requests together (the steps of a tool loop, the turns of a
        conversation): a field is ``None`` only where neither said it."""
        return Usage(*(_add(getattr(self, n), getattr(other, n)) for n in FIELDS))

    def to_dict(self) -> dict[str, int]:
        """The counts the provider gave (absent ones left out, never written as 0)."""
        return {n: v for n in FIELDS if (v := getattr(self, n)) is not None}

    @classmethod
    def from_dict(cls, value: Any) -> Usage | None:
        """The inverse of ``to_dict``, for stored and imported records: a field
        that is not a count is dropped; ``None`` when nothing is left."""
        if not isinstance(value, dict):
            return None
        counts = [count(value.get(n)) for n in FIELDS]
        return cls(*counts) if any(c is not None for c in counts) else None


def total(usages: Iterable[Usage | None]) -> Usage | None:
    """The sum of the reports that exist; ``None`` when none does. Each count is summed where it
    was said (``None`` only where no report said it), as ``+`` adds two; in one pass, without a
    ``Usage`` made per report: a reopened conversation sums every turn of every branch."""
    sums: list[int | None] = [None] * len(FIELDS)
    known = False
    for usage in usages:
        if usage is None:
            continue
        for i, name in enumerate(FIELDS):
            value = getattr(usage, name)
            if value is not None:
                known = True
                held = sums[i]
                sums[i] = value if held is None else held + value
    return Usage(*sums) if known else None


def _n(value: int) -> str:
    return f"{value:,}"


def usage_words(usage: Usage | None, brief: bool = False) -> str:
    """``tokens 1,234 in · 56 out`` (with the cached and reasoning parts where the
    provider gave them, unless ``brief``); ``""`` when it reported nothing, so no
    number is shown."""
    if usage is None or not usage.known:
        return ""
    parts = []
    if usage.input is not None:
        parts.append(f"{_n(usage.input)} in" + (f" ({_n(usage.cached)} cached)" if usage.cached and not brief
                                                  else ""))
    elif usage.cached is not None:
        parts.append(f"{_n(usage.cached)} cached in")
    if usage.output is not None:
        parts.append(f"{_n(usage.output)} out" + (f" ({_n(usage.reasoning)} reasoning)"
                                                   if usage.reasoning and not brief else ""))
    elif usage.reasoning is not None:
        parts.append(f"{_n(usage.reasoning)} reasoning out")
    return "tokens " + " · ".join(parts)


class Costed(Protocol):
    """A turn as far as its cost goes (a live turn record, a stored turn)."""

    @property
    def usage(self) -> Usage | None: ...

    @property
    def model(self) -> str | None: ...


def exchange_cost(turns: Sequence[Costed]) -> tuple[Usage | None, str | None]:
    """What one exchange (a prompt and every request of its tool loop) cost:
    the turns' usage summed, and the model that answered last (``None`` where
    none was recorded)."""
    return total(t.usage for t in turns), next((t.model for t in reversed(turns) if t.model), None)
