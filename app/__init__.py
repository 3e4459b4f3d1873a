"""callstream: a terminal chat client for LLMs whose speciality is the streamed tool call."""

from __future__ import annotations

__version__ = "0.1.0"
