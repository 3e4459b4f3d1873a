"""The MCP servers screen under Pilot (``/mcp``): each server's state as it
goes, never a spinner: ready with its tools, or failed with the reason."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from app.settings.config import load_config
from app.tui.app import make_app
from app.tui.mcp_screen import McpScreen
from tests.test_mcp_cli import FIXTURE, write_config
from tests.waiting import wait_for
from widgets.prompt_input import PromptInput


async def test_the_mcp_screen_shows_each_server_state(home: Path) -> None:
    write_config(home, '[providers.demo]\nprovider = "demo"\n' + FIXTURE)  # the fixture server and a missing one
    app = make_app(config=load_config())
    app.cursor_blink = False
    async with app.run_test(size=(100, 40)) as pilot:
        app.screen.query_one(PromptInput).text = "/mcp"
        await pilot.press("enter")

        def servers() -> str:
            if not isinstance(app.screen, McpScreen):
                return ""
            return str(app.screen.query_one("#servers-text", Static).render())

        await wait_for(pilot, lambda: "fx: 7 tools in" in servers() and "gone: failed" in servers(),
                       "both servers' status on the /mcp screen")
        text = servers()
        assert "fx__effect  (side effect: asks first)" in text and "fx__lookup  (read-only)" in text
        assert "gone: failed: cannot start it" in text and "gone.log" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, McpScreen)
