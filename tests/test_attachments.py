"""Attachments (issue 28): the type from the bytes, hostile files refused
with a sentence, images over a provider's limits downscaled (Pillow) or
refused before the request, stored once by content hash, and `ask -a`
against the demo model in every dialect (which answers with what it got)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.files.attach import AttachError, fit, from_bytes, read_path
from app.stream.attachments import Attachment, describe, detect_media_type, problems
from tests import test_ask
from tests.attachment_files import image_bytes, pdf_bytes, write
from tests.test_ask import DIALECTS, ask

#: test_ask's fixture (a config with a demo provider for each dialect), shared rather than copied
demo_config = test_ask.demo_config


@pytest.mark.parametrize(("fmt", "media_type"), [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"),
                                                 ("WEBP", "image/webp")])
def test_an_image_type_and_pixels_come_from_its_bytes(fmt: str, media_type: str) -> None:
    item = from_bytes(image_bytes(fmt, (64, 48)), "picture.txt")  # the name says text; the bytes say otherwise
    assert (item.media_type, item.width, item.height) == (media_type, 64, 48)
    assert item.kind == "image" and "64×48" in describe(item)


def test_a_pdf_and_a_text_file_are_known_by_their_bytes() -> None:
    assert from_bytes(pdf_bytes(), "report.png").media_type == "application/pdf"
    text = from_bytes("héllo\nworld\n".encode(), "notes")
    assert text.media_type == "text/plain" and text.kind == "text" and text.width is None


def test_a_binary_file_of_no_known_type_is_refused_with_a_sentence() -> None:
    with pytest.raises(AttachError, match="is not an image .* a PDF or a UTF-8 text file"):
        from_bytes(b"\x00\x01\x02binary\xff", "blob.bin")


def test_a_decompression_bomb_is_refused_before_it_is_decoded() -> None:
    bomb = image_bytes("PNG", (12000, 12000), mode="1")  # 17 KB on disk, 144 million pixels
    with pytest.raises(AttachError, match="decompression bomb"):
        from_bytes(bomb, "bomb.png")


def test_a_truncated_png_is_refused_as_damaged() -> None:
    whole = image_bytes("PNG", (200, 200), noise=True)
    with pytest.raises(AttachError, match="damaged or truncated"):
        from_bytes(whole[: len(whole) // 2], "cut.png")


def test_bytes_that_only_pretend_to_be_a_png_are_refused() -> None:
    fake = b"\x89PNG\r\n\x1a\n" + b"\x1b]52;c;aGVsbG8=\x07\x1b[2J" * 10
    with pytest.raises(AttachError, match="damaged or truncated"):
        from_bytes(fake, "fake.png")


def test_terminal_escapes_in_a_text_file_and_its_name_are_shown_inert() -> None:
    item = from_bytes(b"\x1b]52;c;aGVsbG8=\x07first line\nsecond\n", "evil\x1b[2J.txt")
    assert item.media_type == "text/plain"  # the user's own text is sent as it is
    chip = describe(item)
    assert "\x1b" not in chip and "\\x1b" in chip


def test_a_missing_file_and_a_folder_are_refused_with_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(AttachError, match="no such file"):
        read_path(str(tmp_path / "absent.png"))
    with pytest.raises(AttachError, match="is a folder"):
        read_path(str(tmp_path))


def test_an_image_over_anthropics_pixels_is_downscaled_and_the_note_says_so() -> None:
    item = from_bytes(image_bytes("PNG", (9000, 300)), "wide.png")
    assert problems("anthropic", [item])  # as it is, it cannot be sent
    small = fit(item, "anthropic")
    assert (small.width, small.height) == (8000, 266)
    assert small.note and "downscaled from 9000×300" in small.note and "Anthropic" in small.note
    assert problems("anthropic", [small]) == []
    assert fit(item, "openai-chat") is item and fit(small, "anthropic") is small  # within the limits: untouched


def test_an_image_over_anthropics_bytes_is_downscaled_under_them() -> None:
    item = from_bytes(image_bytes("PNG", (1400, 1400), noise=True), "noise.png")
    assert item.size > 5 * 1024 * 1024
    small = fit(item, "anthropic")
    assert small.size <= 5 * 1024 * 1024 and small.width is not None and small.width < 1400
    assert from_bytes(small.data, "again.png").width == small.width  # a real image, whole


def test_a_gif_for_gemini_is_refused_with_a_sentence_naming_the_provider() -> None:
    item = from_bytes(image_bytes("GIF"), "anim.gif")
    assert problems("gemini", [item]) == ["anim.gif: Gemini does not take GIF files."]
    assert problems("anthropic", [item]) == []


def test_too_many_images_for_one_request_is_refused() -> None:
    item = from_bytes(image_bytes("PNG", (8, 8)), "dot.png")
    found = problems("anthropic", [item] * 101)
    assert found == ["101 images is over Anthropic's 100 in one request."]


@given(st.binary(max_size=512))
def test_any_bytes_are_attached_or_refused_with_a_sentence(data: bytes) -> None:
    try:
        item = from_bytes(data, "any")
    except AttachError as exc:
        assert str(exc).startswith("any: ")
    else:
        assert item.media_type == detect_media_type(data) and item.size == len(data)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_ask_attach_sends_an_image_a_pdf_and_a_text_file_and_the_demo_says_what_it_got(
        demo_config: Path, tmp_path: Path, dialect: str) -> None:
    png = write(tmp_path, "chart.png", image_bytes("PNG", (320, 200)))
    pdf = write(tmp_path, "report.pdf", pdf_bytes())
    notes = write(tmp_path, "notes.txt", b"Remember the milk\nand the eggs\n")
    code, out, err = ask("What are these?", f"demo-{dialect}", attachments=[read_path(str(p)) for p in
                                                                            (png, pdf, notes)])
    assert code == 0, err
    assert "I received 3 files:" in out
    # an image part has no name on any of these wires (Anthropic's document blocks have a title: the PDF's)
    assert "attachment 1 · PNG · 665 B · 320×200" in out
    # Gemini's inline data has no name either
    assert ("attachment 2 · PDF · " if dialect == "gemini" else "report.pdf · PDF · ") in out
    assert "notes.txt · text · 31 B — first line: “Remember the milk”" in out
    assert "+ chart.png · PNG" in err  # what was attached, as sent


def test_ask_attach_refuses_what_the_provider_cannot_take_before_sending(demo_config: Path) -> None:
    from app.files.paths import data_dir

    gif = from_bytes(image_bytes("GIF"), "anim.gif")
    code, out, err = ask("Look", "demo-gemini", attachments=[gif])
    assert code == 2
    assert "anim.gif: Gemini does not take GIF files. Nothing was sent." in err and "Traceback" not in err
    assert not (data_dir() / "attachments").exists()  # nothing stored either


def test_ask_attach_from_stdin_takes_the_type_from_the_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stdin(io.StringIO):
        buffer = io.BytesIO(pdf_bytes())

        def isatty(self) -> bool:
            return False

    monkeypatch.setattr("sys.stdin", Stdin())
    item = read_path("-")
    assert (item.name, item.media_type) == ("stdin", "application/pdf")


def test_the_cli_attach_option_reads_files_and_refuses_a_bad_one(demo_config: Path, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    png = write(tmp_path, "dot.png", image_bytes("PNG", (10, 10)))
    code, out, err = run_cli("ask", "--provider", "demo-anthropic", "-a", str(png), "-a", str(png), "what?")
    assert code == 0, err
    assert "I received 2 files:" in out
    code, out, err = run_cli("ask", "--provider", "demo-anthropic", "-a", str(tmp_path / "nope.png"), "what?")
    assert code == 2 and "nope.png: no such file." in err


def test_an_attachment_is_stored_once_by_hash_and_sent_again_with_the_history(demo_config: Path,
                                                                              tmp_path: Path) -> None:
    from app.files.paths import data_dir

    png = read_path(str(write(tmp_path, "chart.png", image_bytes("PNG", (32, 32)))))
    code, out, err = ask("first", "demo-anthropic", as_json=True, attachments=[png])
    assert code == 0, err
    conversation = json.loads(out)["conversation"]
    code, _, err = ask("second", "demo-anthropic", attachments=[png])  # a new conversation, the same bytes
    assert code == 0, err
    files = [p for p in (data_dir() / "attachments").rglob("*") if p.is_file()]
    assert [p.name for p in files] == [png.digest]  # one file for both

    from app.cli.common import open_store
    from app.store import history_of
    from app.stream.history import User

    store = open_store()
    tree = store.load(conversation)
    assert tree is not None
    users = [e for e in history_of(tree) if isinstance(e, User)]
    assert users[0].attachments[0].data == png.data  # read back for the next request
    store.close()


def test_export_import_and_delete_carry_and_remove_attachments(demo_config: Path, tmp_path: Path) -> None:
    """Round trip: attach, export (format 3 carries the bytes), delete (the
    unshared file goes, a shared one stays), import (the file is back), and
    continue: the history read back holds the same bytes."""
    from app.cli.common import open_store
    from app.files.paths import data_dir
    from app.store import history_of
    from app.stream.history import User
    from tests.conftest import run_cli

    png = read_path(str(write(tmp_path, "chart.png", image_bytes("PNG", (32, 32)))))
    shared = read_path(str(write(tmp_path, "notes.txt", b"shared by two\n")))
    code, out, err = ask("first", "demo-anthropic", as_json=True, attachments=[png, shared])
    assert code == 0, err
    conversation = json.loads(out)["conversation"]
    assert ask("other", "demo-anthropic", attachments=[shared])[0] == 0
    folder = data_dir() / "attachments"
    code, exported, err = run_cli("export", conversation)
    assert code == 0, err
    document = json.loads(exported)
    assert document["version"] == 3
    assert [a["name"] for a in document["items"][0]["attachments"]] == ["chart.png", "notes.txt"]

    code, _, err = run_cli("transcripts", "delete", "--yes", conversation)
    assert code == 0, err
    assert not (folder / png.digest[:2] / png.digest).exists()  # only this conversation named it
    assert (folder / shared.digest[:2] / shared.digest).exists()  # the other one still does

    exported_file = write(tmp_path, "export.json", exported.encode())
    code, _, err = run_cli("import", str(exported_file))
    assert code == 0, err
    assert (folder / png.digest[:2] / png.digest).read_bytes() == png.data
    store = open_store()
    tree = store.load(conversation)
    assert tree is not None
    (user, *_) = [e for e in history_of(tree) if isinstance(e, User)]
    assert [a.data for a in user.attachments] == [png.data, shared.data]
    store.close()
    code, _, err = ask("and now?", "demo-anthropic", conversation=conversation)
    assert code == 0, err


def test_an_import_whose_attachment_bytes_do_not_match_their_digest_is_refused(demo_config: Path,
                                                                             tmp_path: Path) -> None:
    from tests.conftest import run_cli

    png = read_path(str(write(tmp_path, "chart.png", image_bytes("PNG", (8, 8)))))
    code, out, err = ask("first", "demo-anthropic", as_json=True, attachments=[png])
    assert code == 0, err
    conversation = json.loads(out)["conversation"]
    document = json.loads(run_cli("export", conversation)[1])
    document["items"][0]["attachments"][0]["digest"] = "0" * 64
    code, _, err = run_cli("import", "--as-new", str(write(tmp_path, "bad.json", json.dumps(document).encode())))
    assert code != 0
    assert "its bytes are not the ones its digest names" in err and "Traceback" not in err


def test_markdown_links_an_attachment_and_jsonl_openai_inlines_it(demo_config: Path, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    png = read_path(str(write(tmp_path, "chart.png", image_bytes("PNG", (16, 16)))))
    code, out, err = ask("look", "demo-anthropic", as_json=True, attachments=[png])
    assert code == 0, err
    conversation = json.loads(out)["conversation"]
    code, markdown, err = run_cli("export", conversation, "--format", "markdown")
    assert code == 0, err
    assert f"- 📎 [chart.png · PNG · {png.size} B · 16×16](attachments/{png.digest[:2]}/{png.digest})" in markdown
    code, jsonl, err = run_cli("export", conversation, "--format", "jsonl-openai")
    assert code == 0, err
    first = json.loads(jsonl.splitlines()[0])
    assert first["content"][0] == {"type": "image_url", "image_url": {"url": png.data_url()}}


def test_stdin_cannot_be_both_the_prompt_and_an_attachment(demo_config: Path) -> None:
    from tests.conftest import run_cli

    code, _, err = run_cli("ask", "--provider", "demo-anthropic", "-a", "-", "-")
    assert code == 2 and "stdin can be the prompt (-) or an attachment (-a -), not both" in err


def test_an_animated_gif_for_openai_is_sent_as_its_first_frame_and_the_note_says_so() -> None:
    from PIL import Image

    frames = [Image.new("RGB", (20, 10), colour) for colour in ((255, 0, 0), (0, 255, 0))]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    item = from_bytes(out.getvalue(), "spin.gif")
    still = fit(item, "openai-chat")
    assert still.media_type == "image/png" and (still.width, still.height) == (20, 10)
    assert still.note == "the first frame of an animated GIF, as PNG (OpenAI takes still GIFs only)"
    assert fit(item, "anthropic") is item  # Anthropic takes it as it is
    single = from_bytes(image_bytes("GIF", (5, 5)), "still.gif")
    assert fit(single, "openai-responses") is single


def test_past_twenty_images_anthropic_takes_2000_pixels_a_side_and_the_rest_are_downscaled_to_it() -> None:
    """docs.anthropic.com vision: 8000×8000 px, but 2000×2000 px when a request carries more than 20 images."""
    from app.chat.attaching import ready_for

    wide = from_bytes(image_bytes("PNG", (2100, 10)), "wide.png")
    assert ready_for("anthropic", [wide] * 20)[0] is wide  # twenty: 8000 a side holds
    fitted = ready_for("anthropic", [wide] * 21)
    assert {(item.width, item.height) for item in fitted} == {(2000, 9)}
    assert fitted[0].note is not None and "Anthropic's limits" in fitted[0].note
    found = problems("anthropic", [wide] * 21)
    assert found and "2100×10 is over Anthropic's 2000 pixels a side when a request carries more than 20" in found[0]


def test_anthropics_32_mb_request_limit_counts_the_base64_not_the_bytes() -> None:
    """Why: the limit is on the HTTP body, where a file is 4/3 of its size; 25 MB of PDFs is 33.3 MB sent."""
    pdf = pdf_bytes()
    big = Attachment("big.pdf", "application/pdf", 25 * 1024 * 1024, "0" * 64, pdf)
    found = problems("anthropic", [big])
    assert found == ["The attachments come to 33.3 MB in base64, over Anthropic's 32.0 MB in one request."]
    assert problems("openai-chat", [big]) == []  # OpenAI counts the files' bytes: 25 MB of its 50
