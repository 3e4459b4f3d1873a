#!/usr/bin/env bash
# Drive the chat TUI in a real terminal (tmux) the way a person would, and
# capture what the screen shows after each step:
#
#   type a question; while its reply streams, type the next one and press
#   Enter (it is queued); approve the ticket (y); scroll up (PageUp), down (PageDown), End; switch
#   the model mid-conversation (/model anthropic) and ask again; /copy the
#   last reply (OSC 52 -> tmux's paste buffer); quit.
#
# Usage: scripts/tmux_session.sh [CAPTURE_DIR]   (default: /tmp/callstream-tmux)
# Each step waits for what it expects on the screen (a deadline, never a
# fixed sleep); a step that does not see it says which and exits 1.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-/tmp/callstream-tmux}"
SESSION="callstream-tmux-$$"
WORK="$(mktemp -d)"
mkdir -p "$OUT"
rm -f "$OUT"/*.txt

cleanup() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# a private data dir and a config: the demo model at its natural pace
export CALLSTREAM_HOME="$WORK/home"
export CALLSTREAM_CONFIG="$WORK/config.toml"
printf '[providers.demo]\nprovider = "demo"\nspeed = 1\n' > "$CALLSTREAM_CONFIG"

tmux -f /dev/null new-session -d -s "$SESSION" -x 100 -y 32 \
  "env CALLSTREAM_HOME='$CALLSTREAM_HOME' CALLSTREAM_CONFIG='$CALLSTREAM_CONFIG' TERM=xterm-256color '$ROOT/.venv/bin/callstream'"
tmux set-option -t "$SESSION" -g set-clipboard on   # the app's OSC 52 copy lands in tmux's buffer

source "$ROOT/scripts/tmux_lib.sh"

wait_for "Ask something" 30
shot 01-start

type_text "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."
keys Enter
wait_for "search_orders" 30          # the reply is streaming: a card is forming
type_text "Thanks. Show me order A-1042"
keys Enter                           # Enter while the reply streams: queued, not lost
wait_for "queued: Thanks. Show me order A-1042" 10
shot 02-typed-while-streaming-queued

wait_for "awaiting approval" 60      # the ticket waits for the person; the queued message waits behind it
keys y                               # run it once
wait_for "get_order" 60              # the queued message went once the turn ended
wait_for "took " 60
shot 03-queued-message-sent

keys PageUp
sleep 0.3
shot 04-after-pageup
keys PageUp
keys PageUp
sleep 0.3
shot 05-after-more-pageup
keys PageDown
sleep 0.3
shot 06-after-pagedown
keys End
sleep 0.3
shot 07-after-end

type_text "/model anthropic"
keys Enter
wait_for "speaking anthropic" 10
shot 08-model-switched

type_text "Show me order A-1043"
keys Enter
wait_for "A-1043" 10
wait_for "took " 60
shot 09-asked-in-the-new-dialect

type_text "/copy"
keys Enter
wait_for "Copied the last reply" 10
shot 10-copied
tmux show-buffer > "$OUT/10-clipboard.txt" 2>/dev/null || echo "(tmux received no OSC 52)" > "$OUT/10-clipboard.txt"
echo "captured $OUT/10-clipboard.txt"

keys C-q
echo "done: $(ls "$OUT" | wc -l) captures in $OUT"
