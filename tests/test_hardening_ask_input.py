"""Issue 24 item 19: ``ask`` with bytes on stdin (or in its argument) that are
not UTF-8, in a UTF-8 locale and in the C locale: decoded with replacement,
said on stderr, and the turn is sent and saved; never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.conversations import stored

SAID = "is not all UTF-8: 1 invalid byte sequence was replaced with U+FFFD; the rest was sent as is."


def ask(*args: str, stdin: bytes, locale: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONUTF8", "PYTHONIOENCODING"))}
    env.update(LC_ALL=locale, LANG=locale)
    return subprocess.run([sys.executable, "-m", "app", "ask", *args, "--provider", "demo", "--json"], cwd=ROOT,
                          input=stdin, capture_output=True, env=env, timeout=120)


def user_texts(conversation: str) -> list[str]:
    saved = stored(conversation)
    assert saved is not None
    return [i.text for i in saved.items if type(i).__name__ == "StoredUser"]


@pytest.mark.parametrize("locale", ["C.UTF-8", "C"])
def test_a_byte_that_is_not_utf8_on_stdin_is_replaced_said_and_the_turn_is_saved(locale: str) -> None:
    earlier = ask("Show me order A-1043", stdin=b"", locale=locale)  # saved before: must stay
    assert earlier.returncode == 0, earlier.stderr
    first = json.loads(earlier.stdout)["conversation"]

    piped = ask("Show me order A-1042", stdin=b"caf\xe9 notes\n", locale=locale)  # Latin-1 \xe9, not UTF-8
    err = piped.stderr.decode("utf-8", "replace")
    assert piped.returncode == 0, err
    assert "Traceback" not in err
    assert f"callstream: what was piped in {SAID}" in err
    document = json.loads(piped.stdout)
    assert document["status"] == "done"
    texts = user_texts(document["conversation"])
    assert texts and texts[0].startswith("Show me order A-1042") and "caf\ufffd notes" in texts[0]  # attached

    whole = ask("-", stdin=b"Show me order A-1042 \xff\n", locale=locale)  # the prompt itself, from stdin
    err = whole.stderr.decode("utf-8", "replace")
    assert whole.returncode == 0 and "Traceback" not in err, err
    assert f"callstream: what was piped in {SAID}" in err
    assert user_texts(json.loads(whole.stdout)["conversation"]) == ["Show me order A-1042 \ufffd\n"]

    assert user_texts(first) == ["Show me order A-1043"]  # nothing saved earlier was lost


def test_a_byte_that_is_not_utf8_in_the_prompt_argument_is_replaced_in_the_c_locale(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONUTF8", "PYTHONIOENCODING"))}
    env.update(LC_ALL="C", LANG="C")
    result = subprocess.run([sys.executable.encode(), b"-m", b"app", b"ask", b"Show me order A-1042 \xff",
                             b"--provider", b"demo", b"--json"], cwd=ROOT, stdin=subprocess.DEVNULL,
                            capture_output=True, env=env, timeout=120)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0 and "Traceback" not in err, err
    assert f"callstream: the prompt {SAID}" in err
    assert user_texts(json.loads(result.stdout)["conversation"]) == ["Show me order A-1042 \ufffd"]
