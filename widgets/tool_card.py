"""A tool call's card: the call forming, then what became of it.

While the arguments stream, the card shows only the tool's allow-listed
fields, in the allow-list's order, each once its value is stable ("…" until
then) — decoded incrementally by ``FormingPreview`` and redrawn at most once
per frame. Never the raw argument text, never an unlisted field. The badge
says what the chat loop says: "running" only after the dispatcher started
the call. After the run, a one-line result through the result allow-list,
and the full result one keypress away. Everything shown is plain text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Collapsible, Static

from app.stream import PENDING_APPROVAL, ToolCallBlock
from app.stream.inert import inert
from app.stream.limits import loads, one_line
from app.stream.preview import FormingPreview, result_line, shown_result, visible_fields

from .approval_prompt import ApprovalPrompt
from .elicitation_form import ElicitationForm
from .in_place import update_in_place
from .sampling_card import SamplingCard

__all__ = ["ToolCard", "BADGES", "Hanging"]

#: What each state is called on the card.
BADGES = {
    "preparing": "preparing…",
    "waiting": "waiting",
    "awaiting approval": "awaiting approval",
    "running": "running",
    "ran": "ran",
    "failed": "failed",
    "rejected": "rejected",
    "not run": "not run",
    "unknown": "outcome unknown",
    "denied": "denied",
    "needs approval": "needs approval",
}

_MAX_RESULT_LINES = 200


class Hanging(Visual):
    """Rows of a lead and a text (``Order  `` and ``A-1042``; ``→ `` and a
    result): each text wraps in the width its lead leaves, its continuation
    lines start under its first character, inside the card's border. Textual's
    own wrapping starts them at the left edge, under the label. ``str()`` is
    the plain text, unwrapped."""

    def __init__(self, rows: Sequence[tuple[str, str]]) -> None:
        self.rows = [(Content(lead), Content(text)) for lead, text in rows]
        self._plain = "\n".join(lead.plain + text.plain for lead, text in self.rows)
        self._cache: tuple[int, Content] | None = None

    def __str__(self) -> str:
        return self._plain

    def _at(self, width: int) -> Content:
        if self._cache is not None and self._cache[0] == width:
            return self._cache[1]
        lines: list[Content] = []
        for lead, text in self.rows:
            indent = lead.cell_length
            room = width - indent
            if room < 8:  # too narrow to hang: wrap lead and text as one
                lines += (lead + text).wrap(max(1, width))
                continue
            for n, line in enumerate(text.wrap(room) or [Content("")]):
                lines.append((lead if n == 0 else Content(" " * indent)) + line)
        shaped = Content("\n").join(lines)
        self._cache = (width, shaped)
        return shaped

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self._at(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max((lead.cell_length + text.cell_length for lead, text in self.rows), default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self._at(width).split("\n")) if self.rows else 0


class ToolCard(Vertical):
    DEFAULT_CSS = """
    ToolCard {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border: round $foreground 30%;
    }
    ToolCard.-running { border: round $accent; }
    ToolCard.-ran { border: round $success 70%; }
    ToolCard.-failed, ToolCard.-not-run { border: round $error 70%; }
    ToolCard.-rejected, ToolCard.-unknown { border: round $warning 70%; }
    ToolCard.-awaiting { border: double $warning; }
    ToolCard.-denied { border: round $error 50%; }
    ToolCard .card-head { text-style: bold; }
    ToolCard .card-fields { padding: 0 0 0 2; color: $text; }
    ToolCard .card-result { padding: 0 0 0 2; color: $text-muted; }
    ToolCard .card-other-branch { padding: 0 0 0 2; color: $warning; }
    ToolCard Collapsible { border: none; padding: 0; margin: 0 0 0 1; background: transparent; }
    ToolCard Collapsible Static { padding: 0 1; }
    """

    #: Whether the images its result named are shown below it (the screen mounts them once).
    pictured = False

    def __init__(self, block: ToolCallBlock, display: Sequence[tuple[str, str]] = (),
                 result_display: Sequence[tuple[str, str]] = (), finished: bool = False) -> None:
        super().__init__()
        self.block = block
        self.display_spec = list(display)
        self.result_spec = list(result_display)
        self.preview = FormingPreview()
        self._head = Static(classes="card-head")
        self._fields = Static(classes="card-fields")
        self._result = Static(classes="card-result")
        self._other_branch = Static(classes="card-other-branch")
        self._details: Collapsible | None = None
        self.approval: ApprovalPrompt | None = None
        #: The form of the server's request for the person, while one waits (``ElicitationForm``).
        self.asking: ElicitationForm | None = None
        self._asked = Static(classes="card-asked")
        #: One card per request of its server to the model (``SamplingCard``), in order.
        self.samplings: list[SamplingCard] = []
        #: False for a tool configured "always-ask": the keys offer no "always".
        self.offer_always = True
        self._scheduled = False
        self._ready = False  # the card's own lines are mounted: details may follow them
        self._seen_version = -1
        #: Characters of arguments received so far (shown on the card while a long call forms).
        self.received = 0
        self._revealed: Static | None = None
        #: Shown from the store (not live): its details are mounted with its lines.
        self._stored = finished
        if finished and block.arguments_raw:
            # a stored call, shown whole: the same stable fields it showed live
            self.preview.feed(block.arguments_raw)
        if finished:
            # its state's classes before it is first styled (set once mounted, each one styled the card and
            # all in it again: a reopened page has a card or more an exchange)
            self._state_classes(update=False)

    def compose(self) -> ComposeResult:
        yield self._head
        yield self._fields
        yield self._other_branch
        yield self._asked
        yield self._result
        if self._stored and self.block.state in _DETAILED:  # a stored card's details: in the same mount
            self._details = self._details_widget()
            if self._details is not None:
                yield self._details

    def on_mount(self) -> None:
        self._ready = True
        self.refresh_card()

    # -- fed by the chat screen ----------------------------------------------

    def feed(self, fragment: str) -> None:
        """The next argument fragment (redrawn at most once per frame). The
        chat loop decodes a live call once and hands the card its decode
        (``block.preview``); only a card without one decodes for itself."""
        if not fragment:
            return
        self.received += len(fragment)
        shared = self.block.preview
        if shared is not None:
            if shared is not self.preview:
                self.preview = shared
            changed = shared.version != self._seen_version
            self._seen_version = shared.version
        else:
            changed = self.preview.feed(fragment)
        if (changed or self.received >= _SIZE_SHOWN_FROM) and not self._scheduled:
            self._scheduled = True
            self.set_timer(1 / 30, self._redraw_fields)

    def _redraw_fields(self) -> None:
        self._scheduled = False
        update_in_place(self._fields, self._fields_content())
        if self.block.state == "preparing" and self.received >= _SIZE_SHOWN_FROM:
            update_in_place(self._head, self._head_content())  # the size received: the same line, repainted

    @property
    def at_rest(self) -> bool:
        """Its call ended and nothing on it waits or was opened by the person: it shows what a card
        built again from its block shows (an exchange may be drawn light, ``app/tui/lights.py``)."""
        return (self.block.state in _DETAILED and self.approval is None and self.asking is None
                and self._revealed is None)

    def reveal_arguments(self) -> None:
        """Show the call's whole arguments, unlisted fields included: only ever
        on the user's explicit request (the copy picker), never by default."""
        if self._revealed is not None:
            return
        block = self.block
        if block.arguments is not None:
            text = json.dumps(block.arguments, ensure_ascii=False, indent=2)
        else:
            text = block.arguments_raw or "(no arguments)"
        self._revealed = Static(Content("All arguments (shown on request):\n" + inert(text)), classes="card-args")
        self.mount(self._revealed, after=self._result)

    def refresh_card(self) -> None:
        """Re-read the block: name, state, result."""
        self._state_classes()
        # each line repainted, laid out again only when its height changed
        update_in_place(self._head, self._head_content())
        update_in_place(self._fields, self._fields_content())
        result = self._result_content()
        update_in_place(self._result, result)
        self._result.display = bool(str(result))
        other_branch = self._other_branch_content()
        update_in_place(self._other_branch, other_branch)
        self._other_branch.display = bool(other_branch.plain)
        asked = self._asked_content()
        update_in_place(self._asked, asked)
        self._asked.display = bool(asked.plain)
        self._update_approval()
        self._update_asking()
        self._update_sampling()
        self._update_details()

    def _state_classes(self, update: bool = True) -> None:
        """The border of the block's state (``update``: styled again now; not before the card is mounted)."""
        state = self.block.state
        self.set_class(state == "running", "-running", update=update)
        for name in ("ran", "failed", "rejected", "unknown"):
            self.set_class(state == name, f"-{name}", update=update)
        self.set_class(state == "not run", "-not-run", update=update)
        self.set_class(state in PENDING_APPROVAL, "-awaiting", update=update)
        self.set_class(state == "denied", "-denied", update=update)

    def _update_approval(self) -> None:
        """The keys while the dispatcher waits for an answer (the card only shows them)."""
        if not self._ready:
            return
        waiting = self.block.state in PENDING_APPROVAL and self.block.key is not None
        if waiting and self.approval is None:
            assert self.block.key is not None
            self.approval = ApprovalPrompt(self.block.key, self.block.arguments, self.offer_always)
            self.mount(self.approval)
        elif not waiting and self.approval is not None:
            self.approval.remove()
            self.approval = None

    def _update_asking(self) -> None:
        """The form while the server's request for the person waits (the card only shows it)."""
        if not self._ready:
            return
        latest = self.block.elicitations[-1] if self.block.elicitations else None
        waiting = latest is not None and latest.state == "asked" and self.block.state == "running"
        if waiting and self.asking is None and self.block.key is not None:
            assert latest is not None
            self.asking = ElicitationForm(self.block.key, latest)
            self.mount(self.asking, after=self._asked)
        elif not waiting and self.asking is not None:
            self.asking.remove()
            self.asking = None

    def _update_sampling(self) -> None:
        """A card for each request to the model, redrawn as its state changes (the card only shows it)."""
        if not self._ready:
            return
        for card in self.samplings:
            card.refresh_card()
        for asked in self.block.samplings[len(self.samplings):]:
            card = SamplingCard(self.block.key or "", asked)
            self.mount(card, after=self.samplings[-1] if self.samplings else self._asked)
            self.samplings.append(card)

    def _asked_content(self) -> Content:
        """Each request for the person once answered: what was asked, and the (redacted) answer."""
        lines = []
        for asked in self.block.elicitations:
            if asked.state == "asked":
                continue
            answer = _ANSWERED.get(asked.state, asked.state)
            if asked.answer:
                answer += ": " + ", ".join(f"{k} = {v}" for k, v in asked.answer.items())
            elif asked.reason:
                answer += f" ({asked.reason})"
            what = asked.url if asked.mode == "url" else asked.message
            lines.append(f"✎ {asked.server} asked: {one_line(what or '', 120)} → {one_line(answer, 300)}")
        return Content(inert("\n".join(lines)))

    # -- rendering -----------------------------------------------------------

    def _head_content(self) -> Content:
        block = self.block
        state = block.state
        badge = BADGES.get(state, state)
        if block.reused and state in ("ran", "failed"):
            badge += " (from another branch)" if block.other_branch is not None else " (earlier; from the ledger)"
        name = block.name or "(no name yet)"
        parts: list[str | tuple[str, str]] = ["⚙ ", (inert(name), "bold"), "  ", (f"[{badge}]", _badge_style(state))]
        if state == "preparing" and self.received >= _SIZE_SHOWN_FROM:
            parts += ["  ", (f"{_size(self.received)} received", "$text-muted")]
        return Content.assemble(*parts)

    def _fields_content(self) -> Hanging:
        if self.block.final and self.block.arguments is not None:
            fields: list[tuple[str, str | None]] = list(visible_fields(self.block.arguments, self.display_spec))
        else:
            fields = self.preview.fields(self.display_spec)
        if not fields:
            return Hanging([])
        width = max(len(inert(label)) for label, _ in fields)
        return Hanging([(f"{inert(label):<{width}}  ", inert(value) if value is not None else "…")
                        for label, value in fields])

    def _other_branch_content(self) -> Content:
        """The same call on another branch of the conversation (the dispatcher found it in the ledger)."""
        block = self.block
        if block.already_ran is not None and not block.reused:  # earlier on this path: a second side effect
            return Content("⚠ already ran: " + inert(result_line(block.already_ran, self.result_spec, 200)))
        if block.other_branch is None:
            return Content("")
        if block.reused:
            return Content("↺ the same read ran on another branch: its result is reused")
        return Content("⚠ ran on another branch: " + inert(result_line(block.other_branch, self.result_spec, 200)))

    def _result_content(self) -> Content | Hanging:
        block = self.block
        state = block.state
        if state == "ran" and block.result is not None:
            return Hanging([("→ ", inert(result_line(block.result, self.result_spec, 300)))])
        if state in ("failed", "unknown", "rejected", "not run", "denied", "needs approval"):
            text = f"{block.not_run}." if block.not_run is not None else shown_result(block)  # one sentence
            return Content(inert(_plain_error(text)))
        if state == "preparing" and self.preview.broken:
            return Content("the arguments are not valid JSON so far")
        if state == "running" and block.progress:  # made inert where it was worded (stream.progress)
            return Content("⋯ " + block.progress)
        return Content("")

    def _details_text(self) -> str:
        result = self.block.result or ""
        value = _json(result)
        if value is not None and self.result_spec:
            lines = [f"{label}: {text}" for label, text in visible_fields(value, self.result_spec, 500)]
        elif value is not None:
            lines = json.dumps(value, ensure_ascii=False, indent=2).splitlines()
        else:
            lines = result.splitlines()
        if len(lines) > _MAX_RESULT_LINES:
            lines = lines[:_MAX_RESULT_LINES] + [f"… {len(lines) - _MAX_RESULT_LINES} more lines"]
        return inert("\n".join(lines))

    def _timings_text(self) -> str:
        names = {"required": "required fields stable", "ended": "ended", "dispatched": "dispatched",
                 "started": "started", "finished": "finished"}
        points = self.block.relative_timings()
        shown = [f"{names[k]} +{v:.2f} s" for k, v in points.items() if k in names]
        return ("Timings (from the announcement): " + " · ".join(shown)) if shown else ""

    def _update_details(self) -> None:
        if not self._ready:
            return  # on_mount comes back here once the card's own lines are in place
        if self._details is not None or self.block.state not in _DETAILED:
            return
        self._details = self._details_widget()
        if self._details is not None:
            self.mount(self._details)

    def _details_widget(self) -> Collapsible | None:
        parts = [self._timings_text()]
        if self.block.key:
            parts.append(f"Idempotency key: {self.block.key[:16]}…")
        if self.block.state == "ran" and self.block.result is not None:
            parts.append(self._details_text())
        text = "\n".join(p for p in parts if p)
        if not text:
            return None
        title = "Full result" if self.block.state == "ran" else "Details"
        # collapsed from its first layout: Collapsible sets its class only once mounted, and the one
        # frame before that laid the card out with the details open (blank rows when a result arrived)
        return Collapsible(Static(Content(text)), title=title, collapsed=True, classes="-collapsed")


#: A forming call shows how much has arrived once it is this long (a long body forms for a while).
_SIZE_SHOWN_FROM = 1024

#: The states whose card has a folded "Full result" or "Details" below its lines.
_DETAILED = ("ran", "failed", "unknown", "rejected", "not run", "denied")


#: How an answered request for the person reads on the card.
_ANSWERED = {"accept": "answered", "decline": "declined", "cancel": "cancelled"}


def _size(characters: int) -> str:
    if characters < 1024 * 1024:
        return f"{characters / 1024:.1f} KB"
    return f"{characters / (1024 * 1024):.1f} MB"


def _badge_style(state: str) -> str:
    return {
        "running": "bold $accent",
        "ran": "$success",
        "failed": "bold $error",
        "not run": "bold $error",
        "rejected": "bold $warning",
        "unknown": "bold $warning",
        "awaiting approval": "bold $warning",
        "needs approval": "bold $warning",
        "denied": "bold $error",
    }.get(state, "$text-muted")


def _json(text: str) -> object | None:
    try:
        value: object = loads(text)
    except ValueError:
        return None
    return value


def _plain_error(text: str) -> str:
    text = text.strip()
    if text.startswith("Error: "):
        text = text[len("Error: "):]
    return text[:1].upper() + text[1:] if text else text
