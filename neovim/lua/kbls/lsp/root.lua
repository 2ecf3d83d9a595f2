--- Workspace root detection: the folder a buffer's notes belong to, from the `root_markers`
--- option (by default only `.kbls.yaml`, so a README in a code project starts nothing).
local config = require("kbls.config")

local M = {}

--- Find the workspace root for a path.
---
--- Markers are tried in order and the nearest folder holding the first marker found wins, so
--- `.kbls.yaml` in a sub-folder of a git repository makes that sub-folder the root. A marker may
--- be a list of names of equal priority.
---@param path string a file or folder
---@param markers (string|string[])[]|nil default: the configured `root_markers`
---@return string|nil root absolute path of the root folder
function M.find(path, markers)
  markers = markers or config.options.root_markers
  if not path or path == "" then
    return nil
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  local start = vim.fn.isdirectory(path) == 1 and path or vim.fs.dirname(path)
  for _, marker in ipairs(markers) do
    local found = vim.fs.find(marker, { path = start, upward = true, limit = 1 })[1]
    if found then
      return vim.fs.dirname(found)
    end
  end
  return nil
end

--- The root for a buffer: its file's root, or nil for unnamed and special buffers.
---@param bufnr integer|nil
---@return string|nil
function M.for_buffer(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  return M.find(name)
end

--- Whether `path` lies inside `root` (both absolute).
---@param root string
---@param path string
---@return boolean
function M.contains(root, path)
  root = vim.fs.normalize(root):gsub("/$", "")
  path = vim.fs.normalize(path)
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

return M
