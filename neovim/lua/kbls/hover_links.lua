--- The links of kbls' hover (`[Note › Section](file:///…/note.md#L5)`) opened inside Neovim:
--- `gx` hands a link to `vim.ui.open`, which would give a `file://` URI to the system handler
--- ("no handler found", and no line anyway). This wraps `vim.ui.open` so that such a link to an
--- existing file opens it here at the line; every other URI goes to the original.
local open = require("kbls.open")

local M = {}

--- `file:///path#L5` as `{filename, lnum}`; nil for any other URI or a file that is not there.
---@param uri any
---@return {filename: string, lnum: integer}|nil
function M.parse(uri)
  if type(uri) ~= "string" then
    return nil
  end
  local base, line = uri:match("^(file://[^#]+)#L(%d+)$")
  if not base then
    return nil
  end
  local ok, filename = pcall(vim.uri_to_fname, base)
  if not ok or not vim.uv.fs_stat(filename) then
    return nil
  end
  return { filename = filename, lnum = tonumber(line) }
end

--- Open a parsed link: out of a floating window (the hover) into the window below it.
---@param target {filename: string, lnum: integer}
function M.follow(target)
  if vim.api.nvim_win_get_config(0).relative ~= "" then
    vim.api.nvim_win_close(0, true)
  end
  open.open(target)
end

--- Wrap `vim.ui.open` once.
function M.install()
  if M._original then
    return
  end
  M._original = vim.ui.open
  ---@diagnostic disable-next-line: duplicate-set-field
  vim.ui.open = function(path, opt)
    local target = M.parse(path)
    if not target then
      return M._original(path, opt)
    end
    M.follow(target)
    return nil, nil
  end
end

--- Restore the original `vim.ui.open`.
function M.uninstall()
  if M._original then
    vim.ui.open = M._original
    M._original = nil
  end
end

return M
