-- kbls for Neovim 0.11's `vim.lsp.config`/`vim.lsp.enable`: with this plugin on 'runtimepath',
--
--   vim.lsp.enable("kbls")
--
-- starts `kbls serve` for markdown buffers inside a knowledge base (a folder with .kbls.yaml),
-- without the plugin's own client code. Override any field with vim.lsp.config("kbls", {...});
-- the plugin's options (require("kbls").setup) give the defaults: cmd, filetypes, root_markers,
-- init_options. Use either this or setup() with auto_attach (the default), not both.
return require("kbls.lsp.client_config").for_enable()
