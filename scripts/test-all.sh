#!/usr/bin/env bash
# Run every suite (lint, Python, Neovim, VS Code); print one closing `N passed, N failed` line.
# Each suite runs even when an earlier one failed, so one run shows every failure.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0; status=0
out=$(mktemp -d)

# The per-user daemon lives in $XDG_RUNTIME_DIR/kbls: give this run a private one, so no suite
# relays to a daemon another run (or the developer's editor) started, and stop ours at the end.
export XDG_RUNTIME_DIR="$out/runtime"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
stop_daemons() {
  local pid
  for pid in $(pgrep -f 'kbls daemon' || true); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR"; then
      kill "$pid" 2>/dev/null || true
    fi
  done
}
trap stop_daemons EXIT

count() {  # count SUITE LOGFILE RC: add the suite's own passed/failed figures
  local suite=$1 log=$2 rc=$3 p f
  p=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  f=$(grep -Eo '[0-9]+ failed' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  p=${p:-0}; f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi  # a crash that counted nothing is a failure
  echo "== $suite: $p passed, $f failed (exit $rc)"
  passed=$((passed + p)); failed=$((failed + f))
  [ "$rc" -eq 0 ] || status=1
}

run_suite() {  # run_suite NAME COMMAND...
  local name=$1; shift
  echo "== $name: $*"
  "$@" 2>&1 | tee "$out/$name.log"
  count "$name" "$out/$name.log" "${PIPESTATUS[0]}"
}

run_suite lint bash scripts/lint.sh
run_suite python .venv/bin/python -m pytest -q -p no:cacheprovider tests
[ -f neovim/run-tests.sh ] && run_suite neovim bash neovim/run-tests.sh
[ -f vscode-extension/run-tests.sh ] && run_suite vscode bash vscode-extension/run-tests.sh

echo "$passed passed, $failed failed"
exit $status
