-- User commands of kbls.nvim. The LSP client starts from require("kbls").setup(); these
-- commands work either way (they start a client for the current root when none runs).
if vim.g.loaded_kbls then
  return
end
vim.g.loaded_kbls = true

local cmd = vim.api.nvim_create_user_command

--- The text of a visual selection (`:'<,'>KbSearch`), on one line.
local function selection()
  local ok, lines =
    pcall(vim.fn.getregion, vim.fn.getpos("'<"), vim.fn.getpos("'>"), { type = vim.fn.visualmode() })
  if not ok then
    lines = vim.api.nvim_buf_get_lines(0, vim.fn.line("'<") - 1, vim.fn.line("'>"), false)
  end
  return vim.trim((table.concat(lines, " "):gsub("%s+", " ")))
end

cmd("KbSearch", function(o)
  local query = o.args ~= "" and o.args or nil
  if not query and o.range > 0 then
    query = selection()
  end
  require("kbls").search(query, { quickfix = o.bang })
end, {
  nargs = "*",
  range = true,
  bang = true,
  desc = "kbls: search the knowledge base (! to the quickfix list; a range searches the selection)",
})

cmd("KbTags", function(o)
  require("kbls").tags({ prefix = o.args ~= "" and o.args or nil })
end, {
  nargs = "?",
  desc = "kbls: pick a tag (with note counts); the chosen tag opens a search of its notes",
})

cmd("KbRelated", function(o)
  if o.range > 0 then
    -- notes like the selection: its meaning as a semantic search
    return require("kbls").search(selection(), { search = { mode = "semantic" } })
  end
  require("kbls").related({ whole = o.bang })
end, {
  bang = true,
  nargs = 0,
  range = true,
  desc = "kbls: notes related to the cursor (! for the whole note; a range: notes like the selection)",
})

cmd("KbBacklinks", function()
  require("kbls").backlinks()
end, { nargs = 0, desc = "kbls: pick among the notes linking to this note" })

cmd("KbRenameFile", function(o)
  local old = vim.api.nvim_buf_get_name(0)
  local new = vim.fn.fnamemodify(o.args, ":p")
  if o.args:sub(-1) == "/" then -- a folder: keep the file name
    new = new .. vim.fs.basename(old)
  end
  require("kbls").rename_file(old, new, { overwrite = o.bang })
end, {
  bang = true,
  nargs = 1,
  complete = "file",
  desc = "kbls: move this note (links to it and from it follow; ! overwrites)",
})

cmd("KbStatus", function()
  require("kbls").status()
end, { nargs = 0, desc = "kbls: show kb/status" })

cmd("KbReindex", function(o)
  require("kbls").reindex({ force = o.bang })
end, { bang = true, nargs = 0, desc = "kbls: reindex every root (! re-reads unchanged files)" })

cmd("KbEnable", function(o)
  require("kbls").enable(o.args ~= "" and vim.fn.expand(o.args) or nil)
end, {
  nargs = "?",
  complete = "dir",
  desc = "kbls: make a folder a knowledge base (writes .kbls.yaml; default: the current directory)",
})

cmd("KbRelatedPanel", function()
  require("kbls.panel").toggle()
end, { nargs = 0, desc = "kbls: toggle a side window of notes related to the cursor's section" })
