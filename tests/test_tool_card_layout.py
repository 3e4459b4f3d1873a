"""A card's layout under Pilot: wrapped values hang under their first
character inside the border, and a card does not grow blank rows for a frame
when its result arrives (each measured on the composed screen)."""

from __future__ import annotations

import json
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from app.stream import ToolCallBlock
from widgets.tool_card import ToolCard

BODY = ("Ada Lovelace reports that order A-1042 is late and she would like it delivered before the weekend, "
        "because it is a gift for a friend who lives abroad.")
DISPLAY = [("order_id", "Order"), ("body", "Body")]


class CardApp(App[None]):
    def __init__(self, card: ToolCard) -> None:
        super().__init__()
        self.card = card

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.card


class MeasuredCard(ToolCard):
    """A card that notes every height it is laid out at (each a frame that may be painted)."""

    heights: list[int]

    def on_resize(self, event: events.Resize) -> None:
        self.heights = [*getattr(self, "heights", []), event.size.height]


def a_call(state: str = "running") -> ToolCallBlock:
    arguments = {"order_id": "A-1042", "body": BODY}
    raw = json.dumps(arguments)
    return ToolCallBlock("c1", "create_ticket", fragments=[raw], size=len(raw), ended=True, final=True,
                         arguments=arguments, state=state)  # type: ignore[arg-type]


def screen_lines(app: App[Any]) -> list[str]:
    """What the terminal shows, row by row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def card_rows(app: App[Any], card: ToolCard) -> list[str]:
    region = card.region
    return [line[region.x:region.right] for line in screen_lines(app)[region.y:region.bottom]]


async def test_a_wrapped_value_keeps_its_indent_inside_the_border() -> None:
    card = ToolCard(a_call(), DISPLAY)
    app = CardApp(card)
    async with app.run_test(size=(50, 20)) as pilot:
        await pilot.pause()
        rows = card_rows(app, card)
        assert rows[0].startswith("╭") and rows[-1].startswith("╰")
        inside = rows[1:-1]
        assert all(row.startswith("│") and row.rstrip().endswith("│") for row in inside), rows
        body = next(i for i, row in enumerate(inside) if "Body" in row)
        column = inside[body].index("Ada")
        continued = inside[body + 1:]
        assert len(continued) >= 2  # the body wraps at this width
        for row in continued:
            text = row[1:-1]
            assert text[:column - 1].strip() == "" and text[column - 1] != " ", rows  # under "Ada", not under "Body"
        words = " ".join(row[column:].rstrip(" │") for row in inside[body:]).split()
        assert words == BODY.split()  # every word shown, in order, nothing cut at the border


async def test_a_wrapped_result_hangs_under_its_arrow() -> None:
    block = a_call("ran")
    block.result = json.dumps({"ticket": "T-10001", "order": "A-1042", "status": "open", "priority": "high",
                               "queue": "deliveries and returns"})
    card = ToolCard(block, DISPLAY, [("ticket", "Ticket"), ("order", "Order"), ("status", "Status"),
                                     ("priority", "Priority"), ("queue", "Queue")])
    app = CardApp(card)
    async with app.run_test(size=(50, 20)) as pilot:
        await pilot.pause()
        rows = card_rows(app, card)
        arrow = next(i for i, row in enumerate(rows) if "→ Ticket" in row)
        column = rows[arrow].index("Ticket")
        assert rows[arrow + 1][column - 2:column] == "  " and rows[arrow + 1][column] != " ", rows


async def test_a_card_grows_no_blank_rows_when_its_result_arrives() -> None:
    block = a_call("running")
    card = MeasuredCard(block, DISPLAY, [("ticket", "Ticket")])
    app = CardApp(card)
    async with app.run_test(size=(60, 40)) as pilot:
        await pilot.pause()
        before = card.heights[-1]
        card.heights = []
        # a result of many lines: the details (collapsed) hold all of them
        block.state = "ran"  # type: ignore[assignment]
        block.result = json.dumps({"ticket": "T-10001", **{f"line_{n}": n for n in range(20)}})
        block.key = "k" * 64
        card.refresh_card()
        await pilot.pause()
        # every layout since: the result line and the collapsed details' title, never more
        assert card.heights and set(card.heights) == {before + 2}, card.heights
        rows = card_rows(app, card)
        assert not [row for row in rows[1:-1] if not row.strip("│ ")], rows  # no blank row inside the border


async def test_a_card_update_that_keeps_its_height_asks_for_no_layout() -> None:
    """A running card told its state again (a progress report, a repeated state event): every line
    keeps its height, so nothing of it asks Textual to lay the conversation out."""
    block = a_call("running")
    card = ToolCard(block, DISPLAY, [("ticket", "Ticket")])
    app = CardApp(card)
    async with app.run_test(size=(60, 40)) as pilot:
        await pilot.pause()
        card.refresh_card()
        widgets = [card, *card.query("*")]
        assert not [w for w in widgets if w._layout_required], [w for w in widgets if w._layout_required]
