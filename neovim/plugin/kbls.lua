-- User commands of kbls.nvim. The LSP client starts from require("kbls").setup(); these
-- commands work either way (they start a client for the current root when none runs).
if vim.g.loaded_kbls then
  return
end
vim.g.loaded_kbls = true

local cmd = vim.api.nvim_create_user_command

cmd("KbSearch", function(o)
  require("kbls").search(o.args ~= "" and o.args or nil)
end, { nargs = "*", desc = "kbls: search the knowledge base" })

cmd("KbRelated", function(o)
  require("kbls").related({ whole = o.bang })
end, { bang = true, nargs = 0, desc = "kbls: notes related to the cursor (! for the whole note)" })

cmd("KbStatus", function()
  require("kbls").status()
end, { nargs = 0, desc = "kbls: show kb/status" })

cmd("KbReindex", function(o)
  require("kbls").reindex({ force = o.bang })
end, { bang = true, nargs = 0, desc = "kbls: reindex every root (! re-reads unchanged files)" })
