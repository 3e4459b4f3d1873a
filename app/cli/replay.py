"""``callstream replay FILE [--speed X] [--idle-limit S] [--headless] [--json]``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..stream.inert import inert, inert_json

__all__ = ["register", "run", "replay_cmd", "parse_speed"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    replay = sub.add_parser(
        "replay", help="replay a recording (or a raw .sse capture) through the live pipeline; runs nothing",
        description="Feed a recorded stream through the same pipeline as a live one, at the recorded timing "
        "divided by --speed. Recorded tool results are shown; nothing is run.")
    replay.add_argument("file")
    replay.add_argument("--speed", default="1", help="0.25 … 64, or instant (default 1)")
    replay.add_argument("--idle-limit", type=float, default=None, help="cap any silence at this many seconds")
    replay.add_argument("--headless", action="store_true", help="print what ask would print instead of the TUI")
    replay.add_argument("--json", action="store_true", help="print the same document as ask --json")


def run(args: argparse.Namespace) -> int:
    return replay_cmd(args.file, args.speed, args.idle_limit, args.headless, args.json)


def parse_speed(text: str) -> float:
    if text in ("inf", "instant", "max"):
        return math.inf
    speed = float(text)
    if not speed > 0:
        raise ValueError("the speed must be more than 0")
    return speed


def replay_cmd(file: str, speed: str, idle_limit: float | None, headless: bool, as_json: bool) -> int:
    from ..config import ConfigError, load_config
    from ..paths import data_dir
    from ..replay import Replayer
    from ..store.recording import RecordingError, read_recording
    from ..tools.registry import Registry
    from .printer import Printer

    try:
        factor = parse_speed(speed)
    except ValueError:
        print(f"callstream: --speed wants a number above 0, or instant (got {speed!r})", file=sys.stderr)
        return 2
    try:
        recording = read_recording(Path(file))
    except RecordingError as exc:
        print(f"callstream: {inert(str(exc))}", file=sys.stderr)
        return 2
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
            sys.stdout.write(inert_json(document))
            sys.stdout.write("\n")
        return 0

    import asyncio

    return asyncio.run(run())
