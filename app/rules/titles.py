"""A conversation's title: the one rule for what one may be (``transcripts
rename``, the transcripts screen's rename), kept apart from the store so the
command line's help can quote it without opening anything."""

from __future__ import annotations

__all__ = ["TITLE_LIMIT", "clean_title"]

#: A title is one line of at most this many characters.
TITLE_LIMIT = 200


def clean_title(text: str) -> str:
    """``text`` as a title (whitespace runs, newlines included, become one
    space), or a ``ValueError`` saying what is wrong with it."""
    line = " ".join(text.split())
    if not line:
        raise ValueError("a title needs at least one character that is not a space")
    if len(line) > TITLE_LIMIT:
        raise ValueError(f"a title is at most {TITLE_LIMIT} characters (this one has {len(line)})")
    return line
