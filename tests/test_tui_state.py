"""The prompt history saved between runs (``app/tui/state.py``): each prompt redacted once, and every
one again once a secret is registered after it was saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.stream import redact as redaction
from app.tui.state import HISTORY_LIMIT, TuiState


def _saved(path: Path) -> list[str]:
    history = json.loads(path.read_text(encoding="utf-8"))["history"]
    assert isinstance(history, list)
    return history


def test_each_prompt_is_redacted_once_and_all_again_after_a_new_secret(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redaction, "_SECRETS", set())
    monkeypatch.setattr(redaction, "_pattern", None)
    calls: list[str] = []
    real = redaction.redact
    monkeypatch.setattr(redaction, "redact", lambda text: calls.append(text) or real(text))
    state = TuiState(tmp_path / "tui.json")
    history = ["use key sk-live-0123456789abcdef please", "Authorization: Bearer abcdefghijklmnop"]
    state.save_history(history)
    assert _saved(state.path) == ["use key sk-live-0123456789abcdef please", "Authorization: Bearer [redacted]"]
    calls.clear()
    history.append("third")
    state.save_history(history)
    assert calls == ["third"]  # (the two before were redacted when they were saved)
    redaction.register_secret("sk-live-0123456789abcdef")
    calls.clear()
    state.save_history(history)
    assert len(calls) == 3
    assert _saved(state.path)[0] == "use key [redacted] please"


def test_the_history_keeps_the_newest_prompts(tmp_path: Path) -> None:
    state = TuiState(tmp_path / "tui.json")
    state.save_history([f"prompt {n}" for n in range(HISTORY_LIMIT + 20)])
    saved = _saved(state.path)
    assert len(saved) == HISTORY_LIMIT and saved[-1] == f"prompt {HISTORY_LIMIT + 19}" and saved[0] == "prompt 20"
