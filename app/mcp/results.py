"""An MCP ``CallToolResult`` as callstream's result text.

Text content is the result. Image, audio and resource content is never
pasted into the result (a base64 blob is no use to a card or a model): each
becomes one inert line saying its kind, size and mime type. A whole image is
also kept in the data dir by hash and its line names it, so the next request
sends the image itself (``stream.attachments.TOOL_IMAGE_REF``). ``structuredContent``
is kept, as JSON after the text, when the text does not already say it.
``isError`` makes the call a failed one, its text the message.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from ..stream.attachments import Attachment
from ..stream.limits import loads
from ..stream.resource_lines import link_line, resource_head
from ..tools.images import image_result
from ..tools.images import keep_image as _keep

__all__ = ["MappedResult", "map_result", "keep_image"]


@dataclass(slots=True)
class MappedResult:
    text: str
    is_error: bool
    structured: Any = None


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _human(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MB"


def keep_image(data: str) -> Attachment | None:
    """An image the tool (or a resource) returned as base64, kept for the next request
    (``tools.images``); None (a line only) for bytes that are not a whole image."""
    from ..files.attach import AttachError

    try:
        return _keep(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError, AttachError):
        return None


def _line(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "image":
        kept = keep_image(block.data)
        if kept is not None:
            return image_result(kept)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_human(_size(block.data))}]"
    if kind == "resource":
        res = block.resource
        mime = getattr(res, "mime_type", None)
        text = getattr(res, "text", None)
        if text is not None:
            return f"{resource_head(str(res.uri), mime, _human(len(text.encode())))}\n{text}"
        return resource_head(str(res.uri), mime, _human(_size(getattr(res, "blob", ""))))
    if kind == "resource_link":
        return link_line(str(block.uri), getattr(block, "mime_type", None))
    return f"[{kind or 'unknown'} content]"


def map_result(result: Any) -> MappedResult:
    lines = [_line(block) for block in (result.content or [])]
    text = "\n".join(lines)
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        encoded = json.dumps(structured, ensure_ascii=False, sort_keys=True)
        if not text:
            text = encoded
        elif not _says(text, structured):
            text = f"{text}\n{encoded}"
    return MappedResult(text, bool(result.is_error), structured)


def _says(text: str, structured: Any) -> bool:
    """The text is the structured value already (servers often send both)."""
    try:
        if loads(text) == structured:
            return True
    except ValueError:
        pass
    return isinstance(structured, dict) and list(structured) == ["result"] and structured["result"] == text
