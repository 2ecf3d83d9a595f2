--- Make a folder a knowledge base: write a minimal `.kbls.yaml` there (never over an existing
--- one), the same file VS Code's "KB: Enable for this folder" writes.
local M = {}

M.FILE = ".kbls.yaml"

--- What is written: every key is optional, the server's defaults apply.
M.CONTENT = {
  "# kbls indexes the notes under this folder (written by :KbEnable).",
  "# Every key is optional: include, exclude, store, model, chunk, search.",
  "# See https://github.com/kbls/kbls/blob/main/docs/configuration.md",
}

--- The folder `:KbEnable` means without an argument: the current directory when the buffer's
--- file lies inside it (a project opened with `nvim` in it), else the buffer's own folder.
---@param bufnr integer|nil
---@return string
function M.default_folder(bufnr)
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  local name = vim.api.nvim_buf_get_name(bufnr or 0)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return cwd
  end
  local file = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  if file:sub(1, #cwd + 1) == cwd .. "/" then
    return cwd
  end
  return vim.fs.dirname(file)
end

--- Write `.kbls.yaml` into `folder`.
---@param folder string
---@return string|nil path the file written, nil when none was
---@return string|nil err why not (it exists, the folder is missing, or the write failed)
function M.write(folder)
  folder = vim.fs.normalize(vim.fn.fnamemodify(folder, ":p"))
  if vim.fn.isdirectory(folder) ~= 1 then
    return nil, folder .. " is not a folder"
  end
  local path = folder:gsub("/$", "") .. "/" .. M.FILE
  if vim.uv.fs_stat(path) then
    return nil, path .. " already exists"
  end
  if vim.fn.writefile(M.CONTENT, path) ~= 0 then
    return nil, "could not write " .. path
  end
  return path, nil
end

return M
