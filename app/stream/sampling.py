"""A server's request to the model (MCP ``sampling/createMessage``), as data.

Sans-I/O: the MCP layer turns the SDK's params into a ``SamplingRequest``; the
chat loop asks the person, runs it through the current provider and lets the
person edit or refuse the reply; the card shows each state from the request
alone. Why one object that changes state, rather than events: the card, the
transcript and ``ask``'s closing lines all read the same request, so what the
person saw is what is kept.

The states: ``asked`` (waiting for the person before anything is sent),
``running`` (sent to the model), ``replied`` (the reply waits for the person),
``returned`` (the reply, maybe edited, went back to the server), ``refused``
(the person, the config or ``ask`` said no, or callstream cannot send it) and
``failed`` (the model's request failed). Only text is sent: a request with
image or audio content, or one that asks the model to use tools (callstream
does not declare ``sampling.tools``), is refused on arrival, saying why.

What is kept (the transcript, the card after the answer) is what was asked and
answered, through the one redaction (``redact``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .limits import one_line
from .redact import redact
from .usage import Usage

__all__ = [
    "SamplingMessage",
    "SamplingRequest",
    "SamplingState",
    "SAMPLING_MODES",
    "parse_sampling",
    "choose_model",
    "SAMPLING_ENDED",
]

SamplingState = Literal["asked", "running", "replied", "returned", "refused", "failed"]
#: ``[mcp.NAME] sampling``: ask the person each time (the default), run without asking, or never offer it.
SAMPLING_MODES = ("ask", "allow", "deny")
#: The states after which nothing more happens to a request.
SAMPLING_ENDED = frozenset({"returned", "refused", "failed"})
#: A stored request that had not ended (callstream stopped meanwhile): read back as failed, saying so.
STOPPED = "callstream stopped before it was answered"


@dataclass(slots=True)
class SamplingMessage:
    role: Literal["user", "assistant"]
    text: str


@dataclass(slots=True)
class SamplingRequest:
    server: str
    messages: list[SamplingMessage]
    system: str | None = None
    max_tokens: int = 0
    #: The server's model hints, in its order (``modelPreferences.hints[].name``).
    hints: list[str] = field(default_factory=list)
    #: The server's ``sampling`` setting when it asked (``SAMPLING_MODES``).
    mode: str = "ask"
    state: SamplingState = "asked"
    #: The model it was (or will be) sent to, and why that one (said on the card).
    model: str | None = None
    chosen: str = ""
    #: What the model answered, and what went back to the server (the person may edit it).
    reply: str | None = None
    returned: str | None = None
    #: Why it was refused or failed (None while it goes on).
    reason: str | None = None
    #: What running it cost (None: not run, or the provider said nothing).
    usage: Usage | None = None

    def headline(self) -> str:
        """ "server X asks the model: …" — the last message of the server's, on one line."""
        last = self.messages[-1].text if self.messages else ""
        return f"{self.server} asks the model: {one_line(last, 160)}"

    @property
    def edited(self) -> bool:
        return self.returned is not None and self.reply is not None and self.returned != self.reply

    def outcome(self) -> str:
        """One line on what became of it (the card after the answer, ``ask``'s closing lines)."""
        if self.state == "returned":
            said = one_line(self.returned or "", 200)
            return f"returned ({'edited' if self.edited else 'as the model wrote it'}, {self.model}): {said}"
        if self.state in ("refused", "failed"):
            return f"{self.state}" + (f" ({self.reason})" if self.reason else "")
        return self.state

    def to_dict(self) -> dict[str, Any]:
        """What the transcript keeps: what was asked and answered, redacted."""
        out: dict[str, Any] = {
            "server": self.server,
            "state": self.state,
            "max_tokens": self.max_tokens,
            "messages": [{"role": m.role, "text": redact(m.text)} for m in self.messages],
        }
        for name in ("system", "model", "reply", "returned", "reason"):
            value = getattr(self, name)
            if value is not None:
                out[name] = redact(value)
        if self.hints:
            out["hints"] = list(self.hints)
        if self.chosen:
            out["chosen"] = self.chosen
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any) -> SamplingRequest | None:
        """A stored request; one stored before it ended is read back failed (nothing waits for it now)."""
        if not isinstance(data, dict):
            return None
        listed = data.get("messages")
        messages = [
            SamplingMessage("assistant" if m.get("role") == "assistant" else "user", str(m.get("text", "")))
            for m in (listed if isinstance(listed, list) else [])
            if isinstance(m, dict)
        ]
        hints = data.get("hints")
        text = {
            name: data[name] if isinstance(data.get(name), str) else None
            for name in ("system", "model", "reply", "returned", "reason")
        }
        state: SamplingState = next((s for s in ("returned", "refused", "failed") if data.get("state") == s), "failed")
        ended = data.get("state") == state
        max_tokens = data.get("max_tokens")
        return cls(
            str(data.get("server", "")),
            messages,
            text["system"],
            max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else 0,
            [h for h in (hints if isinstance(hints, list) else []) if isinstance(h, str)],
            state=state,
            model=text["model"],
            chosen=str(data.get("chosen") or ""),
            reply=text["reply"],
            returned=text["returned"],
            reason=text["reason"] if ended else STOPPED,
            usage=Usage.from_dict(data.get("usage")),
        )


def _text(content: Any) -> str:
    """A message's content as text; anything but text is a ``ValueError`` saying what it was."""
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind != "text" or not isinstance(block.get("text"), str):
            raise ValueError(
                f"a message holds {kind or 'unknown'} content, and callstream sends a server's "
                "request to the model as text only"
            )
        parts.append(block["text"])
    return "\n".join(parts)


def parse_sampling(server: str, params: dict[str, Any], mode: str = "ask") -> SamplingRequest:
    """The request as the card shows it (the SDK's params dumped by alias); one callstream cannot send is a
    ``SamplingRequest`` already refused, with the reason."""
    asked = SamplingRequest(server, [], mode=mode)
    system = params.get("systemPrompt")
    asked.system = redact(system) if isinstance(system, str) and system else None
    max_tokens = params.get("maxTokens")
    asked.max_tokens = max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else 0
    preferences = params.get("modelPreferences")
    hints = preferences.get("hints") if isinstance(preferences, dict) else None
    asked.hints = (
        [str(h["name"]) for h in hints if isinstance(h, dict) and isinstance(h.get("name"), str)]
        if isinstance(hints, list)
        else []
    )
    try:
        messages = params.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("it holds no messages")
        for message in messages:
            role = message.get("role") if isinstance(message, dict) else None
            if role not in ("user", "assistant"):
                raise ValueError(f"a message has the role {role!r}")
            asked.messages.append(SamplingMessage(role, redact(_text(message.get("content")))))
        if asked.messages[-1].role != "user":
            raise ValueError("its last message is not the user's, so there is nothing for the model to answer")
        if params.get("tools"):
            raise ValueError("it asks the model to use tools, which callstream does not offer a server")
        if asked.max_tokens < 1:
            raise ValueError("its maxTokens is not a positive whole number")
    except ValueError as exc:
        asked.state, asked.reason = "refused", f"callstream cannot send this request: {exc}"
    return asked


def choose_model(hints: list[str], current: str, models: list[str]) -> tuple[str, str]:
    """The model a request goes to, and the words saying why: the first hint (in the server's order) that is
    part of one of ``models`` — the models the current profile can be asked for — picks it; otherwise the
    current model. The specification: hints are substrings, evaluated in order, and advisory."""
    for hint in hints:
        wanted = hint.strip().lower()
        match = next((m for m in [current, *models] if wanted and wanted in m.lower()), None)
        if match is not None:
            return match, f"{match} (the server's hint {one_line(hint, 60)!r})"
    if hints:
        names = ", ".join(repr(one_line(h, 60)) for h in hints[:4])
        return current, f"{current} (the current model: no model this profile offers matches the hints {names})"
    return current, f"{current} (the current model)"
