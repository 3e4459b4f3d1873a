"""The chat screen's sign-in desk: a server that needs sign-in (at start, or
when a call's token could not be refreshed) gets a card in the conversation
(widgets/sign_in_card.py), one per server; the person's key signs in there:
the loopback listens, the URL is shown on the card (and the browser opened
if asked), the server is connected again with someone there to sign in, and
the card says who is signed in. The ``/mcp`` panel's sign-in and sign-out
come here too, so both go the one way ``mcp login`` / ``mcp logout`` go
(app/mcp/auth_login.py)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from widgets.sign_in_card import SignInCard

__all__ = ["SignInDesk"]


class SignInDesk:
    def __init__(self, hub: Callable[[], Any], add: Callable[[SignInCard], None],
                 call_later: Callable[..., Any], run: Callable[[Coroutine[Any, Any, None]], None]) -> None:
        """``hub``: the app's MCP servers (None: none); ``add`` puts a card in
        the conversation; ``run`` runs a sign-in as a worker of the screen."""
        self._hub = hub
        self._add = add
        self._call_later = call_later
        self._run = run
        #: Each server's card, by name.
        self.cards: dict[str, SignInCard] = {}
        self._watched: set[int] = set()

    def attach(self) -> None:
        hub = self._hub()
        if hub is None or self._changed in hub.listeners:
            return
        hub.listeners.append(self._changed)
        for server in hub.servers:  # one that asked before the screen was there
            self._changed(server)

    def detach(self) -> None:
        hub = self._hub()
        if hub is not None and self._changed in hub.listeners:
            hub.listeners.remove(self._changed)

    def _server(self, name: str) -> Any:
        hub = self._hub()
        return next((s for s in hub.servers if s.config.name == name), None) if hub is not None else None

    def _changed(self, server: Any) -> None:
        from ..mcp.auth_login import needs_sign_in

        auth = server.auth
        if auth is not None and id(auth) not in self._watched and hasattr(auth, "on_needed"):
            self._watched.add(id(auth))  # a call that needs sign-in later says so here too
            auth.on_needed = lambda: self._call_later(self._ask, server)
        if needs_sign_in(server) and server.sign_in is None:
            self._call_later(self._ask, server)

    def _ask(self, server: Any) -> None:
        name = server.config.name
        reason = server.auth.needed() if hasattr(server.auth, "needed") else "it answered 401 Unauthorized"
        card = self.cards.get(name)
        if card is None:
            card = self.cards[name] = SignInCard(name, reason)
            self._add(card)
        elif card.state in ("done", "failed"):
            card.asking(reason)

    def sign_in(self, name: str, browser: bool = True) -> None:
        """Sign in to ``name`` (the ``/mcp`` panel): its card, then the flow."""
        server = self._server(name)
        if server is None:
            return
        card = self.cards.get(name)
        if card is None:
            card = self.cards[name] = SignInCard(name, f"Signing in to {name} (from the MCP servers panel).")
            self._add(card)
        self.chosen(card, browser)

    def chosen(self, card: SignInCard, browser: bool) -> None:
        server = self._server(card.server)
        if server is None or card.state == "waiting":
            return
        self._run(self._sign_in(server, card, browser))

    async def _sign_in(self, server: Any, card: SignInCard, browser: bool) -> None:
        from ..mcp.auth_login import begin_sign_in, sign_in_again, signed_in_line, store_of

        store = store_of(server)
        sign_in = await begin_sign_in(store, browser, shown=card.show_url)
        card.waiting(sign_in.loopback.redirect_uri)
        await sign_in_again(server, sign_in)
        said = signed_in_line(server.config.name, store)
        if said is not None and server.status.state == "ready":
            card.done(said)
        else:
            card.failed(server.status.reason or "the server did not accept the sign-in")

    def sign_out(self, name: str) -> None:
        """Forget ``name``'s tokens and connect it again (it then asks: its card says so)."""
        server = self._server(name)
        if server is not None:
            self._run(self._sign_out(server))

    async def _sign_out(self, server: Any) -> None:
        from ..mcp.auth_login import forget_tokens, store_of

        forget_tokens(store_of(server))
        await server.close()
        server.start()
        await server.wait_settled()
