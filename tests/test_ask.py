"""``callstream ask`` against the embedded demo model, in every dialect
(issue 3's second proof), and its exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.ask import run_ask
from tests.conftest import ROOT

DIALECTS = ["openai-chat", "openai-responses", "anthropic", "gemini"]
PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."


@pytest.fixture
def demo_config(home: Path) -> Path:
    lines = []
    for dialect in DIALECTS:
        lines += [f"[providers.demo-{dialect}]", 'provider = "demo"', f'dialect = "{dialect}"', "speed = 0", ""]
    path = home / "config.toml"
    path.write_text("\n".join(lines))
    return path


def ask(*args: str, **kwargs: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_ask(*args, out=out, err=err, **kwargs)  # type: ignore[arg-type]
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_ask_two_searches_then_a_ticket_in_every_dialect(demo_config: Path, dialect: str) -> None:
    code, out, err = ask(PROMPT, f"demo-{dialect}", as_json=True, approve="create_ticket")
    assert code == 0, err
    document = json.loads(out)
    turns = document["turns"]
    assert [t["outcome"] for t in turns] == ["complete"] * 3
    calls = [[(b["name"], b["state"]) for b in t["blocks"] if b["type"] == "tool_call"] for t in turns]
    assert calls == [[("search_orders", "ran"), ("search_orders", "ran")], [("create_ticket", "ran")], []]
    searches = [b["arguments"] for b in turns[0]["blocks"] if b["type"] == "tool_call"]
    assert searches == [{"customer": "Ada Lovelace", "status": "open"},
                        {"customer": "Ada Lovelace", "status": "late"}]
    ticket = json.loads(next(b for b in turns[1]["blocks"] if b["type"] == "tool_call")["result"])["ticket"]
    final = "".join(b["text"] for b in turns[2]["blocks"] if b["type"] == "text")
    assert ticket in final and "A-1042" in final  # prose built on the real results


def test_ask_human_output_lists_calls_with_allow_listed_fields(demo_config: Path) -> None:
    code, out, _ = ask(PROMPT, "demo-anthropic", approve="create_ticket")
    assert code == 0
    assert "⚙ search_orders · ran · Customer: Ada Lovelace · Status: open" in out
    assert "⚙ create_ticket · ran · Order: A-1042" in out and "→ Ticket: T-" in out


def test_ask_recovers_from_a_cut_off_and_says_so(demo_config: Path) -> None:
    code, out, err = ask("/demo cutoff", "demo-openai-responses", approve="create_ticket")
    assert code == 0
    assert "Attempt 1 failed: the connection dropped" in err
    assert "ticket T-" in out


def test_ask_stated_failure_exits_1_with_the_note(demo_config: Path) -> None:
    code, out, err = ask("/demo truncated", "demo-anthropic")
    assert code == 1
    assert "Interrupted: the output limit cut the reply off while create_ticket was being prepared; it was not " \
           "run." in err


def test_ask_no_tools(demo_config: Path) -> None:
    code, out, _ = ask("Show me order A-1042", "demo-gemini", no_tools=True)
    assert code == 0 and "offered me no tools" in out


def test_ask_bad_usage_and_configuration_exit_2(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask("hi", "cohere")[0] == 2
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, _, err = ask("hi", "anthropic")
    assert code == 2 and "ANTHROPIC_API_KEY" in err
    (home / "config.toml").write_text("nope = [")
    code, _, err = ask("hi")
    assert code == 2 and "not valid TOML" in err
    assert ask("   ")[0] == 2


def test_ask_as_a_command(demo_config: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "app", "ask", "Show me order A-1042", "--provider",
                             "demo-openai-chat", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    turns = json.loads(result.stdout)["turns"]
    assert turns[0]["blocks"][1]["name"] == "get_order" and turns[0]["blocks"][1]["state"] == "ran"


def test_ctrl_c_cancels_ask_as_a_stated_failure(demo_config: Path) -> None:
    import signal

    process = subprocess.Popen([sys.executable, "-m", "app", "ask", "/demo slow", "--provider", "demo-anthropic"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    shown = ""
    while "moment" not in shown:  # the whole preamble is out: the demo's minute-long stall is next
        piece = process.stdout.read(1)
        assert piece, f"ask ended before its preamble was out: {shown!r}"
        shown += piece
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130  # 128 + SIGINT, every time
    assert "Interrupted: the turn was cancelled." in err and "Traceback" not in err


def test_serve_demo_answers_the_official_sdk(home: Path) -> None:
    import openai

    process = subprocess.Popen([sys.executable, "-m", "app", "serve-demo", "--port", "0", "--speed", "0"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, process.stderr.read() if process.stderr else ""
        base = line.rsplit(" ", 1)[1].strip()
        client = openai.OpenAI(api_key="demo", base_url=base + "/v1", max_retries=0)
        stream = client.chat.completions.create(model="demo", stream=True,
                                                messages=[{"role": "user", "content": "/demo"}])
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        assert "/demo cutoff" in text
    finally:
        process.terminate()
        process.wait(10)


# -- approvals: ask never prompts -------------------------------------------------------


def test_ask_fails_closed_when_a_call_needs_approval(demo_config: Path) -> None:
    code, out, err = ask(PROMPT, "demo-anthropic", as_json=True)
    assert code == 1
    document = json.loads(out)
    assert document["status"] == "needs_approval"
    assert "create_ticket needs approval" in document["message"]
    ticket = [b for t in document["turns"] for b in t["blocks"] if b.get("name") == "create_ticket"]
    assert [b["state"] for b in ticket] == ["needs approval"] and ticket[0]["key"]
    searches = [b["state"] for t in document["turns"] for b in t["blocks"] if b.get("name") == "search_orders"]
    assert searches == ["ran", "ran"]  # read-only tools run without asking


def test_ask_approve_answers_a_stored_pending_approval_once(demo_config: Path, home: Path) -> None:
    code, out, _ = ask(PROMPT, "demo-anthropic", as_json=True)
    assert code == 1
    conversation = json.loads(out)["conversation"]
    code, out, err = ask("go ahead", "demo-anthropic", conversation=conversation, as_json=True,
                         approve="create_ticket")
    assert code == 0, err
    from app.ledger import SqliteLedger

    ledger = SqliteLedger(home / "home" / "callstream.db")
    tickets = [e for e in ledger.entries(conversation) if e["tool"] == "create_ticket"]
    ledger.close()
    assert [e["state"] for e in tickets] == ["ran"]  # the pending call ran, once
    code, _, _ = ask("again", "demo-anthropic", conversation=conversation, approve="create_ticket")
    ledger = SqliteLedger(home / "home" / "callstream.db")
    assert len([e for e in ledger.entries(conversation) if e["tool"] == "create_ticket"]) == 1
    ledger.close()


def test_a_deny_rule_beats_an_allow_rule_and_the_model_is_told(demo_config: Path) -> None:
    with demo_config.open("a") as handle:
        handle.write('\n[approval]\nallow = ["create_ticket"]\ndeny = ["create_*"]\n')
    code, out, err = ask(PROMPT, "demo-anthropic", as_json=True, approve="create_ticket")
    document = json.loads(out)
    ticket = [b for t in document["turns"] for b in t["blocks"] if b.get("name") == "create_ticket"]
    assert ticket[0]["state"] == "denied" and "[approval] deny" in ticket[0]["result"]
