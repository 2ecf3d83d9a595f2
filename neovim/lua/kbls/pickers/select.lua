--- The `vim.ui.select` picker: works everywhere, and fzf-lua, snacks.nvim or dressing.nvim
--- users get their own UI when those plugins replace `vim.ui.select`.
---
--- A picker implements `show_hits(items, options, cb)`; this one has no live search, so
--- `kbls.search` asks for the query with `vim.ui.input` first.
local search = require("kbls.search")

local M = {}

--- Show items; `cb(item, how)` gets the chosen one (never called when nothing is chosen).
---@param items kbls.Item[]
---@param options {title?: string}|nil
---@param cb fun(item: kbls.Item, how: string)
function M.show_hits(items, options, cb)
  options = options or {}
  vim.ui.select(items, {
    prompt = options.title or "kbls",
    kind = "kbls",
    format_item = search.format_item,
  }, function(choice)
    if choice then
      cb(choice, "edit")
    end
  end)
end

return M
