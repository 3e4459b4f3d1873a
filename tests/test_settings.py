"""Everyday settings: tools scoped to where they belong, system prompts and
roles, unknown keys named, and a CALLSTREAM_CONFIG that points nowhere."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from app.cli.ask import run_ask
from app.runtime.wiring import offered_tools, open_runtime
from app.settings.checks import ConfigError
from app.settings.config import load_config
from tests import streamgen
from tests.faultserver import FaultServer, Reply

DEMO_TOOLS = {"search_orders", "get_order", "create_ticket"}


def ask(*args: str, **kwargs: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_ask(*args, out=out, err=err, **kwargs)  # type: ignore[arg-type]
    return code, out.getvalue(), err.getvalue()


def _note_tool(home: Path) -> str:
    script = home / "note.py"
    script.write_text("import sys\nprint('noted')\n")
    return (f'[tools.note]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(script))}]\n'
            'parameters = { type = "object", properties = { text = { type = "string" } } }\n')


def test_a_real_provider_profile_offers_no_demo_tools(home: Path) -> None:
    """A real OpenAI-compatible server (the fault server on 127.0.0.1) is
    offered the config's own tools, never the demo's order store."""
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.openai_chat([("text", "Hello.")])))
        (home / "config.toml").write_text(
            f'default = "local"\n[providers.local]\nprovider = "openai-chat"\nmodel = "m"\n'
            f'base_url = "{server.url}/v1"\n' + _note_tool(home))
        code, out, err = ask("hi")
        assert code == 0, err
        body = server.requests[0]["body"]
    assert [t["function"]["name"] for t in body["tools"]] == ["note"]
    assert "Hello." in out


def test_a_real_provider_without_tools_sends_no_tools_field(home: Path) -> None:
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.openai_chat([("text", "Hello.")])))
        (home / "config.toml").write_text(
            f'default = "local"\n[providers.local]\nprovider = "openai-chat"\nmodel = "m"\n'
            f'base_url = "{server.url}/v1"\n')
        code, _, err = ask("hi")
        assert code == 0, err
        body = server.requests[0]["body"]
    assert not body.get("tools")


def test_a_profile_names_the_tools_it_offers(home: Path) -> None:
    (home / "config.toml").write_text(
        '[providers.p]\nprovider = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'tools = ["get_order", "note"]\n' + _note_tool(home))
    config = load_config()
    runtime = open_runtime(config=config)
    try:
        assert runtime.offered(config.profile("p")).names() == ["get_order", "note"]
        assert set(runtime.offered(config.profile("demo")).names()) == DEMO_TOOLS | {"note"}
        assert runtime.offered(config.profile("openai-chat")).names() == ["note"]
        assert not offered_tools(config.profile("openai-chat"), config)("search_orders")
    finally:
        runtime.close()


def test_a_profile_naming_an_unknown_tool_is_an_error(home: Path) -> None:
    (home / "config.toml").write_text('[providers.p]\nprovider = "demo"\ntools = ["serch_orders"]\n')
    with pytest.raises(ConfigError, match="'serch_orders', which is neither a built-in"):
        load_config()


def test_the_demo_provider_offers_its_support_tools(home: Path) -> None:
    runtime = open_runtime(config=load_config())
    try:
        session = runtime.session()
        assert set(session.registry.names()) == DEMO_TOOLS
    finally:
        runtime.close()


def test_a_misspelled_key_gets_a_warning_naming_it(home: Path) -> None:
    (home / "config.toml").write_text('recrod = false\n[providers.p]\nprovider = "demo"\nread_timout = 3\n'
                                      '[tools.t]\ncommand = "true"\ndescripton = "x"\n')
    config = load_config()
    assert any("unknown key 'recrod' (did you mean 'record'?)" in w for w in config.warnings)
    assert any("providers.p: unknown key 'read_timout' (did you mean 'read_timeout'?)" in w
               for w in config.warnings)
    assert any("tools.t: unknown key 'descripton'" in w for w in config.warnings)


def test_ask_prints_config_warnings_to_stderr(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\nspede = 1\n')
    code, _, err = ask("Show me order A-1042")
    assert code == 0
    assert "warning:" in err and "'spede'" in err


def test_callstream_config_pointing_at_a_missing_file_is_an_error(home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLSTREAM_CONFIG", str(home / "nowhere.toml"))
    with pytest.raises(ConfigError, match="CALLSTREAM_CONFIG points at .*nowhere.toml, which does not exist"):
        load_config()
    code, out, err = ask("hi")
    assert code == 2 and "does not exist" in err and out == ""


def test_system_prompt_precedence_and_roles(home: Path) -> None:
    (home / "config.toml").write_text('system = "Be brief."\n[roles.reviewer]\nsystem = "Review code."\n'
                                      '[providers.demo]\nprovider = "demo"\n')
    config = load_config()
    for kwargs, expected in [({}, "Be brief."), ({"role": "reviewer"}, "Review code."),
                             ({"role": "reviewer", "system": "Say yes."}, "Say yes.")]:
        runtime = open_runtime(config=config, **kwargs)  # type: ignore[arg-type]
        try:
            assert runtime.session().system == expected
        finally:
            runtime.close()
    with pytest.raises(ConfigError, match="unknown role 'nope' \\(known: reviewer\\)"):
        open_runtime(config=config, role="nope")


def _ask_process(home: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    import subprocess

    from tests.conftest import ROOT

    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    result = subprocess.run([sys.executable, "-m", "app", "ask", *args, "--json"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, input=stdin if stdin is not None else "",
                            env={**__import__("os").environ})
    return result.returncode, result.stdout, result.stderr


def test_piped_stdin_is_appended_to_the_prompt(home: Path) -> None:
    from app.cli.ask import with_attachment

    assert with_attachment("summarise", "a\nb\n") == "summarise\n\n```\na\nb\n```"
    assert with_attachment("summarise", "a\n```x```\n") == "summarise\n\n````\na\n```x```\n````"
    assert with_attachment("summarise", "has ```` four\n").startswith("summarise\n\n`````\n")
    assert with_attachment("summarise", "  \n") == "summarise"
    code, out, err = _ask_process(home, "Show me order", stdin="A-1042 is the order\n")
    assert code == 0, err
    assert json.loads(out)["turns"][0]["blocks"][1]["arguments"] == {"order_id": "A-1042"}


def test_ask_dash_reads_the_prompt_from_stdin(home: Path) -> None:
    code, out, err = _ask_process(home, "-", stdin="Show me order A-1042\n")
    assert code == 0, err
    assert json.loads(out)["turns"][0]["blocks"][1]["name"] == "get_order"
    code, _, err = _ask_process(home, "-", stdin="")
    assert code == 2 and "needs a prompt" in err


def test_ask_is_plain_text_on_a_pipe_and_markdown_on_a_terminal(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    code, plain, _ = ask("Show me Grace Hopper's open and shipped orders")
    assert code == 0 and "\x1b[" not in plain
    assert "- " in plain  # the model's Markdown list, as written
    code, rendered, _ = ask("Show me Grace Hopper's open and shipped orders", markdown=True)
    assert code == 0 and "\x1b[" in rendered  # styled by Rich
    assert "•" in rendered  # a rendered bullet


def test_the_per_turn_caps_are_read_from_the_config_without_a_warning(home: Path) -> None:
    (home / "config.toml").write_text("max_calls_per_turn = 12\nmax_concurrent_tools = 3\n")
    config = load_config()
    assert (config.max_calls_per_turn, config.max_concurrent_tools, config.warnings) == (12, 3, [])
    runtime = open_runtime(config=config)
    try:
        session = runtime.session()
        assert (session.max_calls_per_turn, session.max_concurrent_tools) == (12, 3)
    finally:
        runtime.close()


@pytest.mark.parametrize("line", ["max_calls_per_turn = 0", "max_concurrent_tools = true",
                                  "max_concurrent_tools = 1.5", 'max_calls_per_turn = "lots"'])
def test_a_cap_that_is_not_a_whole_number_in_range_is_a_config_error(home: Path, line: str) -> None:
    (home / "config.toml").write_text(line + "\n")
    key = line.split(" = ")[0]
    with pytest.raises(ConfigError, match=f"{key} must be a whole number from 1 to"):
        load_config()


@pytest.mark.parametrize("value, shown", [("nan", "nan"), ("inf", "inf"), ("1979-05-27T07:32:00Z", "datetime"),
                                          ("[1.0, -inf]", "-inf")])
def test_a_request_option_json_cannot_carry_is_a_config_error(home: Path, value: str, shown: str) -> None:
    """TOML has nan, inf and dates; JSON has none: such an option is refused
    when the config is read, one line naming it, not a traceback at send."""
    (home / "config.toml").write_text(f'[providers.p]\nprovider = "demo"\noptions = {{ temperature = {value} }}\n')
    with pytest.raises(ConfigError, match=f"providers.p.options.temperature cannot be sent as JSON .*{shown}"):
        load_config()
    code, out, err = ask("hello", "--provider", "p")
    assert code == 2 and "options.temperature cannot be sent as JSON" in err and "Traceback" not in err


def test_the_demo_s_own_profile_is_the_demo_used_when_no_default_is_named(home: Path) -> None:
    """Why: ``[providers.demo]`` with ``speed = 0`` and no ``default`` was read and then passed over for
    the built-in demo at speed 1: ``make bench-long``'s "full speed" live session ran at a real model's
    pace (about 0.9 s of scripted pauses an exchange) and nobody was told."""
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\ndialect = "anthropic"\n')
    profile = load_config().profile()
    assert (profile.provider, profile.demo_speed, profile.demo_dialect) == ("demo", 0.0, "anthropic")


def test_the_demo_s_settings_on_another_provider_get_a_warning(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nspeed = 0\n')  # no provider: an OpenAI-compatible one
    config = load_config()
    assert any("providers.demo.speed is the demo model's own setting" in w and "'openai-chat'" in w
               for w in config.warnings)
    profile = config.profile()
    assert (profile.provider, profile.demo_speed) == ("demo", 1.0)  # the built-in demo, as before
