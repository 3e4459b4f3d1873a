"""``callstream chat`` (the default) and ``callstream open [ID]``: the TUI."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import fail, prompt_options, provider_options

if TYPE_CHECKING:
    from ..tui.probing import Asking

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    chat = sub.add_parser(
        "chat",
        help="open the chat TUI (the default command)",
        description="Open the chat TUI on a provider: the config's default, else the embedded demo model.",
    )
    provider_options(chat)
    prompt_options(chat)
    open_ = sub.add_parser("open", help="reopen a saved conversation in the TUI (no ID: pick from the list)",
                           description="Reopen a saved conversation as it was shown, and continue it.")
    open_.add_argument("id", nargs="?", help="conversation id, or a unique prefix of it")
    open_.add_argument("--at", type=int, metavar="ENTRY", help="open at this entry (search prints them), on its branch")
    provider_options(open_)
    prompt_options(open_)


def run(args: argparse.Namespace) -> int:
    system, role = getattr(args, "system", None), getattr(args, "role", None)
    if args.command == "open":
        return _chat(args.provider, args.model, args.base_url, conversation=args.id, transcripts=args.id is None,
                     system=system, role=role, at=args.at)
    return _chat(getattr(args, "provider", None), getattr(args, "model", None), getattr(args, "base_url", None),
                 system=system, role=role)


def _chat(provider: str | None, model: str | None, base_url: str | None, conversation: str | None = None,
          transcripts: bool = False, system: str | None = None, role: str | None = None,
          at: int | None = None) -> int:
    from ..tui import collector
    from ..tui.probing import Asking

    # how images are drawn: asked of the terminal while the app is imported and opened (its answers,
    # or their absence, take up to 0.3 s), never once the app reads stdin
    asking = Asking()
    collector.hold()  # no garbage collection until the first screen is drawn (the app releases it)
    try:
        return _run(asking, provider, model, base_url, conversation, transcripts, system, role, at)
    finally:
        collector.release(collect=False)


def _run(asking: Asking, provider: str | None, model: str | None, base_url: str | None, conversation: str | None,
         transcripts: bool, system: str | None, role: str | None, at: int | None) -> int:
    try:
        from ..settings.checks import ConfigError
        from ..tui.app import make_app, make_deferred_app

        asking.imported()
        try:
            if conversation is None and not transcripts:
                # a new conversation: the first frame first, the provider and the data files right after it
                app = make_deferred_app(provider, model, base_url, system=system, role=role)
            else:
                app = make_app(provider, model, base_url, conversation=conversation, transcripts=transcripts,
                               system=system, role=role, at=at)
        except ConfigError as exc:
            asking.wait()  # (the terminal back as it was before the line is written)
            return fail(str(exc))
    finally:
        chosen = asking.wait()
    from ..tui.pictures import set_mode

    set_mode(chosen)
    app.run()
    if app.start_error is not None:
        return fail(app.start_error)
    return 0


