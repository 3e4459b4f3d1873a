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
from ..stream.identical import same_start

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
    An image whose file is gone, or fails the attach check, stays a line.

    Called before every request: a history that begins with all the entries
    the last call looked at is looked at only past them, and at the results
    whose image files were missing then (a result's text never changes in
    place, ``history.changed``); looking at every result's text each request
    grew with the conversation (``make bench-long``'s live sitting)."""
    global _looked
    last = _looked  # (read once: another session's call replaces it whole)
    start, waiting = 0, []
    if last is not None and same_start(history, last[0]) == len(last[0]):
        start, waiting = len(last[0]), last[1]
    still = [index for index in [*waiting, *range(start, len(history))] if not _given_images(history[index])]
    _looked = (list(history), still)


#: The entries the last ``with_tool_images`` looked at, and those of them still waiting for an image file.
_looked: tuple[list[Entry], list[int]] | None = None


def _given_images(entry: Entry) -> bool:
    """Whether ``entry`` needs nothing more: not a result naming images, or one that has them now."""
    if not isinstance(entry, ToolResult) or entry.images or "(sent to the model as an image;" not in entry.content:
        return True
    from ..files.paths import data_dir

    for digest in TOOL_IMAGE_REF.findall(entry.content):
        try:
            data = (data_dir() / "attachments" / digest[:2] / digest).read_bytes()
            entry.images.append(from_bytes(data, f"{entry.name} image"))
            changed()  # (its request item, built before, is built again)
        except (OSError, AttachError):
            continue
    return bool(entry.images)
