"""Issue 24's secrets: a value a config names (``${VAR}`` in ``[mcp.*]``
headers and env) that a server echoes back lands nowhere; no password in a
ledger URL in any form; ``mcp import`` warns about literal tokens."""

from __future__ import annotations

import base64
import json
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import streamgen
from tests.conftest import ROOT, file_bytes, run_cli
from tests.faultserver import FaultServer, Reply
from tests.mcp_fixture import serving_http

ECHO = [sys.executable, "-m", "tests.mcp_echo"]



def _files_holding(root: Path, secret: str) -> list[Path]:
    needles = [secret.encode(), base64.b64encode(secret.encode())[:24], secret[6:22].encode()]
    return [p for p in root.rglob("*") if p.is_file() and any(n in file_bytes(p) for n in needles)]


@pytest.fixture
def echo_http() -> Iterator[str]:
    with serving_http("tests.mcp_echo") as url:
        yield url


def _calls(server: str) -> bytes:
    script = [("text", "Checking. ")]
    for slot, tool in enumerate(("whoami", "refused", "broken")):
        script += streamgen.call_script(slot, f"c{slot}", f"{server}__{tool}", "{}")
    return streamgen.openai_chat(script)


def _echo_config(provider: str, echo_http: str) -> str:
    return f"""
default = "local"
[providers.local]
provider = "openai-chat"
model = "m"
base_url = "{provider}/v1"
retries = 0

[mcp.env]
command = {json.dumps(ECHO[0])}
args = ["-m", "tests.mcp_echo", "stdio"]
cwd = {json.dumps(str(ROOT))}
env = {{ ECHO_TOKEN = "${{ECHO_ENV_TOKEN}}" }}
startup_timeout = 60
approval = "never"

[mcp.web]
url = "{echo_http}"
headers = {{ Authorization = "Bearer ${{ECHO_HEADER_TOKEN}}" }}
startup_timeout = 60
approval = "never"

[mcp.expired]
command = {json.dumps(ECHO[0])}
args = ["-m", "tests.mcp_echo", "fail"]
cwd = {json.dumps(str(ROOT))}
env = {{ ECHO_TOKEN = "${{ECHO_ENV_TOKEN}}" }}
startup_timeout = 60
"""


def test_a_secret_a_config_names_and_a_server_echoes_lands_nowhere(
        home: Path, monkeypatch: pytest.MonkeyPatch, echo_http: str) -> None:
    """A token an ``[mcp.*]`` table takes from the environment (``env`` of a
    stdio server, ``headers`` of an HTTP one), echoed back in a result, an
    ``isError`` result, a JSON-RPC error, the server's stderr and a failed
    start: not one file under the data dir holds it, nothing printed shows
    it, and the next provider request does not carry it."""
    env_token = "tok-env-" + uuid.uuid4().hex
    header_token = "tok-hdr-" + uuid.uuid4().hex
    monkeypatch.setenv("ECHO_ENV_TOKEN", env_token)
    monkeypatch.setenv("ECHO_HEADER_TOKEN", header_token)
    printed: list[str] = []
    with FaultServer() as provider:
        (home / "config.toml").write_text(_echo_config(provider.url, echo_http))
        for server in ("env", "web"):
            provider.replies.append(Reply(_calls(server)))
            provider.replies.append(Reply(streamgen.openai_chat([("text", "Done.")], finish="stop")))
            code, out, err = run_cli("ask", "who am I?")
            assert code == 0, err
            assert "Traceback" not in err
            assert f"⚙ {server}__whoami · ran\n    → you are token [redacted], which is expired" in out
            assert f"⚙ {server}__refused · failed\n    → Error: token [redacted] is expired" in out
            assert f"{server}__broken" in out and "Done." in out
            printed += [out, err]
        sent = json.dumps([r["body"] for r in provider.requests])
    assert len(provider.requests) == 4
    assert sent.count("token [redacted]") >= 6  # the results the model was told, echo and all
    code, out, err = run_cli("mcp", "list")
    assert code == 1 and "expired: failed: " in out + err and "token [redacted] is expired" in out + err
    printed += [out, err]
    code, out, err = run_cli("mcp", "list", "--json")
    statuses = {s["name"]: s for s in json.loads(out)}
    assert statuses["expired"]["state"] == "failed" and "[redacted]" in statuses["expired"]["reason"]
    printed += [out, err]

    code, listing, _ = run_cli("transcripts", "--json")
    conversations = [row["id"] for row in json.loads(listing)]
    assert code == 0 and len(conversations) == 2  # both conversations kept, with every call
    for conversation in conversations:
        code, out, err = run_cli("export", conversation, "--format", "json")
        assert code == 0 and out.count("[redacted]") >= 3, err
        printed += [out, err]
    code, out, err = run_cli("ledger", "--json")
    assert code == 0 and "[redacted]" in out
    printed += [out, err]

    data = home / "home"
    assert list((data / "recordings").glob("*.ndjson.gz")) and (data / "callstream.db").exists()
    assert "token [redacted]" in (data / "mcp-logs" / "env.log").read_text()
    for token in (env_token, header_token):
        assert token not in sent and token[6:22] not in sent
        assert _files_holding(home, token) == []
        assert not any(token in text or token[6:22] in text for text in printed)


# -- item 7: no password in a ledger URL, in any form ---------------------------------------------------------

PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."
DEMO = '[providers.demo]\nprovider = "demo"\nspeed = 0\n'


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("ledger", [
    "postgresql://cs:hunter2-pw@127.0.0.1/cs",
    "postgresql://cs@127.0.0.1/cs?password=hunter2-pw",
    "postgresql://cs@127.0.0.1/cs?sslmode=disable&pass%77ord=hunter2-pw",
    "host=127.0.0.1 dbname=cs password=hunter2-pw",
    "host=127.0.0.1 dbname=cs password = 'hunter2-pw'",
], ids=["userinfo", "query", "encoded-query", "conninfo", "conninfo-quoted"])
def test_a_password_in_a_ledger_url_is_refused_in_every_form_libpq_reads(home: Path, ledger: str) -> None:
    config = home / "config.toml"
    config.write_text(DEMO)
    code, out, err = run_cli("ask", PROMPT, "--approve", "create_ticket")
    assert code == 0, err
    config.write_text(f"ledger = {json.dumps(ledger)}\n" + DEMO)
    printed = []
    for argv in (["ledger"], ["ledger", "migrate"], ["ask", "hello"]):
        code, out, err = run_cli(*argv)
        assert code == 2, (argv, out, err)
        assert "ledger holds a password" in err and "passwords do not go in the config file" in err
        assert "set PGPASSWORD (or use ~/.pgpass)" in err and "Traceback" not in err
        printed += [out, err]
    assert not any("hunter2" in text for text in printed)
    config.write_text(DEMO)  # the conversation saved before is all there
    code, listing, _ = run_cli("transcripts", "--json")
    assert code == 0 and len(json.loads(listing)) == 1
    code, out, _ = run_cli("ledger", "--json")
    assert code == 0 and [e["tool"] for e in json.loads(out)].count("create_ticket") == 1


def test_an_unreachable_ledger_never_quotes_the_password_its_url_carries(home: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``CALLSTREAM_LEDGER_URL`` (the environment) may carry a password; a
    database that cannot be reached must not put it in the "not run"
    results, the store, or anything printed, whichever form it took."""
    (home / "config.toml").write_text(DEMO)
    code, _, err = run_cli("ask", PROMPT, "--approve", "create_ticket")
    assert code == 0, err
    port = _free_port()
    where = f"postgresql://cs@127.0.0.1:{port}/cs"
    monkeypatch.setenv("CALLSTREAM_LEDGER_URL", f"postgresql://cs:user-info-pw@127.0.0.1:{port}/cs"
                                                "?password=query-pw-xyz&sslmode=disable")
    printed = []
    code, out, err = run_cli("ask", PROMPT, "--approve", "create_ticket")
    assert "⚙ search_orders · not run" in out and "the idempotency ledger is unavailable" in out
    assert "Traceback" not in err
    printed += [out, err]
    code, out, err = run_cli("ledger")
    assert code == 2 and f"cannot read the ledger {where}?sslmode=disable" in err
    printed += [out, err]
    code, out, err = run_cli("ledger", "migrate")
    assert code == 2 and f"cannot reach the ledger at {where}?sslmode=disable: connection failed" in err
    printed += [out, err]
    # a URL libpq cannot read quotes the piece it choked on: the password
    monkeypatch.setenv("CALLSTREAM_LEDGER_URL", f"postgresql://cs:bad%zz-encoded-pw@127.0.0.1:{port}/cs")
    code, out, err = run_cli("ledger", "migrate")
    assert code == 2 and f"the ledger URL {where} cannot be used: invalid percent-encoded token" in err
    assert "Traceback" not in err
    printed += [out, err]

    monkeypatch.delenv("CALLSTREAM_LEDGER_URL")
    code, listing, _ = run_cli("transcripts", "--json")
    conversations = [row["id"] for row in json.loads(listing)]
    assert code == 0 and len(conversations) == 2  # the one before, and the one asked of the unreachable ledger
    for conversation in conversations:
        code, out, err = run_cli("export", conversation, "--format", "json")
        assert code == 0, err
        printed += [out, err]
    assert "not run: the idempotency ledger is unavailable" in "".join(printed)
    for password in ("user-info-pw", "query-pw-xyz", "bad%zz-encoded-pw", "encoded-pw"):
        assert not any(password in text for text in printed), password
        assert _files_holding(home, password) == [], password


# -- item 8: `mcp import` warns about literal tokens ----------------------------------------------------------


def test_mcp_import_warns_about_a_literal_token_naming_the_server_and_key_never_the_value(home: Path) -> None:
    config = home / "config.toml"
    config.write_text('# mine\ndefault = "demo"\n\n[providers.demo]\nprovider = "demo"\n')
    github, bearer, api_key = "ghp_" + uuid.uuid4().hex, "opaque-" + uuid.uuid4().hex[:12], uuid.uuid4().hex
    source = home / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": github, "LOG_LEVEL": "debug",
                           "GIT_AUTHOR_NAME": "callstream", "PATH": "/usr/local/bin:/usr/bin"}},
        "search": {"url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": f"Bearer {bearer}", "X-Api-Key": api_key, "Accept": "text/plain"}},
        "kept": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${KEPT_TOKEN}"}}}}))
    code, out, err = run_cli("mcp", "import", str(source))
    assert code == 0 and "Traceback" not in err
    assert "added [mcp.github]" in out and "added [mcp.search]" in out and "added [mcp.kept]" in out
    assert (f"warning: [mcp.github] env: GITHUB_PERSONAL_ACCESS_TOKEN holds what looks like a literal token, copied "
            f"as it was into {config}. To keep it out of the file, make it GITHUB_PERSONAL_ACCESS_TOKEN = "
            '"${GITHUB_PERSONAL_ACCESS_TOKEN}" and set GITHUB_PERSONAL_ACCESS_TOKEN in the environment.') in err
    assert ("warning: [mcp.search] headers: Authorization holds what looks like a literal token" in err
            and 'make it Authorization = "Bearer ${SEARCH_TOKEN}" and set SEARCH_TOKEN in the environment.' in err)
    assert 'make it X-Api-Key = "${SEARCH_X_API_KEY}" and set SEARCH_X_API_KEY' in err
    assert err.count("warning:") == 3  # not the log level, the author's name, the PATH, Accept, nor a ${VAR}
    for token in (github, bearer, api_key):
        assert token not in out + err and token[4:16] not in out + err
    text = config.read_text()
    assert text.startswith("# mine\ndefault = \"demo\"\n")  # what the user wrote is kept
    assert '"Bearer ${KEPT_TOKEN}"' in text
    from app.settings.config import load_config
    from app.settings.mcp import named_secrets

    # and, written so, each is a secret the config names: registered with the one redaction when the server starts
    assert set(named_secrets(load_config().mcp["search"])) == {bearer, api_key}
