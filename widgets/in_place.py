"""Updating a widget's text without laying the whole screen out again.

``Static.update`` asks for a layout by default, and a layout measures every
widget in the conversation. Most updates while a reply streams keep the
widget's height: a live paragraph that grew by a few words on its last line,
a card's "receiving 1.2 MB", a field that stays one line. Those only need
the widget repainted; a height that changed still lays out. A hidden line
(a card's empty result or note) takes no room at all: its update never lays
out (showing it does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.visual import Visual
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.css.styles import RulesMap

__all__ = ["update_in_place"]


def update_in_place(widget: Static, content: Visual) -> None:
    """``widget.update(content)``, with a layout only when the height at the
    widget's current width changes (or the width follows the content, or the
    widget has not been laid out yet)."""
    widget.update(content, layout=not _same_height(widget, content))


def _same_height(widget: Static, content: Visual) -> bool:
    if widget.is_mounted and not widget.display:
        return True  # hidden: it takes no room whatever it holds (showing it lays it out)
    width = widget.content_size.width
    if width <= 0 or not widget.is_mounted:
        return False
    declared = widget.styles.width
    if declared is not None and declared.is_auto:
        return False
    # a widget's styles are the rules a visual is measured with (as Textual's own Widget passes them)
    rules = cast("RulesMap", widget.styles)
    return content.get_height(rules, width) == widget.content_size.height
