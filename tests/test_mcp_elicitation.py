"""A server's request for the person (MCP elicitation, issue 26 item 2): the
form built from the requested schema, answered in-band on the running card
under Pilot with server-everything; ``ask`` declining it; what is kept."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import Static

from app.net.endpoint import Endpoint
from app.settings.config import Config
from app.settings.mcp import parse_servers
from app.stream import ToolCallBlock
from app.stream.blocks import block_from_record, block_record
from app.stream.elicitation import REDACTED, answer_values, kept_answer, parse_elicitation
from app.tui.app import make_app
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.test_mcp_everything import everything
from tests.waiting import screen_lines, wait_for
from widgets.elicitation_form import ElicitationForm
from widgets.prompt_input import PromptInput
from widgets.tool_card import ToolCard

SCHEMA = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "title": "Name", "minLength": 2},
    "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
    "ok": {"type": "boolean"},
    "pet": {"type": "string", "enum": ["cat", "dog"], "enumNames": ["Cat", "Dog"]},
    "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
             "maxItems": 1},
    "password": {"type": "string", "format": "password"},
}}


def test_a_form_is_built_from_the_schemas_primitive_types_constraints_and_defaults() -> None:
    asked = parse_elicitation("srv", {"message": "Who?", "requestedSchema": SCHEMA})
    fields = {f.name: f for f in asked.fields}
    assert asked.state == "asked" and [f.kind for f in asked.fields] == ["string", "integer", "boolean", "choice",
                                                                        "choices", "string"]
    assert fields["name"].required and fields["name"].min_length == 2
    assert (fields["age"].minimum, fields["age"].maximum, fields["age"].default) == (0, 150, 30)
    assert fields["pet"].options == [("cat", "Cat"), ("dog", "Dog")] and fields["password"].sensitive


def test_answers_outside_the_constraints_are_refused_by_field() -> None:
    fields = parse_elicitation("srv", {"message": "", "requestedSchema": SCHEMA}).fields
    values, problems = answer_values(fields, {"name": "A", "age": "200", "pet": "fish", "tags": ["a", "b"]})
    assert problems == {"name": "at least 2 characters", "age": "at most 150", "pet": "choose from the list",
                        "tags": "choose at most 1"} and values == {}
    assert answer_values(fields, {"name": "Ada", "pet": ["cat", "dog"]})[1] == {"pet": "choose one"}
    values, problems = answer_values(fields, {"name": "Ada", "age": "36", "ok": True, "pet": "cat", "tags": ["a"]})
    assert problems == {} and values == {"name": "Ada", "age": 36, "ok": True, "pet": "cat", "tags": ["a"]}


def test_a_schema_no_form_can_hold_is_declined_saying_why() -> None:
    asked = parse_elicitation("srv", {"message": "m", "requestedSchema": {"type": "object", "properties": {
        "nested": {"type": "object"}}}})
    assert asked.state == "decline" and "cannot show this form" in (asked.reason or "")


def test_sensitive_values_are_redacted_where_kept_and_survive_the_store() -> None:
    asked = parse_elicitation("srv", {"message": "Log in", "requestedSchema": SCHEMA})
    asked.state = "accept"
    asked.answer = kept_answer(asked.fields, {"name": "Ada", "password": "hunter2-hunter2"})
    assert asked.answer == {"name": "Ada", "password": REDACTED}
    block = ToolCallBlock("c1", "srv__login", state="ran", result="ok", elicitations=[asked])
    back = block_from_record(json.loads(json.dumps(block_record(block))))
    assert isinstance(back, ToolCallBlock) and back.elicitations[0].answer == {"name": "Ada", "password": REDACTED}
    assert "hunter2" not in json.dumps(block_record(block))


@given(st.dictionaries(st.text(max_size=8), st.one_of(st.text(), st.booleans(), st.lists(st.text()))))
def test_any_entered_values_give_values_or_problems_never_an_error(entered: dict[str, Any]) -> None:
    fields = parse_elicitation("srv", {"message": "", "requestedSchema": SCHEMA}).fields
    values, problems = answer_values(fields, entered)
    assert not (set(values) & set(problems))


def on_screen(app: Any) -> str:
    return "\n".join(screen_lines(app)).replace("\xa0", " ")


@contextlib.asynccontextmanager
async def form_shown(reply: str) -> AsyncIterator[tuple[Any, Any, FaultServer, ElicitationForm]]:
    """The TUI on a scripted model that calls server-everything's elicitation tool, then says ``reply``:
    (app, pilot, the model's server, the form) once the form is on the running card."""
    config = Config(mcp=parse_servers({"ev": everything(approval="never")}, "test"))
    script = streamgen.call_script(0, "c1", "ev__trigger-elicitation-request", "{}")
    with FaultServer() as server:
        server.replies += [Reply(streamgen.openai_chat(script)),
                           Reply(streamgen.openai_chat([("text", reply)], finish="stop"))]
        app = make_app(config=config, endpoint=Endpoint("openai-chat", server.url, "m", "test"))
        app.cursor_blink = False
        async with app.run_test(size=(120, 80)) as pilot:
            await app.session.registry.settled()
            app.screen.query_one(PromptInput).text = "ask me"
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen.query(ElicitationForm), "the form on the running card")
            yield app, pilot, server, app.screen.query_one(ElicitationForm)


async def test_the_elicitation_card_takes_the_answer_in_band_and_the_model_reads_it(home: Path) -> None:
    async with form_shown("Thanks, Ada.") as (app, pilot, server, form):
        shown = " ".join(str(w.render()) for w in form.query(Static))
        assert "ev asks: Please provide inputs for the following fields:" in shown
        assert "Your full, legal name" in shown and form._controls["firstLine"].value == (  # type: ignore
            "It was a dark and stormy night.")  # its default, filled in
        form.action_answer("accept")  # the required name is empty: refused on the form, nothing sent
        problem = form._problems["name"]
        await wait_for(pilot, lambda: problem.display and "required" in str(problem.render()),
                       "the refusal under the name field")
        assert app.session.asking.waiting(app.session.turns[-1].blocks[0].key) is not None  # type: ignore
        form._controls["name"].value = "Ada Lovelace"  # type: ignore[union-attr]
        await pilot.click("#ask-accept")
        await wait_for(pilot, lambda: "Thanks, Ada." in on_screen(app) and not app.session.busy,
                       "the answer to reach the server and the model to reply")
        card = app.screen.query_one(ToolCard)
        asked = str(card._asked.render())
        assert "ev asked: Please provide inputs" in asked and "name = Ada Lovelace" in asked
        assert not app.screen.query(ElicitationForm)
        assert "- Name: Ada Lovelace" in json.dumps(server.requests[1]["body"])
    # the transcript keeps what was asked and what was answered
    from app.cli.common import open_store

    tree = open_store().load(app.session.conversation)
    assert tree is not None
    calls = [b for item in tree.items for b in getattr(item, "blocks", []) if isinstance(b, ToolCallBlock)]
    (kept,) = calls[0].elicitations
    assert kept.state == "accept" and kept.answer is not None and kept.answer["name"] == "Ada Lovelace"
    assert kept.message == "Please provide inputs for the following fields:"


async def test_the_form_takes_the_keys_so_esc_cancels_the_request_and_not_the_turn(home: Path) -> None:
    """The form appears with its first field focused (as an approval's keys are); Esc there cancels the
    server's request, the call ends as the server says and the model's turn goes on; the box has the keys again."""
    async with form_shown("You cancelled it.") as (app, pilot, _, form):
        await wait_for(pilot, lambda: form.has_focus_within, "the form to take the focus")
        await pilot.press("escape")
        await wait_for(pilot, lambda: "You cancelled it." in on_screen(app) and not app.session.busy,
                       "the cancel to reach the server and the model to reply")
        card = app.screen.query_one(ToolCard)
        assert card.block.state == "ran" and "→ cancelled" in str(card._asked.render())
        assert isinstance(app.focused, PromptInput)


def test_ask_declines_a_request_for_input_and_says_so(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.ask import run_ask

    table = everything(approval="never")
    args = ", ".join(json.dumps(a) for a in table["args"])
    script = streamgen.call_script(0, "c1", "ev__trigger-elicitation-request", "{}")
    with FaultServer() as server:
        server.replies += [Reply(streamgen.openai_chat(script)),
                           Reply(streamgen.openai_chat([("text", "They declined.")], finish="stop"))]
        (home / "config.toml").write_text(
            f'default = "fx"\n[providers.fx]\nprovider = "openai-chat"\nbase_url = "{server.url}"\nmodel = "m"\n'
            f'api_key_env = "NO_KEY"\n\n[mcp.ev]\ncommand = {json.dumps(table["command"])}\nargs = [{args}]\n'
            'startup_timeout = 60\napproval = "never"\n')
        code = run_ask("ask me")
    err = capsys.readouterr().err
    assert code == 1
    assert "the ev server asked for input (Please provide inputs for the following fields:); callstream ask " \
           "never prompts, so it declined" in err
    assert "User declined to provide the requested information" in json.dumps(server.requests[1]["body"])


async def test_elicit_defaults_accepts_a_form_whose_fields_all_have_defaults_and_declines_one_without() -> None:
    from app.chat.asking import AcceptingDefaults
    from app.stream.elicitation import parse_elicitation

    schema = {"type": "object", "required": ["name", "age"], "properties": {
        "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer", "default": 36},
        "score": {"type": "number", "default": 9.5}, "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m"], "default": "m"}}}
    asking = AcceptingDefaults()
    whole = parse_elicitation("conf", {"message": "Details?", "requestedSchema": schema})
    assert await asking.ask("k1", whole) == {"name": "Ada", "age": 36, "score": 9.5, "ok": True, "size": "m"}
    assert whole.state == "accept" and not asking.declined
    missing = dict(schema, properties={**schema["properties"], "city": {"type": "string"}},
                   required=["name", "city"])
    partial = parse_elicitation("conf", {"message": "Where?", "requestedSchema": missing})
    assert await asking.ask("k2", partial) is None
    assert partial.state == "decline" and partial.reason == "no default the schema allows for city"
    assert asking.declined == [partial]
