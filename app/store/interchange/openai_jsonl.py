"""``export --format jsonl-openai``: the path shown, as the ``messages`` array
an OpenAI-compatible chat completions endpoint accepts, one message per line.

It is the request builder's own output for the conversation's history
(``history_of``: answered calls with their results, interruption notes as
text, nothing for a call that did not run), so what a provider would be sent
next and what this file holds cannot drift apart.
"""

from __future__ import annotations

import json
from typing import Any

from ...stream.dialects import REQUEST_BUILDERS
from ...stream.jsonwrite import plain
from ..tree import StoredTree, history_of

__all__ = ["messages_of", "jsonl_of"]


def messages_of(conversation: StoredTree) -> list[dict[str, Any]]:
    _, body = REQUEST_BUILDERS["openai-chat"](conversation.model or "model", history_of(conversation), [], None)
    return list(plain(body["messages"]))  # an attachment's base64 as the string a file holds


def jsonl_of(conversation: StoredTree) -> str:
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages_of(conversation))
