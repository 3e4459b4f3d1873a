"""The demo model: a scripted, deterministic support agent.

It reads the conversation and the offered tools the way a model would (the
last user message, what it already called, what the tools returned) and
writes a plan: a short preamble, then calls, then prose built on the actual
results — order and ticket numbers are read out of the tool results, never
made up. ``/demo NAME`` asks for one of the failure scenarios instead.

Nothing here is random: the same conversation always gets the same reply,
except that a scenario whose fault is transient (cutoff, error, slow,
retry-after-dispatch) fails only on its first attempt, so a retry recovers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..rules.words import plural
from ..stream.history import Assistant, CallRecord, Entry, ToolResult, ToolSpec, User
from ..stream.limits import loads
from .plan import Call, Plan, Say, Stall, Think, call_id
from .received import about_attachments, about_tool_images

__all__ = ["SCENARIOS", "LABEL", "reply"]

LABEL = "demo model (offline, scripted)"

SCENARIOS: dict[str, str] = {
    "cutoff": "the connection drops while a ticket is being written",
    "malformed": "the call ends over arguments that are not valid JSON",
    "invalid-args": "a call fails the tool's schema, then the model corrects it",
    "error": "the provider reports it is overloaded in the middle of the stream",
    "truncated": "the output limit cuts a call off",
    "slow": "the stream stalls for a minute after the preamble (the read timeout fires)",
    "retry-after-dispatch": "the stream breaks after a ticket call ended and ran: filed once, the next turn "
                            "continues from it",
    "long": "a ticket whose body is 200 KB of pasted log",
    "parallel": "several read-only lookups in one turn",
}


_ORDER_ID = re.compile(r"\b[A-Z]-\d{4,6}\b")
_TICKET_ID = re.compile(r"\bT-\d{3,8}\b")
_NAME = re.compile(r"\b([A-Z][a-z]+(?:[ -][A-Z][a-z]+)+)(?:'s)?\b")
_STATUSES = ("open", "late", "shipped", "delivered", "cancelled", "refunded")
_STATUS_WORDS = {"delayed": "late", "overdue": "late", "pending": "open", "canceled": "cancelled"}
#: The offer a reply ends with when it found one order (``_after_lookups``): a "yes" to it means that order.
_OFFER = re.compile(r"open a ticket for ([A-Z]-\d{4,6})\?")
_YES = re.compile(r"^\s*(yes|yeah|yep|sure|ok|okay|please|go ahead|do it)\b", re.IGNORECASE)
_TICKET_WORDS = ("ticket", "refund", "complain", "complaint", "escalate", "late", "delayed", "broken", "damaged")


class _Context:
    """What the model can see of the current exchange."""

    def __init__(self, history: list[Entry], tools: list[ToolSpec], attempt: int, dialect: str) -> None:
        self.tools = {t.name: t for t in tools}
        self.attempt = attempt
        self.dialect = dialect
        last_user = max((i for i, e in enumerate(history) if isinstance(e, User)), default=-1)
        said = history[last_user] if last_user >= 0 else None
        self.user = said.text if isinstance(said, User) else ""
        #: The order the reply before this message offered a ticket for (None: it offered none).
        before = history[last_user - 1] if last_user > 0 else None
        offer = _OFFER.search(before.text) if isinstance(before, Assistant) else None
        self.offered = offer.group(1) if offer else None
        self.turn = sum(1 for e in history if isinstance(e, User))
        self.after = history[last_user + 1 :]
        self.calls: list[CallRecord] = [c for e in self.after if isinstance(e, Assistant) for c in e.calls]
        self.results: list[ToolResult] = [e for e in self.after if isinstance(e, ToolResult)]
        self.rounds = sum(1 for e in self.after if isinstance(e, Assistant) and e.calls)

    def called(self, name: str) -> list[CallRecord]:
        return [c for c in self.calls if c.name == name]

    def results_of(self, name: str) -> list[ToolResult]:
        ids = {c.id for c in self.called(name)}
        return [r for r in self.results if r.name == name or r.call_id in ids]

    def new_call(self, name: str, arguments: dict[str, Any] | str, index: int, fragment: int = 9,
                 stop_after: int | None = None) -> Call:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        prefix = "toolu_" if self.dialect == "anthropic" else "call_"
        ident = call_id(prefix, self.turn, self.rounds, index, name, text)
        return Call(ident, name, text, fragment, stop_after)


def reply(history: list[Entry], tools: list[ToolSpec], attempt: int = 1, dialect: str = "openai-chat") -> Plan:
    ctx = _Context(history, tools, attempt, dialect)
    said = next((e for e in reversed(history) if isinstance(e, User)), None)
    if said is not None and said.attachments and not ctx.after:
        return about_attachments(said)
    shown = about_tool_images(ctx.after) if ctx.after and isinstance(ctx.after[-1], ToolResult) else None
    if shown is not None:
        return shown
    text = ctx.user.strip()
    if text.lower().startswith("/demo"):
        name = text[5:].strip().lower()
        scenario = _SCENARIO_PLANS.get(name)
        if scenario is None:
            return _scenario_list(name)
        if not {"search_orders", "get_order", "create_ticket"} <= set(ctx.tools):
            return _no_tools(ctx)
        return scenario(ctx)
    return _support(ctx)


# -- the ordinary support agent ----------------------------------------------


def _support(ctx: _Context) -> Plan:
    if not ctx.tools:
        return _no_tools(ctx)
    lowered = ctx.user.lower()
    wants_ticket = any(word in lowered for word in _TICKET_WORDS)
    order_ids = _ORDER_ID.findall(ctx.user)
    # "yes, open a ticket" to the offer the last reply made: that order, not a new search (a message that
    # names an order or a customer asks something new)
    accepted = (not order_ids and ctx.offered is not None and not _NAME.search(ctx.user)
                and bool(wants_ticket or _YES.match(ctx.user)))
    if accepted:
        order_ids, wants_ticket = [ctx.offered], True
    if ctx.called("create_ticket"):
        return _after_ticket(ctx)
    if ctx.results:
        return _after_lookups(ctx, wants_ticket)
    if order_ids and "get_order" in ctx.tools:
        calls = [ctx.new_call("get_order", {"order_id": oid}, i) for i, oid in enumerate(dict.fromkeys(order_ids))]
        ids = ", ".join(dict.fromkeys(order_ids))
        return Plan([Say(f"Let me pull up {ids}."), *calls], "tool_calls")
    if ("order" in lowered or wants_ticket) and "search_orders" in ctx.tools:
        return _search(ctx, lowered)
    return _help(ctx)


def _statuses(lowered: str) -> list[str]:
    found = [s for s in _STATUSES if re.search(rf"\b{s}\b", lowered)]
    found += [v for k, v in _STATUS_WORDS.items() if k in lowered and v not in found]
    return found


def _search(ctx: _Context, lowered: str) -> Plan:
    names = [n for n in _NAME.findall(ctx.user) if n.split()[0] not in ("Show", "Find", "Check", "Open", "Please")]
    customer = names[0] if names else None
    statuses = _statuses(lowered) or ["open", "late"]
    who = f"{customer}'s" if customer else "the"
    if len(statuses) > 1:
        joined = " and ".join(statuses)
        preamble = f"I'll look up {who} {joined} orders at the same time."
    else:
        preamble = f"I'll look up {who} {statuses[0]} orders."
    calls = []
    for i, status in enumerate(statuses):
        filters: dict[str, Any] = {}
        if customer:
            filters["customer"] = customer
        filters["status"] = status
        calls.append(ctx.new_call("search_orders", filters, i))
    return Plan([Say(preamble), *calls], "tool_calls")


def _orders_in(results: list[ToolResult]) -> list[dict[str, Any]]:
    """Every order object found in the results, in order, without repeats."""
    seen: dict[str, dict[str, Any]] = {}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("order_id"), str):
                seen.setdefault(value["order_id"], value)
            for sub in value.values():
                walk(sub)
        elif isinstance(value, list):
            for sub in value:
                walk(sub)
        elif isinstance(value, str) and value[:1] in "{[":  # JSON text inside JSON (as proxies wrap results)
            try:
                walk(loads(value))
            except ValueError:
                pass

    for result in results:
        if result.is_error:
            continue
        try:
            value = loads(result.content)
        except ValueError:
            value = None
        before = len(seen)
        walk(value)
        if len(seen) == before:  # not JSON, or JSON without order objects: the order numbers in the text
            for oid in _ORDER_ID.findall(result.content):
                seen.setdefault(oid, {"order_id": oid})
    return list(seen.values())


def _describe(order: dict[str, Any]) -> str:
    bits: list[str] = [order["order_id"]]
    if order.get("status"):
        bits.append(str(order["status"]))
    if order.get("placed"):
        bits.append(f"placed {order['placed']}")
    if order.get("total") is not None:
        bits.append(f"{order['total']} {order.get('currency', 'EUR')}")
    return bits[0] + (" (" + ", ".join(bits[1:]) + ")" if len(bits) > 1 else "")


def _after_lookups(ctx: _Context, wants_ticket: bool) -> Plan:
    errors = [r for r in ctx.results if r.is_error]
    orders = _orders_in(ctx.results)
    if errors and not orders:
        return Plan([Say(f"The lookup failed: {errors[0].content.strip()[:200]}. I can't see any orders right now.")])
    if not orders:
        return Plan([Say("I found no matching orders. Check the spelling of the name, or give me an order number "
                         "(they look like A-1042).")])
    lines = "\n".join(f"- {_describe(o)}" for o in orders[:8])
    more = f"\n…and {len(orders) - 8} more." if len(orders) > 8 else ""
    summary = f"I found {plural(len(orders), 'order')}:\n{lines}{more}\n\n"
    if not (wants_ticket and "create_ticket" in ctx.tools):
        ask = "one of them" if len(orders) > 1 else orders[0]["order_id"]
        return Plan([Say(summary + f"Want me to open a ticket for {ask}?")])
    target = next((o for o in orders if o.get("status") == "late"), orders[0])
    customer = target.get("customer") or next(
        (c.arguments.get("customer") for c in ctx.called("search_orders") if c.arguments.get("customer")), None)
    arguments: dict[str, Any] = {
        "order_id": target["order_id"],
        "subject": f"Late delivery: order {target['order_id']}",
        "body": _ticket_body(target, customer, ctx.user),
        "priority": "high" if target.get("status") == "late" else "normal",
    }
    if customer:
        arguments["customer"] = customer
    call = ctx.new_call("create_ticket", arguments, 0, fragment=11)
    return Plan([Say(summary + f"I'll open a ticket for {target['order_id']}."), call], "tool_calls")


def _ticket_body(order: dict[str, Any], customer: str | None, request: str | None) -> str:
    """The ticket's text: only what the conversation said — the request as the
    user wrote it, and the order's status and date only as a lookup returned them."""
    who = customer or "The customer"
    lines = [f"{who} reports that order {order['order_id']} has not arrived."]
    if request:
        lines.append(f"Request to support: \"{request.strip().replace(chr(10), ' ')[:300]}\"")
    if order.get("status") and order.get("placed"):
        lines.append(f"Status in the order system: {order['status']}; placed {order['placed']}.")
    return (
        "\n".join(lines) + "\n"
        "Next steps:\n"
        "\t1. Ask the carrier for a trace (tracking ≥ 3 days stale).\n"
        "\t2. Offer a replacement or a refund — customer's choice.\n"
        "Notes: address has an accent (Café Zoë, Straße 5); path to the photo: C:\\Users\\support\\inbox\\photo.jpg 📦"
    )


def _after_ticket(ctx: _Context) -> Plan:
    results = ctx.results_of("create_ticket")
    if not results:
        return Plan([Say("I asked for a ticket but never got an answer from the ticket system.")])
    result = results[-1]
    if result.content.startswith("Denied:"):  # the user (or a rule) said no: say so, do not insist
        reason = result.content.partition("Their reason:")[2].strip()
        return Plan([Say("I did not open the ticket: it was not allowed."
                         + (f" Your reason: {reason}" if reason else "")
                         + " Tell me if you want me to try something else.")])
    if result.is_error:
        return Plan([Say(f"The ticket system refused it: {result.content.strip()[:300]}")])
    tickets = _TICKET_ID.findall(result.content)
    call = ctx.called("create_ticket")[-1]
    order = call.arguments.get("order_id", "the order")
    if not tickets:
        return Plan([Say(f"The ticket system answered, but without a ticket number: {result.content[:200]}")])
    ticket = tickets[0]
    priority = call.arguments.get("priority", "normal")
    return Plan([Say(f"Done: ticket {ticket} is open for order {order} with {priority} priority. "
                     f"The support team will ask the carrier for a trace and offer a replacement or a refund. "
                     f"Quote {ticket} if the customer gets back in touch.")])


def _help(ctx: _Context) -> Plan:
    return Plan([Say(
        f"I'm the {LABEL}: I answer without a network, and I can look up orders and open support tickets with "
        "the built-in tools. Try:\n"
        "- Ada Lovelace says her order is late. Check her open and late orders and open a ticket.\n"
        "- Show me order A-1042\n"
        "- /demo — the failure scenarios (cut-off, malformed, overloaded, truncated, …)"
    )])


def _no_tools(ctx: _Context) -> Plan:
    return Plan([Say(
        f"I'm the {LABEL}. This request offered me no tools, so I can only talk. Offer search_orders, "
        "get_order and create_ticket and I'll look things up and open tickets."
    )])


def _scenario_list(asked: str) -> Plan:
    head = f"There is no scenario called {asked!r}. " if asked else ""
    lines = "\n".join(f"- /demo {name} — {text}" for name, text in SCENARIOS.items())
    return Plan([Say(f"{head}Scenarios I can play on demand:\n{lines}")])


# -- scenarios ---------------------------------------------------------------

_LATE = {"customer": "Ada Lovelace", "status": "late"}


def _ticket_args(order_id: str = "A-1042", body: str | None = None) -> dict[str, Any]:
    return {
        "order_id": order_id,
        "customer": "Ada Lovelace",
        "subject": f"Late delivery: order {order_id}",
        # filed without a lookup: the body states no status or date it never saw
        "body": body or _ticket_body({"order_id": order_id}, "Ada Lovelace", None),
        "priority": "high",
    }


def _finish_scenario(ctx: _Context) -> Plan | None:
    """Rounds after the first are the ordinary agent's."""
    if ctx.called("create_ticket") and ctx.results_of("create_ticket"):
        return _after_ticket(ctx)
    if ctx.results:
        return _after_lookups(ctx, wants_ticket=False)
    return None


def _cutoff(ctx: _Context) -> Plan:
    done = _finish_scenario(ctx)
    if done:
        return done
    args = json.dumps(_ticket_args(), ensure_ascii=False)
    if ctx.attempt > 1:
        return Plan([Say("Filing the ticket for A-1042 now."), ctx.new_call("create_ticket", args, 0)], "tool_calls")
    cut = ctx.new_call("create_ticket", args, 0, stop_after=len(args) * 3 // 5)
    return Plan([Say("Filing the ticket for A-1042 now."), cut], "cut")


def _malformed(ctx: _Context) -> Plan:
    broken = '{"order_id": "A-1042", "subject": "Late delivery", "body": "Parcel \\"lost\\"", "priority": "high",}'
    return Plan([Say("Filing the ticket for A-1042."), ctx.new_call("create_ticket", broken, 0)], "tool_calls")


def _invalid_args(ctx: _Context) -> Plan:
    results = ctx.results_of("create_ticket")
    if results and not results[-1].is_error:
        return _after_ticket(ctx)
    if results:
        fixed = ctx.new_call("create_ticket", _ticket_args(), 0)
        return Plan([Say("The ticket system says my arguments were wrong; correcting them."), fixed], "tool_calls")
    wrong = {"order_id": 1042, "customer": "Ada Lovelace", "priority": "urgent!!"}
    return Plan([Say("Opening a ticket for order 1042."), ctx.new_call("create_ticket", wrong, 0)], "tool_calls")


def _error(ctx: _Context) -> Plan:
    done = _finish_scenario(ctx)
    if done:
        return done
    call = ctx.new_call("search_orders", _LATE, 0)
    if ctx.attempt > 1:
        return Plan([Say("Looking up Ada Lovelace's late orders."), call], "tool_calls")
    call.stop_after = len(call.arguments) // 2
    return Plan([Say("Looking up Ada Lovelace's late orders."), call], "error", "Overloaded")


def _truncated(ctx: _Context) -> Plan:
    args = json.dumps(_ticket_args(), ensure_ascii=False)
    call = ctx.new_call("create_ticket", args, 0, stop_after=len(args) // 2)
    return Plan([Say("Writing up the ticket for A-1042."), call], "length")


def _slow(ctx: _Context) -> Plan:
    done = _finish_scenario(ctx)
    if done:
        return done
    steps: list[Any] = [Say("Let me check Ada Lovelace's late orders… this may take a moment.")]
    if ctx.attempt == 1:
        steps.append(Stall(60.0))
    steps.append(ctx.new_call("search_orders", _LATE, 0))
    return Plan(steps, "tool_calls")


def _retry_after_dispatch(ctx: _Context) -> Plan:
    done = _finish_scenario(ctx)
    if done and ctx.called("create_ticket"):
        return done
    ticket = ctx.new_call("create_ticket", _ticket_args(), 0)
    lookup = ctx.new_call("get_order", {"order_id": "A-1042"}, 1)
    if ctx.attempt == 1:
        lookup.stop_after = 8
        if ctx.dialect == "openai-chat":
            # Chat calls end only with the stream, so a drop would leave nothing run. Here the stream
            # ends with the lookup's arguments broken: the ticket ran, the turn failed, and a retry
            # (Ctrl+R) of that turn gets the same ticket call back, which the ledger answers.
            return Plan([Say("Filing the ticket, then re-checking the order."), ticket, lookup], "tool_calls")
        return Plan([Say("Filing the ticket, then re-checking the order."), ticket, lookup], "cut")
    return Plan([Say("Filing the ticket, then re-checking the order."), ticket, lookup], "tool_calls")


def _long(ctx: _Context) -> Plan:
    done = _finish_scenario(ctx)
    if done:
        return done
    line = (
        'ERR 2026-11-0{d} carrier="Pakket" parcel=PK-{n:05d} msg="scan missing — retour naar afzender?" '
        "path=C:\\\\hub\\\\{n}\n"
    )
    log = "".join(line.format(d=1 + n % 9, n=n) for n in range(2000))
    body = ("Customer pasted the carrier's log below (200 KB).\n" + log)[:200_000]
    call = ctx.new_call("create_ticket", _ticket_args(body=body), 0, fragment=64)
    return Plan([Say("That's a long log; attaching all of it to the ticket."), call], "tool_calls")


def _parallel(ctx: _Context) -> Plan:
    if ctx.results:
        return _after_lookups(ctx, wants_ticket=False)
    calls = [ctx.new_call("get_order", {"order_id": oid}, i) for i, oid in enumerate(("A-1042", "A-1043", "A-1051"))]
    calls.append(ctx.new_call("search_orders", {"customer": "Grace Hopper", "status": "shipped"}, 3))
    return Plan([Think("Four independent reads: no reason to wait for one before the next."),
                 Say("Checking three orders and Grace Hopper's shipments at once."), *calls], "tool_calls")


_SCENARIO_PLANS: dict[str, Callable[[_Context], Plan]] = {
    "cutoff": _cutoff,
    "malformed": _malformed,
    "invalid-args": _invalid_args,
    "error": _error,
    "truncated": _truncated,
    "slow": _slow,
    "retry-after-dispatch": _retry_after_dispatch,
    "long": _long,
    "parallel": _parallel,
}
