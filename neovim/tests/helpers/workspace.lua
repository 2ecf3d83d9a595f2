-- Temporary workspaces of markdown notes for tests.
local M = {}

--- Write `files` ({ ["rel/path.md"] = "text" }) under a new temp folder; returns its real path.
---@param files table<string, string>
---@return string root
function M.create(files)
  local root = vim.fn.tempname()
  vim.fn.mkdir(root, "p")
  root = vim.uv.fs_realpath(root)
  for rel, text in pairs(files or {}) do
    local path = root .. "/" .. rel
    vim.fn.mkdir(vim.fs.dirname(path), "p")
    local f = assert(io.open(path, "w"))
    f:write(text)
    f:close()
  end
  return root
end

--- The `.kbls.yaml` text of a test root and its store folder: a fresh folder beside the
--- workspaces, outside every root (`store:` inside the root is a config error), as a user writes
--- `store: ../notes-kbls`.
---@return string text, string store
function M.config()
  local name = vim.fn.tempname()
  local store = vim.uv.fs_realpath(vim.fs.dirname(name)) .. "/" .. vim.fs.basename(name) .. "-kbls"
  return "store: " .. store .. "\n", store
end

--- Remove a workspace.
function M.remove(root)
  if root and root ~= "" and root ~= "/" then
    vim.fn.delete(root, "rf")
  end
end

--- The text of a note of `n` lines, "line 1" to "line n", each ending in a newline: a note to
--- open at a given line.
---@param n integer
---@return string
function M.numbered_lines(n)
  local lines = {}
  for i = 1, n do
    lines[i] = "line " .. i
  end
  return table.concat(lines, "\n") .. "\n"
end

return M
