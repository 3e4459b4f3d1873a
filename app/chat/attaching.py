"""Attachments made ready for one provider before anything is sent.

An image over the provider's size or pixel limit is downscaled
(``files.attach.fit``, with a note the card shows); whatever still breaks a
limit (a type the provider does not take, too many, too much in one request)
is refused here with its sentences, before the message is stored or any
byte goes out — never a provider 400 after a long upload.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..files.attach import AttachError, fit
from ..stream.attachments import Attachment, problems
from ..stream.history import Entry, User

__all__ = ["AttachError", "Attachment", "ready_for"]


def ready_for(dialect: str, attachments: Sequence[Attachment], history: Sequence[Entry] = ()) -> list[Attachment]:
    """The attachments as they will be sent; the history's own count toward
    the request's totals, since they are sent again with it. Called by the
    session before a user message is stored or sent."""
    if not attachments:
        return []
    fitted = [fit(item, dialect) for item in attachments]
    earlier = [a for entry in history if isinstance(entry, User) for a in entry.attachments]
    found = problems(dialect, earlier + fitted)
    if found:
        raise AttachError(" ".join(found) + " Nothing was sent.")
    return fitted
