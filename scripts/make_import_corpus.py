"""Regenerate tests/data/imports/: files written by the real programs callstream imports.

Claude Code and Codex CLI (peers/writers, ``make peers-writers``) and llm
0.26/0.30/0.32/0.36 (.venv-peers/llm-V) each run against
scripts/scripted_model.py on 127.0.0.1, with a private HOME / CODEX_HOME /
LLM_USER_PATH, in a scratch directory; the model calls the tools each client
offers by the scripts below, the clients run them for real, and the files
they write are copied here unchanged (the scratch paths they name are
rewritten to ``/work`` so the corpus does not depend on where it was made).
Nothing here is written by hand. tests/data/imports/README.md says what each
file holds.

Usage: ``python scripts/make_import_corpus.py [claude-code] [codex] [llm]``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "imports"
NODE_BIN = ROOT / "peers" / "writers" / "node_modules" / ".bin"
LLM_VERSIONS = ("0.26", "0.30", "0.32", "0.36")
QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
         "DISABLE_ERROR_REPORTING": "1"}

#: The moves, by a key of the prompt (see scripts/scripted_model.py).
CLAUDE = {"prompts": [
    {"key": "Look around", "moves": [
        [{"think": "Two independent reads: list the directory and read the notes at once."},
         {"say": "I will list the directory and read the notes."},
         {"call": "Bash", "args": {"command": "ls", "description": "List the files"}},
         {"call": "Read", "args": {"file_path": "@WORK@/notes.txt"}}],
        [{"say": "Now the missing directory."},
         {"call": "Bash", "args": {"command": "ls missing-file.txt", "description": "List a missing file"}}],
        [{"call": "Write", "args": {"file_path": "@WORK@/out.txt", "content": "written\n"}}]],
     "done": "The directory holds notes.txt; the missing one does not exist, and I may not write files."},
    {"key": "Count the notes", "moves": [[{"think": "Count the lines."}, {"think": "One command does it."},
                                          {"say": "Counting."}, {"say": "With ls -1."},
                                          {"call": "Bash", "args": {"command": "ls -1", "description": "Count"}}]],
     "done": "One file of notes."},
    {"key": "After the summary", "moves": [], "done": "Still one file of notes."},
    {"key": "Ask a helper", "moves": [
        [{"say": "A helper will read it."},
         {"call": "Agent", "args": {"description": "Read the notes", "subagent_type": "general-purpose",
                                    "prompt": "SUBTASK: read @WORK@/notes.txt and say what it holds."}}]],
     "done": "The helper says the notes hold a shopping list."},
    {"key": "SUBTASK", "moves": [[{"call": "Read", "args": {"file_path": "@WORK@/notes.txt"}}]],
     "done": "The notes hold a shopping list: eggs, milk."},
    {"key": "Wait for it", "moves": [
        [{"say": "Waiting."},
         {"call": "Bash", "args": {"command": "touch @WORK@/.started && sleep 60", "description": "Wait"}}]]},
    {"key": "First question", "moves": [], "done": "The first answer."},
    {"key": "Second question", "moves": [[{"call": "Bash", "args": {"command": "ls", "description": "List"}}]],
     "done": "The second answer, on the branch left behind."},
    {"key": "Instead", "moves": [], "done": "The answer after the rewind."},
]}

CODEX = {"prompts": [
    {"key": "Look around", "moves": [
        [{"think": "List the directory and add a file, both at once."},
         {"say": "Listing, and adding a file."},
         {"call": ["exec_command", "shell"], "args": {"cmd": "ls"},
          "args_by_name": {"shell": {"command": ["ls"]}}},
         {"custom": ["apply_patch"], "input": "*** Begin Patch\n*** Add File: added.txt\n+added\n*** End Patch\n"}],
        [{"call": ["exec_command", "shell"], "args": {"cmd": "ls /no-such-directory"},
          "args_by_name": {"shell": {"command": ["ls", "/no-such-directory"]}}}]],
     "done": "notes.txt and added.txt are here; the other directory does not exist."},
    {"key": "Count the notes", "moves": [[{"think": "Count them."}, {"think": "With wc."},
                                          {"say": "Counting."}, {"say": "With wc -l."},
                                          {"call": ["exec_command", "shell"], "args": {"cmd": "ls -1 | wc -l"},
                                           "args_by_name": {"shell": {"command": ["ls"]}}}]],
     "done": "Two files."},
    {"key": "Keep going", "stateful": True, "inflate": 40000, "moves": [[
        {"call": ["exec_command", "shell"], "args": {"cmd": "cat notes.txt"},
                                      "args_by_name": {"shell": {"command": ["cat", "notes.txt"]}}}]] * 3,
     "done": "The notes are a shopping list."},
    {"key": "Wait for it", "moves": [[{"say": "Waiting."},
                                      {"call": ["exec_command", "shell"], "args": {"cmd": "touch .started && sleep 60"},
                                       "args_by_name": {"shell": {"command": ["sleep", "60"]}}}]]},
]}

LLM = {"prompts": [
    {"key": "What time", "moves": [
        [{"say": "Checking the clock and adding."}, {"call": "clock", "args": {}},
         {"call": "add", "args": {"a": 2, "b": 3}}],
        [{"call": "fail", "args": {"why": "a test"}}]],
     "done": "It is noon, and 2 + 3 is 5; the failing tool failed."},
    {"key": "And tomorrow", "moves": [], "done": "Tomorrow it will be noon again at noon."},
    {"key": "Say hello", "moves": [], "done": "Hello!"},
]}

LLM_TOOLS = '''
def clock() -> str:
    "The time now."
    return "12:00"


def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


def fail(why: str) -> str:
    "A tool that always fails."
    raise ValueError("it failed: " + why)
'''


@contextmanager
def model(script: dict, scratch: Path, work: Path) -> Iterator[int]:
    text = json.dumps(script).replace("@WORK@", str(work))
    (scratch / "script.json").write_text(text)
    port_file = scratch / "port"
    port_file.unlink(missing_ok=True)  # a server before this one wrote it
    server = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "scripted_model.py"),
                               str(scratch / "script.json"), "--port-file", str(port_file),
                               "--log", str(scratch / "requests.jsonl")])
    try:
        while not port_file.exists() or not port_file.read_text():
            if server.poll() is not None:
                raise SystemExit("the scripted model did not start")
            time.sleep(0.05)
        yield int(port_file.read_text())
    finally:
        server.terminate()
        server.wait()


def run(argv: list[str], env: dict[str, str], cwd: Path, kill_when: Path | None = None) -> None:
    print("  $", " ".join(argv[:1] + [a if len(a) < 60 else a[:57] + "..." for a in argv[1:]]), flush=True)
    process = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    if kill_when is not None:
        deadline = time.monotonic() + 120
        while not kill_when.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # let the client write the call's line before it dies
        os.killpg(process.pid, signal.SIGKILL)
    out, _ = process.communicate(timeout=300)
    if kill_when is None and process.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({process.returncode}):\n{out.decode(errors='replace')[-2000:]}")


def rewrite(text: str, scratch: Path) -> str:
    """The scratch directory's paths as ``/work`` (Claude Code also spells the cwd with ``-``)."""
    return (text.replace(str(scratch / "work"), "/work").replace(str(scratch / "work").replace("/", "-"), "-work")
            .replace(str(scratch), "/scratch"))


def claude_code(scratch: Path) -> list[tuple[str, str]]:
    work, home = scratch / "work", scratch / "home"
    work.mkdir()
    home.mkdir()
    (work / "notes.txt").write_text("eggs\nmilk\n")
    made: list[tuple[str, str]] = []
    with model(CLAUDE, scratch, work) as port:
        env = {**os.environ, **QUIET, "HOME": str(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
               "ANTHROPIC_API_KEY": "scripted-key"}
        claude = [str(NODE_BIN / "claude"), "--model", "claude-sonnet-4-5"]
        tools = ["--allowedTools", "Bash(ls:*)", "Read"]
        ids = {name: f"00000000-0000-4000-8000-00000000000{n}" for n, name in enumerate(
            ("tools", "subagent", "killed", "rewound"), 1)}
        run(claude + ["-p", "Look around this directory", "--session-id", ids["tools"], *tools], env, work)
        made.append(("session-tools-resume-compact.jsonl", "prose, thinking, two parallel calls (Bash ls and Read), "
                     "a failing command (ls of a missing file), a refused permission (Write not allowed); "
                     "then `--resume` with a second prompt (two thinking and two text blocks in one message), "
                     "`/compact`, and a third prompt after the compaction"))
        run(claude + ["-p", "Count the notes", "--resume", ids["tools"], *tools], env, work)
        run(claude + ["-p", "/compact", "--resume", ids["tools"]], env, work)
        run(claude + ["-p", "After the summary, how many?", "--resume", ids["tools"], *tools], env, work)
        run(claude + ["-p", "Ask a helper to read the notes", "--session-id", ids["subagent"], *tools, "Agent"],
            env, work)
        made.append(("session-subagent.jsonl", "a subagent (the Agent tool) that reads a file; its sidechain "
                     "transcript is in session-subagent/subagents/"))
        run(claude + ["-p", "Wait for it", "--session-id", ids["killed"], "--allowedTools", "Bash"], env, work,
            kill_when=work / ".started")
        made.append(("session-killed.jsonl", "a Bash call (`sleep 60`) killed (SIGKILL to the process group) "
                     "while it ran: no result recorded"))
        run(claude + ["-p", "First question", "--session-id", ids["rewound"], *tools], env, work)
        run(claude + ["-p", "Second question", "--resume", ids["rewound"], *tools], env, work)
        session_file = next(home.rglob(f"{ids['rewound']}.jsonl"))
        first_answer = next(r["uuid"] for r in map(json.loads, session_file.read_text().splitlines())
                            if r.get("type") == "assistant")
        run(claude + ["-p", "Instead, answer again", "--resume", ids["rewound"], "--resume-session-at", first_answer,
                      *tools], env, work)
        made.append(("session-rewound.jsonl", "two prompts, then `--resume-session-at` the first answer with a "
                     "third: a rewind, the second prompt and its call left on a branch beside the current path"))
    projects = home / ".claude" / "projects"
    target = OUT / "claude-code"
    for name, ident in (("session-tools-resume-compact", ids["tools"]), ("session-subagent", ids["subagent"]),
                        ("session-killed", ids["killed"]), ("session-rewound", ids["rewound"])):
        for source in projects.rglob(f"{ident}*"):
            if source.is_file():
                (target / f"{name}.jsonl").write_text(rewrite(source.read_text(), scratch))
            else:
                for inner in source.rglob("*"):
                    if inner.is_file() and inner.suffix in (".jsonl", ".json"):
                        dest = target / name / inner.relative_to(source)
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        dest.write_text(rewrite(inner.read_text(), scratch))
    return made


def codex(scratch: Path) -> list[tuple[str, str]]:
    work, home = scratch / "work", scratch / "codex-home"
    work.mkdir()
    home.mkdir()
    (work / "notes.txt").write_text("eggs\nmilk\n")
    made: list[tuple[str, str]] = []
    with model(CODEX, scratch, work) as port:
        (home / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "local"\napproval_policy = "never"\nsandbox_mode = "workspace-write"\n'
            f'[model_providers.local]\nname = "local"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
            'wire_api = "responses"\nenv_key = "SCRIPTED_KEY"\n')
        env = {**os.environ, "HOME": str(scratch), "CODEX_HOME": str(home), "SCRIPTED_KEY": "scripted-key"}
        codex_bin = [str(NODE_BIN / "codex"), "exec", "--skip-git-repo-check"]

        def newest() -> Path:
            return max((home / "sessions").rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime_ns)

        run(codex_bin + ["Look around this directory"], env, work)
        first = newest()
        session = json.loads(first.read_text().splitlines()[0])["payload"]["id"]
        run(codex_bin + ["resume", session, "Count the notes"], env, work)
        made.append(("rollout-tools-resume.jsonl", "reasoning, prose, a parallel exec_command and apply_patch "
                     "(custom_tool_call), a failing command; then `codex exec resume` with a second prompt "
                     "(two reasoning items and two "
                     "assistant messages in a row)"))
        shutil.copy(first, scratch / "a.jsonl")
        run(codex_bin + ["-c", "model_auto_compact_token_limit=30000", "Keep going through the notes"], env, work)
        second = newest()
        made.append(("rollout-compacted.jsonl", "`-c model_auto_compact_token_limit=30000` (the model reports 40000 "
                     "more input tokens after its first call): Codex compacts the history mid-task "
                     "(a `compacted` item) and goes on"))
        run(codex_bin + ["Wait for it"], env, work, kill_when=work / ".started")
        third = newest()
        made.append(("rollout-killed.jsonl", "an exec_command (`sleep 60`) killed (SIGKILL to the process group) "
                     "while it ran"))
    target = OUT / "codex"
    for source, (name, _) in zip((first, second, third), made, strict=True):
        (target / name).write_text(rewrite(source.read_text(), scratch))
    return made


def llm(scratch: Path) -> list[tuple[str, str]]:
    made: list[tuple[str, str]] = []
    for version in LLM_VERSIONS:
        binary = ROOT / ".venv-peers" / f"llm-{version}" / "bin" / "llm"
        if not binary.exists():
            print(f"  llm {version} is not installed (make peers-writers): skipped")
            continue
        user = scratch / f"llm-{version}"
        user.mkdir()
        (user / "tools.py").write_text(LLM_TOOLS)
        with model(LLM, scratch, user) as port:
            (user / "extra-openai-models.yaml").write_text(
                f"- model_id: scripted\n  model_name: scripted\n  api_base: http://127.0.0.1:{port}/v1\n"
                "  api_key_name: scripted\n  supports_tools: true\n")
            env = {**os.environ, "LLM_USER_PATH": str(user), "OPENAI_API_KEY": "scripted-key",
                   "HOME": str(scratch)}
            run([str(binary), "-m", "scripted", "--functions", str(user / "tools.py"), "What time is it?"], env, user)
            run([str(binary), "-c", "--functions", str(user / "tools.py"), "And tomorrow?"], env, user)
            run([str(binary), "-m", "scripted", "Say hello"], env, user)
        shutil.copy(user / "logs.db", OUT / "llm" / f"logs-{version}.db")
        made.append((f"logs-{version}.db", f"llm {version}: a conversation with parallel tool calls (clock, add), "
                     "a tool that raises, and a `-c` continuation; a second conversation of prose only"))
    return made


def version_of(argv: list[str], env: dict[str, str] | None = None) -> str:
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False).stdout.strip().splitlines()[0]


def main() -> None:
    which = sys.argv[1:] or ["claude-code", "codex", "llm"]
    for name, make in (("claude-code", claude_code), ("codex", codex), ("llm", llm)):
        if name not in which:
            continue
        print(name, flush=True)
        target = OUT / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        with tempfile.TemporaryDirectory(prefix=f"corpus-{name}-") as scratch:
            made = make(Path(scratch))
        if name == "claude-code":
            program = version_of([str(NODE_BIN / "claude"), "--version"], {**os.environ, "HOME": tempfile.gettempdir()})
        elif name == "codex":
            program = version_of([str(NODE_BIN / "codex"), "--version"])
        else:
            program = "llm " + ", ".join(v for v in LLM_VERSIONS if (target / f"logs-{v}.db").exists())
        lines = [f"# {name}: written by {program}", "",
                 "Made by `scripts/make_import_corpus.py` (the real program against scripts/scripted_model.py "
                 "on 127.0.0.1, private home, scratch paths rewritten to /work). Do not edit by hand.", ""]
        lines += [f"- `{file}`: {how}" for file, how in made]
        (target / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
