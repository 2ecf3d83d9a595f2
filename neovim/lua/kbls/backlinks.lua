--- Backlinks and file renames: `:KbBacklinks` lists the notes linking to the current note (the
--- `kb/backlinks` request) in the configured picker; `rename_file` moves a note or folder the
--- way `vim.lsp.util.rename` does, after applying the link edits kbls answers to
--- `workspace/willRenameFiles` (Neovim's own rename sends none), so every link keeps leading to it.
--- References and rename of titles, headings and tags are the standard `vim.lsp.buf.references()`
--- and `vim.lsp.buf.rename()`.
local api = require("kbls.api")
local clients = require("kbls.lsp.clients")
local items = require("kbls.items")
local notify = require("kbls.notify")
local pickers = require("kbls.pickers")
local request = require("kbls.lsp.request")
local root = require("kbls.lsp.root")

local M = {}

local WILL_RENAME_FILES = "workspace/willRenameFiles"
local SHOW_BACKLINKS = "kbls.showBacklinks"

--- How long `rename_file` waits for the link edits.
M.RENAME_TIMEOUT_MS = 10000

--- A backlink of `kb/backlinks` in the shape of a search hit (at the link's line; its paragraph
--- as the snippet), so every picker shows, previews and opens it like one.
---@param backlink table
---@return table hit
function M.hit(backlink)
  local start = backlink.range.start
  return {
    uri = backlink.uri,
    path = backlink.path,
    root = backlink.root,
    range = {
      start = { line = start.line, character = 0 },
      ["end"] = { line = start.line + 1, character = 0 },
    },
    title = backlink.title,
    breadcrumb = backlink.breadcrumb,
    snippet = backlink.context,
    score = 0,
    reasons = {},
    more = 0,
  }
end

--- The params of `kb/backlinks` for a buffer; nil for a buffer without a file.
---@param bufnr integer
---@return table|nil
function M.params(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    return nil
  end
  return { uri = vim.uri_from_fname(vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))) }
end

--- Pick among the notes linking to the note of `opts.bufnr` (default: the current buffer).
---@param opts {picker?: string, bufnr?: integer}|nil
function M.show(opts)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local p = M.params(bufnr)
  if not p then
    return notify.notify("the buffer has no file", vim.log.levels.WARN)
  end
  local picker = pickers.get(opts.picker)
  api.backlinks(p, function(err, result)
    if notify.report("backlinks", err) then
      return
    end
    local list = items.items(vim.tbl_map(M.hit, result and result.backlinks or {}))
    if #list == 0 then
      return notify.notify("no note links here", vim.log.levels.WARN)
    end
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
    picker.show_hits(list, { title = ("Backlinks of %s (%d notes)"):format(name, result.notes or #list) })
  end, { bufnr = bufnr })
end

--- The client command of the code lens on a title (`kbls.showBacklinks`, the note's URI as its
--- argument): the backlinks picker of that note.
function M.register_command()
  vim.lsp.commands[SHOW_BACKLINKS] = function(command, ctx)
    local uri = command.arguments and command.arguments[1]
    local bufnr = type(uri) == "string" and vim.uri_to_bufnr(uri) or ctx.bufnr
    M.show({ bufnr = bufnr })
  end
end

--- Show the code lens (backlink and related counts) in `bufnr`, refreshed when the buffer is
--- entered, insert mode is left and the buffer is written.
---@param bufnr integer
---@param group integer the plugin's autocmd group
function M.show_lens(bufnr, group)
  M.register_command()
  local function refresh()
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
  end
  vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost" }, {
    group = group,
    buffer = bufnr,
    callback = refresh,
  })
  refresh()
end

--- Move the file or folder `old` to `new` keeping every link to it (and from it) right: the
--- kbls client of `old` is asked for the edits (`workspace/willRenameFiles`), they are applied to
--- the buffers (unsaved), then `vim.lsp.util.rename` moves it and renames its buffers.
---@param old string
---@param new string
---@param opts {overwrite?: boolean}|nil
---@return boolean moved
function M.rename_file(old, new, opts)
  old = vim.fs.normalize(vim.fn.fnamemodify(old, ":p"))
  new = vim.fs.normalize(vim.fn.fnamemodify(new, ":p"))
  local dir = root.find(vim.fs.dirname(old))
  local client = dir and clients.for_root(dir) or clients.pick()
  if client then
    local files = { { oldUri = vim.uri_from_fname(old), newUri = vim.uri_from_fname(new) } }
    local result, err = request.sync(client, WILL_RENAME_FILES, { files = files }, M.RENAME_TIMEOUT_MS)
    if err then
      notify.report("rename", err)
    elseif result then
      vim.lsp.util.apply_workspace_edit(result, client.offset_encoding)
    end
  end
  local before = vim.uv.fs_stat(old) ~= nil
  vim.lsp.util.rename(old, new, opts)
  return before and vim.uv.fs_stat(new) ~= nil
end

return M
