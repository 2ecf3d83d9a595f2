--- Open a hit: its file at the chunk's first line, in the current window, a split or a tab.
local M = {}

local commands = { edit = "edit", split = "split", vsplit = "vsplit", tab = "tabedit" }

--- Open an item's file at its first line. `how`: "edit" (default), "split", "vsplit", "tab".
---@param item kbls.Item|{filename: string, lnum: integer}
---@param how string|nil
function M.open(item, how)
  local cmd = commands[how or "edit"] or "edit"
  local current = vim.api.nvim_buf_get_name(0)
  if cmd == "edit" and current ~= "" and vim.fs.normalize(current) == vim.fs.normalize(item.filename) then
    vim.cmd("normal! m'")
  else
    vim.cmd(cmd .. " " .. vim.fn.fnameescape(item.filename))
  end
  local last = vim.api.nvim_buf_line_count(0)
  pcall(vim.api.nvim_win_set_cursor, 0, { math.min(math.max(item.lnum or 1, 1), last), 0 })
  pcall(vim.cmd, "normal! zvzz")
end

return M
