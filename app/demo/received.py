"""What the demo model says about the files it was sent: each one's name,
type, size and pixels, and a text file's first line, so ``make run`` shows
attachments working offline in every dialect. Tool images are named the same
way when they come back with a tool's result."""

from __future__ import annotations

from ..stream.attachments import Attachment, describe, first_line
from ..stream.history import Entry, ToolResult, User
from ..stream.inert import inert
from .plan import Plan, Say

__all__ = ["about_attachments", "about_tool_images"]


def _lines(items: list[Attachment]) -> list[str]:
    lines = []
    for item in items:
        line = f"- {describe(item)}"
        if item.kind == "text":
            line += f" — first line: “{inert(first_line(item))}”"
        if item.note:
            line += f" ({inert(item.note)})"
        lines.append(line)
    return lines


def about_attachments(user: User) -> Plan:
    count = len(user.attachments)
    head = f"I received {count} file{'s' if count != 1 else ''}:"
    return Plan([Say("\n".join([head, *_lines(user.attachments)]))])


def about_tool_images(after: list[Entry]) -> Plan | None:
    """After tool results that carried images: say which images reached the model."""
    images = [image for e in after if isinstance(e, ToolResult) for image in e.images]
    if not images:
        return None
    return Plan([Say("\n".join(["The tool's images reached me:", *_lines(images)]))])
