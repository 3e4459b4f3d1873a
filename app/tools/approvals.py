"""Whether a call may run without asking, and what the user's answer was.

The dispatcher asks this before it claims a side-effecting call; a widget
never decides (DESIGN.md "Call states"). The rules, in order:

1. a ``[approval].deny`` pattern that matches → ``deny`` (deny beats every allow);
1b. a side effect whose tool and canonical arguments already ran (earlier on
   this conversation's path, or on another branch: ``ran_before``) → ask,
   whatever allows the tool; only ``--approve`` covering the tool runs it
   (the user's answer given in advance);
2. the tool's ``approval = "never"`` → run; ``"always-ask"`` → ask every time
   (only ``--approve`` naming it exactly on the command line runs it without
   asking: a pattern such as ``*`` or ``wire_*`` does not, no more than ``all``);
3. ``--approve all | read-only | TOOL,...`` (``ask``), an "always" answer
   (``[approval].allow``; kept beyond this run by ``write_always``, which the
   runtime wires to the config file), or "for this conversation" → run;
4. ``approval = "ask"`` → ask;
5. otherwise the tool's hints: read-only runs, anything else (destructive or
   unhinted) asks.

Patterns are tool names with ``*`` (``git__*`` is every tool of one server).
Without anyone to ask (``callstream ask``) an ``ask`` fails closed: the call
ends ``needs approval`` and is stored that way, so a later
``ask --conversation ID --approve TOOL`` or ``callstream open ID`` can answer it.

Every path to ``running`` asks ``decide`` — a live call, a retry, a stored
pending approval answered after a reopen (the user's answer never outranks
a deny rule written since).

Nothing here reads or writes a file: deciding is pure, and keeping an
"always" is the injected ``write_always``'s business.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from ..settings.config import Config
from .base import Tool

__all__ = ["Answer", "Approvals", "Decision", "CHOICES"]

Decision = Literal["run", "ask", "deny"]
#: once · this conversation · always for this tool · deny (a reason may go with it)
CHOICES = ("once", "conversation", "always", "deny")


@dataclass(slots=True, frozen=True)
class Answer:
    choice: str
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.choice not in CHOICES:
            raise ValueError(f"an approval answer is one of {', '.join(CHOICES)}")


def _matches(patterns: Iterable[str], name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


@dataclass
class Approvals:
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    #: Keeps an "always" answer beyond this run, given the tool's name and the
    #: conversation it was given in (the runtime appends it to the config
    #: file's ``[approval].allow``); None: remembered for this run only.
    write_always: Callable[[str, str], None] | None = None
    #: Someone can answer (the TUI); False: an ``ask`` ends as ``needs approval``.
    interactive: bool = True
    #: ``--approve``: "all", "read-only", or tool-name patterns.
    approve: list[str] = field(default_factory=list)
    #: "for this conversation" answers (tool names).
    conversation: set[str] = field(default_factory=set)

    @classmethod
    def from_config(cls, config: Config, interactive: bool = True, approve: str | None = None,
                    write_always: Callable[[str, str], None] | None = None) -> Approvals:
        words = [w.strip() for w in (approve or "").split(",") if w.strip()]
        # the config's own allow list, shared by every session of the process: "always" adds to it
        return cls(config.allow, config.deny, write_always, interactive, words)

    def decide(self, tool: Tool, ran_before: bool = False) -> Decision:
        """The one decision, for every path (see the module docstring).
        ``ran_before``: this call's tool and canonical arguments already ran in
        the conversation (on its path or another branch) — a second side effect."""
        name = tool.name
        if _matches(self.deny, name):
            return "deny"
        if ran_before and not tool.read_only:
            return "run" if self._approved(tool) else "ask"
        if tool.approval == "never":
            return "run"
        if tool.approval == "always-ask":
            return "run" if self._approved(tool) else "ask"  # named exactly: no pattern stands for it
        if self._approved(tool):
            return "run"
        if _matches(self.allow, name) or name in self.conversation:
            return "run"
        if tool.approval == "ask":
            return "ask"
        return "run" if tool.read_only else "ask"

    def _approved(self, tool: Tool) -> bool:
        """``--approve`` covers the tool (an always-ask tool only by its exact name)."""
        if tool.approval == "always-ask":
            return tool.name in self.approve
        named = _matches([w for w in self.approve if w not in ("all", "read-only")], tool.name)
        return named or "all" in self.approve or (tool.read_only and "read-only" in self.approve)

    def offers_always(self, tool: Tool) -> bool:
        """"Always" is not offered for a tool the config says to ask about every time."""
        return tool.approval != "always-ask"

    def remember(self, tool: Tool, answer: Answer, conversation: str) -> str | None:
        """Keep what a "this conversation" or "always" answer allows. Returns
        the sentence to state when an "always" could not be written to the
        config (invalid TOML mid-edit, a read-only file): the answer stands
        all the same — the call goes ahead, allowed until callstream exits."""
        if answer.choice == "conversation":
            self.conversation.add(tool.name)
        elif answer.choice == "always" and self.offers_always(tool):
            self.conversation.add(tool.name)
            if tool.name not in self.allow:
                self.allow.append(tool.name)
                if self.write_always is not None:
                    try:
                        self.write_always(tool.name, conversation)
                    except Exception as exc:  # whatever the write met, the user's answer is not lost with it
                        why = str(exc).rstrip(".") or type(exc).__name__
                        return (f"\"Always\" for {tool.name} was not saved to the config: {why}. This call goes "
                                f"ahead on your answer, and {tool.name} is allowed until callstream exits.")
        return None
