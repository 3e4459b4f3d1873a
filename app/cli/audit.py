"""``callstream audit FILE…``: what dispatching on partial arguments would have run, per call."""

from __future__ import annotations

import argparse
import sys

from ..rules.words import plural
from ..stream.inert import inert, inert_json
from .common import fail, recording_arg

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    audit = sub.add_parser(
        "audit", help="what dispatching on partial arguments would have run, per call, by class",
        description="For every call in recordings or raw .sse captures: the first moment a tolerant decode had all "
        "required fields, what an eager dispatcher would have run then, and how it differs from the final call. A "
        "file that is neither is one line, exit 2.")
    audit.add_argument("files", nargs="+", metavar="FILE|ID",
                       help="recordings or raw .sse captures, or saved conversations (an id or a unique prefix)")
    audit.add_argument("--json", action="store_true", help="per-call rows and a summary, as JSON")


def run(args: argparse.Namespace) -> int:
    return _audit(args.files, args.json)


def _audit(files: list[str], as_json: bool) -> int:
    from ..files.paths import data_dir
    from ..replay.audit import CLASSES, audit_files, summarise
    from ..settings.checks import ConfigError
    from ..settings.config import load_config
    from ..store.recording import RecordingError
    from ..tools.registry import Registry

    try:
        config = load_config()
    except ConfigError:
        config = None
    registry = Registry.default(data_dir(), config)

    def display(name: str) -> list[tuple[str, str]]:
        tool = registry.get(name)
        return [(f.path, f.label) for f in tool.display] if tool else []

    try:
        audits = audit_files([recording_arg(f) for f in files], display)
    except RecordingError as exc:
        return fail(str(exc))
    summary = summarise(audits)
    if as_json:
        sys.stdout.write(inert_json({"calls": [a.row() for a in audits], "summary": summary}))
        sys.stdout.write("\n")
        return 0
    print(f"{plural(summary['calls'], 'call')} whose required fields parsed before "
          "the call ended, by what an eager dispatch would have run:")
    for klass in CLASSES:
        print(f"  {summary['counts'][klass]:>5}  {klass}")
        for example in summary["examples"].get(klass, []):
            print(f"         e.g. {inert(example)}")
    gap = summary["gap"]
    if gap.get("calls_timed"):
        print(f"time from the first moment to the call's end: median {gap['median_seconds'] * 1000:.0f} ms, "
              f"p90 {gap['p90_seconds'] * 1000:.0f} ms ({gap['calls_timed']} timed calls)")
    else:
        print("no timing: raw captures are read at an even pace")
    return 0


