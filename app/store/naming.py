"""Which stored conversation a piece of text names: the one rule every
command that takes a conversation id follows (a whole id, or the start of
exactly one), and the errors that say why text names none or several."""

from __future__ import annotations

import time
from collections.abc import Iterable

from ..rules.ids import check_id
from ..stream.limits import one_line

__all__ = ["UnresolvedConversation", "ConversationNotFound", "AmbiguousConversation", "resolve_among", "pick"]

#: How many of the conversations an ambiguous prefix names are listed.
_LISTED = 10



class UnresolvedConversation(LookupError):
    """An id, or the start of one, that names no stored conversation or more
    than one; the message says which (several lines for an ambiguous one)."""


class ConversationNotFound(UnresolvedConversation):
    pass


class AmbiguousConversation(UnresolvedConversation):
    def __init__(self, message: str, matches: list[str]) -> None:
        super().__init__(message)
        self.matches = matches


def resolve_among(text: str, known: Iterable[str]) -> str:
    """``Store.resolve`` over ids known without a store (a ledger's)."""
    check_id(text)
    return pick(text, [], known)


def pick(text: str, stored: list[tuple[str, str, float | None]], also: Iterable[str]) -> str:
    """The one conversation ``text`` is the id or the start of, among
    ``stored`` (id, title, updated; newest first) and ``also``."""
    others = [known for known in dict.fromkeys(also) if known.startswith(text)]
    if text in others:
        return text
    seen = {found for found, _, _ in stored}
    matches = stored + [(known, "", None) for known in others if known not in seen]
    if len(matches) == 1:
        return matches[0][0]
    if not matches:
        raise ConversationNotFound(f"no stored conversation {text!r} (callstream transcripts lists them)")
    lines = [f"{text!r} is the start of {len(matches)} conversations' ids; give more of the one you mean:"]
    for found, title, updated in matches[:_LISTED]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(updated)) if updated is not None else "(in the ledger)"
        lines.append(f"  {found}  {when}  {one_line(title or '(untitled)', 60)}")
    if len(matches) > _LISTED:
        lines.append(f"  … and {len(matches) - _LISTED} more")
    raise AmbiguousConversation("\n".join(lines), [found for found, _, _ in matches])

