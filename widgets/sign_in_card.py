"""A server's request for sign-in, as a card in the conversation.

It names the server and says what it answered (401, the authorization
server, a refused refresh token's reason). ``o`` signs in and opens the
browser; ``u`` signs in showing the URL only (inert text to copy, for a
remote terminal); the code comes back to a loopback listener. Then the card
says who is signed in, or why it did not work (and the keys again). The
widget only shows and forwards the person's choice as ``Chosen``: the chat
screen's sign-in desk does the signing in (widgets never touch the network).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from app.stream.inert import inert

__all__ = ["SignInCard"]

_KEYS = "o: sign in (opens the browser)   u: sign in, showing the URL only"


class SignInCard(Vertical, can_focus=True):
    DEFAULT_CSS = """
    SignInCard { height: auto; padding: 0 1; border-left: thick $warning; margin: 1 0 0 1; }
    SignInCard:focus { background: $boost; }
    SignInCard .sign-title { text-style: bold; }
    SignInCard .sign-url { color: $warning; }
    SignInCard .sign-keys { color: $text-muted; }
    SignInCard.-done { border-left: thick $success; }
    SignInCard.-failed { border-left: thick $error; }
    """

    BINDINGS = [Binding("o", "choose(True)", "Sign in (browser)"),
                Binding("u", "choose(False)", "Sign in (URL only)")]

    class Chosen(Message):
        """The person asked to sign in (``browser``: open it too)."""

        def __init__(self, card: SignInCard, browser: bool) -> None:
            super().__init__()
            self.card, self.browser = card, browser

    def __init__(self, server: str, reason: str) -> None:
        super().__init__()
        self.server = server
        #: needed | waiting | done | failed
        self.state = "needed"
        self._title = Static(Content(inert(f"🔒 {server} needs sign-in")), classes="sign-title")
        self._body = Static(Content(inert(reason)), classes="sign-body")
        self._url = Static("", classes="sign-url")
        self._keys = Static(Content(_KEYS), classes="sign-keys")

    def compose(self) -> ComposeResult:
        self._url.display = False
        yield self._title
        yield self._body
        yield self._url
        yield self._keys

    def action_choose(self, browser: bool) -> None:
        if self.state in ("needed", "failed"):
            self.post_message(self.Chosen(self, browser))

    # -- what the desk tells it ------------------------------------------------------

    def asking(self, reason: str) -> None:
        """Asked again (a call needed it, or it was signed out)."""
        self.state = "needed"
        self.set_classes("")
        self._title.update(Content(inert(f"🔒 {self.server} needs sign-in")))
        self._body.update(Content(inert(reason)))
        self._url.display = False
        self._keys.update(Content(_KEYS))

    def waiting(self, redirect: str) -> None:
        self.state = "waiting"
        self.set_classes("")
        self._title.update(Content(inert(f"🔒 Signing in to {self.server}…")))
        self._body.update(Content(inert(f"Waiting for the browser to come back to {redirect}")))
        self._keys.update("")

    def show_url(self, url: str) -> None:
        """The authorization URL, as text (never a link opened from here)."""
        self._url.update(Content(inert(f"Sign in at: {url}")))
        self._url.display = True

    def done(self, said: str) -> None:
        self.state = "done"
        self.set_classes("-done")
        self._title.update(Content(inert(f"✓ {said}")))
        self._body.update("")
        self._url.display = False
        self._keys.update("")

    def failed(self, reason: str) -> None:
        self.state = "failed"
        self.set_classes("-failed")
        self._title.update(Content(inert(f"✗ {self.server}: not signed in")))
        self._body.update(Content(inert(reason)))
        self._url.display = False
        self._keys.update(Content(_KEYS))

    def text(self) -> str:
        """What the card says (for tests and copying)."""
        return "\n".join(str(part.render()) for part in (self._title, self._body, self._url, self._keys))
