#!/usr/bin/env bash
# Static checks of kbls.nvim: stylua --check (stylua.toml) and a linter: selene (selene.toml)
# when a `selene` binary is on PATH or in neovim/.tools/bin, else luacheck (.luacheckrc, the
# same Lua 5.1 + `vim` environment). No registry this project reaches (PyPI, npm, Debian)
# carries a selene build; stylua comes from npm (@johnnymorganz/stylua-bin, a prebuilt binary
# per platform) and luacheck from Debian (lua-check). Both are installed when missing, into
# the git-ignored neovim/.tools (stylua) or with apt-get (luacheck).
# Which of selene's lints luacheck covers, and which not: docs/architecture.md, "The static gate".
#
#   bash neovim/lint.sh        exit status non-zero on any finding
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$here/.tools"
stylua_version="2.5.2"
paths=(lua plugin lsp tests)

log() { echo "lint.sh: $*" >&2; }

# --- stylua -----------------------------------------------------------------------------------
stylua="$tools/node_modules/.bin/stylua"
if ! { [ -x "$stylua" ] && "$stylua" --version 2>/dev/null | grep -q "$stylua_version"; }; then
  command -v npm >/dev/null || { log "npm is needed to install stylua"; exit 1; }
  log "installing stylua $stylua_version (npm @johnnymorganz/stylua-bin) into $tools"
  mkdir -p "$tools"
  timeout 300 npm install --prefix "$tools" --no-save --no-audit --no-fund --loglevel=error \
    "@johnnymorganz/stylua-bin@$stylua_version" >&2 || { log "npm install failed"; exit 1; }
fi

# --- selene, else luacheck ----------------------------------------------------------------------
linter=""
if [ -x "$tools/bin/selene" ]; then
  linter="$tools/bin/selene"
elif command -v selene >/dev/null; then
  linter="$(command -v selene)"
else
  if ! command -v luacheck >/dev/null; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
    log "selene is not installable from the registries here; installing luacheck (apt lua-check)"
    timeout 600 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua-check >/dev/null 2>&1 \
      || { timeout 600 $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 \
        && timeout 600 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua-check >/dev/null; } \
      || { log "apt-get install lua-check failed"; exit 1; }
  fi
  linter="luacheck"
fi

cd "$here"
existing=()
for p in "${paths[@]}"; do [ -e "$p" ] && existing+=("$p"); done

status=0
echo "== stylua --check ${existing[*]}"
"$stylua" --check "${existing[@]}" || status=1
if [ "$linter" = "luacheck" ]; then
  echo "== luacheck ${existing[*]} (selene not installed)"
  luacheck --no-color --quiet "${existing[@]}" || status=1
else
  echo "== selene ${existing[*]}"
  "$linter" "${existing[@]}" || status=1
fi
exit "$status"
