"""The person at the browser, for the conformance adapter (``BROWSER`` for
Python's ``webbrowser``): fetch the authorization URL and follow its
redirects, as a browser would once the person approved. The last redirect is
callstream's own loopback listener, which receives the code."""

from __future__ import annotations

import sys
import urllib.request

if __name__ == "__main__":
    with urllib.request.urlopen(sys.argv[1], timeout=30) as answer:  # noqa: S310 - a URL the suite handed us
        answer.read()
