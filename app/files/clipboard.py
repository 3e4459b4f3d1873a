"""An image from the system clipboard, through the clipboard tool the
desktop has: ``wl-paste`` on Wayland, ``xclip`` on X11, ``pngpaste`` on macOS.

Why through a tool: a terminal's paste carries text only (bracketed paste), so
an image copied from a browser or a screenshot tool cannot come through the
terminal; the desktop's own clipboard tool can hand its bytes over. Without
one (over SSH, on a console) the sentence says which tool would be needed.
The bytes are then checked like any attached file (``attach.from_bytes``).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ..stream.attachments import Attachment
from .attach import MAX_BYTES, AttachError, from_bytes

__all__ = ["clipboard_image", "clipboard_tool"]


def clipboard_tool() -> list[str] | None:
    """The command that prints the clipboard's image as PNG here, or None."""
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        return ["wl-paste", "--no-newline", "--type", "image/png"]
    if os.environ.get("DISPLAY") and shutil.which("xclip"):
        return ["xclip", "-selection", "clipboard", "-target", "image/png", "-out"]
    if shutil.which("pngpaste"):
        return ["pngpaste", "-"]
    return None


def clipboard_image() -> Attachment:
    """The clipboard's image as an attachment; AttachError with a sentence when there is none."""
    command = clipboard_tool()
    if command is None:
        raise AttachError("No clipboard tool for images here: wl-paste (Wayland), xclip (X11) or pngpaste "
                          "(macOS) gives one; save the image and /attach its path instead.")
    try:
        done = subprocess.run(command, capture_output=True, timeout=5, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise AttachError(f"{command[0]} did not answer ({type(error).__name__}).") from None
    if done.returncode != 0 or not done.stdout:
        raise AttachError("The clipboard holds no image.")
    if len(done.stdout) > MAX_BYTES:
        raise AttachError("The clipboard's image is over the 64 MB an attachment may have.")
    return from_bytes(done.stdout, "clipboard.png")
