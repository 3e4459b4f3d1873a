# Shared by the tmux scripts (tmux_session.sh, tmux_sampling.sh, tmux_mcp.sh): reading and driving the
# pane of tmux session "$SESSION", and starting the scripted model. Sourced, never run; the caller sets
# SESSION (and OUT for shot, WORK and ROOT for start_scripted_model) and owns the cleanup.

pane() { tmux capture-pane -p -t "$SESSION" 2>/dev/null; }

wait_for() {  # wait_for TEXT [SECONDS]: until the screen shows TEXT (a deadline, never a fixed sleep)
  local text="$1" limit="${2:-30}" start=$SECONDS
  until pane | grep -qF -- "$text"; do
    if (( SECONDS - start > limit )); then
      echo "timed out waiting for: $text" >&2
      pane >&2
      exit 1
    fi
    sleep 0.1
  done
}

shot() {  # shot NAME: the screen as text, in $OUT
  pane > "$OUT/$1.txt"
  echo "captured $OUT/$1.txt"
}

keys() { tmux send-keys -t "$SESSION" "$@"; }
type_text() { tmux send-keys -t "$SESSION" -l -- "$1"; }

start_scripted_model() {  # start_scripted_model SCRIPT.json: scripts/scripted_model.py on 127.0.0.1;
  # sets MODEL_PID (the caller kills it) and PORT once it listens
  "$ROOT/.venv/bin/python" "$ROOT/scripts/scripted_model.py" "$1" --port-file "$WORK/port" &
  MODEL_PID=$!
  for _ in $(seq 1 200); do [[ -s "$WORK/port" ]] && break; sleep 0.05; done
  [[ -s "$WORK/port" ]] || { echo "the scripted model did not start" >&2; exit 1; }
  PORT="$(cat "$WORK/port")"
}
