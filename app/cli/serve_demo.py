"""``callstream serve-demo``: the embedded demo model as a standalone server on 127.0.0.1."""

from __future__ import annotations

import argparse

from ..rules.pacing import DEMO_SPEED_RANGE, check_demo_speed
from .common import fail

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = sub.add_parser(
        "serve-demo",
        help="run the embedded demo model as a standalone server on 127.0.0.1",
        description="Serve the demo model (offline, scripted) on 127.0.0.1 in all four dialects, for any client: "
        "/v1/chat/completions, /v1/responses, /v1/messages, /v1beta/models/demo:streamGenerateContent?alt=sse.",
    )
    serve.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port; default 8765)")
    low, high = DEMO_SPEED_RANGE
    serve.add_argument("--speed", type=float, default=1.0,
                       help=f"pacing, from {low:g} to {high:g}: 1 is a brisk real model, 10 is ten times faster, 0 "
                       "sends without pauses")


def run(args: argparse.Namespace) -> int:
    return _serve_demo(args.port, args.speed)


def _serve_demo(port: int, speed: float) -> int:
    import asyncio

    from ..demo.server import DemoServer

    try:
        check_demo_speed(speed, "--speed")
    except ValueError as exc:
        return fail(str(exc))
    server = DemoServer(port=port, speed=speed)

    async def run() -> None:
        await server.open()
        print(f"demo model (offline, scripted) listening on {server.base_url}", flush=True)
        print(f"  openai-chat       POST {server.base_url}/v1/chat/completions", flush=True)
        print(f"  openai-responses  POST {server.base_url}/v1/responses", flush=True)
        print(f"  anthropic         POST {server.base_url}/v1/messages", flush=True)
        print(f"  gemini            POST {server.base_url}/v1beta/models/demo:streamGenerateContent?alt=sse",
              flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.close()

    try:
        asyncio.run(run())
    except OSError as exc:
        return fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        pass
    return 0


