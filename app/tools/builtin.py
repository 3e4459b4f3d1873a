"""The built-in tools over the local support store: two reads and one write,
under the names the config knows them by (``BUILTIN_TOOL_NAMES``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ..demo.orders import SupportStore
from ..settings.tools import BUILTIN_TOOL_NAMES
from .base import DisplayField, Tool, ToolContext, ToolError

__all__ = ["builtin_tools", "STATUSES"]

STATUSES = ["open", "late", "shipped", "delivered", "cancelled", "refunded"]

#: The three names, defined once with the config (a profile's ``tools`` may list them).
SEARCH_NAME, GET_NAME, CREATE_NAME = BUILTIN_TOOL_NAMES

SEARCH_ORDERS = {
    "type": "object",
    "properties": {
        "customer": {"type": "string", "description": "Customer name, or part of it"},
        "status": {"type": "string", "enum": STATUSES},
        "placed_from": {"type": "string", "format": "date", "description": "Earliest order date, YYYY-MM-DD"},
        "placed_to": {"type": "string", "format": "date", "description": "Latest order date, YYYY-MM-DD"},
        "text": {"type": "string", "description": "Words in the items, the carrier or the order number"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    },
    "additionalProperties": False,
}

GET_ORDER = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "pattern": "^[A-Za-z]-\\d{4,6}$", "description": "e.g. A-1042"}},
    "required": ["order_id"],
    "additionalProperties": False,
}

CREATE_TICKET = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^[A-Za-z]-\\d{4,6}$"},
        "customer": {"type": "string"},
        "subject": {"type": "string", "minLength": 3, "maxLength": 200},
        "body": {"type": "string", "minLength": 1},
        "priority": {"type": "string", "enum": ["low", "normal", "high"], "default": "normal"},
    },
    "required": ["order_id", "subject", "body"],
    "additionalProperties": False,
}


def builtin_tools(data_dir: Path) -> list[Tool]:
    """The three tools, sharing one store opened lazily in ``data_dir``."""
    holder: dict[str, SupportStore] = {}

    def store() -> SupportStore:
        if "store" not in holder:
            holder["store"] = SupportStore(data_dir / "support.db")
        return holder["store"]

    async def search_orders(arguments: dict[str, Any], ctx: ToolContext) -> str:
        result = await asyncio.to_thread(store().search_orders, **arguments)
        return json.dumps(result, ensure_ascii=False)

    async def get_order(arguments: dict[str, Any], ctx: ToolContext) -> str:
        order = await asyncio.to_thread(store().get_order, arguments["order_id"])
        if order is None:
            raise ToolError(f"there is no order {arguments['order_id']}")
        return json.dumps({"order": order}, ensure_ascii=False)

    async def create_ticket(arguments: dict[str, Any], ctx: ToolContext) -> str:
        if store().get_order(arguments["order_id"]) is None:
            raise ToolError(f"there is no order {arguments['order_id']} to open a ticket for")
        result = await asyncio.to_thread(store().create_ticket, idempotency_key=ctx.idempotency_key, **arguments)
        return json.dumps(result, ensure_ascii=False)

    async def warm_search(arguments: dict[str, Any]) -> None:
        # open the store and run the query shape once so the real run is warm
        await asyncio.to_thread(store().search_orders, **{**arguments, "limit": 1})

    async def warm_get(arguments: dict[str, Any]) -> None:
        await asyncio.to_thread(store().get_order, arguments["order_id"])

    order_fields = (DisplayField("order_id", "Order"), DisplayField("customer", "Customer"),
                    DisplayField("status", "Status"), DisplayField("placed", "Placed"), DisplayField("total", "Total"))
    return [
        Tool(SEARCH_NAME, "Find orders by customer, status, order date range or text. Read-only.",
             SEARCH_ORDERS, search_orders, read_only=True,
             display=(DisplayField("customer", "Customer"), DisplayField("status", "Status"),
                      DisplayField("placed_from", "From"), DisplayField("placed_to", "To"),
                      DisplayField("text", "Text"), DisplayField("limit", "Limit")),
             result_display=(DisplayField("count", "Found"),) + tuple(
                 DisplayField(f"orders.*.{f.path}", f.label) for f in order_fields),
             warm=warm_search),
        Tool(GET_NAME, "Fetch one order by its number, e.g. A-1042. Read-only.", GET_ORDER, get_order,
             read_only=True, display=(DisplayField("order_id", "Order"),),
             result_display=tuple(DisplayField(f"order.{f.path}", f.label) for f in order_fields)
             + (DisplayField("order.carrier", "Carrier"), DisplayField("order.tracking", "Tracking")),
             warm=warm_get),
        Tool(CREATE_NAME, "Open a support ticket about an order. Returns the ticket number.", CREATE_TICKET,
             create_ticket, read_only=False,
             display=(DisplayField("order_id", "Order"), DisplayField("customer", "Customer"),
                      DisplayField("subject", "Subject"), DisplayField("priority", "Priority"),
                      DisplayField("body", "Body")),
             result_display=(DisplayField("ticket", "Ticket"), DisplayField("order_id", "Order"),
                             DisplayField("status", "Status"), DisplayField("priority", "Priority"))),
    ]
