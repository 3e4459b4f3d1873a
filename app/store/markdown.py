"""A stored conversation as Markdown: a readable export of the path shown,
prose as written and each call with its allow-listed fields and its state."""

from __future__ import annotations

from ..rules.prices import PriceBook, money_words
from ..stream.attachments import describe
from ..stream.blocks import ToolCallBlock
from ..stream.preview import result_line, shown_result, visible_fields
from ..stream.usage import total, usage_words
from .search import Display
from .tree import StoredTree, StoredTurn, StoredUser

__all__ = ["markdown_of"]


def markdown_of(conversation: StoredTree, display: Display, prices: PriceBook | None = None) -> str:
    """A readable export: prose as written, each call with its allow-listed
    fields and its state (``display(name)`` gives the allow-lists); with
    ``prices``, what each turn and the whole tree cost in money."""
    book = prices or PriceBook({}, {}, None)
    lines = [f"# {conversation.title or 'Conversation'}", "",
             f"*{conversation.model} via {conversation.provider} · conversation {conversation.id}*", ""]
    turns = [i for i in conversation.tree or conversation.items if isinstance(i, StoredTurn)]
    spent = " · ".join(p for p in (usage_words(total(i.usage for i in turns)),
                                   book.spend(turns).words() if prices else "") if p)
    if spent:
        lines[-2:-1] = [lines[-2], "", f"*{spent} in all (every turn, every branch)*"]
    for item in conversation.items:
        if isinstance(item, StoredUser):
            lines += ["## You" if item.kind == "user" else "## Summary (the conversation was compacted here)", "",
                      item.text, ""]
            # each attachment linked where the data dir keeps it (by content hash)
            lines += [f"- 📎 [{describe(a)}](attachments/{a.digest[:2]}/{a.digest})" for a in item.attachments]
            lines += [""] if item.attachments else []
            continue
        heading = "## Assistant"
        money = book.cost(item.usage, item.model) if prices else None
        cost = " · ".join(part for part in (item.model, usage_words(item.usage),
                                            money_words(money) if money is not None else "") if part)
        lines += [heading, "", f"*{cost}*", ""] if cost else [heading, ""]
        for failure in item.failures:
            lines += [f"> {failure}", ""]
        for block in item.blocks:
            if block.type == "text":
                lines += [block.text, ""]
            elif block.type == "reasoning":
                lines += ["<details><summary>Reasoning</summary>", "", block.text, "", "</details>", ""]
            elif isinstance(block, ToolCallBlock):
                args_spec, result_spec = display(block.name)
                lines.append(f"- **{block.name}** — {block.state}")
                for label, value in visible_fields(block.arguments or {}, args_spec):
                    lines.append(f"  - {label}: {value}")
                if block.result:
                    spec = result_spec if block.state == "ran" else []
                    lines.append(f"  - → {result_line(shown_result(block), spec, 300)}")
                if block.already_ran is not None:
                    lines.append(f"  - ⚠ already ran: {result_line(block.already_ran, result_spec, 200)}")
                elif block.other_branch is not None:
                    lines.append("  - ↺ reused from another branch" if block.reused else
                                 f"  - ⚠ ran on another branch: {result_line(block.other_branch, result_spec, 200)}")
                lines.append("")
        if item.note:
            lines += [f"> {item.note}", ""]
        if item.detail:  # the provider's whole error text, folded
            fence = "~~~~" if "```" in item.detail else "```"
            lines += ["<details><summary>Details</summary>", "", fence, item.detail, fence, "", "</details>", ""]
    return "\n".join(lines).rstrip() + "\n"
