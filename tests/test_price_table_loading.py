"""When the price table is loaded (issue 31, "ahead of Elia at every size"): when something asks of it,
never merely because a screen opened. The table is about 11 MB of a process (pydantic's schemas and
30,000 lines of data), so:

- the embedded demo model's own name is never looked up (no provider prices it), while the demo told a
  real model's name is priced as that model;
- a screen's lookup that must not wait asks for the table and answers without it; an app holds that load
  while it draws its first screen, and ``release`` starts it; the screen is told on its own loop once
  the table is in (a bound method, held weakly).

The table is process-wide, so what happens before it is loaded is seen in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from app.rules import prices
from app.settings.profiles import DEMO_MODEL, ProviderProfile, price_book
from app.stream.usage import Usage
from tests.test_prices import table

ROOT = Path(__file__).resolve().parents[1]


def _fresh(script: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                         stdin=subprocess.DEVNULL, timeout=120)
    seen: dict[str, Any] = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("SEEN "))[5:])
    return seen


def test_the_demo_models_own_name_is_never_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    def looked_up(*_: Any) -> Any:
        raise AssertionError("the table was asked about the demo's own model")

    monkeypatch.setattr(prices, "_table_model", looked_up)
    demo = ProviderProfile(name="demo")
    book = price_book([demo], demo)
    assert book.untabled == {DEMO_MODEL}
    assert book.cost(Usage(1000, 100), DEMO_MODEL) is None
    assert book.spend_of(Usage(1000, 100), DEMO_MODEL) == prices.Spend(Decimal(0), 0, 1)  # usage, no price
    assert book.window(DEMO_MODEL) is None and book.window(DEMO_MODEL, wait=False) is None
    assert book.ready_for([DEMO_MODEL, None])


def test_the_demo_told_a_real_models_name_is_priced_as_that_model() -> None:
    demo = ProviderProfile(name="demo", model="gpt-4o")
    book = price_book([demo, ProviderProfile(name="other")], demo)
    assert book.untabled == {DEMO_MODEL}  # the other demo profile keeps the own name
    assert book.cost(Usage(1000, 100), "gpt-4o") == table(Usage(1000, 100), "gpt-4o")
    assert not price_book([demo], demo).untabled


#: In a fresh interpreter: the app holds loads (its first screen); a screen's lookups answer without the
#: table and ask for it; release starts the load; the listener is called on its loop once it is in.
HELD = """
import asyncio, json, sys, threading
from app.rules import prices
from app.rules.prices import PriceBook
from app.stream.usage import Usage

def started():
    return "genai_prices" in sys.modules or any(t.name == "genai-prices" for t in threading.enumerate())

seen = {}
book = PriceBook()
prices.hold()
seen["ready while held"] = book.ready_for(["gpt-4o"])
seen["window while held"] = book.window("gpt-4o", wait=False)
seen["started while held"] = started()
seen["own names need no table"] = book.ready_for([None])

class Screen:
    def __init__(self):
        self.told = asyncio.Event()
        self.loop_thread = None
    def table_in(self):
        self.loop_thread = threading.current_thread().name
        self.told.set()

class Gone:
    def table_in(self):
        raise AssertionError("a screen that is gone was told")

async def main():
    screen = Screen()
    prices.when_loaded(screen.table_in)
    gone = Gone()
    prices.when_loaded(gone.table_in)
    del gone
    prices.release()
    seen["started at release"] = started()
    await asyncio.wait_for(screen.told.wait(), 60)
    seen["told on the loop's thread"] = screen.loop_thread == threading.current_thread().name
    seen["ready once in"] = book.ready_for(["gpt-4o"])
    seen["window once in"] = book.window("gpt-4o", wait=False)
    late = Screen()
    prices.when_loaded(late.table_in)  # asked once it is in: told at once (on the loop)
    await asyncio.wait_for(late.told.wait(), 5)
    seen["late told"] = True

asyncio.run(main())
print("SEEN", json.dumps(seen))
"""

#: An app that ended before its warm-up: what its first screen asked for is dropped, not loaded.
ENDED = """
import json, sys, threading
from app.rules import prices
from app.rules.prices import PriceBook

prices.hold()
PriceBook().ready_for(["gpt-4o"])
prices.release(load=False)
started = "genai_prices" in sys.modules or any(t.name == "genai-prices" for t in threading.enumerate())
print("SEEN", json.dumps({"started": started}))
"""


def test_a_held_lookup_answers_without_the_table_and_the_screen_is_told_once_it_is_in() -> None:
    seen = _fresh(HELD)
    assert seen.pop("window once in") > 0
    assert seen == {"ready while held": False, "window while held": None, "started while held": False,
                    "own names need no table": True, "started at release": True,
                    "told on the loop's thread": True, "ready once in": True, "late told": True}


def test_an_app_that_ended_before_its_warm_up_loads_nothing() -> None:
    assert _fresh(ENDED) == {"started": False}
