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

--- `vim.ui.select`; `chosen(item)` runs only when something was chosen.
---@param list table[]
---@param opts table `vim.ui.select` options
---@param chosen fun(item: table)
local function pick(list, opts, chosen)
  vim.ui.select(list, opts, function(choice)
    if choice then
      chosen(choice)
    end
  end)
end

--- Show items; the chosen one is opened (nothing happens when nothing is chosen).
---@param list kbls.Item[]
---@param options {title?: string}|nil
function M.show_hits(list, options)
  options = options or {}
  pick(
    list,
    { prompt = options.title or "kbls", kind = "kbls", format_item = items.format_item },
    function(choice)
      open.open(choice, "edit")
    end
  )
end

--- Pick a tag (`kb/tags`, most used first); the chosen one goes to `options.on_choose`.
---@param list {name: string, count: integer}[]
---@param options {title?: string, on_choose: fun(tag: table)}
function M.show_tags(list, options)
  pick(
    list,
    { prompt = options.title or "kbls tags", kind = "kbls_tags", format_item = items.tag_label },
    options.on_choose
  )
end

return M
