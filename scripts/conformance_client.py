"""The conformance suite's client command: drives callstream ONLY through its
command line, as a person would.

``conformance client --command "python scripts/conformance_client.py"`` runs
this with the scenario server's URL as its last argument (the scenario's name
in ``MCP_CONFORMANCE_SCENARIO``, its credentials, if any, in
``MCP_CONFORMANCE_CONTEXT``). It writes a config file with one ``[mcp.conf]``
entry pointing at the URL (and the credentials the scenario hands a client
author: a pre-registered client, a client-credentials secret or key), then
runs ``callstream mcp list --login`` (which signs in when the server asks, as
``mcp login`` does) and ``callstream mcp call --login`` for each tool offered
(a step-up asks again). The only thing
simulated is the person at the browser: ``BROWSER`` points at
``scripts/conformance_browser.py``, which fetches the authorization URL as a
browser would (following the redirect to callstream's loopback listener).

Each step's output goes to stderr (the suite keeps it with the scenario's
results); the exit status is callstream's.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Arguments for the tools of the scenarios that call one.
ARGUMENTS = {"add_numbers": {"a": 5, "b": 3}}
#: The Client ID Metadata Document URL the suite's auth/basic-cimd scenario expects a client to be configured with.
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def _config(url: str, context: dict[str, object]) -> str:
    lines = ["[mcp.conf]", f"url = {json.dumps(url)}", "startup_timeout = 20", "tool_timeout = 20"]
    auth: dict[str, object] = {}
    if "idp_id_token" in context:
        # enterprise-managed: the IdP's ID token is the person's sign-in (kept in the environment, as a user would)
        os.environ["CONFORMANCE_ID_TOKEN"] = str(context["idp_id_token"])
        auth = {"grant": "identity_assertion", "client_id": context["client_id"],
                "client_secret": context["client_secret"], "idp_token_endpoint": context["idp_token_endpoint"],
                "idp_client_id": context["idp_client_id"], "id_token": "${CONFORMANCE_ID_TOKEN}"}
    elif "private_key_pem" in context:
        auth = {"grant": "client_credentials", "client_id": context["client_id"],
                "private_key": context["private_key_pem"],
                "signing_algorithm": context.get("signing_algorithm", "ES256")}
    elif context.get("name", "").__str__().startswith("auth/client-credentials"):
        auth = {"grant": "client_credentials", "client_id": context["client_id"],
                "client_secret": context["client_secret"]}
    elif "client_id" in context:
        auth = {"client_id": context["client_id"]}
        if "client_secret" in context:
            auth["client_secret"] = context["client_secret"]
    if os.environ.get("MCP_CONFORMANCE_SCENARIO") == "auth/basic-cimd":
        # the suite's authorization server accepts one Client ID Metadata Document, its own test URL;
        # a client author sets client_metadata_url to the document they host
        auth = {"client_metadata_url": CIMD_URL}
    if auth:
        lines.append("[mcp.conf.auth]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in auth.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    home = Path(tempfile.mkdtemp(prefix="callstream-conformance-"))
    try:
        return _scenario(argv[-1], home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _scenario(url: str, home: Path) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    config = home / "config.toml"
    config.write_text(_config(url, context), encoding="utf-8")
    browser = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'scripts' / 'conformance_browser.py'))} %s"
    env = dict(os.environ, CALLSTREAM_HOME=str(home / "data"), CALLSTREAM_CONFIG=str(config), BROWSER=browser,
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    callstream = [sys.executable, "-m", "app"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*callstream, *args], env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=60, check=False)
        sys.stderr.write(f"$ callstream {' '.join(args)}  → {done.returncode}\n{done.stdout}{done.stderr}\n")
        return done

    listed = run("mcp", "list", "--json", "--login")  # signs in when the server asks (the browser is simulated)
    servers = _servers(listed.stdout)
    if not servers or servers[0].get("state") != "ready":
        return listed.returncode or 1
    status = 0
    for tool in servers[0].get("tools", []):
        name = tool["name"] if isinstance(tool, dict) else str(tool)
        called = run("mcp", "call", "conf", name, json.dumps(ARGUMENTS.get(name, {})), "--approve", "--login",
                     "--json", "--elicit-defaults")
        status = status or called.returncode
    return status


def _servers(text: str) -> list[dict[str, object]]:
    try:
        found = json.loads(text)
    except ValueError:
        return []
    return found if isinstance(found, list) else []


if __name__ == "__main__":
    sys.exit(main(sys.argv))
