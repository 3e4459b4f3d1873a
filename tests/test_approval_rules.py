"""The approval rules (app/tools/approvals.py), one behaviour each."""

from __future__ import annotations

import tomllib
from functools import partial
from pathlib import Path

import pytest

from app.settings.configfile import allow_always
from app.tools.approvals import Answer, Approvals
from app.tools.base import Tool


async def _run(arguments: dict[str, object], ctx: object) -> str:
    return "ok"


def tool(name: str = "git__git_commit", read_only: bool = False, approval: str | None = None) -> Tool:
    return Tool(name, "", {"type": "object"}, _run, read_only=read_only, approval=approval)  # type: ignore[arg-type]


def test_read_only_runs_and_a_side_effect_asks_by_default() -> None:
    rules = Approvals()
    assert rules.decide(tool("lookup", read_only=True)) == "run"
    assert rules.decide(tool()) == "ask"


def test_a_deny_pattern_beats_every_allow() -> None:
    rules = Approvals(allow=["git__*"], deny=["git__git_commit"], approve=["all"])
    assert rules.decide(tool(approval="never")) == "deny"
    assert rules.decide(tool("git__git_add")) == "run"


def test_never_and_always_ask_per_tool() -> None:
    assert Approvals().decide(tool(approval="never")) == "run"
    rules = Approvals(allow=["git__git_commit"], approve=["all"])
    assert rules.decide(tool(approval="always-ask")) == "ask"  # neither allow nor "all" overrides it
    assert Approvals(approve=["git__git_commit"]).decide(tool(approval="always-ask")) == "run"  # naming it does


def test_approve_read_only_allows_no_side_effect() -> None:
    rules = Approvals(interactive=False, approve=["read-only"])
    assert rules.decide(tool("lookup", read_only=True)) == "run"
    assert rules.decide(tool()) == "ask"


def test_for_this_conversation_is_remembered_and_not_written(tmp_path: Path) -> None:
    rules = Approvals(write_always=partial(allow_always, tmp_path / "config.toml"))
    rules.remember(tool(), Answer("conversation"), "conv")
    assert rules.decide(tool()) == "run" and not (tmp_path / "config.toml").exists()


def test_always_is_written_with_its_origin_and_keeps_the_users_lines(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('# mine\n[approval]\ndeny = ["shell__*"]\n')
    rules = Approvals(write_always=partial(allow_always, path))
    rules.remember(tool(), Answer("always"), "conversation-1234567890")
    text = path.read_text()
    assert text.startswith("# mine\n") and "conversation conversation" in text
    assert tomllib.loads(text)["approval"] == {"deny": ["shell__*"], "allow": ["git__git_commit"]}


def test_always_is_not_kept_for_an_always_ask_tool(tmp_path: Path) -> None:
    rules = Approvals(write_always=partial(allow_always, tmp_path / "config.toml"))
    rules.remember(tool(approval="always-ask"), Answer("always"), "c")
    assert rules.allow == [] and not (tmp_path / "config.toml").exists()


def test_an_unknown_answer_is_refused() -> None:
    with pytest.raises(ValueError, match="one of once, conversation, always, deny"):
        Answer("maybe")
