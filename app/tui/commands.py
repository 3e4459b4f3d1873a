"""The built-in slash commands, as a table (``builtin_commands``) the chat screen is built with.

Each handler gets a ``SlashContext`` (the session, the runtime, a note, the
clipboard, a few named screen actions) and the rest of the line; it answers
with a note on the transcript. Nothing here is sent to the model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..files.typed_paths import complete_path
from ..settings.checks import ConfigError
from ..stream.inert import inert, inert_json
from .slash import CommandTable, Handler, SlashCommand

if TYPE_CHECKING:
    from .context import SlashContext

__all__ = ["builtin_commands"]

_BUILTIN: list[SlashCommand] = []


def _command(name: str, usage: str, help: str, *, idle_only: bool = False,
             complete_argument: Callable[[str], str | None] | None = None) -> Callable[[Handler], Handler]:
    """Put a handler in the built-in list (read by ``builtin_commands``; nothing global is registered)."""

    def add(handler: Handler) -> Handler:
        _BUILTIN.append(SlashCommand(name, usage, help, handler, idle_only, complete_argument))
        return handler

    return add


@_command("help", "", "this list")
def _help(context: SlashContext, argument: str) -> None:
    context.note(context.help_text())


@_command("new", "", "start a new conversation (this one stays saved)", idle_only=True)
def _new(context: SlashContext, argument: str) -> None:
    context.new_conversation()


@_command("model", "[NAME]", "switch the model mid-conversation (the whole history goes along); no NAME: show it",
         idle_only=True)
def _model(context: SlashContext, argument: str) -> None:
    _switch(context, None, argument or None)


@_command("provider", "[PROFILE]", "switch to a profile or provider (openai-chat, anthropic, gemini, demo, …)",
         idle_only=True)
def _provider(context: SlashContext, argument: str) -> None:
    _switch(context, argument or None, None)


def _switch(context: SlashContext, provider: str | None, model: str | None) -> None:
    runtime = context.runtime
    if provider is None and model is None:
        profiles = ", ".join(runtime.config.providers) or "none configured"
        demo = " (the demo model speaks openai-chat, openai-responses, anthropic or gemini: /model gemini)" if (
            runtime.profile.provider == "demo") else ""
        context.note(f"Talking to {runtime.endpoint.label} (model {runtime.endpoint.model}, wire format "
                    f"{runtime.endpoint.dialect}). Profiles: {inert(profiles)}.{demo}")
        return
    try:
        runtime.switch(context.session, provider, model)
    except ConfigError as exc:
        context.note(f"Cannot switch: {exc}", "error")
        return
    context.refresh_provider()
    entries = len(context.session.history)
    context.note(f"Now talking to {runtime.endpoint.label} (model {runtime.endpoint.model}, wire format "
                f"{runtime.endpoint.dialect}); the next request carries the whole conversation "
                f"({entries} entr{'y' if entries == 1 else 'ies'}).")


@_command("system", "[TEXT]", "set the system prompt for what follows; no TEXT: show it; 'none' clears it")
def _system(context: SlashContext, argument: str) -> None:
    session = context.session
    if not argument:
        context.note(f"System prompt: {session.system}" if session.system else "No system prompt is set.")
        return
    session.system = None if argument.lower() == "none" else argument
    context.note("System prompt cleared." if session.system is None else "System prompt set for the next request.")


@_command("tools", "[on|off NAME]", "the tools this conversation offers; switch one on or off")
def _tools(context: SlashContext, argument: str) -> None:
    runtime = context.runtime
    offered = runtime.offered()
    words = argument.split()
    if words:
        if len(words) != 2 or words[0] not in ("on", "off"):
            context.note("Usage: /tools, /tools on NAME, /tools off NAME", "warning")
            return
        verb, name = words
        if name not in offered.names():
            context.note(f"No tool {inert(name)!r} here (offered: {', '.join(offered.names()) or 'none'}).", "warning")
            return
        if verb == "off":
            context.disabled_tools.add(name)
        else:
            context.disabled_tools.discard(name)
        runtime.apply_tools(context.session, context.disabled_tools)
    names = offered.names()
    if not names:
        context.note("This conversation offers no tools.")
        return
    listed = ", ".join(f"{n} ({'off' if n in context.disabled_tools else 'on'})" for n in names)
    context.note(f"Tools offered: {inert(listed)}.")


@_command("retry", "", "run the last failed turn again (what already ran comes back from the ledger)",
         idle_only=True)
def _retry(context: SlashContext, argument: str) -> None:
    context.retry()


@_command("copy", "[code [N]|card|result]", "copy the last reply (or its Nth code block, the last card's "
         "shown fields, its result) to the clipboard; Ctrl+Y picks any block")
def _copy(context: SlashContext, argument: str) -> None:
    from .copying import copy_command

    copy_command(context, argument)


@_command("compact", "", "summarise the older part of the conversation and go on from the summary and the last "
         "exchange on a new branch (the original stays in the tree)", idle_only=True)
def _compact(context: SlashContext, argument: str) -> None:
    context.compact()


@_command("attach", "PATH | --clipboard", "attach a file (an image, a PDF, a text file), or the clipboard's "
         "image, to your next message (Tab completes the path)", complete_argument=complete_path)
def _attach(context: SlashContext, argument: str) -> None:
    from ..files.attach import AttachError, read_path
    from ..files.clipboard import clipboard_image
    from ..stream.attachments import describe

    if not argument.strip():
        context.note("/attach needs a path: /attach ~/Pictures/chart.png (or /attach --clipboard)", "warning")
        return
    try:
        item = clipboard_image() if argument.strip() == "--clipboard" else read_path(argument.strip())
    except AttachError as exc:
        context.note(inert(str(exc)), "error")
        return
    context.attach(item)
    context.note(f"Attached {describe(item)}: it goes with your next message.")


@_command("export", "[markdown|json] [FILE]", "write this conversation to a file (Markdown shows allow-listed "
         "fields only)")
def _export(context: SlashContext, argument: str) -> None:
    from ..store import export_document, markdown_of

    words = argument.split(maxsplit=1)
    form = "markdown"
    if words and words[0] in ("markdown", "md", "json"):
        form = "json" if words[0] == "json" else "markdown"
        words = words[1:]
    runtime = context.runtime
    stored = runtime.store.load(context.session.conversation)
    if stored is None:
        context.note("Nothing to export yet: the conversation has no messages.", "warning")
        return
    name = f"callstream-{stored.id[:8]}.{'json' if form == 'json' else 'md'}"
    target, why = _export_target(words[0] if words else None, name)
    if target is None:
        context.note(f"Nothing exported: {why} The conversation is unchanged.", "error")
        return
    if form == "json":
        text = inert_json(export_document(stored, runtime.prices)) + "\n"
    else:
        text = inert(markdown_of(stored, context.display_specs, runtime.prices))
    try:
        target.write_text(text, encoding="utf-8")
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        context.note(f"Nothing exported: cannot write {target}: {reason}. The conversation is unchanged.", "error")
        return
    context.note(f"Exported the conversation as {form} to {target}.")


def _export_target(typed: str | None, name: str) -> tuple[Path | None, str]:
    """Where /export writes: the path typed (``~`` and ``~user`` expanded), else ``name`` here;
    or None and why not, in a sentence (a path no file can have, a user this system does not know)."""
    if typed is not None and "\x00" in typed:
        return None, "the path holds a NUL character, which no file name can hold."
    try:
        return (Path(typed).expanduser() if typed is not None else Path.cwd() / name), ""
    except RuntimeError:  # "~user" for a user this system does not know (or no home for "~")
        user = typed.split("/", 1)[0] if typed is not None else "~"
        return None, f"{user} names no home directory on this system (no such user)."
    except OSError as exc:  # the current directory is gone
        return None, f"the current directory cannot be found ({exc.strerror or exc}); give a full path."


@_command("fork", "", "a new conversation holding this one up to the selected entry (Alt+↑ selects)",
         idle_only=True)
def _fork(context: SlashContext, argument: str) -> None:
    context.fork()


@_command("mcp", "", "the MCP servers: each one's state and tools (connecting, ready, failed and why)")
def _mcp(context: SlashContext, argument: str) -> None:
    context.show_mcp_servers()


@_command("clear", "", "clear the screen (the conversation and what the model sees are unchanged; /new starts over)")
def _clear(context: SlashContext, argument: str) -> None:
    context.clear()




def builtin_commands() -> CommandTable:
    """A fresh table of the built-in commands, in the order /help lists them."""
    return CommandTable(list(_BUILTIN))
