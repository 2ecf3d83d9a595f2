--- Buffer-local keymaps of attached buffers, from the `keymaps` option. The actions are given
--- by the caller (`kbls.setup`), so this module depends on nothing above it.
local config = require("kbls.config")

local M = {}

M.descriptions = {
  search = "kbls: search the knowledge base",
  related = "kbls: notes related to the cursor",
  status = "kbls: index status",
  reindex = "kbls: reindex",
}

--- Set the configured keymaps in a buffer.
---@param bufnr integer
---@param actions table<string, fun()> action name → function
function M.set(bufnr, actions)
  for action, lhs in pairs(config.keymaps()) do
    local fn = actions[action]
    if fn then
      vim.keymap.set("n", lhs, fn, { buffer = bufnr, desc = M.descriptions[action] })
    end
  end
end

return M
