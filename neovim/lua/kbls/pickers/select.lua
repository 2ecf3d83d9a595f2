--- The `vim.ui.select` picker: works everywhere, and dressing.nvim (or any plugin that replaces
--- `vim.ui.select`) users get their own UI.
---
--- It has no live search, so `kbls.search` asks for the query with `vim.ui.input` first. It
--- has no keys of its own either: a note whose further sections were folded into its row gets a
--- row of its own below it ("  +3 more sections of Title"), and choosing that lists them.
local items = require("kbls.items")
local open = require("kbls.open")
local sections = require("kbls.pickers.sections")

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

--- The row that lists a note's further sections.
---@param item kbls.Item
---@return table
local function more_row(item)
  return { more_of = item }
end

--- A row's text: an item's display, or "  +3 more sections of Title".
---@param row kbls.Item|{more_of: kbls.Item}
---@return string
function M.format_row(row)
  if row.more_of then
    return ("  %s of %s"):format(items.more_label(row.more_of), row.more_of.title)
  end
  return items.format_item(row)
end

--- Show items; the chosen one is opened (nothing happens when nothing is chosen). With
--- `options.query`, a note's further sections (`more`) can be listed: each such note is
--- followed by a row that asks for them (`kbls.pickers.sections`) and shows them.
---@param list kbls.Item[]
---@param options {title?: string, query?: string, search?: table, bufnr?: integer}|nil
function M.show_hits(list, options)
  options = options or {}
  local rows = {}
  for _, item in ipairs(list) do
    rows[#rows + 1] = item
    if options.query and item.more > 0 then
      rows[#rows + 1] = more_row(item)
    end
  end
  pick(rows, { prompt = options.title or "kbls", kind = "kbls", format_item = M.format_row }, function(choice)
    if not choice.more_of then
      return open.open(choice, "edit")
    end
    local item = choice.more_of
    local expansion = sections.new({ bufnr = options.bufnr, search = options.search, query = options.query })
    expansion:toggle(item)
    expansion:rows(options.query, { item.hit }, function(found)
      if #found > 0 then
        M.show_hits(found, { title = ("%s: %d sections"):format(item.title, #found) })
      end
    end)
  end)
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
