"""A bare streaming client for tests of the demo server: build the request
with the dialect's builder, stream it with httpx, assemble with StreamParser.
(The real client, with retries and deadlines, is app/net.)"""

from __future__ import annotations

from typing import Any

import httpx

from app.stream import StreamParser, Turn
from app.stream.dialects import REQUEST_BUILDERS
from app.stream.history import Entry, ToolSpec
from app.stream.jsonwrite import plain

SUPPORT_TOOLS = [
    ToolSpec("search_orders", "Find orders by customer, status, dates or text.", {
        "type": "object",
        "properties": {
            "customer": {"type": "string"},
            "status": {"type": "string", "enum": ["open", "late", "shipped", "delivered", "cancelled", "refunded"]},
            "text": {"type": "string"},
        },
        "additionalProperties": False,
    }),
    ToolSpec("get_order", "Fetch one order by its number.", {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"],
    }),
    ToolSpec("create_ticket", "Open a support ticket.", {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"}, "customer": {"type": "string"}, "subject": {"type": "string"},
            "body": {"type": "string"}, "priority": {"type": "string", "enum": ["low", "normal", "high"]},
        },
        "required": ["order_id", "subject", "body"],
    }),
]


def url_for(base_url: str, dialect: str, path: str) -> str:
    prefix = "/v1" if dialect.startswith("openai") else ""
    return base_url + prefix + path


def request_body(dialect: str, history: list[Entry], tools: list[ToolSpec] | None = None) -> tuple[str, dict[str, Any]]:
    """The body as a reader of its JSON gets it (``plain``: the OpenAI wires'
    arguments are ``jsonwrite.JSONText``, which httpx's ``json=`` cannot write)."""
    path, body = REQUEST_BUILDERS[dialect]("demo", history, SUPPORT_TOOLS if tools is None else tools)
    return path, plain(body)


def run_turn(base_url: str, dialect: str, history: list[Entry], tools: list[ToolSpec] | None = None,
             read_timeout: float = 20.0) -> Turn:
    path, body = request_body(dialect, history, tools)
    parser = StreamParser(dialect)
    timeout = httpx.Timeout(10.0, read=read_timeout)
    try:
        with httpx.stream("POST", url_for(base_url, dialect, path), json=body, timeout=timeout) as response:
            assert response.status_code == 200, response.read()
            for chunk in response.iter_raw():
                parser.feed(chunk)
    except httpx.ReadTimeout:
        return parser.close("timeout")
    except (httpx.RemoteProtocolError, httpx.ReadError):
        return parser.close("disconnect")
    return parser.close()
