"""update_in_place: a repaint when the height stays, a layout when it changes."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Static

from widgets.in_place import update_in_place


class One(App[None]):
    def compose(self) -> ComposeResult:
        yield Static(Content("one line"), id="s")


async def test_a_line_that_keeps_its_height_is_repainted_without_a_layout() -> None:
    app = One()
    async with app.run_test(size=(40, 10)) as pilot:
        static = app.query_one("#s", Static)
        await pilot.pause()
        assert static.size.height == 1
        update_in_place(static, Content("one longer line"))
        assert not static._layout_required
        await pilot.pause()
        assert "one longer line" in str(static.render())
        update_in_place(static, Content("a line that wraps: " + "word " * 20))
        assert static._layout_required
        await pilot.pause()
        assert static.size.height > 1


async def test_a_hidden_line_is_updated_without_a_layout_and_laid_out_when_shown() -> None:
    app = One()
    async with app.run_test(size=(40, 10)) as pilot:
        static = app.query_one("#s", Static)
        static.display = False
        await pilot.pause()
        update_in_place(static, Content("a line that wraps: " + "word " * 20))
        assert not static._layout_required
        static.display = True
        await pilot.pause()
        assert static.size.height > 1
