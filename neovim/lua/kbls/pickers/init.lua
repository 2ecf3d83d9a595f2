--- The picker registry: which picker module shows search results. "auto" takes the first of
--- telescope.nvim, snacks.nvim's picker and fzf-lua that is installed, else `vim.ui.select`.
---
--- Every picker module has `available()`, `show_hits(items, options)`, `show_tags(tags, options)`
--- (`:KbTags`; `options.on_choose(tag)`) and, when it can filter as one types, `live_search(opts)`.
local config = require("kbls.config")

local M = {}

--- Pickers tried by "auto", in order.
M.order = { "telescope", "snacks", "fzf-lua" }

--- The plugin each picker needs.
M.plugins =
  { telescope = "telescope.nvim", snacks = "snacks.nvim", ["fzf-lua"] = "fzf-lua", select = "vim.ui.select" }

local modules = {
  telescope = "kbls.pickers.telescope",
  snacks = "kbls.pickers.snacks",
  ["fzf-lua"] = "kbls.pickers.fzf_lua",
  select = "kbls.pickers.select",
}

--- The module of a picker name.
---@param name string
---@return table
function M.module(name)
  return require(modules[name] or modules.select)
end

--- Installed pickers, in the order "auto" tries them.
---@return string[]
function M.found()
  return vim.tbl_filter(function(name)
    return M.module(name).available()
  end, M.order)
end

--- The picker name to use for an optional explicit choice.
---@param name string|nil "auto", "telescope", "snacks", "fzf-lua", "select"; default: the `picker` option
---@return string
function M.name(name)
  name = name or config.options.picker
  if name == "auto" then
    return M.found()[1] or "select"
  end
  if name == "fzf_lua" then
    name = "fzf-lua"
  end
  if not modules[name] then
    return "select"
  end
  if name ~= "select" and not M.module(name).available() then
    vim.notify_once(
      ("kbls: %s is not installed; using vim.ui.select"):format(M.plugins[name]),
      vim.log.levels.WARN
    )
    return "select"
  end
  return name
end

--- The picker module.
---@param name string|nil
---@return table picker
function M.get(name)
  return M.module(M.name(name))
end

return M
