--- "Insert a link to this note": a relative markdown link from the note being edited to a hit,
--- inserted at the cursor of the window the picker was opened from.
local M = {}

local function split(path)
  return vim.split(vim.fs.normalize(path), "/", { trimempty = true })
end

--- `target` relative to the folder `base` (both absolute), with `../` as needed.
---@param base string
---@param target string
---@return string
function M.relative(base, target)
  local from, to = split(base), split(target)
  local common = 0
  while common < #from and common < #to and from[common + 1] == to[common + 1] do
    common = common + 1
  end
  local parts = {}
  for _ = common + 1, #from do
    parts[#parts + 1] = ".."
  end
  for i = common + 1, #to do
    parts[#parts + 1] = to[i]
  end
  return table.concat(parts, "/")
end

--- The markdown link to an item from a file: `[Title](rel/path.md)`, the destination in `<>`
--- when it has spaces (CommonMark), `]` in the title escaped.
---@param item kbls.Item
---@param from string|nil the file the link is written in (absolute); default: the item's folder
---@return string
function M.markdown(item, from)
  local base = from and from ~= "" and vim.fs.dirname(vim.fs.normalize(from)) or vim.fs.dirname(item.filename)
  local dest = M.relative(base, item.filename)
  if dest:find("[%s()]") then
    dest = "<" .. dest .. ">"
  end
  local text = item.title:gsub("([%[%]])", "\\%1")
  return ("[%s](%s)"):format(text, dest)
end

--- Insert the link to `item` at the cursor of `win` (after the cursor's character in normal
--- mode, as `p` would), and put the cursor after it.
---@param item kbls.Item
---@param win integer|nil default: current window
---@return string link
function M.insert(item, win)
  win = (win and vim.api.nvim_win_is_valid(win)) and win or vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_win_get_buf(win)
  local text = M.markdown(item, vim.api.nvim_buf_get_name(buf))
  local row, col = unpack(vim.api.nvim_win_get_cursor(win))
  local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
  col = math.min(#line > 0 and col + 1 or 0, #line)
  vim.api.nvim_buf_set_text(buf, row - 1, col, row - 1, col, { text })
  vim.api.nvim_win_set_cursor(win, { row, col + #text - 1 })
  return text
end

return M
