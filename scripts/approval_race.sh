#!/usr/bin/env bash
# The approval race, in a real terminal (issue 24 item 1): a fast local
# OpenAI-compatible server (tests/approval_race_server.py) sends a whole
# side-effecting call in one network chunk; the real app runs in tmux; as soon
# as the card shows "awaiting approval" the script presses `y`, and counts the
# runs where `y` approved the call (the tool ran exactly once, the model's
# answer came back and the input box stayed empty) rather than landing in the box.
#
# Usage: scripts/approval_race.sh [RUNS]   (default 20). Exit 0 only if every `y` approved.
# Each step waits for what it expects on the screen (a deadline, never a fixed sleep).
# It kills only the tmux sessions and the server it started.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${1:-20}"
WORK="$(mktemp -d)"
SESSION="callstream-race-$$"
SERVER_PID=""

cleanup() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

(cd "$ROOT" && exec "$ROOT/.venv/bin/python" -m tests.approval_race_server "$WORK/port") &
SERVER_PID=$!
for _ in $(seq 200); do [[ -s "$WORK/port" ]] && break; sleep 0.05; done
[[ -s "$WORK/port" ]] || { echo "the server did not start" >&2; exit 1; }
PORT="$(cat "$WORK/port")"

export CALLSTREAM_HOME="$WORK/home"
export CALLSTREAM_CONFIG="$WORK/config.toml"
RUNS_FILE="$WORK/runs.txt"
cat > "$WORK/note.py" <<PY
import json, sys
with open("$RUNS_FILE", "a") as f:
    f.write(json.dumps(json.load(sys.stdin)) + "\n")
print("filed")
PY
cat > "$CALLSTREAM_CONFIG" <<TOML
default = "local"
[providers.local]
provider = "openai-chat"
model = "fast-local"
base_url = "http://127.0.0.1:$PORT/v1"
key_env = "RACE_KEY"
[tools.file_note]
command = ["$ROOT/.venv/bin/python", "$WORK/note.py"]
read_only = false
display = [["text", "Note"]]
parameters = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
TOML

pane() { tmux capture-pane -p -t "$SESSION" 2>/dev/null; }
ran() { if [[ -f "$RUNS_FILE" ]]; then wc -l < "$RUNS_FILE" | tr -d ' '; else echo 0; fi; }

wait_for() {  # wait_for TEXT SECONDS: 0 once the screen shows TEXT, 1 at the deadline
  local text="$1" limit="$2" start=$SECONDS
  until pane | grep -qF -- "$text"; do
    (( SECONDS - start > limit )) && return 1
    sleep 0.02
  done
}

approved=0
for run in $(seq "$RUNS"); do
  before="$(ran)"
  tmux -f /dev/null new-session -d -s "$SESSION" -x 100 -y 32 \
    "env RACE_KEY=local CALLSTREAM_HOME='$CALLSTREAM_HOME' CALLSTREAM_CONFIG='$CALLSTREAM_CONFIG' TERM=xterm-256color '$ROOT/.venv/bin/callstream'"
  verdict="no start"
  if wait_for "Ask something" 30; then
    tmux send-keys -t "$SESSION" -l -- "file note $run"
    tmux send-keys -t "$SESSION" Enter
    verdict="never awaited approval"
    if wait_for "awaiting approval" 30; then
      tmux send-keys -t "$SESSION" -l -- "y"       # at once: as a person does who sees the card
      if wait_for "Filed." 20 && [[ "$(ran)" == "$((before + 1))" ]] && ! pane | grep -qE "│ *y *│"; then
        verdict="approved"
        approved=$((approved + 1))
      elif pane | grep -qE "│ *y *│"; then
        verdict="y landed in the input box (ran $(( $(ran) - before )) times)"
      else
        verdict="not approved (ran $(( $(ran) - before )) times)"
      fi
    fi
  fi
  echo "run $run: $verdict"
  [[ "$verdict" == approved ]] || pane
  tmux send-keys -t "$SESSION" C-q
  for _ in $(seq 100); do tmux has-session -t "$SESSION" 2>/dev/null || break; sleep 0.05; done
  tmux kill-session -t "$SESSION" 2>/dev/null || true
done

echo "approved: $approved/$RUNS (the tool ran $(ran) times in all)"
[[ "$approved" == "$RUNS" && "$(ran)" == "$RUNS" ]]
