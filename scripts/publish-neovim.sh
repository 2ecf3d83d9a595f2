#!/usr/bin/env bash
# Publish the Neovim plugin (neovim/) as its own repository, so plugin managers install it in
# one line: lazy.nvim `{ "kbls/kbls.nvim", opts = {} }`, packer `use "kbls/kbls.nvim"`,
# rocks.nvim `:Rocks install kbls.nvim`, or a clone under ~/.local/share/nvim/site/pack/*/start.
#
#   scripts/publish-neovim.sh [REMOTE [BRANCH]]
#
# `git subtree split --prefix neovim` rewrites the history of neovim/ into a history whose root
# is the plugin (lua/, plugin/, lsp/, doc/, kbls.nvim-scm-1.rockspec, LICENSE). Without REMOTE it
# only prints the split commit; with REMOTE (a URL or path, e.g.
# git@github.com:kbls/kbls.nvim.git) it pushes that commit to BRANCH (default main). Splitting
# is deterministic: the same history always gives the same commits, so pushes fast-forward.
# It reads the committed history only (HEAD); uncommitted changes are not published.
set -euo pipefail

cd "$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
remote="${1:-}"
branch="${2:-main}"

for required in lua/kbls/init.lua plugin/kbls.lua lsp/kbls.lua doc/kbls.txt kbls.nvim-scm-1.rockspec LICENSE; do
  git cat-file -e "HEAD:neovim/$required" 2>/dev/null || {
    echo "publish-neovim: neovim/$required is not committed" >&2
    exit 1
  }
done

commit="$(git subtree split -q --prefix neovim HEAD)"
echo "$commit"
if [ -n "$remote" ]; then
  git push "$remote" "$commit:refs/heads/$branch"
fi
