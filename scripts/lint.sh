#!/usr/bin/env bash
# The static gate: each check is one "test"; prints one closing `N passed, N failed` line.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "== lint $name: ok"; passed=$((passed + 1))
  else echo "== lint $name: FAILED"; failed=$((failed + 1)); fi
}
check ruff .venv/bin/ruff check server tests benchmarks
check mypy .venv/bin/mypy
[ -f neovim/lint.sh ] && check neovim bash neovim/lint.sh
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
