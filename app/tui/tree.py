"""The tree controller: the conversation as a tree of versions, from the keys.

Alt+↑/↓ selects an earlier or later entry, Alt+←/→ shows another version
(‹2/3›) of it, Alt+E edits one of your messages (sent as a new version),
Ctrl+G regenerates a reply beside the old one, /fork copies the conversation
up to an entry. The tree itself is the store's: this asks the runtime to move
the session and shows the path it is on again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.notifications import SeverityLevel

from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.user_message import UserMessage

from .adopting import adopt
from .paging import EXCHANGES_PER_PAGE

if TYPE_CHECKING:
    from ..chat.session import ChatSession
    from ..runtime.wiring import Runtime
    from .host import ChatHost
    from .status import Status
    from .tally import Tally
    from .transcript import Transcript

__all__ = ["TreeController", "Say", "LIVE_MOST"]

#: The most exchanges (three pages) a live sitting keeps mounted before its last pages are shown again
#: from the store (its page, then the pages that fill a screen above, ``paging.LIVE_NEAR_SCREENS``: 6 to 12
#: exchanges mounted in a measured sitting at 120×40, shown again every eighth). Memory goes with the
#: widgets mounted, and what Python freed stays with the process (its pools are split up by what outlived
#: them), so the most mounted at once is what a sitting costs: about what ten exchanges cost, at any length.
LIVE_MOST = 3 * EXCHANGES_PER_PAGE


class Say(Protocol):
    """A notification (not a line on the transcript)."""

    def __call__(self, text: str, severity: SeverityLevel = "information") -> None: ...


class TreeController:
    #: Given by ``attach``.
    session: ChatSession

    def __init__(self, host: ChatHost, transcript: Transcript, status: Status, tally: Tally,
                 prompt: Callable[[], PromptInput | None], say: Say, welcome: str | None) -> None:
        self.host = host
        self.transcript = transcript
        self.status = status
        self.tally = tally
        self._prompt = prompt
        self._say = say
        self.welcome = welcome
        #: The entry picked with Alt+↑/↓ (None: none; the keys then act on the last one).
        self.selected: int | None = None
        #: The user message being edited in the composer (Enter sends it as a new branch).
        self.editing: int | None = None
        #: This exchange started a branch: show the tree again from the store when it ends.
        self.branched = False

    def attach(self, session: ChatSession) -> None:
        self.session = session

    def _runtime(self) -> Runtime | None:
        return self.host.runtime  # a replay has none: its conversation is not stored

    def _stored_runtime(self) -> Runtime:
        """The runtime of a stored conversation (the tree's keys run only where there is one: ``idle``)."""
        runtime = self._runtime()
        assert runtime is not None
        return runtime

    def idle(self) -> bool:
        if self.session.busy:
            self._say("A turn is still running: press Esc to cancel it first.", "warning")
            return False
        return self._runtime() is not None and bool(self.transcript.order)

    def show_stored(self, stored: Any, around: int | None = None, ends: bool = True) -> None:
        """A reopened conversation, in the shape it was shown in live (the pages around entry
        ``around``, else the last; ``ends``: see ``Window.open``)."""
        status = self.transcript.show_stored(stored, around, ends)
        if status:
            self.status.ended(status)
        # every turn of every branch was paid for: the conversation's cost is the whole tree's
        self.tally.stored(stored)
        self.status.show_spent(self.tally)

    # -- selection ---------------------------------------------------------------------

    def current(self, kind: str | None = None) -> int | None:
        """The selected entry, else the last shown (of ``kind``: user or turn)."""
        transcript = self.transcript
        if self.selected is not None and self.selected in transcript.kinds:
            if kind is None or transcript.kind(self.selected) == kind:
                return self.selected
            return None
        return next((seq for seq in reversed(transcript.order) if kind is None or transcript.kind(seq) == kind),
                    None)

    def select(self, seq: int | None) -> None:
        transcript = self.transcript
        if self.selected is not None:
            for widget in transcript.widgets_of(self.selected):
                widget.remove_class("-selected")
        self.selected = seq
        if seq is None:
            transcript.anchor()  # follow the latest output again
            return
        transcript.reveal(seq)  # its page read from the store when it is not mounted
        widgets = transcript.widgets_of(seq)
        for widget in widgets:
            widget.add_class("-selected")
        if widgets:
            transcript.scroll_to_entry(widgets[0])
        stored = self.session.stored
        entry = stored.entry(seq) if stored is not None else None
        versions = f" · version {entry.siblings[0]} of {entry.siblings[1]}" if entry and entry.siblings[1] > 1 else ""
        what = "your message" if transcript.kind(seq) == "user" else "reply"
        keys = "Alt+E edits" if transcript.kind(seq) == "user" else "Ctrl+G regenerates"
        self.status.set_state(f"selected {what} (entry {seq}){versions} — {keys} · /fork forks here")

    def step(self, step: int) -> None:
        seqs = self.transcript.order
        if not seqs:
            return
        if self.selected is None or self.selected not in self.transcript.kinds:
            index = len(seqs) if step < 0 else -1
        else:
            index = seqs.index(self.selected)
        index = min(max(index + step, 0), len(seqs) - 1)
        self.select(seqs[index])

    def cancel(self) -> bool:
        """Esc: stop editing, else drop the selection; False when there was neither."""
        if self.editing is not None:
            self.editing = None
            prompt = self._prompt()
            if prompt is not None:
                prompt.clear()
        elif self.selected is not None:
            self.select(None)
        else:
            return False
        self.status.set_state("ready")
        return True

    # -- versions ------------------------------------------------------------------------

    def sibling(self, step: int) -> None:
        """Show the previous / next version of the selected entry (else of the
        last entry that has several)."""
        if not self.idle():
            return
        stored = self.session.stored
        if stored is None:
            return
        transcript = self.transcript
        seq = self.selected if self.selected in transcript.kinds else next(
            (s for s in reversed(transcript.order) if transcript.versions_of(s)[1] > 1), None)
        entry = stored.entry(seq) if seq is not None else None
        if entry is None or entry.siblings[1] < 2:
            self._say("This entry has no other versions.")
            return
        family = stored.children(entry.parent)
        target = family[(family.index(entry) + step) % len(family)]
        self.session.stored = self._stored_runtime().show(self.session, target.seq)
        self.rerender(select=target.seq)

    def edit(self) -> None:
        """The selected message (else the last one) into the composer; Enter sends it as a new branch."""
        if not self.idle():
            return
        seq = self.current("user")
        widget = self.transcript.entries.get(seq) if seq is not None and self.transcript.reveal(seq) else None
        prompt = self._prompt()
        if seq is None or not isinstance(widget, UserMessage) or prompt is None:
            self._say("Select one of your messages first (Alt+↑).")
            return
        self.editing = seq
        prompt.text = widget.message_text
        prompt.focus()
        self.status.set_state(f"editing entry {seq} — Enter sends it as a new version · Esc cancels")

    def regenerate_target(self) -> int | None:
        """The reply Ctrl+G makes a new version of (selected, else the last), branched before; None: none."""
        if not self.idle():
            return None
        seq = self.current("turn")
        if seq is None:
            self._say("Select a reply first (Alt+↑).")
            return None
        self.branch_before(seq)
        return seq

    def fork(self) -> None:
        """A new conversation holding this one up to the selected entry (else all of it shown)."""
        if not self.idle():
            return
        seq = self.current()
        try:
            fork = self._stored_runtime().fork(self.session.conversation, seq)
        except Exception as exc:  # a stated failure, never a crash
            self._say(f"Cannot fork: {exc}", "error")
            return
        self.host.open_conversation(fork)
        self._say(f"Forked into a new conversation ({fork[:12]}); the original is unchanged.")

    def branch_before(self, seq: int) -> None:
        """An edited message or a regenerated reply: a new version beside ``seq``."""
        self.session.stored = self._stored_runtime().branch_before(self.session, seq)
        self.branched = True
        self.rerender()

    def exchange_done(self, call_later: Callable[[Callable[[], None]], object]) -> None:
        """An exchange ended: one that started a branch shows the tree's markers, as a reopen would;
        else the exchanges finished before it join the window's pages (``adopting.py``: they are
        dropped and read back from the store as a reopen's are); a live session holding more
        exchanges than a window keeps all the same (they could not join) shows its last pages from
        the store, so what a long sitting holds on screen stays flat."""
        if self._runtime() is None or self.session.position is None:
            return
        if self.branched:
            self.branched = False
            call_later(self._show_branch)
            return
        transcript = self.transcript
        runtime = self._stored_runtime()
        adopt(transcript.window, runtime.store, self.session.conversation, self.session.position,
              transcript.children, transcript.entries)
        if self._crowded():
            call_later(self._flatten)

    def _flatten(self) -> None:
        """The last page shown again from the store; the pages above it come once the old widgets are
        collected (``Sweeper.collect_soon``): the most a sitting holds at once is then its old widgets
        and one page, not its old widgets and every page above (about 4 MB more at 120×40, kept)."""
        if self._crowded() and self._showable():  # (still: a key may have come first)
            self._show_branch(ends=False)  # the sitting goes on: its first page comes if the view leaves the end
            window = self.transcript.window
            window.hold_back()
            self.transcript.sweeper.collect_soon(window.go_on)

    def _crowded(self) -> bool:
        """More messages mounted than a window holds, while the view follows the end and nothing is
        selected or edited (showing the path again would move what the person is looking at)."""
        transcript = self.transcript
        if self.selected is not None or self.editing is not None or not transcript.following():
            return False
        mounted = sum(1 for widget in transcript.entries.values() if isinstance(widget, UserMessage))
        return mounted > LIVE_MOST

    def _showable(self) -> bool:
        """The path can be shown again from the store (no turn runs, and the session is on one)."""
        return not self.session.busy and self.session.position is not None

    def _show_branch(self, ends: bool = True) -> None:
        if not self._showable():
            return
        state = self.status.state
        self.session.stored = self._stored_runtime().tree(self.session.conversation, self.session.position)
        self.rerender(ends=ends)
        self.status.set_state(state)

    def rerender(self, select: int | None = None, ends: bool = True) -> None:
        """The path the session is on, from the store, as a reopen shows it."""
        transcript = self.transcript
        transcript.reset()
        self.selected = None
        if self.welcome:
            transcript.set_header(NoteBlock(self.welcome, "quiet"))
        if self.session.stored is not None:
            self.show_stored(self.session.stored, around=select, ends=ends)
        if select is not None and select in transcript.entries:
            self.select(select)
        else:
            transcript.anchor()
            self.status.set_state("ready")
