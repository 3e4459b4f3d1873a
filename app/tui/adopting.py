"""A live sitting's finished exchanges taken into the window's pages, as if read from the store.

Why: the window (``window.py``) bounds what a reopened conversation keeps
mounted, but the widgets a live sitting adds came after its last page and
belonged to no page, so none was dropped, none drawn light, and the sitting
was shown again from the store every few exchanges instead (``tree.LIVE_MOST``:
a reset and a rebuild of a page or two, a quarter of a second at full speed,
and between two of them up to twelve exchanges of widgets mounted, which each
frame and layout paid for). Once an exchange is followed by another, nothing
changes it any more (Ctrl+R, an approval and the usage line act on the last
one): its widgets are then what a reopen would build for its stored entries,
so they are registered as that exchange of its page (``Window.adopt``) and
the window treats them as it treats a page it read, and when the view follows
the end keeps one screen above it and drops the pages beyond (``Window._trim``).

The exchange still going on stays as it is, after the last page. Anything
that does not line up (the widgets' user messages are not the store's user
entries of the path, in order; an entry of another kind; another path) is
not taken: the sitting is then shown again from the store when crowded, as
before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from textual.widget import Widget

from widgets.user_message import UserMessage

from .paging import Run

if TYPE_CHECKING:
    from ..store.pages import OutlineEntry
    from ..store.transcripts import Store
    from .window import Window

__all__ = ["adopt"]


def adopt(window: Window, store: Store, conversation: str, head: int | None, children: Sequence[Widget],
          entries: Mapping[int, Widget | int]) -> bool:
    """The finished exchanges among ``children`` (the transcript's, in order) after the window's pages,
    registered as the exchanges of the path to ``head`` they show (``entries``: the transcript's entry
    number → its user message widget). False: nothing was taken."""
    if head is None or window.detached or (window.active and (window.store is not store
                                                              or window.conversation != conversation)):
        return False
    known = window.outline if window.active else []
    outline = store.outline_after(conversation, head, known) if known else None
    if outline is None:
        outline = store.outline(conversation, head)
        if [entry.seq for entry in outline[:len(known)]] != [entry.seq for entry in known]:
            return False  # another path: shown again from the store
    last_user = next((i for i in range(len(outline) - 1, len(known) - 1, -1) if outline[i].kind == "user"), None)
    if last_user is None or last_user == len(known):
        return False  # no exchange finished since
    added = outline[len(known):last_user]
    groups = _exchanges(added)
    if groups is None:
        return False
    widgets = _live_exchanges(window, children, [entries.get(group[0].seq) for group in groups])
    if widgets is None:
        return False
    seqs = [entry.seq for entry in added]
    stored = {item.seq: item for item in store.page(conversation, seqs)}
    if len(stored) != len(seqs):
        return False
    runs = []
    for group, shown in zip(groups, widgets, strict=True):
        items = [stored[entry.seq] for entry in group]
        for item, entry in zip(items, group, strict=True):
            item.siblings = entry.siblings
        runs.append(Run(shown, items, [entry.seq for entry in group]))
    window.adopt(store, conversation, outline[:last_user], runs)
    return True


def _exchanges(added: Sequence[OutlineEntry]) -> list[list[OutlineEntry]] | None:
    """``added`` cut into exchanges (each a user message and the turns after it); None: an entry of
    another kind (a note the store keeps), or turns before any user message."""
    groups: list[list[OutlineEntry]] = []
    for entry in added:
        if entry.kind == "user":
            groups.append([entry])
        elif entry.kind != "turn" or not groups:
            return None
        else:
            groups[-1].append(entry)
    return groups


def _live_exchanges(window: Window, children: Sequence[Widget], users: list[Widget | int | None]
                    ) -> list[list[Widget]] | None:
    """The widgets of each exchange whose user message is ``users[i]``: from it to the next user message
    among the children after the window's last page (what comes before the first, after a page, goes
    with it: a note the page does not hold is dropped with it, as a reset would); None when the
    messages are not those, in that order, followed by the one of the exchange going on."""
    mounted = window.mounted.get(len(window.pages) - 1) if window.active else None
    start = 0
    if mounted:
        try:
            start = children.index(mounted[-1]) + 1
        except ValueError:
            return None
    live = children[start:]
    at = [i for i, widget in enumerate(live) if isinstance(widget, UserMessage)]
    if len(at) != len(users) + 1 or any(live[i] is not user for i, user in zip(at, users, strict=False)):
        return None
    cuts = [0 if mounted else at[0], *at[1:]]
    return [list(live[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
