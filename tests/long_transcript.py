"""A long conversation written through the real store, quickly: the shape the
issue measured (each exchange: a user message; a reply with a sentence and two
search calls that ran; a Markdown reply with a list and a code block), each
entry written by ``Store.insert_entry`` (the import and fork path) into a real
sqlite file in one transaction. Used by the long-conversation Pilot tests and
by ``scripts/measure_open.py``.

``branch_at``: the user message of that exchange gets a second version (an
edit), answered on its own branch, as the tree keys would leave it; the
conversation is shown at the main branch's last entry.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.store.transcripts import Store
from app.store.tree import StoredTurn, StoredUser
from app.stream.blocks import TextBlock, ToolCallBlock
from app.stream.usage import Usage

__all__ = ["write_long", "question", "WORD"]

#: A word only the middle exchange's question holds (a search finds that one).
WORD = "zanzibarite"


def question(n: int, middle: int | None = None) -> str:
    extra = f" about {WORD}" if n == middle else ""
    return f"Question {n}: what do the orders of customer {n}{extra} say?"


def _call(n: int, k: int) -> ToolCallBlock:
    """A call of the demo's own search tool (its allow-lists show the customer and the count)."""
    arguments = {"customer": f"Customer {n}", "status": ("open", "shipped")[k]}
    raw = json.dumps(arguments)
    return ToolCallBlock(f"call_{n}_{k}", "search_orders", fragments=[raw], size=len(raw), ended=True, final=True,
                         arguments=arguments, state="ran", result=json.dumps({"count": k + 2, "orders": []}))


def _reply(n: int) -> str:
    return (f"Customer {n} has **three** orders:\n\n- A-{n}-1 shipped\n- A-{n}-2 packed\n- A-{n}-3 open\n\n"
            f"```python\norders = search('customer {n}')\nprint(len(orders))\n```\n\nAnything else for {n}?")


def _turns(seq: int, turn: int, n: int, model: str) -> list[StoredTurn]:
    usage = Usage(input=100 + n, output=40)
    return [StoredTurn(seq, turn, [TextBlock(f"Looking up customer {n}."), _call(n, 0), _call(n, 1)],
                       outcome="complete", stop_reason="tool_calls", usage=usage, model=model),
            StoredTurn(seq + 1, turn + 1, [TextBlock(_reply(n))], outcome="complete", stop_reason="stop",
                       usage=usage, model=model)]


def write_long(path: Path, exchanges: int, conversation: str = "long0000conversation",
               branch_at: int | None = None, middle: int | None = None, model: str = "demo-1") -> str:
    """``exchanges`` exchanges into the store at ``path`` (created if new), its turns answered by ``model``;
    its id."""
    store = Store(path)
    try:
        with store.transaction():
            store.create(conversation, "demo", model, "openai-chat", f"A long conversation ({exchanges})")
            seq = turn = 0
            parent: int | None = None
            main_leaf = 0
            for n in range(exchanges):
                store.insert_entry(conversation, seq, StoredUser(seq, question(n, middle), exchange="done"),
                                   parent, "")
                user = seq
                for item in _turns(seq + 1, turn, n, model):
                    store.insert_entry(conversation, item.seq, item, item.seq - 1, "")
                seq, turn, parent = seq + 3, turn + 2, seq + 2
                main_leaf = parent
                if n == branch_at:  # an edited version of this message, on a branch of its own
                    kept = (seq, turn)
                    seq, turn = 3 * exchanges, 2 * exchanges
                    edited = StoredUser(seq, f"Edited question {n}: only the open orders?", exchange="done")
                    store.insert_entry(conversation, seq, edited, _parent_of(user), "b1")
                    for item in _turns(seq + 1, turn, n, model):
                        store.insert_entry(conversation, item.seq, item, item.seq - 1, "b1")
                    seq, turn = kept
            store.set_head(conversation, main_leaf)
    finally:
        store.close()
    return conversation


def _parent_of(user: int) -> int | None:
    return user - 1 if user else None
