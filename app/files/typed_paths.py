"""A path as a person types or pastes it: Tab completion for ``/attach
PATH``, and a pasted or dropped file path recognised as one.

Why hand-written: a completer of one path against one folder listing is a few
lines of ``os.scandir``; the libraries that do it (prompt_toolkit's
``PathCompleter``) bring a whole line editor we do not use. Terminals differ
in how they paste a dropped file: a bare path, one in quotes, spaces escaped
with backslashes, or a ``file://`` URI; ``pasted_path`` takes each.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["complete_path", "pasted_path"]

#: A folder with more entries than this is not listed for a Tab (a slow network mount, /proc).
_MAX_ENTRIES = 5000


def complete_path(typed: str) -> str | None:
    """The typed path completed as far as it is unambiguous: a folder with a
    ``/`` after it, a file whole, the common start of several; None when Tab has
    nothing to add. ``~`` is kept as typed."""
    folder_part, _, start = typed.rpartition("/")
    folder_text = folder_part + "/" if "/" in typed else ""
    folder = Path(os.path.expanduser(folder_text or "."))
    names: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for n, entry in enumerate(entries):
                if n >= _MAX_ENTRIES:
                    return None
                if entry.name.startswith(start) and (start.startswith(".") or not entry.name.startswith(".")):
                    names.append(entry.name + ("/" if entry.is_dir() else ""))
    except OSError:
        return None
    if not names:
        return None
    common = os.path.commonprefix(names)
    if len(common) <= len(start):
        return None
    return folder_text + common


def pasted_path(text: str) -> Path | None:
    """The file a paste names, when the whole paste is one path to a file that
    exists (a dropped file); None for anything else, which stays text."""
    text = text.strip()
    if not text or "\n" in text or len(text) > 4096:
        return None
    if text.startswith("file://"):
        text = unquote(urlparse(text).path)
    else:
        try:
            words = shlex.split(text)
        except ValueError:
            return None
        if len(words) != 1:
            return None
        text = words[0]
    path = Path(os.path.expanduser(text))
    if not path.is_absolute() and not text.startswith("."):
        return None  # a bare word pasted is text, even if a file of that name is here
    try:
        return path if path.is_file() else None
    except OSError:
        return None
