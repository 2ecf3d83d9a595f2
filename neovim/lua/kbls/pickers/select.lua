--- The `vim.ui.select` picker: works everywhere, and dressing.nvim (or any plugin that replaces
--- `vim.ui.select`) users get their own UI.
---
--- It has no live search, so `kbls.search` asks for the query with `vim.ui.input` first.
local items = require("kbls.items")
local open = require("kbls.open")

local M = {}

--- Always there.
---@return boolean
function M.available()
  return true
end

--- Show items; the chosen one is opened (nothing happens when nothing is chosen).
---@param list kbls.Item[]
---@param options {title?: string}|nil
function M.show_hits(list, options)
  options = options or {}
  vim.ui.select(list, {
    prompt = options.title or "kbls",
    kind = "kbls",
    format_item = items.format_item,
  }, function(choice)
    if choice then
      open.open(choice, "edit")
    end
  end)
end

return M
