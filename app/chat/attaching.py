"""Attachments made ready for one provider before anything is sent.

An image over the provider's size or pixel limit is downscaled
(``files.attach.fit``, with a note the card shows); whatever still breaks a
limit (a type the provider does not take, too many, too much in one request)
is refused here with its sentences, before the message is stored or any
byte goes out — never a provider 400 after a long upload.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..files.attach import AttachError, fit, from_bytes
from ..stream.attachments import TOOL_IMAGE_REF, Attachment, problems
from ..stream.history import Entry, ToolResult, User, changed

__all__ = ["AttachError", "Attachment", "ready_for", "with_tool_images"]


def ready_for(dialect: str, attachments: Sequence[Attachment], history: Sequence[Entry] = ()) -> list[Attachment]:
    """The attachments as they will be sent; the history's own count toward
    the request's totals, since they are sent again with it. Called by the
    session before a user message is stored or sent."""
    if not attachments:
        return []
    earlier = [a for entry in history if isinstance(entry, User) for a in entry.attachments]
    images = sum(1 for item in [*earlier, *attachments] if item.kind == "image")
    fitted = [fit(item, dialect, images) for item in attachments]
    found = problems(dialect, earlier + fitted)
    if found:
        raise AttachError(" ".join(found) + " Nothing was sent.")
    return fitted


def with_tool_images(history: list[Entry]) -> None:
    """Give each tool result the images it names (``TOOL_IMAGE_REF``: an MCP
    image kept in the data dir) before a request is built, so the model sees
    what its tool returned: inside the result where the wire takes images
    there (Anthropic), else right after the results (the dialects decide).
    An image whose file is gone, or fails the attach check, stays a line."""
    from ..files.paths import data_dir

    for entry in history:
        if not isinstance(entry, ToolResult) or entry.images or "(sent to the model as an image;" not in entry.content:
            continue
        for digest in TOOL_IMAGE_REF.findall(entry.content):
            try:
                data = (data_dir() / "attachments" / digest[:2] / digest).read_bytes()
                entry.images.append(from_bytes(data, f"{entry.name} image"))
                changed()  # (its request item, built before, is built again)
            except (OSError, AttachError):
                continue
