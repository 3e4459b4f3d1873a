"""What a reopened conversation's first screen waits for (issue 31, "ahead of Elia at every size"):
only what it shows. Measured by ``make bench-long``; guarded here by states, never by times:

- the terminal's image question is asked in a thread of its own, and a terminal that answers
  nothing (a pseudo-terminal no one reads) gets cells without textual-image even being imported,
  while one that answers still gets textual-image's own choice;
- the price table's thread, the warm-up's imports, the MCP servers' start and the garbage
  collector come after the first screen is written (a fresh process, the real app under Pilot, a
  real store);
- the transcript never takes the keys at start (a container that loses them has everything in it
  styled again);
- a stored card is built with its state's border class.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

from app.settings.profiles import DEMO_MODEL
from app.stream.blocks import ToolCallBlock
from tests.long_transcript import write_long
from widgets.tool_card import ToolCard

ROOT = Path(__file__).resolve().parents[1]

#: Asked in a pseudo-terminal: which mode ``Asking`` chose, and whether textual-image was imported.
ASKING = (
    "import sys\n"
    "from app.tui.probing import Asking\n"
    "asking = Asking()\n"
    "asking.imported()\n"
    "print('MODE', asking.wait(), 'textual_image' in sys.modules, flush=True)\n"
)


def _in_a_terminal(script: str, answer: bytes | None) -> str:
    """``script`` run by the interpreter in a pseudo-terminal whose other end answers each Primary Device
    Attributes question (``CSI c``) with ``answer`` (None: answers nothing); what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "CALLSTREAM_IMAGES"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the script, on a 120×40 terminal of 10×20-pixel cells (its size says them)
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 1200, 800))
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-c", script], env)
    out = b""
    try:
        while b"MODE" not in out or not out.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], 30)
            assert ready, f"the child printed no mode within 30 s: {out!r}"
            try:
                data = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            out += data
            if answer is not None:
                for _ in range(data.count(b"\x1b[c")):
                    os.write(fd, answer)
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    line = next(line for line in out.decode(errors="replace").splitlines() if "MODE" in line)
    return line[line.index("MODE"):]


def test_a_terminal_that_answers_nothing_gets_cells_without_textual_image_being_imported() -> None:
    """Why: textual-image waits 0.1 s for each of three answers that never come (0.3 s of a start, before
    the first frame); one unanswered question says the others will not be answered either."""
    assert _in_a_terminal(ASKING, answer=None).split() == ["MODE", "cells", "False"]


def test_a_terminal_that_answers_gets_textual_images_choice() -> None:
    """Why: the quick question only decides whether to ask; a terminal that answers is asked by
    textual-image as before (here it says it draws sixel)."""
    assert _in_a_terminal(ASKING, answer=b"\x1b[?62;4;22c").split() == ["MODE", "sixel", "True"]


#: A reopened conversation under Pilot in a fresh process: what was imported, and what the transcript
#: held, when the warm-up began (the first screen's state); then whether the warm-up and the price
#: table still came.
REOPEN = """
import asyncio, gc, json, sys, threading
import app.tui.app as tui
from app.tui import collector
import app.tui.warmup as warmup
from textual.widget import Widget
from app.rules import prices
from tests.waiting import wait_for

HEAVY = ["genai_prices", "jsonschema", "anyio._backends._asyncio", "textual_image"]
seen = {}
focused = []
real_warm_up, real_focus = warmup.warm_up, Widget._on_focus

def collections():
    return [generation["collections"] for generation in gc.get_stats()]

real_release = collector.release

def first_screen(app):
    # the last page's replies are written (the pages above come after the first screen, beside the
    # warm-up), and the last one says its last words
    screen = app.screen
    window = screen.transcript.window
    last_page = window.mounted.get(len(window.pages) - 1, [])
    return {"written": all(block.settled for block in last_page if hasattr(block, "settled")),
            "last shown": any("Anything else for %d?" % (EXCHANGES - 1) in block.source
                              for block in screen.transcript.children if hasattr(block, "source"))}

def release():
    if "released" not in seen:  # (read while still held)
        seen["released"] = {"collected before": collections() != held_at, **first_screen(APP[0])}
    real_release()

def warm_up(app, session, done=None):
    seen["collecting"] = gc.isenabled()
    seen["imported"] = [name for name in HEAVY if name in sys.modules]
    seen["warm-up"] = first_screen(app)
    real_warm_up(app, session, done)

def on_focus(self, event):
    focused.append(type(self).__name__ + ("#" + self.id if self.id else ""))
    real_focus(self, event)

tui.warm_up = warm_up
collector.release = release
Widget._on_focus = on_focus

APP = []

def table_asked():
    # a load started is a live thread, or a finished one's import: neither can be missed
    return "genai_prices" in sys.modules or any(t.name == "genai-prices" for t in threading.enumerate())

async def main():
    app = tui.make_app(conversation=CONVERSATION)
    APP.append(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.warmed and (prices.loaded() or not PRICED))
        seen["warmed"] = app.warmed
        seen["prices"] = table_asked()
        seen["focused"] = focused
        if not PRICED:  # the demo's own model: a live exchange (its usage said) still needs no table
            from tests.test_tui import send
            await send(app, pilot, "Where is my order A-1042?")
            seen["live usage"] = app.session.turns[-1].usage is not None
            seen["prices after an exchange"] = table_asked()
    print("SEEN", json.dumps(seen))

collector.hold()  # as the command line does before it imports the app
held_at = collections()
asyncio.run(main())
"""


def _reopened(home: Path, model: str) -> dict[str, Any]:
    """What the REOPEN script saw, on a 10-exchange conversation with the demo told ``model``."""
    data = home / "home"
    data.mkdir()
    exchanges = 10
    conversation = write_long(data / "callstream.db", exchanges, model=model)
    (home / "config.toml").write_text(f'[providers.demo]\nprovider = "demo"\nmodel = "{model}"\nspeed = 0\n')
    script = (f"CONVERSATION = {conversation!r}\nEXCHANGES = {exchanges}\nPRICED = {model != DEMO_MODEL}\n"
              + REOPEN)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                         stdin=subprocess.DEVNULL, timeout=300)
    seen: dict[str, Any] = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("SEEN "))[5:])
    return seen


def test_a_reopened_conversations_first_screen_is_written_before_the_warm_up_and_the_price_table(
        home: Path) -> None:
    """Why: the warm-up's imports and the price table's thread (pydantic, 30,000 lines of data) took the
    interpreter from the first screen; they come once it is written, and still come (the meter of a
    model the table prices asks for the table on the first screen)."""
    seen = _reopened(home, "gpt-4o")
    assert seen["imported"] == []
    assert seen["warm-up"] == {"written": True, "last shown": True}
    # no garbage collection until then (what start-up makes lives as long as the app); collecting again after
    assert seen["released"] == {"collected before": False, "written": True, "last shown": True}
    assert seen["collecting"]
    assert seen["warmed"] and seen["prices"]
    # the input box has the keys from the start: the transcript is never focused (and blurred)
    assert seen["focused"] and "Transcript#transcript" not in seen["focused"]
    assert seen["focused"][0] == "PromptInput"


def test_the_demo_models_conversation_is_opened_and_continued_without_the_price_table(home: Path) -> None:
    """Why: the table costs about 11 MB of a process (pydantic's schemas and 30,000 lines of data) and
    nobody prices the embedded model's own name: opening its conversation (the meter asks for its window)
    and an exchange (its usage asks for a price) showed nothing more for loading it."""
    seen = _reopened(home, DEMO_MODEL)
    assert seen["warmed"] and seen["warm-up"] == {"written": True, "last shown": True}
    assert seen["live usage"]
    assert not seen["prices"] and not seen["prices after an exchange"]


def test_a_stored_card_has_its_states_border_before_it_is_mounted() -> None:
    """Why: set once mounted, each state class styled the card and everything in it again."""
    block = ToolCallBlock("call_1", "search_orders", fragments=['{"customer": "Ada"}'], ended=True, final=True,
                          arguments={"customer": "Ada"}, state="ran", result='{"count": 2}')
    assert ToolCard(block, finished=True).has_class("-ran")
    live = ToolCallBlock("call_2", "search_orders", state="preparing")
    assert not ToolCard(live).classes  # a live card's classes follow its state once mounted


def test_release_switches_collection_back_on_only_where_hold_switched_it_off() -> None:
    """Why: the command line releases on every way out; a collector someone else switched off stays off."""
    import gc

    from app.tui import collector

    assert gc.isenabled()
    collector.hold()
    try:
        assert not gc.isenabled()
    finally:
        collector.release()
    assert gc.isenabled()
    gc.disable()
    try:
        collector.hold()
        collector.release()
        assert not gc.isenabled()
    finally:
        gc.enable()
