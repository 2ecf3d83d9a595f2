-- Windows in specs: the floating window a hover opens.
local M = {}

--- The first floating window of the current tab, waited for up to `timeout` ms; nil when none
--- opened in time.
---@param timeout integer
---@return integer? win
function M.wait_float(timeout)
  local float
  vim.wait(timeout, function()
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        float = win
        return true
      end
    end
    return false
  end, 10)
  return float
end

return M
