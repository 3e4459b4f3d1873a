"""``/compact`` and ``compact = "auto"`` on screen: the compaction (``Runtime.compact``) runs as the
screen's one exchange worker — what is typed meanwhile is queued — and the screen then shows the new
branch from the store as a reopen would: the older entries, the summary as a note, the recent turns.
A refusal or a failure is a note; the conversation is unchanged."""

from __future__ import annotations

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

    def due(self) -> bool:
        """``compact = "auto"`` and the next request would fill the share of the window the meter warns at."""
        runtime = self._runtime()
        if runtime is None or runtime.config.compact != "auto" or self._session().position is None:
            return False
        session = self._session()
        return room_of(session, runtime.prices.window(session.endpoint.model)).warning

    def then_send(self, text: str) -> None:
        """Compact first (auto), then send ``text`` whatever came of it."""
        self.exchanges.active = True
        self._run(self._compact(text))

    async def _compact(self, then: str | None) -> None:
        runtime = self._runtime()
        assert runtime is not None
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
