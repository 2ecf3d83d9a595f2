--- kbls.nvim: Neovim client of the kbls knowledge-base language server.
---
--- Public API: `setup`, `attach`, `search`, `tags`, `search_tag`, `related`, `status`, `reindex`,
--- `statusline`, and `api` (the raw `kb/*` requests). See `:help kbls`.
local api = require("kbls.api")
local client_config = require("kbls.lsp.client_config")
local clients = require("kbls.lsp.clients")
local config = require("kbls.config")
local enable = require("kbls.enable")
local hover_links = require("kbls.hover_links")
local index_status = require("kbls.lsp.index_status")
local items = require("kbls.items")
local keymaps = require("kbls.keymaps")
local notify = require("kbls.notify")
local params = require("kbls.params")
local pickers = require("kbls.pickers")
local quickfix = require("kbls.quickfix")
local status = require("kbls.status")

local M = {}

M.api = api

local function define_highlights()
  for name, link in pairs({
    KblsTitle = "Title",
    KblsBreadcrumb = "Comment",
    KblsPath = "Directory",
    KblsReason = "Comment",
    KblsSnippet = "Comment",
    KblsMore = "Special",
    KblsScore = "Number",
  }) do
    vim.api.nvim_set_hl(0, name, { link = link, default = true })
  end
end

--- The daemon's executable, when `cmd` is a list.
---@return string|nil exe
local function executable()
  local cmd = config.options.cmd
  if type(cmd) ~= "table" then
    return nil
  end
  return cmd[1]
end

--- Keymap actions of attached buffers.
local function keymap_actions()
  return {
    search = function()
      M.search()
    end,
    related = function()
      M.related()
    end,
    status = function()
      M.status()
    end,
    reindex = function()
      M.reindex()
    end,
  }
end

--- Configure the plugin and start clients for buffers of the configured filetypes (including
--- those already open, for lazy loading on `ft`).
---@param opts table|nil see `:help kbls-configuration`
function M.setup(opts)
  config.setup(opts)
  define_highlights()
  if config.options.hover_links then
    hover_links.install()
  else
    hover_links.uninstall()
  end
  local group = vim.api.nvim_create_augroup("kbls", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = define_highlights })
  -- Keymaps for every kbls client, the plugin's own or one started by vim.lsp.enable("kbls").
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == client_config.name then
        keymaps.set(ev.buf, keymap_actions())
        -- vim.lsp.completion exists from Neovim 0.11
        if
          config.options.completion
          and vim.lsp.completion
          and client:supports_method("textDocument/completion")
        then
          vim.lsp.completion.enable(true, client.id, ev.buf, { autotrigger = true })
        end
        if config.options.code_lens then
          require("kbls.backlinks").show_lens(ev.buf, group)
        end
      end
    end,
  })
  if config.options.auto_attach and #config.options.filetypes > 0 then
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = config.options.filetypes,
      callback = function(ev)
        M.attach(ev.buf)
      end,
    })
    M.attach_loaded()
  end
end

--- Start (or reuse) the client for the buffer's root and attach the buffer. A buffer outside
--- a knowledge base (no root marker above it) starts nothing.
---@param bufnr integer|nil default: current buffer
---@return integer|nil client_id
function M.attach(bufnr)
  local exe = executable()
  if exe and vim.fn.executable(exe) ~= 1 then
    vim.notify_once(
      (
        "kbls: %q is not executable; install the server from a clone of kbls (`uv tool install ./`"
        .. " or `pipx install ./` in the clone) or set `cmd` in require('kbls').setup();"
        .. " see :checkhealth kbls"
      ):format(exe),
      vim.log.levels.ERROR
    )
    return nil
  end
  return clients.start(bufnr)
end

--- Attach every loaded buffer of the configured filetypes (each finds its own root, if any).
function M.attach_loaded()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if
      vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(config.options.filetypes, vim.bo[buf].filetype)
    then
      M.attach(buf)
    end
  end
end

--- Make a folder a knowledge base (write a minimal `.kbls.yaml`, never over an existing one)
--- and attach the open buffers of the configured filetypes inside it.
---@param folder string|nil default: the current directory, or the buffer's folder outside it
---@return string|nil path the file written
function M.enable(folder)
  folder = (folder and folder ~= "") and folder or enable.default_folder(0)
  local path, err = enable.write(folder)
  if not path then
    notify.notify(tostring(err), vim.log.levels.WARN)
    return nil
  end
  notify.notify("wrote " .. path .. "; notes under it are indexed now")
  M.attach_loaded()
  return path
end

--- Search the knowledge base. With a live picker (telescope, snacks, fzf-lua) the picker opens
--- with `query` as its text; otherwise the query is asked with `vim.ui.input` when missing, sent
--- once, and the hits shown with `vim.ui.select`.
--- With `quickfix = true` the hits go to the quickfix list instead (walk them with `:cnext`).
---@param query string|nil
---@param opts {picker?: string, bufnr?: integer, search?: table, quickfix?: boolean}|nil `search` overrides the `search` options
function M.search(query, opts)
  opts = opts or {}
  if query == "" then
    query = nil
  end
  local picker = pickers.get(opts.quickfix and "select" or opts.picker)
  if picker.live_search then
    local popts = vim.tbl_extend("force", {}, opts, { query = query })
    popts.picker = nil
    return picker.live_search(popts)
  end
  if not query then
    return vim.ui.input({ prompt = "kbls search: " }, function(input)
      if input and vim.trim(input) ~= "" then
        M.search(input, opts)
      end
    end)
  end
  -- quickfix entries are places to walk with :cnext: every matching section, not one per note
  local search = opts.quickfix and vim.tbl_extend("force", opts.search or {}, { group_by_file = false })
    or opts.search
  local p = params.search(query, search)
  if not p then
    return
  end
  api.search(p, function(err, result)
    if notify.report("search", err) then
      return
    end
    local list = items.items(result and result.hits)
    local note = status.partial(result and result.index)
    if #list == 0 then
      local why = note ~= "" and (" (" .. note:gsub(", refreshed when ready", "") .. ")") or ""
      return notify.notify(("nothing found for %q%s"):format(query, why), vim.log.levels.WARN)
    end
    if note ~= "" then
      notify.notify(note:gsub(", refreshed when ready", ""), vim.log.levels.WARN)
    end
    if opts.quickfix then
      return quickfix.show(result.hits, "kbls: " .. query)
    end
    -- the query and options, so that a note's further sections can be asked for
    local shown = { title = "kbls: " .. query, query = query, search = opts.search, bufnr = opts.bufnr }
    picker.show_hits(list, shown)
  end, { bufnr = opts.bufnr })
end

--- The notes carrying a tag: a live picker filtered by `tag` (an empty prompt lists its notes, most
--- recently modified first; typing searches within them), or without one the list of its notes.
---@param tag string
---@param opts {picker?: string, bufnr?: integer, search?: table}|nil
function M.search_tag(tag, opts)
  opts = opts or {}
  local search = vim.tbl_extend("force", {}, opts.search or {}, { filters = { tags = { tag } } })
  local picker = pickers.get(opts.picker)
  local title = "kbls #" .. tag
  if picker.live_search then
    return picker.live_search({ search = search, bufnr = opts.bufnr, title = title })
  end
  api.notes(params.list_notes(search), function(err, result)
    if notify.report("notes", err) then
      return
    end
    local list = items.items(items.note_hits(result and result.notes))
    if #list == 0 then
      return notify.notify(("no notes tagged %q"):format(tag), vim.log.levels.WARN)
    end
    picker.show_hits(list, { title = title })
  end, { bufnr = opts.bufnr })
end

--- Pick a tag of the knowledge base (`kb/tags`: each with its note count, most used first); the
--- chosen tag opens `search_tag`.
---@param opts {picker?: string, bufnr?: integer, prefix?: string, search?: table}|nil `prefix`: only tags starting with it
function M.tags(opts)
  opts = opts or {}
  local picker = pickers.get(opts.picker)
  api.tags(params.tags({ prefix = opts.prefix }), function(err, result)
    if notify.report("tags", err) then
      return
    end
    local list = result and result.tags or {}
    if #list == 0 then
      local note = status.partial(result and result.index)
      local why = note ~= "" and (" (" .. note:gsub(", refreshed when ready", "") .. ")") or ""
      return notify.notify("no tags" .. why, vim.log.levels.WARN)
    end
    picker.show_tags(list, {
      title = "kbls tags",
      on_choose = function(tag)
        M.search_tag(tag.name, opts)
      end,
    })
  end, { bufnr = opts.bufnr })
end

--- Notes related to the chunk under the cursor (or to the whole note with `whole = true`).
--- The note itself is never listed.
---@param opts {picker?: string, bufnr?: integer, whole?: boolean, limit?: integer}|nil
function M.related(opts)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local position = nil
  if not opts.whole and bufnr == vim.api.nvim_get_current_buf() then
    position = { line = vim.api.nvim_win_get_cursor(0)[1] - 1, character = 0 }
  end
  local p = params.related(bufnr, position, opts.limit)
  if not p then
    return notify.notify("the buffer has no file", vim.log.levels.WARN)
  end
  local picker = pickers.get(opts.picker)
  api.related(p, function(err, result)
    if notify.report("related", err) then
      return
    end
    local list = items.items(items.exclude_uri(result and result.hits or {}, p.uri))
    if #list == 0 then
      return notify.notify("no related notes", vim.log.levels.WARN)
    end
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
    local popts = vim.tbl_extend("force", {}, opts, { title = "Related to " .. name })
    popts.picker, popts.bufnr, popts.whole, popts.limit = nil, nil, nil, nil
    picker.show_hits(list, popts)
  end, { bufnr = bufnr })
end

--- Pick among the notes linking to the current note (`kb/backlinks`; kbls.backlinks).
---@param opts {picker?: string, bufnr?: integer}|nil
function M.backlinks(opts)
  require("kbls.backlinks").show(opts)
end

--- Move a note or folder keeping every link to it right (kbls.backlinks.rename_file).
---@param old string
---@param new string
---@param opts {overwrite?: boolean}|nil
---@return boolean moved
function M.rename_file(old, new, opts)
  return require("kbls.backlinks").rename_file(old, new, opts)
end

--- Show `kb/status` (version, model, stores, errors) with `vim.notify`.
---@param cb fun(result: table|nil, lines: string[]|nil)|nil also called with the result
function M.status(cb)
  api.status(function(err, result)
    if notify.report("status", err) then
      return cb and cb(nil, nil)
    end
    local lines = status.lines(result or {})
    notify.notify(table.concat(lines, "\n"))
    if cb then
      cb(result, lines)
    end
  end)
end

--- Queue a reindex of every root (or of `uris`); progress appears as LSP progress.
---@param opts {force?: boolean, uris?: string[]}|nil
---@param cb fun(result: table|nil)|nil
function M.reindex(opts, cb)
  api.reindex(params.reindex(opts), function(err, result)
    if notify.report("reindex", err) then
      return cb and cb(nil)
    end
    notify.notify(("%d file(s) queued for reindexing"):format(result and result.queued or 0))
    if cb then
      cb(result)
    end
  end)
end

--- Short index state for a statusline ("" when ready), from `kb/indexStatus` notifications.
---@param bufnr integer|nil
---@return string
function M.statusline(bufnr)
  local client = clients.list(bufnr or 0)[1] or clients.list()[1]
  return client and status.short(index_status.by_client[client.id]) or ""
end

return M
