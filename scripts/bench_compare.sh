#!/usr/bin/env bash
# Before and after in one run: the same benchmarks on an earlier commit (REF) and on this
# checkout, one after the other, on the same machine minutes apart, so a refactor's cost (or
# its absence) is read from two tables measured together rather than from an old note.
#   usage: scripts/bench_compare.sh REF [bench-target ...]   (default: bench bench-tui bench-startup)
# REF is checked out as a git worktree in .bench-ref/ (set up once with its own .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:?usage: scripts/bench_compare.sh REF [bench-target ...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(bench bench-tui bench-startup)
dir=.bench-ref
if [ ! -d "$dir" ]; then
  git worktree add --detach "$dir" "$ref"
else
  git -C "$dir" checkout --quiet --detach "$ref"
fi
make -C "$dir" setup >/dev/null
make setup >/dev/null
for target in "${targets[@]}"; do
  for side in before after; do
    where=.; [ "$side" = before ] && where=$dir
    echo
    echo "## $target, $side ($(git -C "$where" rev-parse --short HEAD)), load $(cut -d' ' -f1-3 /proc/loadavg)"
    make -C "$where" --no-print-directory "$target" 2>&1 | grep -v '^make\|WARNING: Location'
  done
done
