--- Chooses the picker module: `require("kbls.pickers." .. name)`, where "auto" means telescope
--- when it is installed and `vim.ui.select` otherwise.
local config = require("kbls.config")

local M = {}

--- The picker name to use for an optional explicit choice.
---@param name string|nil "auto", "telescope", "select"; default: the `picker` option
---@return string
function M.picker_name(name)
  name = name or config.options.picker
  if name == "auto" then
    return require("kbls.pickers.telescope").available() and "telescope" or "select"
  end
  if name == "telescope" and not require("kbls.pickers.telescope").available() then
    vim.notify_once("kbls: telescope.nvim is not installed; using vim.ui.select", vim.log.levels.WARN)
    return "select"
  end
  return name
end

--- The picker module.
---@param name string|nil
---@return table picker with `show_hits(items, options, cb)` and maybe `live_search(opts)`
function M.picker(name)
  return require("kbls.pickers." .. M.picker_name(name))
end

return M
