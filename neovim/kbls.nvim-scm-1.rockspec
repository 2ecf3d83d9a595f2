-- The kbls.nvim rock: the root of the published plugin repository (scripts/publish-neovim.sh
-- splits neovim/ into it). lazy.nvim reads it as a plain plugin (builtin build, no modules to
-- compile, no dependencies); rocks.nvim and luarocks install lua/ as modules and copy the
-- runtime folders.
rockspec_format = "3.0"
package = "kbls.nvim"
version = "scm-1"
source = {
  url = "git+https://github.com/kbls/kbls.nvim",
}
description = {
  summary = "Neovim client of kbls, the knowledge-base language server",
  detailed = "Live semantic + lexical search over markdown notes, related notes, "
    .. "Telescope/snacks/fzf-lua pickers and :checkhealth, over the kbls language server.",
  homepage = "https://github.com/kbls/kbls",
  license = "Apache-2.0",
  labels = { "neovim", "lsp", "notes", "search" },
}
dependencies = {
  "lua >= 5.1",
}
build = {
  type = "builtin",
  copy_directories = { "doc", "lsp", "plugin" },
}
