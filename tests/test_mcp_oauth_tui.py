"""Sign-in in the TUI, under Pilot, against the real authorization server and
protected MCP server of tests/oauth_server.py: a server that answers 401
gets a card in the conversation (the server, the 401, the authorization
server); a key signs in (the URL shown inert, or the browser opened), the
code comes back to the loopback, and the card says who is signed in; the
``/mcp`` panel signs out (the card asks again) and in. The person at the
browser is simulated as scripts/conformance_browser.py does: the
authorization URL is fetched and its redirect followed."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import webbrowser
from pathlib import Path

import pytest

from app.settings.config import load_config
from app.tools.base import NotSent
from app.tui.app import make_app, make_deferred_app
from app.tui.mcp_screen import McpScreen
from tests.test_mcp_cli import write_config
from tests.test_mcp_oauth import BROWSER, Servers, _serve
from tests.waiting import wait_for
from widgets.sign_in_card import SignInCard


@pytest.fixture()
def servers(monkeypatch: pytest.MonkeyPatch) -> Servers:
    monkeypatch.setattr("app.mcp.auth_store._keyring", lambda: None)  # the 0600 file, whatever this machine has
    yield from _serve()  # type: ignore[misc]


def _configure(home: Path, servers: Servers) -> None:
    write_config(home, '[providers.demo]\nprovider = "demo"\n'
                       f'[mcp.prot]\nurl = "{servers.url}"\nstartup_timeout = 30\n')


def _card(app: object) -> SignInCard | None:
    found = list(app.screen.query(SignInCard))  # type: ignore[attr-defined]
    return found[0] if found else None


def _browse(url: str) -> None:
    with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - the card's URL, on 127.0.0.1
        answer.read()


async def test_a_server_that_needs_sign_in_gets_a_card_and_signs_in_there(home: Path, servers: Servers) -> None:
    _configure(home, servers)
    app = make_deferred_app()  # as `callstream` starts: the servers open after the first frame
    app.cursor_blink = False
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: _card(app) is not None, "the sign-in card")
        card = _card(app)
        assert card is not None
        text = card.text()
        assert "prot needs sign-in" in text and "401 Unauthorized" in text and servers.issuer in text
        assert "o: sign in (opens the browser)" in text
        assert app.focused is card  # nothing was typed: the card takes the keys

        await pilot.press("u")  # the URL only, as on a remote terminal
        await wait_for(pilot, lambda: "Sign in at: " in card.text(), "the URL on the card")
        url = next(line for line in card.text().splitlines() if line.startswith("Sign in at: "))[12:]
        assert url.startswith(servers.issuer + "/authorize?") and "code_challenge_method=S256" in url
        assert servers.control("counts")["authorize"] == 0  # shown, not followed
        await asyncio.to_thread(_browse, url)  # the person's browser: the code comes back to the loopback
        await wait_for(pilot, lambda: card.state in ("done", "failed"), "the sign-in to finish")
        assert card.state == "done", card.text()
        assert "Signed in to prot" in card.text() and "tokens kept in the file" in card.text()
        hub = app.runtime.mcp
        assert hub is not None and hub.servers[0].status.state == "ready"
        assert app.runtime.registry.get("prot__whoami") is not None  # its tools are offered now
        record = json.loads((home / "home" / "mcp-auth" / "prot.json").read_text())
        assert record["tokens"]["access_token"] not in card.text()

        # later a call finds its token expired and the refresh token revoked: the card asks again, saying why
        servers.control("revoke")
        servers.control("expire")
        with pytest.raises(NotSent, match="needs sign-in: it answered 401"):  # at once, not at tool_timeout
            await hub.servers[0].call("whoami", {}, "key-1")
        await wait_for(pilot, lambda: card.state == "needed", "the card to ask again")
        assert "refused the stored refresh token" in card.text() and "401" in card.text()


async def test_the_mcp_panel_signs_out_and_in(home: Path, servers: Servers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSER", BROWSER)  # the person's browser, run by webbrowser as any BROWSER is
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # so that webbrowser reads BROWSER anew
    _configure(home, servers)
    app = make_app(config=load_config())
    app.cursor_blink = False
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: _card(app) is not None, "the sign-in card")
        card = _card(app)
        assert card is not None
        await pilot.press("o")  # sign in, opening the browser
        await wait_for(pilot, lambda: card.state in ("done", "failed"), "the sign-in to finish")
        assert card.state == "done", card.text()

        app.action_mcp_servers()
        await wait_for(pilot, lambda: isinstance(app.screen, McpScreen), "the /mcp panel")
        panel = app.screen
        assert isinstance(panel, McpScreen)
        await wait_for(pilot, lambda: "signed in" in str(panel.query_one("#sign-in").get_option_at_index(0).prompt),
                       "the panel's sign-in line")
        await pilot.press("x")  # sign out: the tokens go, the server asks again, the card says so
        await wait_for(pilot, lambda: card.state == "needed", "the card to ask again")
        assert "needs sign-in" in card.text()
        assert "tokens" not in json.loads((home / "home" / "mcp-auth" / "prot.json").read_text())
        await wait_for(pilot, lambda: "needed" in str(panel.query_one("#sign-in").get_option_at_index(0).prompt),
                       "the panel to say sign-in is needed")

        await pilot.press("l")  # sign in from the panel: back to the conversation, on the card
        await wait_for(pilot, lambda: not isinstance(app.screen, McpScreen), "the conversation")
        await wait_for(pilot, lambda: card.state in ("done", "failed"), "the second sign-in")
        assert card.state == "done", card.text()
        assert servers.control("counts")["authorize"] == 2
