"""``ask --max-cost`` (issue 29 item 5): a request whose estimated cost (its input at the model's input
rate, on top of what the exchange has cost so far) would pass the ceiling is not sent — the first one
refuses the exchange, a later one stops the tool loop — as a stated failure; a model without a price,
or a ceiling that is not a number of dollars, is refused with a sentence. On the demo model speaking
OpenAI chat as ``gpt-4o``, over real HTTP, priced by genai-prices' table."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from app.cli.ask import run_ask
from app.rules.prices import PriceBook
from app.stream.usage import Usage
from tests.conftest import run_cli
from tests.test_approvals import ticket_claims

PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."


@pytest.fixture
def priced(home: Path) -> Path:
    path = home / "config.toml"
    path.write_text('default = "demo"\n[providers.demo]\nprovider = "demo"\nmodel = "gpt-4o"\nspeed = 0\n'
                    '[providers.plain]\nprovider = "demo"\nspeed = 0\n[approval]\nallow = ["create_ticket"]\n')
    return path


def ask(*args: str, **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_ask(*args, out=out, err=err, **kwargs)
    return code, out.getvalue(), err.getvalue()


def _costs(document: dict[str, Any]) -> list[Decimal]:
    book = PriceBook()
    return [book.cost(Usage.from_dict(t["usage"]), "gpt-4o") or Decimal(0) for t in document["turns"]]


def test_an_exchange_under_the_ceiling_runs_whole(priced: Path) -> None:
    code, out, err = ask(PROMPT, as_json=True, max_cost=Decimal("1"))
    assert code == 0, err
    document = json.loads(out)
    assert document["status"] == "done" and len(document["turns"]) == 3
    assert sum(_costs(document)) <= 1


def test_a_request_over_the_ceiling_is_not_sent(priced: Path) -> None:
    code, out, err = ask(PROMPT, as_json=True, max_cost=Decimal("0.0001"))
    assert code == 1 and "Traceback" not in err
    document = json.loads(out)
    assert document["status"] == "over_budget" and document["turns"] == []  # no request was made
    assert document["message"].startswith("Not sent: the request is estimated at $")
    assert "over --max-cost $0.0001" in document["message"]


def test_a_tool_loop_that_would_pass_the_ceiling_stops_before_the_request(priced: Path) -> None:
    code, out, err = ask(PROMPT, as_json=True)
    unlimited = json.loads(out)  # what each request of this exchange costs (the demo is deterministic)
    first = _costs(unlimited)
    second_in = PriceBook().cost(Usage(unlimited["turns"][1]["usage"]["input"]), "gpt-4o")
    assert second_in is not None
    ceiling = first[0] + second_in / 2  # room for the first request, not even for the second's input
    code, out, err = ask(PROMPT, as_json=True, max_cost=ceiling)
    assert code == 1 and "Traceback" not in err
    document = json.loads(out)
    assert document["status"] == "over_budget" and len(document["turns"]) == 1
    assert document["message"].startswith("Stopped before request 2 of this exchange")
    assert sum(_costs(document)) <= ceiling
    # the first round's calls (the searches) ran and are saved; the ticket of round 2 never was asked for
    assert [b["state"] for b in document["turns"][0]["blocks"] if b["type"] == "tool_call"] == ["ran", "ran"]
    assert len(ticket_claims()) == 1  # only the unlimited run's


def test_a_model_without_a_price_cannot_keep_a_ceiling(priced: Path) -> None:
    code, out, err = ask(PROMPT, "plain", max_cost=Decimal("1"))
    assert code == 2 and out == ""
    assert "--max-cost needs a price for the model 'demo'" in err


@pytest.mark.parametrize("value", ["-1", "0", "abc", "nan", "inf"])
def test_a_ceiling_that_is_not_dollars_is_a_sentence(priced: Path, value: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        run_cli("ask", "--max-cost", value, "hi")
    assert stopped.value.code == 2
