"""The small local support store the built-in tools work on (sqlite in the
data dir): customers, orders and tickets, seeded on first use with believable
data so the demo and the tests have something real to look up.

It plays the part of a downstream service: ``create_ticket`` honours the
idempotency key itself, the way Stripe does, so a repeated request with the
same key returns the ticket already made instead of making a second one.
"""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from ..files.dbfile import connect, hand_back, put_text

__all__ = ["SupportStore"]

_CUSTOMERS = [
    ("Ada Lovelace", "ada@example.org", "London"),
    ("Grace Hopper", "grace@example.org", "Arlington"),
    ("Alan Turing", "alan@example.org", "Wilmslow"),
    ("Katherine Johnson", "katherine@example.org", "Hampton"),
    ("Margaret Hamilton", "margaret@example.org", "Boston"),
    ("Edsger Dijkstra", "edsger@example.org", "Nuenen"),
    ("Hedy Lamarr", "hedy@example.org", "Vienna"),
    ("Claude Shannon", "claude@example.org", "Petoskey"),
    ("Barbara Liskov", "barbara@example.org", "Cambridge"),
    ("Zoë Müller-Ångström", "zoe@example.org", "Göteborg"),
]
_PRODUCTS = [
    ("KB-201", "Mechanical keyboard", 8900), ("MS-110", "Wireless mouse", 2900), ("MN-270", "27\" monitor", 24900),
    ("HB-004", "USB-C hub", 3900), ("LS-015", "Laptop stand", 4500), ("HD-330", "Noise-cancelling headphones", 19900),
    ("CB-002", "Braided cable, 2 m", 1200), ("DK-500", "Standing desk", 39900),
]
_CARRIERS = ["PostNL", "DHL", "UPS", "Royal Mail", "DPD"]
#: Orders the demo scenarios and the README's example refer to.
_FIXED = {"A-1042": (0, "late"), "A-1043": (0, "open"), "A-1051": (1, "shipped"), "A-1048": (0, "delivered")}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, city TEXT);
CREATE TABLE IF NOT EXISTS orders (
    order_id TEXT PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), status TEXT NOT NULL,
    placed TEXT NOT NULL, total_cents INTEGER NOT NULL, currency TEXT NOT NULL, items TEXT NOT NULL,
    carrier TEXT, tracking TEXT);
-- the body last: a zeroblob that ends its record is never materialised (SupportStore.create_ticket)
CREATE TABLE IF NOT EXISTS tickets (
    ticket_id TEXT PRIMARY KEY, order_id TEXT, customer TEXT, subject TEXT NOT NULL,
    priority TEXT NOT NULL, status TEXT NOT NULL, created TEXT NOT NULL, idempotency_key TEXT UNIQUE,
    body TEXT NOT NULL);
"""

#: A ticket as it is read: the body is written as a BLOB of its UTF-8 (``put_text``), read as text.
_TICKET = ("ticket_id, order_id, customer, subject, CAST(body AS TEXT) AS body, priority, status, created, "
           "idempotency_key")


class SupportStore:
    def __init__(self, path: Path, today: date | None = None) -> None:
        self.path = path
        self.today = today or date(2026, 11, 30)
        self._db = connect(path)
        self._db.executescript(_SCHEMA)
        if self._db.execute("SELECT COUNT(*) FROM customers").fetchone()[0] == 0:
            self._seed()

    def close(self) -> None:
        self._db.close()

    def _seed(self) -> None:
        rng = random.Random(1843)  # the year of Lovelace's notes: the same store everywhere
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT COUNT(*) FROM customers").fetchone()[0]:
                db.execute("ROLLBACK")
                return
            for i, (name, email, city) in enumerate(_CUSTOMERS, start=1):
                db.execute("INSERT INTO customers VALUES (?, ?, ?, ?)", (i, name, email, city))
            for n in range(1001, 1061):
                order_id = f"A-{n}"
                customer, status = _FIXED.get(order_id, (None, None))
                if customer is None:
                    customer = rng.randrange(len(_CUSTOMERS))
                    status = rng.choice(["delivered"] * 4 + ["shipped"] * 2 + ["open", "late", "cancelled",
                                                                                 "refunded"])
                placed = self.today - timedelta(days=rng.randint(1, 90) if status != "late" else rng.randint(20, 40))
                items: list[dict[str, Any]] = []
                for _ in range(rng.randint(1, 3)):
                    sku, title, price = rng.choice(_PRODUCTS)
                    quantity = rng.randint(1, 2)
                    same = next((i for i in items if i["sku"] == sku), None)
                    if same is not None:
                        same["quantity"] += quantity  # the same product twice is one line
                    else:
                        items.append({"sku": sku, "title": title, "quantity": quantity, "price_cents": price})
                total = sum(i["price_cents"] * i["quantity"] for i in items)
                carrier = rng.choice(_CARRIERS) if status in ("shipped", "late", "delivered") else None
                tracking = f"{carrier[:2].upper()}{rng.randrange(10**9, 10**10)}" if carrier else None
                db.execute("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (order_id, customer + 1, status, placed.isoformat(), total, "EUR", json.dumps(items),
                            carrier, tracking))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- reads ---------------------------------------------------------------

    @staticmethod
    def _order(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "order_id": row["order_id"], "customer": row["name"], "status": row["status"], "placed": row["placed"],
            "total": f"{row['total_cents'] / 100:.2f}", "currency": row["currency"],
            "items": json.loads(row["items"]), "carrier": row["carrier"], "tracking": row["tracking"],
        }

    def search_orders(self, customer: str | None = None, status: str | None = None, placed_from: str | None = None,
                      placed_to: str | None = None, text: str | None = None, limit: int = 20) -> dict[str, Any]:
        where, params = [], []
        if customer:
            where.append("customers.name LIKE ? ESCAPE '\\'")
            params.append("%" + customer.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if status:
            where.append("orders.status = ?")
            params.append(status)
        if placed_from:
            where.append("orders.placed >= ?")
            params.append(placed_from)
        if placed_to:
            where.append("orders.placed <= ?")
            params.append(placed_to)
        if text:
            where.append("(orders.items LIKE ? OR orders.carrier LIKE ? OR orders.order_id LIKE ?)")
            params += [f"%{text}%"] * 3
        sql = ("SELECT orders.*, customers.name FROM orders JOIN customers ON customers.id = orders.customer_id"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY orders.placed DESC, orders.order_id")
        rows = self._db.execute(sql, params).fetchall()
        return {"orders": [self._order(r) for r in rows[:limit]], "count": len(rows), "truncated": len(rows) > limit}

    def get_order(self, order_id: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT orders.*, customers.name FROM orders JOIN customers ON customers.id = "
                               "orders.customer_id WHERE orders.order_id = ?", (order_id.strip().upper(),)).fetchone()
        return None if row is None else self._order(row)

    def tickets(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._db.execute(f"SELECT {_TICKET} FROM tickets ORDER BY ticket_id")]

    # -- the one write -------------------------------------------------------

    def create_ticket(self, subject: str, body: str, idempotency_key: str, order_id: str | None = None,
                      customer: str | None = None, priority: str = "normal") -> dict[str, Any]:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            existing = db.execute("SELECT * FROM tickets WHERE idempotency_key = ?", (idempotency_key,)).fetchone()
            if existing is not None:
                db.execute("COMMIT")
                return {"ticket": existing["ticket_id"], "order_id": existing["order_id"], "status": existing["status"],
                        "priority": existing["priority"], "replayed": True}
            last = db.execute("SELECT MAX(CAST(SUBSTR(ticket_id, 3) AS INTEGER)) FROM tickets").fetchone()[0]
            ticket = f"T-{(last or 10000) + 1}"
            # the body (a 10 MB one, as a model may write) written a piece at a time: bound as a
            # parameter, sqlite would copy it twice while the call's arguments still hold it (a file
            # made before the body was the table's last column materialises the zeroblob once)
            put_text(db, "tickets", {"ticket_id": ticket, "order_id": order_id, "customer": customer,
                                     "subject": subject, "priority": priority, "status": "open",
                                     "created": self.today.isoformat(), "idempotency_key": idempotency_key},
                     "body", body)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        hand_back(db, len(body))
        return {"ticket": ticket, "order_id": order_id, "status": "open", "priority": priority}
