"""``callstream replay FILE|ID [--speed X] [--idle-limit S] [--headless] [--json]``."""

from __future__ import annotations

import argparse
import sys

from ..rules.pacing import IDLE_LIMIT_RANGE, REPLAY_SPEED_RANGE, check_idle_limit, parse_replay_speed
from ..stream.inert import inert_json
from .common import fail, recording_arg

__all__ = ["register", "run", "replay_cmd"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    replay = sub.add_parser(
        "replay", help="replay a recording (or a raw .sse capture) through the live pipeline; runs nothing",
        description="Feed a recorded stream through the same pipeline as a live one, at the recorded timing "
        "divided by --speed. Recorded tool results are shown; nothing is run. A /model or /provider switch in the "
        "conversation is followed. With --headless or --json: exit 0 when the conversation finished, 1 when it "
        "ended in a stated failure (as ask does), 2 for a file that is not a recording.")
    replay.add_argument("file", metavar="FILE|ID",
                        help="a recording or raw .sse capture, or a saved conversation (its id or a unique prefix)")
    replay.add_argument("--speed", default="1", help=f"{REPLAY_SPEED_RANGE} (default 1)")
    low, high = IDLE_LIMIT_RANGE
    replay.add_argument("--idle-limit", type=float, default=None, metavar="S",
                        help=f"cap any silence at S seconds, from {low:g} to {high:g}")
    replay.add_argument("--headless", action="store_true", help="print what ask would print instead of the TUI")
    replay.add_argument("--json", action="store_true", help="print the same document as ask --json")


def run(args: argparse.Namespace) -> int:
    return replay_cmd(args.file, args.speed, args.idle_limit, args.headless, args.json)


def replay_cmd(file: str, speed: str, idle_limit: float | None, headless: bool, as_json: bool) -> int:
    try:
        factor = parse_replay_speed(speed)
        if idle_limit is not None:
            check_idle_limit(idle_limit)
    except ValueError as exc:
        return fail(str(exc))
    from ..files.paths import data_dir
    from ..replay.player import Replayer
    from ..settings.checks import ConfigError
    from ..settings.config import load_config
    from ..store.recording import RecordingError, read_recording
    from ..tools.registry import Registry
    from .printer import Printer

    try:
        recording = read_recording(recording_arg(file))
    except RecordingError as exc:
        return fail(str(exc))
    try:
        config = load_config()
    except ConfigError:
        config = None
    display = Registry.default(data_dir(), config)
    if not headless and not as_json:
        from ..tui.replay_app import ReplayApp

        ReplayApp(recording, factor, idle_limit, display).run()
        return 0

    async def run() -> int:
        replayer = Replayer(recording, factor, idle_limit, display)
        if not as_json:
            replayer.session.listeners.append(Printer(replayer.session, sys.stdout, sys.stderr))
        done = await replayer.run()
        if as_json:
            document = {"conversation": replayer.session.conversation, "provider": replayer.session.endpoint.label,
                        "status": done.status, "replay": True, "turns": [t.to_dict() for t in replayer.session.turns]}
            if done.message:
                document["message"] = done.message
            sys.stdout.write(inert_json(document))
            sys.stdout.write("\n")
        return 0 if done.status == "done" else 1  # as ask: a conversation that ended in a stated failure

    import asyncio

    return asyncio.run(run())
