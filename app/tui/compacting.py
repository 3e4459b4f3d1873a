"""``/compact`` and ``compact = "auto"`` on screen: the compaction (``Runtime.compact``) runs as the
screen's one exchange worker — what is typed meanwhile is queued — and the screen then shows the new
branch from the store as a reopen would: the older entries, the summary as a note, the recent turns.
A refusal or a failure is a note; the conversation is unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..chat.compaction import CompactionRefused
from ..chat.window import room_of
from ..stream.limits import one_line
from .live import describe

if TYPE_CHECKING:
    from ..chat.session import ChatSession
    from ..runtime.wiring import Runtime
    from .context import Note
    from .exchange import Exchanges
    from .status import Status
    from .tree import TreeController

__all__ = ["Compacting"]


class Compacting:
    def __init__(self, runtime: Callable[[], Runtime | None], session: Callable[[], ChatSession],
                 exchanges: Exchanges, tree: TreeController, status: Status, note: Note,
                 run: Callable[[Coroutine[Any, Any, None]], object]) -> None:
        self._runtime, self._session = runtime, session
        self.exchanges, self.tree, self.status, self._note = exchanges, tree, status, note
        self._run = run

    def start(self) -> None:
        """``/compact``."""
        self.exchanges.active = True
        self._run(self._compact(None))

    def due(self) -> bool | None:
        """``compact = "auto"`` and the next request would fill the share of the window the meter warns
        at; ``None``: that needs the price table's window, still loading (``then_send(check=True)`` asks
        for it off the screen's thread: loading it here froze the screen for a second or more)."""
        runtime = self._runtime()
        if runtime is None or runtime.config.compact != "auto" or self._session().position is None:
            return False
        session = self._session()
        if not runtime.prices.window_at_hand(session.endpoint.model):
            return None
        return room_of(session, runtime.prices.window(session.endpoint.model, wait=False)).warning

    def then_send(self, text: str, check: bool = False) -> None:
        """Compact first (auto), then send ``text`` whatever came of it; ``check``: only if ``due`` once
        the window is read (in a thread of its own: the table may load meanwhile)."""
        self.exchanges.active = True
        self._run(self._compact(text, check))

    async def _compact(self, then: str | None, check: bool = False) -> None:
        runtime = self._runtime()
        assert runtime is not None
        if check and then is not None:
            session = self._session()
            try:
                window = await asyncio.to_thread(runtime.prices.window, session.endpoint.model)
            except Exception:  # the table unreadable: no window known, as for a model it lacks
                window = None
            if not room_of(session, window).warning:
                self.exchanges.active = False
                self.exchanges.send(then)
                return
        self.status.set_state("compacting…")
        try:
            done = await runtime.compact(self._session())
        except CompactionRefused as exc:
            self._note(str(exc), "warning" if then is not None else "error")
        except Exception as exc:  # a failure said, never a dead worker; the conversation is unchanged
            self._note(f"Not compacted: callstream hit an error ({one_line(describe(exc), 300)}); the "
                       "conversation is unchanged.", "error")
        else:
            self.tree.rerender()
            self._note(done.words())
        finally:
            self.exchanges.active = False
            self.status.set_state("ready")
        if then is not None:
            self.exchanges.send(then)
