"""A server's prompt, expanded: its arguments read from what the person typed after
``/server:prompt``, ``prompts/get`` asked, and the messages it returns made into what the person
reviews before sending — one text (each message under its role when there are several roles)
and the attachments its images and embedded resources become (``resources.as_attachments``: the
attachments' path decides what the provider takes). Nothing is sent to the model here.

Arguments are typed ``name=value`` (quoted as a shell would: ``city="New York"``), or by position
in the order the server lists them; a missing required one is a sentence naming the usage.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import shlex
from dataclasses import dataclass, field
from typing import Any

from ..files.attach import AttachError, from_bytes
from ..stream.attachments import Attachment
from ..stream.redact import redact
from ..stream.resource_lines import link_line
from .catalog import Catalog, Prompt
from .resources import as_attachments

__all__ = ["PromptError", "Expanded", "usage", "parse_arguments", "expand"]


class PromptError(Exception):
    """A prompt that could not be expanded; the message is the sentence to show."""


@dataclass(slots=True)
class Expanded:
    #: (role, text) of each message, as the server returned them.
    messages: list[tuple[str, str]] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)

    def text(self) -> str:
        """The text the person reviews and sends: the messages' texts, each under its role where
        they are not all the person's own."""
        if all(role == "user" for role, _ in self.messages):
            return "\n\n".join(text for _, text in self.messages if text)
        return "\n\n".join(f"[{role}]\n{text}" for role, text in self.messages if text)


def usage(server: str, prompt: Prompt) -> str:
    words = [f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in prompt.arguments]
    return " ".join([f"/{server}:{prompt.name}", *words])


def parse_arguments(server: str, prompt: Prompt, typed: str) -> dict[str, str]:
    try:
        words = shlex.split(typed)
    except ValueError as exc:
        raise PromptError(f"/{server}:{prompt.name}: cannot read the arguments ({exc}).") from None
    names = [a.name for a in prompt.arguments]
    values: dict[str, str] = {}
    position = 0
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name in names:
            values[name] = value
            continue
        while position < len(names) and names[position] in values:
            position += 1
        if position >= len(names):
            raise PromptError(f"/{server}:{prompt.name} takes no more arguments ({word!r} is one too many); "
                              f"usage: {usage(server, prompt)}")
        values[names[position]] = word
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    if missing:
        raise PromptError(f"/{server}:{prompt.name} needs {', '.join(missing)}; usage: {usage(server, prompt)}")
    return values


def _content(content: Any, expanded: Expanded) -> str:
    kind = getattr(content, "type", "")
    if kind == "text":
        return str(content.text)
    if kind == "resource":
        expanded.attachments += as_attachments([content.resource])
        return f"(attached: {content.resource.uri})"
    if kind == "resource_link":
        return link_line(str(content.uri), getattr(content, "mime_type", None))
    if kind == "image":
        try:
            item = from_bytes(base64.b64decode(content.data, validate=True), f"{kind} from the prompt")
        except (binascii.Error, ValueError, AttachError) as exc:
            return f"[image: {content.mime_type}, not attached: {exc}]"
        expanded.attachments.append(item)
        return f"(attached: {item.name})"
    return f"[{kind or 'unknown'} content, not attached]"


async def expand(catalog: Catalog, server_name: str, prompt: Prompt, arguments: dict[str, str]) -> Expanded:
    from mcp.shared.exceptions import MCPError

    server = catalog.server(server_name)
    if server is None:
        raise PromptError(f"the {server_name} server is not connected")
    try:
        async with asyncio.timeout(server.config.tool_timeout):
            result = await server.client.get_prompt(prompt.name, arguments)
    except TimeoutError:
        raise PromptError(f"{server_name} did not answer within {server.config.tool_timeout:g} s") from None
    except MCPError as exc:
        raise PromptError(redact(f"{server_name} could not expand {prompt.name}: {exc.message or exc.code}")) from None
    except Exception as exc:  # the connection went, an answer that cannot be read: said, never a traceback
        why = f"{type(exc).__name__}: {exc}"
        raise PromptError(redact(f"{server_name} could not expand {prompt.name}: {why}")) from None
    expanded = Expanded()
    for message in result.messages or []:
        expanded.messages.append((str(message.role), redact(_content(message.content, expanded))))
    return expanded
