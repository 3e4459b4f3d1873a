"""How this terminal draws images, asked while the app is still being imported and opened.

textual-image chooses by asking the terminal: a query written to stdout, its answer read from
stdin, up to 0.1 s allowed for each of its three questions (sixel, the kitty graphics protocol, the
cell size), and all of it before Textual reads stdin. Asked in line, that was 0.3 s of every start
in a terminal that answers nothing (a pseudo-terminal, an old or minimal terminal), and 0.1 s in one
that answers only some (the kitty question where kitty's protocol is not spoken), before the first
frame. So ``Asking`` asks in a thread of its own, started before the app is imported:

1. the Primary Device Attributes question (what textual-image's sixel check asks first; every
   terminal that answers any of its questions answers this one): no answer within the same 0.1 s
   and images are ``cells``, what textual-image would have chosen, without importing it;
2. else, once the main thread has imported the app (``imported``: textual-image imports Rich, which
   the app's import must have finished, so no module is imported by two threads at once),
   textual-image's own choice, while the main thread opens the store.

``wait`` (before ``App.run``) joins the thread and gives the mode. This module imports only the
standard library, so the thread starts before anything heavy is imported.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from typing import Literal

__all__ = ["Mode", "MODES", "Asking", "chosen_by_environment", "ask", "answers"]

Mode = Literal["kitty", "sixel", "cells", "off"]
MODES: tuple[Mode, ...] = ("kitty", "sixel", "cells", "off")

#: What textual-image allows each answer (its ``query_terminal_support`` timeouts).
ANSWER_WITHIN = 0.1


def chosen_by_environment() -> Mode | None:
    """``CALLSTREAM_IMAGES`` names the mode (no question asked); None for ``auto`` (or anything else)."""
    wanted = os.environ.get("CALLSTREAM_IMAGES", "auto").strip().lower()
    return next((named for named in MODES if wanted == named), None)


def _on_a_terminal() -> bool:
    stdout, stdin = sys.__stdout__, sys.__stdin__
    return stdout is not None and stdin is not None and stdout.isatty() and stdin.isatty()


def answers(timeout: float = ANSWER_WITHIN) -> bool:
    """Whether the terminal answers the Primary Device Attributes question (``CSI c``) within ``timeout``.
    The answer (``CSI ? … c``) is read whole, so nothing of it is left for the next question."""
    import termios
    import tty

    stdin, stdout = sys.__stdin__, sys.__stdout__
    assert stdin is not None and stdout is not None
    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd, termios.TCSANOW)
    try:
        stdout.write("\x1b[c")
        stdout.flush()
        answer = b""
        while not (answer.startswith(b"\x1b[?") and answer.endswith(b"c")):
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return bool(answer)  # something came (a terminal that answers oddly): textual-image decides
            answer += os.read(fd, 1)
        return True
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def textual_image_choice() -> Mode:
    """textual-image's own choice (its questions asked on import), its cell size asked and kept."""
    try:
        from textual_image import renderable
        from textual_image._terminal import get_cell_size
        from textual_image.renderable.sixel import Image as SixelImage
        from textual_image.renderable.tgp import Image as TGPImage

        get_cell_size()  # cached now: it cannot ask once Textual reads stdin
    except Exception:  # noqa: BLE001 - a terminal that answers oddly draws cells, whatever went wrong
        return "cells"
    chosen = renderable.Image
    return "sixel" if chosen is SixelImage else "kitty" if chosen is TGPImage else "cells"


def ask() -> Mode:
    """The mode, asked in line: the environment's, else ``cells`` off a terminal or where it answers
    nothing, else textual-image's choice."""
    named = chosen_by_environment()
    if named is not None:
        return named
    if not _on_a_terminal():
        return "cells"
    try:
        if not answers():
            return "cells"
    except Exception:  # noqa: BLE001 - a terminal that cannot be put in cbreak mode is not asked
        return "cells"
    return textual_image_choice()


class Asking:
    """``ask`` in a thread: started at once; ``imported`` lets it import textual-image; ``wait`` joins it."""

    def __init__(self) -> None:
        self._imported = threading.Event()
        self._mode: Mode = "cells"
        named = chosen_by_environment()
        if named is not None or not _on_a_terminal():
            self._mode = named or "cells"
            self._thread: threading.Thread | None = None
            return
        self._thread = threading.Thread(target=self._ask, name="terminal-images", daemon=True)
        self._thread.start()

    def _ask(self) -> None:
        try:
            talks = answers()
        except Exception:  # noqa: BLE001 - as in ``ask``
            talks = False
        if talks:
            self._imported.wait()
            self._mode = textual_image_choice()

    def imported(self) -> None:
        """The main thread has imported the app: textual-image may be imported now."""
        self._imported.set()

    def wait(self) -> Mode:
        """The mode (the terminal is back as it was: the thread is over)."""
        self._imported.set()
        if self._thread is not None:
            self._thread.join()
        return self._mode
