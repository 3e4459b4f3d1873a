"""Attachments in the TUI (issue 28 items 3 and 7): ``/attach PATH``, the
chip under the message (name, type, size, pixels) with a half-block
thumbnail, hostile files refused or drawn inertly — under Pilot against the
demo model, with snapshots at 120×40 and 60×20."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from app.files.attach import from_bytes
from app.stream.attachments import Attachment
from tests.attachment_files import image_bytes, write
from tests.snapshots import check_snapshot
from tests.test_tui_everyday import demo, notes, send, type_and_enter
from widgets.attachment_chips import AttachmentChips, thumbnail


def chips(app: Any) -> list[str]:
    return [str(c.render()) for c in app.screen.query(AttachmentChips)]


def gradient(tmp_path: Path) -> Path:
    from PIL import Image

    image = Image.new("RGB", (64, 32))
    image.putdata([(x * 4, y * 8, 128) for y in range(32) for x in range(64)])
    path = tmp_path / "gradient.png"
    image.save(path)
    return path


@pytest.mark.parametrize("size", [(120, 40), (60, 20)])
async def test_attach_then_send_shows_a_chip_with_a_thumbnail_and_the_demo_names_the_file(
        tmp_path: Path, size: tuple[int, int], request: pytest.FixtureRequest) -> None:
    path = gradient(tmp_path)
    app = demo()
    async with app.run_test(size=size) as pilot:
        await type_and_enter(app, pilot, f"/attach {path}")
        assert any("Attached gradient.png · PNG · " in n and "64×32" in n for n in notes(app))
        await send(app, pilot, "What is this?")
        (chip,) = chips(app)
        assert chip.startswith("📎 gradient.png · PNG · ") and "64×32" in chip and "▀" in chip
        await pilot.pause()
        check_snapshot(app, f"attachment_chip_{size[0]}x{size[1]}", request.config)
        said = "".join(b.text for b in app.session.turns[-1].blocks if b.type == "text")
        assert said.startswith("I received 1 file:\n- attachment 1 · PNG · ") and "64×32" in said


async def test_a_reopened_conversation_shows_its_attachment_chips_as_the_live_screen_did(tmp_path: Path) -> None:
    from app.tui.app import make_app
    from tests.test_tui import demo_config, still
    from tests.waiting import quiet

    path = gradient(tmp_path)
    app = demo()
    async with app.run_test(size=(120, 40)) as pilot:
        await type_and_enter(app, pilot, f"/attach {path}")
        await send(app, pilot, "What is this?")
        live = chips(app)
        conversation = app.session.conversation
    assert len(live) == 1 and live[0].startswith("📎 gradient.png · PNG · ")
    reopened = still(make_app(config=demo_config(), conversation=conversation))
    async with reopened.run_test(size=(120, 40)) as pilot:
        await quiet(pilot)
        assert chips(reopened) == live


async def test_attach_a_missing_file_says_so_and_sends_nothing(tmp_path: Path) -> None:
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_enter(app, pilot, f"/attach {tmp_path / 'absent.png'}")
        assert any("absent.png: no such file." in n for n in notes(app))
        await send(app, pilot, "hello")
        assert chips(app) == []


async def test_attach_a_truncated_png_is_refused_with_its_reason(tmp_path: Path) -> None:
    whole = image_bytes("PNG", (100, 100), noise=True)
    path = write(tmp_path, "cut.png", whole[: len(whole) // 2])
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_enter(app, pilot, f"/attach {path}")
        assert any("cut.png: the image is damaged or truncated" in n for n in notes(app))


def test_a_thumbnail_is_cells_of_colour_never_the_files_bytes() -> None:
    data = image_bytes("PNG", (40, 20))
    drawn = thumbnail(data)
    assert drawn is not None
    assert set(drawn.plain) <= {"▀", "\n"} and "\x1b" not in drawn.plain


def test_an_image_that_cannot_be_decoded_is_named_on_its_chip_not_drawn() -> None:
    hostile = b"\x89PNG\r\n\x1a\n\x1b]52;c;aGVsbG8=\x07\x1b[2J"
    item = Attachment("evil\x1b[31m.png", "image/png", len(hostile), hashlib.sha256(hostile).hexdigest(), hostile,
                      10, 10)
    text = AttachmentChips._content([item], images=True)
    assert "\x1b" not in text.plain
    assert "the image could not be drawn (damaged)" in text.plain and "evil\\x1b[31m.png" in text.plain


def test_a_downscaled_image_says_so_on_its_chip() -> None:
    from app.files.attach import fit

    small = fit(from_bytes(image_bytes("PNG", (9000, 200)), "wide.png"), "anthropic")
    text = AttachmentChips._content([small], images=False)
    assert "downscaled from 9000×200" in text.plain
