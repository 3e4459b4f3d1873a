"""The line under an exchange: which model answered and what the exchange
cost in tokens (every request of its tool loop together), as the provider
reported it — or, where it reported nothing, that it did not: no numbers,
never zeros."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from app.stream.inert import inert
from app.stream.limits import one_line
from app.stream.usage import NOT_REPORTED, Usage, usage_words

__all__ = ["UsageLine", "usage_text"]


def usage_text(model: str | None, usage: Usage | None, price: str = "") -> str:
    """``gpt-4o · tokens 1,234 in · 56 out · $0.0012`` (the model as the provider named it: made inert;
    ``price``: what the exchange cost in money, "" where the model has no price)."""
    spent = (usage_words(usage) or NOT_REPORTED) + (f" · {price}" if price and usage is not None else "")
    return f"{inert(one_line(model, 80))} · {spent}" if model else spent


class UsageLine(Static):
    DEFAULT_CSS = """
    UsageLine {
        height: auto;
        padding: 0 1;
        color: $text-muted;
        text-align: right;
    }
    """

    def __init__(self, model: str | None, usage: Usage | None, price: str = "") -> None:
        self.model_name = model
        self.usage = usage
        super().__init__(Content(usage_text(model, usage, price)))
