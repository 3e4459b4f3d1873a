"""What the TUI remembers between runs, in the data dir: the theme chosen in
the palette, and the prompt history (Up/Down in the input box).

One small JSON file, written whole (user-only, like everything in the data
dir); a file that cannot be read is treated as empty, never as a crash.
Prompts are redacted on the way in, like every other sink.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ..files.paths import data_dir

__all__ = ["TuiState", "HISTORY_LIMIT"]

#: Prompts kept for Up/Down, newest last.
HISTORY_LIMIT = 500


class TuiState:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "tui.json"
        self._data: dict[str, Any] = {}
        #: Each prompt of the last history saved, redacted, under the secrets known then.
        self._redacted: dict[str, str] = {}
        self._secrets: frozenset[str] = frozenset()
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                self._data = loaded

    @property
    def theme(self) -> str | None:
        theme = self._data.get("theme")
        return theme if isinstance(theme, str) else None

    @theme.setter
    def theme(self, value: str) -> None:
        self._data["theme"] = value
        self.save()

    @property
    def history(self) -> list[str]:
        history = self._data.get("history")
        return [h for h in history if isinstance(h, str)] if isinstance(history, list) else []

    def save_history(self, history: list[str]) -> None:
        """Saved after each prompt sent: each prompt is redacted once (every one again when a secret was
        registered since), not the whole history each time (500 redactions an Enter once it is full)."""
        from ..stream.redact import redact, secrets_known

        kept = history[-HISTORY_LIMIT:]
        secrets = secrets_known()
        done = self._redacted if secrets == self._secrets else {}
        self._redacted = {prompt: done[prompt] if prompt in done else redact(prompt) for prompt in kept}
        self._secrets = secrets
        self._data["history"] = [self._redacted[prompt] for prompt in kept]
        self.save()

    def save(self) -> None:
        with contextlib.suppress(OSError):
            tmp = self.path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(self._data, out, ensure_ascii=False)
            os.replace(tmp, self.path)
