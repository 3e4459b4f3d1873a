"""An image a tool returned, kept so the model can see it.

Why here, below both kinds of tool: an MCP tool's image content
(``mcp/results.py``) and a command tool that declares ``output = "image"``
(``command.py``) end the same way. The bytes are checked as an attached file
is (``files.attach.from_bytes``: type from the bytes, bombs and truncated
images refused), kept once by hash in the data dir, and the result is one
text line naming the digest (``stream.attachments.tool_image_line``): the
ledger, the card and the transcript keep that line as any result, and the
next request sends the image itself (``chat.attaching.with_tool_images``), in
the tool result or after it as the dialect takes it.
"""

from __future__ import annotations

from ..files.attach import AttachError, from_bytes
from ..stream.attachments import Attachment, size_words, tool_image_line

__all__ = ["keep_image", "image_result"]


def keep_image(data: bytes, name: str = "tool image") -> Attachment:
    """The image checked and kept in the data dir; AttachError (its sentence) when it is not a whole image."""
    from ..files.paths import data_dir
    from ..store.attachfiles import AttachmentFiles

    item = from_bytes(data, name)
    if item.kind != "image":
        raise AttachError(f"{name}: is not an image (PNG, JPEG, GIF, WebP).")
    AttachmentFiles(data_dir() / "attachments").put(item)
    return item


def image_result(item: Attachment) -> str:
    """The result line that names a kept image."""
    return tool_image_line(item.media_type, size_words(item.size), item.digest)
