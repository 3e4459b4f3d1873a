"""Images on screen: how this terminal draws them, and the widgets that show
a message's attachments or a tool's images.

Why a module of its own: the choice of drawing is made once, before the app
starts (``probe``, or ``probing.Asking`` in a thread while the app is imported:
the command line's), because textual-image asks the terminal what it can do by
writing a query and reading the answer from stdin, which it can no longer do
once Textual reads stdin — and because that question must never be asked
under tests, CI or a pipe: without a terminal the mode is ``cells`` (our
half-block thumbnails) and textual-image is not even imported.
``CALLSTREAM_IMAGES`` (``auto``, ``kitty``, ``sixel``, ``cells``, ``off``)
overrides the choice.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import Widget

from widgets.attachment_chips import AttachmentChips

from ..stream.attachments import TOOL_IMAGE_REF, Attachment, tool_image_route
from .probing import Mode, ask

__all__ = ["Mode", "probe", "mode", "set_mode", "attachment_widgets", "tool_image_widgets"]

_mode: Mode = "cells"


def mode() -> Mode:
    return _mode


def set_mode(chosen: Mode) -> None:
    global _mode
    _mode = chosen


def probe() -> Mode:
    """Choose how images are drawn, once, before the app starts; the choice is kept.

    ``auto`` on a terminal asks it (``probing.ask``: whether it answers at all, then
    textual-image: sixel first, then the kitty protocol, as that library orders them);
    anything else is ``cells``."""
    set_mode(ask())
    return _mode


def attachment_widgets(attachments: Sequence[Attachment]) -> list[Widget]:
    """A message's chips, and each image drawn as this terminal can: inline
    pictures in kitty / sixel mode, half-block thumbnails on the chips in cells
    mode, chips alone when images are off."""
    items, drawn = list(attachments), _mode
    if drawn == "cells" or drawn == "off":
        return [AttachmentChips(items, images=drawn == "cells")]
    from widgets.inline_image import InlineImage

    out: list[Widget] = [AttachmentChips(items, images=False)]
    out += [InlineImage(item, drawn) for item in items if item.kind == "image"]
    return out


def tool_images(result: str | None) -> list[Attachment]:
    """The images a tool result names (kept in the data dir by digest) that are still there."""
    if not result or "(sent to the model as an image;" not in result:
        return []
    from ..files.paths import data_dir
    from ..store.attachfiles import AttachmentFiles

    files = AttachmentFiles(data_dir() / "attachments")
    found = []
    for digest in dict.fromkeys(TOOL_IMAGE_REF.findall(result)):
        item = files.load({"name": "tool image", "media_type": "image/png", "digest": digest})
        if item.data:
            found.append(_as_image(item))
    return found


def _as_image(item: Attachment) -> Attachment:
    """The kept bytes with their true type and pixels (checked as an attached file is)."""
    from ..files.attach import AttachError, from_bytes

    try:
        return from_bytes(item.data, item.name)
    except AttachError:
        return item  # drawn as damaged: its chip says so


def tool_image_widgets(result: str | None, dialect: str) -> list[Widget]:
    """Under a tool card: the images its result named, and how they reach the model on this wire."""
    from widgets.note import NoteBlock

    images = tool_images(result)
    if not images:
        return []
    return [*attachment_widgets(images), NoteBlock(f"The image: {tool_image_route(dialect)}.", "quiet")]
