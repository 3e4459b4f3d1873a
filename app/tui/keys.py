"""The chat screen's keys.

Every binding has an id, so ``[keys]`` in the config can rebind it (Textual
keymaps); the app checks the config's names against these ids.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

__all__ = ["CHAT_KEYS"]

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
