#!/usr/bin/env bash
# callstream's TUI against server-everything (peers/everything; make peers-everything), in a real
# terminal (tmux), as a person drives it (issue 26): a scripted model (scripts/scripted_model.py,
# on 127.0.0.1) calls the server's elicitation tool and the request shows as a card, answered
# from the keyboard (Esc cancels it); an @ resource typed with Tab completion and attached when
# sent; a prompt of the server run as a slash command, its expansion shown in the box, then sent.
# Each step's captured pane is printed. Each step waits for what it expects on the screen (a
# deadline, never a fixed sleep). It kills only the tmux session and the server it started.
#
# Usage: scripts/tmux_mcp.sh     exit 0 when every step showed what it should.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ENTRY="$ROOT/peers/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE="$(command -v node || true)"
[[ -n "$NODE" && -f "$ENTRY" ]] || { echo "needs node and server-everything (make peers-everything)" >&2; exit 2; }
WORK="$(mktemp -d)"
SESSION="callstream-mcp-$$"
MODEL_PID=""

cleanup() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  if [[ -n "$MODEL_PID" ]]; then kill "$MODEL_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

cat > "$WORK/script.json" <<'JSON'
{"prompts": [
  {"key": "ask me something", "moves": [[{"call": "ev__trigger-elicitation-request"}]],
   "done": "Understood: you cancelled the form."},
  {"key": "Summarise", "moves": [], "done": "It is the architecture of the everything server."},
  {"key": "Paris", "moves": [], "done": "Paris: mild, some clouds."}
], "otherwise": "Noted."}
JSON
source "$ROOT/scripts/tmux_lib.sh"
start_scripted_model "$WORK/script.json"

export CALLSTREAM_HOME="$WORK/home"
export CALLSTREAM_CONFIG="$WORK/config.toml"
cat > "$CALLSTREAM_CONFIG" <<TOML
default = "local"
[providers.local]
provider = "openai-chat"
model = "scripted"
base_url = "http://127.0.0.1:$PORT/v1"
key_env = "SCRIPTED_KEY"

[mcp.ev]
command = "$NODE"
args = ["$ENTRY", "stdio"]
startup_timeout = 60
approval = "never"
TOML

failed=0
step() {  # step NAME TEXT SECONDS: wait until the screen shows TEXT, then print the pane
  local name="$1" text="$2" limit="$3" start=$SECONDS
  until pane | grep -qF -- "$text"; do
    if (( SECONDS - start > limit )); then
      echo "=== $name: FAILED (waited ${limit}s for: $text)"; pane; failed=1; return 1
    fi
    sleep 0.05
  done
  echo "=== $name"
  pane
}
keys() { tmux send-keys -t "$SESSION" "$@"; }
typed() { tmux send-keys -t "$SESSION" -l -- "$1"; }

tmux -f /dev/null new-session -d -s "$SESSION" -x 110 -y 40 \
  "env SCRIPTED_KEY=local CALLSTREAM_HOME='$CALLSTREAM_HOME' CALLSTREAM_CONFIG='$CALLSTREAM_CONFIG' TERM=xterm-256color '$ROOT/.venv/bin/callstream'"
step "started" "Ask something" 30 || exit 1

# 1. the server's resources (/resource lists them), then an @ resource completed with Tab, attached when sent
typed "hello"; keys Enter  # sent once callstream has started (a command typed before then is kept in the box)
step "attached" "Noted." 60
for _ in $(seq 120); do  # until the server is connected and has listed them
  typed "/resource"; keys Enter
  sleep 0.5
  pane | grep -qF "@ev:demo://resource/static/document/architecture.md" && break
done
step "resources listed" "@ev:demo://resource/static/document/architecture.md" 5
typed "Summarise @ev:demo://resource/static/document/arch"; keys Tab
step "@ resource completed" "Summarise @ev:demo://resource/static/document/architecture.md" 5 && keys Enter
step "@ resource sent" "It is the architecture of the everything server." 30

# 2. a prompt of the server as a slash command: expanded into the box, then sent with Enter
typed "/ev:args-prompt Paris"; keys Enter
step "prompt expanded" "expanded to 1 message" 30 && keys Enter
step "prompt sent" "Paris: mild, some clouds." 30

# 3. elicitation: the model calls the server's tool; the server asks the person; the form takes the focus
#    as it appears, so Esc cancels the request (not the turn)
typed "ask me something"; keys Enter
step "elicitation card" "Accept" 60 && keys Escape
step "elicitation answered" "Understood: you cancelled the form." 30

keys C-q
for _ in $(seq 100); do tmux has-session -t "$SESSION" 2>/dev/null || break; sleep 0.05; done
exit "$failed"
