"""The chat screen's keys.

Every binding has an id, so ``[keys]`` in the config can rebind it (Textual
keymaps); the app checks the config's names against these ids. The approval
keys are the screen's too, but only while a call awaits an answer (the
screen's ``check_action``): then they answer it wherever the focus is, and
otherwise they type. They are the card's own letters, shown on it, and not
rebound.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

__all__ = ["APPROVAL_KEYS", "APPROVAL_LETTERS", "CHAT_KEYS"]

CHAT_KEYS: list[BindingType] = [
    Binding("escape", "cancel_turn", "Cancel", show=True, id="cancel"),
    Binding("ctrl+r", "retry", "Retry", show=True, id="retry"),
    Binding("ctrl+y", "copy_picker", "Copy", show=True, priority=True, id="copy"),
    Binding("ctrl+o", "open_transcripts", "Transcripts", show=True, id="transcripts"),
    Binding("ctrl+e", "edit_in_editor", "Editor", show=False, priority=True, id="editor"),
    Binding("pageup", "page(-1)", "Page up", show=False, priority=True, id="page-up"),
    Binding("pagedown", "page(1)", "Page down", show=False, priority=True, id="page-down"),
    Binding("home", "home", "Top", show=False, priority=True, id="top"),
    Binding("end", "end", "Latest", show=False, priority=True, id="latest"),
    Binding("alt+up", "select(-1)", "Select earlier", show=False, priority=True, id="select-earlier"),
    Binding("alt+down", "select(1)", "Select later", show=False, priority=True, id="select-later"),
    Binding("alt+left", "sibling(-1)", "Previous version", show=False, priority=True, id="previous-version"),
    Binding("alt+right", "sibling(1)", "Next version", show=False, priority=True, id="next-version"),
    Binding("alt+e", "edit", "Edit message", show=False, priority=True, id="edit"),
    Binding("ctrl+g", "regenerate", "Regenerate", show=False, priority=True, id="regenerate"),
    Binding("ctrl+q", "app.quit", "Quit", show=True, priority=True, id="quit"),
]

#: y c a n r f: answer the waiting call whatever has the focus (active only while one waits).
APPROVAL_KEYS: list[BindingType] = [
    Binding("y", "approval('once')", "Run once", show=False, priority=True),
    Binding("c", "approval('conversation')", "Allow for this conversation", show=False, priority=True),
    Binding("a", "approval('always')", "Always allow", show=False, priority=True),
    Binding("n", "approval('deny')", "Deny", show=False, priority=True),
    Binding("r", "approval('reason')", "Deny with a reason", show=False, priority=True),
    Binding("f", "approval('arguments')", "Full arguments", show=False, priority=True),
]

#: The keys of APPROVAL_KEYS.
APPROVAL_LETTERS = frozenset(b.key for b in APPROVAL_KEYS if isinstance(b, Binding))
