"""Getting a file into a message (issue 28 item 1): ``/attach`` path
completion, a pasted or dropped path offered as an attachment, the
clipboard's image through the desktop's tool, and Ctrl+Y copying an
attachment's path — under Pilot against the demo model."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual import events
from textual.widgets import OptionList

from app.files.attach import AttachError
from app.files.clipboard import clipboard_image, clipboard_tool
from app.files.typed_paths import complete_path, pasted_path
from tests.attachment_files import image_bytes, write
from tests.test_attachments_tui import chips, gradient
from tests.test_tui_everyday import demo, notes, prompt_of, send, type_and_enter

# -- Tab on /attach's path -----------------------------------------------------------------------


def test_a_path_completes_to_the_one_file_it_starts_and_a_folder_gets_its_slash(tmp_path: Path) -> None:
    write(tmp_path, "chart.png", b"x")
    (tmp_path / "shots").mkdir()
    assert complete_path(f"{tmp_path}/ch") == f"{tmp_path}/chart.png"
    assert complete_path(f"{tmp_path}/sh") == f"{tmp_path}/shots/"


def test_several_matches_complete_to_their_common_start_and_none_adds_nothing(tmp_path: Path) -> None:
    write(tmp_path, "report-2025.pdf", b"x")
    write(tmp_path, "report-2026.pdf", b"x")
    assert complete_path(f"{tmp_path}/rep") == f"{tmp_path}/report-202"
    assert complete_path(f"{tmp_path}/report-202") is None  # ambiguous: Tab adds nothing
    assert complete_path(f"{tmp_path}/zzz") is None
    assert complete_path(f"{tmp_path}/absent-folder/x") is None


def test_hidden_files_complete_only_when_a_dot_is_typed(tmp_path: Path) -> None:
    write(tmp_path, ".env", b"x")
    write(tmp_path, "env.txt", b"x")
    assert complete_path(f"{tmp_path}/") == f"{tmp_path}/env.txt"
    assert complete_path(f"{tmp_path}/.e") == f"{tmp_path}/.env"


async def test_tab_after_slash_attach_completes_the_path_in_the_box(tmp_path: Path) -> None:
    gradient(tmp_path)
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt_of(app).text = f"/attach {tmp_path}/gra"
        await pilot.press("tab")
        assert prompt_of(app).text == f"/attach {tmp_path}/gradient.png"
        await pilot.press("enter")
        await pilot.pause()
        assert any("Attached gradient.png · PNG" in n for n in notes(app))


# -- a pasted or dropped path --------------------------------------------------------------------


def test_a_dropped_path_is_recognised_as_terminals_paste_it(tmp_path: Path) -> None:
    path = write(tmp_path, "my photo.png", image_bytes())
    assert pasted_path(str(path)) is None  # unquoted with a space: two words, not one path
    assert pasted_path(f"'{path}'") == path
    assert pasted_path(str(path).replace(" ", "\\ ")) == path
    assert pasted_path(f"file://{str(path).replace(' ', '%20')}") == path
    assert pasted_path(f"  '{path}'\n") == path


def test_a_paste_that_is_not_one_existing_file_stays_text(tmp_path: Path) -> None:
    write(tmp_path, "notes.txt", b"x")
    assert pasted_path("notes.txt") is None  # a bare word is text
    assert pasted_path(str(tmp_path)) is None  # a folder
    assert pasted_path(f"{tmp_path}/absent.png") is None
    assert pasted_path(f"{tmp_path}/notes.txt\n{tmp_path}/notes.txt") is None
    assert pasted_path("look at 'this") is None  # an unclosed quote


@given(st.text(max_size=300))
def test_any_paste_is_a_file_or_text_never_an_error(text: str) -> None:
    found = pasted_path(text)
    assert found is None or found.is_file()


async def test_a_path_pasted_into_an_empty_box_is_offered_as_an_attachment(tmp_path: Path) -> None:
    path = gradient(tmp_path)
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(events.Paste(f"'{path}'"))
        await pilot.pause()
        assert prompt_of(app).text == f"/attach {path}"
        await pilot.press("enter")
        await pilot.pause()
        await send(app, pilot, "What is this?")
        (chip,) = chips(app)
        assert chip.startswith("📎 gradient.png · PNG")


async def test_a_path_pasted_into_words_being_typed_is_typed_as_it_came(tmp_path: Path) -> None:
    path = gradient(tmp_path)
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = prompt_of(app)
        prompt.text = "compare with "
        prompt.cursor_location = (0, len(prompt.text))
        app.post_message(events.Paste(str(path)))  # as a terminal paste arrives: the app forwards it
        await pilot.pause()
        assert prompt.text == f"compare with {path}"


# -- the clipboard's image -----------------------------------------------------------------------


def test_without_a_clipboard_tool_the_sentence_says_which_would_give_an_image(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WAYLAND_DISPLAY", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert clipboard_tool() is None
    with pytest.raises(AttachError, match="No clipboard tool for images here: wl-paste"):
        clipboard_image()


@pytest.mark.skipif(not (shutil.which("xclip") and shutil.which("Xvfb")),
                    reason="needs xclip and Xvfb (apt-get install xclip xvfb): the X11 clipboard is a real "
                           "X server's, and none is here")
def test_an_image_copied_to_the_x11_clipboard_is_attached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    png = write(tmp_path, "copied.png", image_bytes("PNG", (30, 20)))
    ready, told = os.pipe()  # Xvfb writes its display number here once it accepts clients
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(told), "-nolisten", "tcp"], pass_fds=(told,),
                            stderr=subprocess.DEVNULL)
    os.close(told)
    try:
        with os.fdopen(ready) as answer:
            display = ":" + answer.readline().strip()
        env = {**os.environ, "DISPLAY": display}
        copier = subprocess.Popen(["xclip", "-selection", "clipboard", "-target", "image/png", "-in", str(png)],
                                  env=env)
        copier.wait(timeout=10)
        for _ in range(200):  # xclip's forked server owns the clipboard once it offers the PNG target
            targets = subprocess.run(["xclip", "-selection", "clipboard", "-target", "TARGETS", "-out"], env=env,
                                     capture_output=True, check=False, timeout=10)
            if b"image/png" in targets.stdout:
                break
        monkeypatch.setenv("DISPLAY", display)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        item = clipboard_image()
        assert (item.media_type, item.width, item.height) == ("image/png", 30, 20)
    finally:
        xvfb.terminate()
        xvfb.wait()


async def test_slash_attach_clipboard_without_a_tool_says_so_and_attaches_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WAYLAND_DISPLAY", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_enter(app, pilot, "/attach --clipboard")
        assert any("No clipboard tool for images here" in n for n in notes(app))


# -- Ctrl+Y ---------------------------------------------------------------------------------------


async def test_ctrl_y_copies_an_attachments_file_path(tmp_path: Path) -> None:
    path = gradient(tmp_path)
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_enter(app, pilot, f"/attach {path}")
        await send(app, pilot, "What is this?")
        await pilot.press("ctrl+y")
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        index = labels.index("Attachment gradient.png: its file's path")
        options.highlighted = index
        await pilot.press("enter")
        await pilot.pause()
        copied = Path(app.clipboard)
        assert copied.read_bytes() == path.read_bytes() and copied.parent.parent.name == "attachments"
