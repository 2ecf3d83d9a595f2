--- Open a hit: its file in the current window, a split or a tab, the cursor on the section's
--- first line (normal mode, nothing selected) and the section revealed.
local M = {}

local commands = { edit = "edit", split = "split", vsplit = "vsplit", tab = "tabedit" }

--- The screen rows lines `a`..`b` (1-based, inclusive) take in `win` (wrapped lines, folds).
---@param win integer
---@param a integer
---@param b integer
---@return integer
local function rows(win, a, b)
  if vim.api.nvim_win_text_height then
    return vim.api.nvim_win_text_height(win, { start_row = a - 1, end_row = b - 1 }).all
  end
  return b - a + 1
end

--- Put `win`'s cursor on line `first` (column 0, folds there opened) and scroll so that the
--- lines `first`..`last` show: the whole section, centred, when it fits the window, else from
--- its first line. Counted in screen rows, so wrapped lines and closed folds count as shown.
---@param win integer 0 for the current window
---@param first integer 1-based
---@param last integer|nil 1-based, inclusive (default: `first`)
function M.reveal(win, first, last)
  win = win == 0 and vim.api.nvim_get_current_win() or win
  local count = vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(win))
  first = math.min(math.max(first or 1, 1), count)
  last = math.min(math.max(last or first, first), count)
  vim.api.nvim_win_set_cursor(win, { first, 0 })
  vim.api.nvim_win_call(win, function()
    pcall(vim.cmd, "normal! zv")
    local height = vim.api.nvim_win_get_height(win)
    local top = first
    local spare = height - rows(win, first, last)
    if spare > 0 then
      -- half of the rows left above the section, more when the file ends before the other half
      local below = spare - math.floor(spare / 2)
      local after = last < count and rows(win, last + 1, count) or 0
      local above = math.floor(spare / 2) + math.max(0, below - after)
      while top > 1 do
        local h = rows(win, top - 1, top - 1)
        if h > above then
          break
        end
        above, top = above - h, top - 1
      end
    end
    vim.fn.winrestview({ topline = top, lnum = first, col = 0, curswant = 0 })
  end)
end

--- Open an item's file at its section. `how`: "edit" (default), "split", "vsplit", "tab".
--- Called from a picker's prompt (insert or terminal mode), it leaves that mode first.
---@param item kbls.Item|{filename: string, lnum: integer, end_lnum?: integer}
---@param how string|nil
function M.open(item, how)
  local cmd = commands[how or "edit"] or "edit"
  local current = vim.api.nvim_buf_get_name(0)
  if cmd == "edit" and current ~= "" and vim.fs.normalize(current) == vim.fs.normalize(item.filename) then
    vim.cmd("normal! m'")
  else
    vim.cmd(cmd .. " " .. vim.fn.fnameescape(item.filename))
  end
  M.reveal(0, item.lnum or 1, item.end_lnum)
  if vim.api.nvim_get_mode().mode:find("^[iRt]") then
    vim.cmd("stopinsert")
  end
end

return M
