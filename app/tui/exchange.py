"""Running exchanges: a prompt sent (and the messages queued behind it), a
retry, a regenerated reply — each as the screen's one exchange worker.

Whatever goes wrong inside one ends it as a stated failure on screen, with
the status back to ready: the app never wedges. Queued messages of a turn
that did not finish go back into the input box, never to the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..files.attach import AttachError
from ..stream.attachments import Attachment
from ..stream.inert import inert
from ..stream.limits import one_line
from .live import describe

if TYPE_CHECKING:
    from ..chat.session import ChatSession
    from .composer import Composer
    from .context import Note
    from .status import Status
    from .transcript import Transcript

__all__ = ["Exchanges"]


class Exchanges:
    #: Given by ``attach``.
    session: ChatSession

    def __init__(self, transcript: Transcript, status: Status, composer: Composer, note: Note,
                 run: Callable[[Coroutine[Any, Any, None]], object]) -> None:
        self.transcript = transcript
        self.status = status
        self.composer = composer
        self._note = note
        #: Runs a coroutine as the screen's one exchange worker (exclusive in its group).
        self._run = run
        #: An exchange is running (set before its worker starts, so a send right after is queued).
        self.active = False
        #: Files /attach took, sent with the next message.
        self.pending: list[Attachment] = []
        #: What a message's text itself attaches (``@server:uri``: ``mcp_commands``), or the sentence why it
        #: cannot be sent; None: nothing does.
        self.prepare: Callable[[str], Awaitable[list[Attachment] | str]] | None = None

    def attach(self, session: ChatSession) -> None:
        self.session = session

    def send(self, text: str) -> None:
        """Send a prompt now (sending scrolls to the bottom)."""
        self.transcript.to_latest()
        self.active = True
        self._run(self._exchange(text))

    def retry(self) -> None:
        self.transcript.to_latest()
        self.active = True
        self._run(self._exchange("", retry=True))

    def regenerate(self) -> None:
        self._run(self._exchange("", regenerate=True))

    async def _prepared(self, text: str) -> list[Attachment] | None:
        """The attachments ``text`` names; None when one cannot be had: said, and the text back in the box."""
        if self.prepare is None:
            return []
        found = await self.prepare(text)
        if isinstance(found, str):
            self.transcript.note(found, "error")
            self.composer.propose(text)
            return None
        return found

    async def _exchange(self, text: str, retry: bool = False, regenerate: bool = False) -> None:
        """One exchange (and the messages queued behind it)."""
        self.active = True
        self.status.begin()
        self.status.set_state("streaming…")
        try:
            if retry:
                done = await self.session.retry_last()
            elif regenerate:
                done = await self.session.regenerate()
            else:
                attached, self.pending = self.pending, []
                named = await self._prepared(text)
                if named is None:
                    self.pending = attached
                    return
                try:
                    done = await self.session.send(text, attached + named)
                except AttachError as exc:  # refused before anything was stored or sent
                    self.transcript.note(inert(str(exc)), "error")
                    return
            while done.status == "done" and self.composer.queued:
                text = self.composer.next_queued()
                named = await self._prepared(text)
                if named is None:
                    break
                self.transcript.to_latest()
                self.status.begin()
                done = await self.session.send(text, named)
        except Exception as exc:  # a bug or a data file that failed: said, never a silent dead worker
            self.transcript.note(f"This turn stopped: callstream hit an error ({one_line(describe(exc), 300)}). "
                                 "What was saved is kept; you can go on or press Ctrl+R to retry.", "error")
            self.status.ended("done")
        finally:
            self.active = False
            self.status.end()
            if self.composer.queued:
                self.composer.return_queue()
                self._note("The turn did not finish, so your queued message was not sent: it is back in the input "
                           "box.", "warning")
