"""OAuth against a real authorization server and a protected Streamable HTTP
MCP server on 127.0.0.1 (tests/oauth_server.py, on the SDK's server auth
module), through callstream's command line: sign-in needed, ``mcp login``, a
call, an expired access token refreshed without asking, a revoked refresh
token asking again with the reason, a server whose metadata names another
resource refused, ``mcp logout``; and no token anywhere we write."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.waiting import wait_until_sync

BROWSER = f"{sys.executable} {ROOT / 'scripts' / 'conformance_browser.py'} %s"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Servers:
    issuer: str
    url: str

    def control(self, what: str) -> dict[str, int]:
        method = "GET" if what == "counts" else "POST"
        with urllib.request.urlopen(urllib.request.Request(f"{self.issuer}/test/{what}", method=method),
                                    timeout=10) as answer:
            return dict(json.loads(answer.read()))


def _serve(*extra: str) -> Iterator[Servers]:
    as_port, rs_port = _port(), _port()
    process = subprocess.Popen([sys.executable, "-m", "tests.oauth_server", str(as_port), str(rs_port), *extra],
                               cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)

    def listening() -> bool:
        if process.poll() is not None:
            assert process.stderr is not None
            raise AssertionError(f"oauth_server exited: {process.stderr.read().decode()[-800:]}")
        with socket.socket() as a, socket.socket() as b:
            return a.connect_ex(("127.0.0.1", as_port)) == 0 and b.connect_ex(("127.0.0.1", rs_port)) == 0

    try:
        wait_until_sync(listening, "the OAuth servers to listen", timeout=60)
        yield Servers(f"http://127.0.0.1:{as_port}", f"http://127.0.0.1:{rs_port}/mcp")
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture()
def servers() -> Iterator[Servers]:
    yield from _serve()


def _callstream(home: Path, *args: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CALLSTREAM_HOME=str(home / "data"), CALLSTREAM_CONFIG=str(home / "config.toml"),
               BROWSER=BROWSER, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", **(extra or {}))
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def _configure(home: Path, url: str) -> None:
    (home / "config.toml").write_text(f'[mcp.prot]\nurl = "{url}"\nstartup_timeout = 30\n')


def test_oauth_sign_in_call_refresh_revoke_logout(tmp_path: Path, servers: Servers) -> None:
    _configure(tmp_path, servers.url)
    # before sign-in: never silently empty; names the 401, the authorization server and the command
    listed = _callstream(tmp_path, "mcp", "list")
    assert listed.returncode == 1
    assert "401" in listed.stdout and servers.issuer in listed.stdout and "callstream mcp login prot" in listed.stdout
    assert "sign-in: needed" in listed.stdout
    assert "prot: failed: needs sign-in: it answered 401" in listed.stdout  # the sentence, no class name before it

    login = _callstream(tmp_path, "mcp", "login", "prot")
    assert login.returncode == 0, login.stderr
    assert "Sign in at: " + servers.issuer + "/authorize?" in login.stderr
    assert "code_challenge_method=S256" in login.stderr and "resource=" in login.stderr
    assert "Signed in to prot" in login.stdout and "tokens kept in the file" in login.stdout
    assert servers.control("counts")["authorize"] == 1

    called = _callstream(tmp_path, "mcp", "call", "prot", "whoami", "--approve", "--json")
    assert called.returncode == 0, called.stderr
    result = json.loads(called.stdout)
    assert result["state"] == "ran" and "subject=ada@example.test" in result["result"]
    assert "token=[redacted]" in result["result"]  # the server echoed its token; it is never printed

    # the access token expires: refreshed, not asked again
    servers.control("expire")
    again = _callstream(tmp_path, "mcp", "call", "prot", "whoami", "--approve", "--json")
    assert again.returncode == 0, again.stderr
    counts = servers.control("counts")
    assert counts["refresh"] == 1 and counts["authorize"] == 1

    # the refresh token is revoked: it asks again, and says why
    servers.control("revoke")
    servers.control("expire")
    refused = _callstream(tmp_path, "mcp", "call", "prot", "whoami", "--approve")
    assert refused.returncode != 0
    assert "refused the stored refresh token" in refused.stderr and "callstream mcp login prot" in refused.stderr
    assert "Traceback" not in refused.stderr

    assert _callstream(tmp_path, "mcp", "login", "prot").returncode == 0
    out = _callstream(tmp_path, "mcp", "logout", "prot")
    assert out.returncode == 0 and "tokens are forgotten" in out.stdout
    after = _callstream(tmp_path, "mcp", "list")
    assert "sign-in: needed" in after.stdout


def test_oauth_tokens_land_in_no_file_we_write(tmp_path: Path, servers: Servers) -> None:
    """After a sign-in, a call by ``mcp call`` and one by a model through the
    chat loop (recorded, stored, sent back to the model), all to a server
    that echoes its token: no token in any file under the data dir (the
    recordings decompressed), the config, what was printed or what the
    model was sent; only the 0600 token file holds them."""
    from tests import streamgen
    from tests.faultserver import FaultServer, Reply
    from tests.test_hardening_secrets import _files_holding

    with FaultServer() as provider:
        _configure(tmp_path, servers.url)
        with (tmp_path / "config.toml").open("a") as config:
            config.write(f'approval = "never"\n[providers.local]\nprovider = "openai-chat"\nmodel = "m"\n'
                         f'base_url = "{provider.url}/v1"\nretries = 0\n')
        assert _callstream(tmp_path, "mcp", "login", "prot").returncode == 0
        called = _callstream(tmp_path, "mcp", "call", "prot", "whoami", "--approve")
        assert called.returncode == 0
        provider.replies.append(Reply(streamgen.openai_chat(streamgen.call_script(0, "c0", "prot__whoami", "{}"))))
        provider.replies.append(Reply(streamgen.openai_chat([("text", "Done.")], finish="stop")))
        asked = _callstream(tmp_path, "ask", "--provider", "local", "who am I?")
        assert asked.returncode == 0, asked.stderr
        assert "prot__whoami · ran" in asked.stdout and "token=[redacted]" in asked.stdout
        sent = json.dumps([r["body"] for r in provider.requests])
    assert "subject=ada@example.test token=[redacted]" in sent  # the model heard the result, not the token
    store = tmp_path / "data" / "mcp-auth" / "prot.json"
    record = json.loads(store.read_text())
    tokens = [record["tokens"]["access_token"], record["tokens"]["refresh_token"]]
    assert store.stat().st_mode & 0o077 == 0 and (store.parent.stat().st_mode & 0o077) == 0
    assert list((tmp_path / "data" / "recordings").glob("*.ndjson.gz"))  # the call's stream was recorded
    for token in tokens:
        assert [p for p in _files_holding(tmp_path, token) if p != store] == []
        assert token not in called.stdout + called.stderr + asked.stdout + asked.stderr + sent


def test_oauth_server_naming_another_resource_is_refused(tmp_path: Path) -> None:
    for servers in _serve("--resource", "elsewhere"):
        _configure(tmp_path, servers.url)
        login = _callstream(tmp_path, "mcp", "login", "prot")
        assert login.returncode != 0
        assert "not signed in" in login.stderr and "resource" in login.stderr.lower()
        assert "Traceback" not in login.stderr
        assert servers.control("counts")["authorize"] == 0


def test_oauth_legacy_server_naming_an_issuer_on_another_origin_is_refused(tmp_path: Path) -> None:
    # a 2025-03-26 server may name an issuer on its own origin with a path (the suite's back-compat scenario
    # passes); one on another origin is a mix-up the SDK's RFC 8414 check refuses, and so do we
    for servers in _serve("--legacy"):
        _configure(tmp_path, servers.url)
        login = _callstream(tmp_path, "mcp", "login", "prot")
        assert login.returncode != 0
        assert "not signed in" in login.stderr and "issuer" in login.stderr and servers.issuer in login.stderr
        assert "Traceback" not in login.stderr
        assert servers.control("counts")["authorize"] == 0


def test_oauth_tokens_are_never_sent_to_another_server(tmp_path: Path) -> None:
    # the tokens are for the resource they were granted for: the same name pointed at another server
    # (here the same code without auth, which echoes whatever token it is sent) gets none of them
    for servers in _serve("--open", str(open_port := _port())):
        _configure(tmp_path, servers.url)
        assert _callstream(tmp_path, "mcp", "login", "prot").returncode == 0
        _configure(tmp_path, f"http://127.0.0.1:{open_port}/mcp")
        called = _callstream(tmp_path, "mcp", "call", "prot", "whoami", "--approve", "--json")
        assert called.returncode == 0, called.stderr
        assert json.loads(called.stdout)["result"] == "subject=None token=None"


def test_identity_assertion_the_idp_refuses_is_a_stated_failure(tmp_path: Path, servers: Servers) -> None:
    # enterprise-managed sign-in (SEP-990; the whole flow passes the conformance suite's
    # auth/cross-app-access-complete-flow): an IdP that will not exchange the ID token is said, with its words
    (tmp_path / "config.toml").write_text(
        f'[mcp.prot]\nurl = "{servers.url}"\nstartup_timeout = 30\n[mcp.prot.auth]\ngrant = "identity_assertion"\n'
        f'client_id = "c"\nclient_secret = "${{PROT_SECRET}}"\nidp_token_endpoint = "{servers.issuer}/token"\n'
        f'idp_client_id = "callstream"\nid_token = "${{PROT_ID_TOKEN}}"\n')
    secret, id_token = "sec-" + "9" * 24, "idt-" + "7" * 24
    env = {"PROT_SECRET": secret, "PROT_ID_TOKEN": id_token}
    listed = _callstream(tmp_path, "mcp", "list", extra=env)
    assert listed.returncode == 1
    assert ("prot: failed: sign-in failed: the identity provider refused the token exchange (HTTP 401, "
            "Invalid client_id)") in listed.stdout, listed.stdout + listed.stderr  # its words, after ours
    assert "Traceback" not in listed.stderr and servers.control("counts")["authorize"] == 0
    record = json.loads((tmp_path / "data" / "mcp-auth" / "prot.json").read_text())
    assert record["pinned_issuer"] == servers.issuer  # found in the server's resource metadata, kept
    for value in (secret, id_token):
        assert value not in listed.stdout + listed.stderr
