"""SVG snapshots of the app's screen, compared with the files in
tests/snapshots/. ``pytest --snapshot-update`` rewrites them (review the
diff before committing); a mismatch leaves the new screen beside the old as
NAME.actual.svg for a look."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App

HERE = Path(__file__).parent / "snapshots"


def _normalise(svg: str) -> str:
    # Rich names its CSS classes after a hash of the whole document: equal
    # screens give equal SVGs, so nothing needs masking but the title.
    return re.sub(r"<title>.*?</title>", "<title/>", svg)


def screen_svg(app: App[object]) -> str:
    """The screen as an SVG, for comparing two screens without a stored file."""
    return _normalise(app.export_screenshot(title="screen"))


def check_snapshot(app: App[object], name: str, config: pytest.Config, mask: str | None = None) -> str:
    """``mask``: a regex whose matches are blanked first (a value that differs
    on every run, such as an idempotency key)."""
    svg = _normalise(app.export_screenshot(title=name))
    if mask:  # Rich's class names hash the unmasked text: they go too
        svg = re.sub(r"terminal-\d+-", "terminal-", re.sub(mask, "MASKED", svg))
    path = HERE / f"{name}.svg"
    actual = HERE / f"{name}.actual.svg"
    if config.getoption("--snapshot-update") or not path.exists():
        HERE.mkdir(exist_ok=True)
        path.write_text(svg)
        actual.unlink(missing_ok=True)
        return svg
    expected = path.read_text()
    if svg != expected:
        actual.write_text(svg)
        pytest.fail(f"the screen differs from tests/snapshots/{name}.svg (new one: {actual.name})")
    actual.unlink(missing_ok=True)
    return svg
