#!/usr/bin/env bash
# Drive the chat TUI (as `make run` starts it) in a real terminal (tmux) against the MCP reference
# server, server-everything (peers/everything: `make peers-everything`), and capture what a person
# sees of a server's request to the model (MCP sampling, issue 26 item 3):
#
#   ask for a sample; the model (scripts/scripted_model.py on 127.0.0.1, speaking Anthropic
#   Messages) calls ev__trigger-sampling-request; the sampling card shows what the server wants
#   the model to read — before anything is sent; Enter sends it; the reply comes back editable;
#   Shift+Tab into it, add words, Tab back to "Return to the server", Enter; the call ends with
#   the edited reply and the model answers.
#
# Usage: scripts/tmux_sampling.sh [CAPTURE_DIR]   (default: /tmp/callstream-tmux-sampling)
# Prints the captured pane of the sampling card. Each step waits for what it expects on the
# screen (a deadline, never a fixed sleep); a step that does not see it says which and exits 1.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-/tmp/callstream-tmux-sampling}"
SESSION="callstream-sampling-$$"
WORK="$(mktemp -d)"
ENTRY="$ROOT/peers/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
mkdir -p "$OUT"
rm -f "$OUT"/*.txt
[ -f "$ENTRY" ] || { echo "server-everything is not installed: make peers-everything" >&2; exit 1; }
command -v node >/dev/null || { echo "node is not on PATH (server-everything is a node program)" >&2; exit 1; }

MODEL_PID=""
cleanup() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  [ -n "$MODEL_PID" ] && kill "$MODEL_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# the scripted model: the prompt makes it call the sampling tool; the server's own request
# (its message holds "context: name a colour") is answered "Teal."
cat > "$WORK/script.json" <<'JSON'
{"prompts": [
  {"key": "sample a colour", "moves": [[{"say": "Asking the server."},
    {"call": "ev__trigger-sampling-request", "args": {"prompt": "name a colour", "maxTokens": 30}}]],
   "done": "The server got the colour back."},
  {"key": "context: name a colour", "moves": [[{"say": "Teal."}]]}
]}
JSON
source "$ROOT/scripts/tmux_lib.sh"
start_scripted_model "$WORK/script.json"

export CALLSTREAM_HOME="$WORK/home"
export CALLSTREAM_CONFIG="$WORK/config.toml"
cat > "$CALLSTREAM_CONFIG" <<TOML
default = "scripted"

[providers.scripted]
provider = "anthropic"
base_url = "http://127.0.0.1:$PORT"
model = "scripted-1"
key_env = "SCRIPTED_KEY"

[mcp.ev]
command = "node"
args = ["$ENTRY", "stdio"]
startup_timeout = 60
approval = "never"
sampling = "ask"
TOML

tmux -f /dev/null new-session -d -s "$SESSION" -x 110 -y 44 \
  "env CALLSTREAM_HOME='$CALLSTREAM_HOME' CALLSTREAM_CONFIG='$CALLSTREAM_CONFIG' SCRIPTED_KEY=not-a-real-key TERM=xterm-256color '$ROOT/.venv/bin/callstream'"

wait_for "Ask something" 30
type_text "Please sample a colour from the server"
keys Enter
wait_for "ev asks the model:" 90          # the card, before anything is sent
wait_for "Send this to the model?" 10
wait_for "esc Refuse" 10                  # the card's Send key has the focus
shot 01-sampling-card

keys Enter                                # the Send key has the focus
wait_for "Return to the server" 30
wait_for "Teal." 10
wait_for "esc Refuse" 10                  # the focus is back in the card, on its Return key
shot 02-reply-to-edit

keys BTab                                 # into the reply box (its cursor at the end)
wait_for "Editing the model's reply" 10
type_text " (checked by a person)"
wait_for "Teal. (checked by a person)" 10
shot 03-reply-edited
keys Tab                                  # back to "Return to the server"
keys Enter
wait_for "The server got the colour back." 60
shot 04-returned

keys C-q
echo
echo "=== the sampling card, as the pane showed it ==="
cat "$OUT/01-sampling-card.txt"
echo "=== after the reply was edited and returned ==="
cat "$OUT/04-returned.txt"
