"""A big buffer freed leaves the process's RSS once ``files.heap`` has told
glibc so (a fresh process each: the setting is process-wide)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from tests.conftest import ROOT

#: Frees a 20 MB block (glibc would raise its mmap threshold to it), then makes
#: and frees a 10 MB string: prints the RSS (KiB) that string left behind.
_LEFT_BEHIND = """
import sys
from app.files.heap import return_big_blocks
if sys.argv[1] == "fixed":
    assert return_big_blocks()
def rss():
    with open("/proc/self/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmRSS:")))
first = bytearray(20_000_000)
del first
before = rss()
text = "x" * 10_000_000
grown = rss()
del text
print(grown - before, rss() - before)
"""


def _left_behind(mode: str) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", _LEFT_BEHIND, mode], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_a_freed_big_string_leaves_the_rss() -> None:
    grown, left = _left_behind("fixed")
    assert grown >= 9_000  # the string was resident
    assert left < 1_000


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_setting_is_what_makes_the_difference() -> None:
    """Without it glibc keeps the freed string's pages (the reason for ``heap``)."""
    grown, left = _left_behind("default")
    assert grown >= 9_000 and left >= 9_000
