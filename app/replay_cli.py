"""``callstream replay FILE [--speed X] [--idle-limit S] [--headless] [--json]``."""

from __future__ import annotations

import asyncio
import json
import math
import sys
from pathlib import Path

from .ask import Printer
from .config import ConfigError, load_config
from .paths import data_dir
from .replay import Replayer
from .store.recording import RecordingError, read_recording
from .stream.inert import inert
from .tools.registry import Registry

__all__ = ["replay_cmd", "parse_speed"]


def parse_speed(text: str) -> float:
    if text in ("inf", "instant", "max"):
        return math.inf
    speed = float(text)
    if not speed > 0:
        raise ValueError("the speed must be more than 0")
    return speed


def replay_cmd(file: str, speed: str, idle_limit: float | None, headless: bool, as_json: bool) -> int:
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
        from .tui.replay_app import ReplayApp

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
            json.dump(document, sys.stdout, ensure_ascii=False, indent=2)
            sys.stdout.write("\n")
        return 0

    return asyncio.run(run())
