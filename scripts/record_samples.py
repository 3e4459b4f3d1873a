"""Re-record the sample recordings in transcripts/ with the embedded demo
model, at its normal pace, so ``callstream replay`` has something to show on
a fresh checkout. Run: .venv/bin/python scripts/record_samples.py [NAME...]
(no NAME: all of them)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLES = {
    "two-searches": ("openai-chat", 3, ["Show me Grace Hopper's open and shipped orders"]),
    "ticket-with-escapes-and-unicode": ("anthropic", 3, [
        "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."]),
    "cutoff-mid-call": ("openai-responses", 0, ["/demo cutoff"]),
    "schema-rejection": ("gemini", 3, ["/demo invalid-args"]),
    "retry-after-dispatch": ("anthropic", 3, ["/demo retry-after-dispatch"]),
}


async def record(name: str, dialect: str, retries: int, messages: list[str]) -> Path:
    from app.runtime.wiring import open_runtime
    from app.settings.config import Config
    from app.settings.profiles import ProviderProfile

    profile = ProviderProfile(name="demo", provider="demo", demo_dialect=dialect, demo_speed=1.0, retries=retries)
    runtime = open_runtime(config=Config(providers={"demo": profile}, default="demo"))
    session = runtime.session()
    try:
        for message in messages:
            await session.send(message)
    finally:
        await session.aclose()
        runtime.close()
    source = Path(os.environ["CALLSTREAM_HOME"]) / "recordings" / f"{session.conversation}.ndjson"
    target = ROOT / "transcripts" / f"{name}.ndjson"
    shutil.copyfile(source, target)
    return target


def main() -> int:
    home = tempfile.mkdtemp(prefix="callstream-samples-")
    os.environ["CALLSTREAM_HOME"] = home
    os.environ["CALLSTREAM_CONFIG"] = os.path.join(home, "none.toml")
    chosen = sys.argv[1:] or list(SAMPLES)
    for name in chosen:
        dialect, retries, messages = SAMPLES[name]
        path = asyncio.run(record(name, dialect, retries, messages))
        print(f"recorded {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
