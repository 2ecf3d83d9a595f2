--- Picker-independent search logic: request params, hit → item conversion, display strings with
--- highlights, Telescope-shaped entries, quickfix items, opening a hit, and a debounced live
--- search that keeps one request in flight.
---
--- Every picker (Telescope, vim.ui.select, …) is a thin layer over these functions, so they are
--- what the tests cover in full.
local config = require("kbls.config")
local lsp = require("kbls.lsp")
local util = require("kbls.util")

local M = {}

--- Separator shown between title and sections.
M.SEP = " › "

--- Highlight groups used in displays (defined with `default = true` in `kbls.setup`).
M.hl = {
  title = "KblsTitle",
  breadcrumb = "KblsBreadcrumb",
  path = "KblsPath",
  reason = "KblsReason",
}

---@class kbls.Item
---@field hit table the Hit as the server sent it
---@field uri string
---@field filename string absolute path
---@field relpath string path relative to its root
---@field lnum integer first line of the chunk, 1-based
---@field end_lnum integer last line of the chunk, 1-based, inclusive
---@field col integer always 1
---@field title string
---@field sections string[] breadcrumb headings below the title
---@field snippet string
---@field reasons string[]
---@field score number
---@field more integer

--- Breadcrumb headings below the title ("Borrowing > Mutable references" → {"Mutable references"}).
---@param title string|nil
---@param breadcrumb string|nil
---@return string[]
function M.sections(title, breadcrumb)
  if type(breadcrumb) ~= "string" or breadcrumb == "" then
    return {}
  end
  local parts = vim.split((breadcrumb:gsub("%s+›%s+", " > ")), "%s+>%s+")
  if parts[1] == title then
    table.remove(parts, 1)
  end
  return vim.tbl_filter(function(p)
    return p ~= ""
  end, parts)
end

--- Convert an LSP range (end exclusive) into 1-based first and last lines.
---@param range table
---@return integer lnum
---@return integer end_lnum
function M.lines(range)
  local s, e = range.start, range["end"]
  local lnum = s.line + 1
  local last = e.line -- `end` is exclusive: {line = endLine + 1, character = 0}
  if e.character > 0 then
    last = e.line + 1
  end
  return lnum, math.max(lnum, last)
end

--- A Hit of `kb/search` or `kb/related` as a picker item.
---@param hit table
---@return kbls.Item
function M.item(hit)
  local lnum, end_lnum = M.lines(hit.range)
  local filename = vim.uri_to_fname(hit.uri)
  local title = hit.title
  if type(title) ~= "string" or title == "" then
    title = vim.fn.fnamemodify(filename, ":t:r")
  end
  return {
    hit = hit,
    uri = hit.uri,
    filename = filename,
    relpath = type(hit.path) == "string" and hit.path ~= "" and hit.path
      or vim.fn.fnamemodify(filename, ":~:."),
    lnum = lnum,
    end_lnum = end_lnum,
    col = 1,
    title = title,
    sections = M.sections(title, hit.breadcrumb),
    snippet = type(hit.snippet) == "string" and hit.snippet or "",
    reasons = type(hit.reasons) == "table" and hit.reasons or {},
    score = hit.score or 0,
    more = type(hit.more) == "number" and hit.more or 0,
  }
end

--- Items for a list of hits, in server order.
---@param hits table[]|nil
---@return kbls.Item[]
function M.items(hits)
  return vim.tbl_map(M.item, hits or {})
end

--- "Title › Section › Subsection".
---@param item kbls.Item
---@return string
function M.label(item)
  local parts = { item.title }
  vim.list_extend(parts, item.sections)
  return table.concat(parts, M.SEP)
end

--- The one-line display of an item with its highlights: title, breadcrumb, `path:line`, then
--- (for related notes) the reasons.
---@param item kbls.Item
---@return string display
---@return table highlights `{ { {start, end}, group }, ... }`, 0-based byte columns, end exclusive
function M.display(item)
  local chunks = { { item.title, M.hl.title } }
  if #item.sections > 0 then
    chunks[#chunks + 1] = { M.SEP .. table.concat(item.sections, M.SEP), M.hl.breadcrumb }
  end
  local where = ("%s:%d"):format(item.relpath, item.lnum)
  if item.more > 0 then
    where = where .. (" (+%d)"):format(item.more)
  end
  chunks[#chunks + 1] = { "  ", nil }
  chunks[#chunks + 1] = { where, M.hl.path }
  if #item.reasons > 0 then
    chunks[#chunks + 1] = { "  ", nil }
    chunks[#chunks + 1] = { table.concat(item.reasons, "; "), M.hl.reason }
  end
  local text, highlights, col = {}, {}, 0
  for _, chunk in ipairs(chunks) do
    text[#text + 1] = chunk[1]
    if chunk[2] then
      highlights[#highlights + 1] = { { col, col + #chunk[1] }, chunk[2] }
    end
    col = col + #chunk[1]
  end
  return table.concat(text), highlights
end

--- The display string only (for `vim.ui.select`'s `format_item`).
---@param item kbls.Item
---@return string
function M.format_item(item)
  return (M.display(item))
end

--- The text pickers filter on.
---@param item kbls.Item
---@return string
function M.ordinal(item)
  return M.label(item) .. " " .. item.relpath
end

--- Where a previewer should show an item: the file, the line to scroll to and the range to
--- highlight (1-based, inclusive).
---@param item kbls.Item
---@return {filename: string, lnum: integer, end_lnum: integer}
function M.preview_target(item)
  return { filename = item.filename, lnum = item.lnum, end_lnum = item.end_lnum }
end

--- A Telescope entry for a hit (`entry_maker`): `filename`/`lnum`/`lnend`/`col` are what
--- telescope's grep previewer and `select_*` actions read.
---@param hit table
---@return table entry
function M.make_entry(hit)
  local item = M.item(hit)
  return {
    value = item,
    ordinal = M.ordinal(item),
    display = function(entry)
      return M.display(entry.value)
    end,
    filename = item.filename,
    lnum = item.lnum,
    lnend = item.end_lnum,
    col = item.col,
    text = item.snippet,
  }
end

--- Quickfix items (`setqflist`) for hits.
---@param hits table[]
---@return table[]
function M.qf_items(hits)
  return vim.tbl_map(function(item)
    local text = M.label(item)
    if item.snippet ~= "" then
      text = text .. ": " .. item.snippet:gsub("%s+", " ")
    end
    return { filename = item.filename, lnum = item.lnum, end_lnum = item.end_lnum, col = 1, text = text }
  end, M.items(hits))
end

--- `kb/search` params for a query, or nil for an empty one.
---@param query string|nil
---@param opts {limit?: integer, mode?: string, group_by_file?: boolean, filters?: table}|nil default: `search` options
---@return table|nil
function M.search_params(query, opts)
  if type(query) ~= "string" then
    return nil
  end
  query = vim.trim(query)
  if query == "" then
    return nil
  end
  opts = vim.tbl_extend("force", config.options.search, opts or {})
  local params = {
    query = query:sub(1, 4096),
    limit = opts.limit,
    mode = opts.mode,
    groupByFile = opts.group_by_file and true or false,
  }
  if opts.filters then
    params.filters = opts.filters
  end
  return params
end

--- `kb/related` params for a buffer: the whole note, or the chunk at `position` (0-based).
---@param bufnr integer
---@param position {line: integer, character: integer}|nil
---@param limit integer|nil default: `related.limit`
---@return table|nil params nil for a buffer without a file
function M.related_params(bufnr, position, limit)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    return nil
  end
  local params = {
    uri = vim.uri_from_fname(vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))),
    limit = limit or config.options.related.limit,
  }
  if position then
    params.position = { line = position.line, character = position.character or 0 }
  end
  return params
end

--- Drop the hits of one note (the server already leaves the note out of `kb/related`; this keeps
--- the promise even for a symlinked path).
---@param hits table[]
---@param uri string
---@return table[]
function M.exclude_uri(hits, uri)
  local function key(u)
    local ok, path = pcall(vim.uri_to_fname, u)
    if not ok then
      return u
    end
    return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
  end
  local self = key(uri)
  return vim.tbl_filter(function(hit)
    return key(hit.uri) ~= self
  end, hits or {})
end

local open_commands = { edit = "edit", split = "split", vsplit = "vsplit", tab = "tabedit" }

--- Open an item's file at its first line. `how`: "edit" (default), "split", "vsplit", "tab".
---@param item kbls.Item|{filename: string, lnum: integer}
---@param how string|nil
function M.open(item, how)
  local cmd = open_commands[how or "edit"] or "edit"
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

---@class kbls.LiveSearch
---@field private _requester kbls.Requester
---@field private _debounced kbls.Debounced
---@field private _send fun(params: table, handler: fun(err: table|nil, result: any)): fun()
---@field private _latest string|nil
local Live = {}
Live.__index = Live

--- A live search: `update` as the prompt changes; after `debounce` ms of quiet the query is sent
--- and any request still in flight is cancelled, so only the newest query's hits arrive.
---@param opts {send?: fun(params: table, handler: fun(err: table|nil, result: any)): fun(), debounce?: integer, search?: table, bufnr?: integer}|nil
---   `send` defaults to `kbls.api.search`; `search` overrides the `search` options
---@return kbls.LiveSearch
function M.live(opts)
  opts = opts or {}
  local self = setmetatable({}, Live)
  self._search_opts = opts.search
  self._send = opts.send
    or function(params, handler)
      return require("kbls.api").search(params, handler, { bufnr = opts.bufnr })
    end
  self._requester = lsp.requester()
  self._debounced = util.debounce(function(query, cb)
    self:send(query, cb)
  end, opts.debounce or config.options.search.debounce)
  return self
end

--- Send `query` now, cancelling the request in flight. `cb(hits, err, query)` is called once for
--- this query: with the hits, with an error, or with `{}` and a RequestCancelled error when a
--- newer query superseded it. An empty query gives `{}` at once without a request.
---@param query string
---@param cb fun(hits: table[], err: table|nil, query: string)
function Live:send(query, cb)
  self._latest = query
  local params = M.search_params(query, self._search_opts)
  if not params then
    self._requester:cancel()
    return cb({}, nil, query)
  end
  self._requester:send(function(handler)
    return self._send(params, handler)
  end, function(err, result)
    cb(result and result.hits or {}, err, query)
  end)
end

--- Cancel the request in flight when it is for another query than `query` (the prompt has
--- moved on), so a picker waiting on it is released at once.
---@param query string
---@return boolean cancelled
function Live:supersede(query)
  if self._requester:busy() and self._latest ~= query then
    self._requester:cancel()
    return true
  end
  return false
end

--- Debounced `send`: only the last query of a burst of updates is sent; the callbacks of
--- the dropped ones are never called.
---@param query string
---@param cb fun(hits: table[], err: table|nil, query: string)
function Live:update(query, cb)
  self._debounced.call(query, cb)
end

--- The query most recently sent.
---@return string|nil
function Live:latest()
  return self._latest
end

--- Whether a request is in flight.
---@return boolean
function Live:busy()
  return self._requester:busy()
end

--- Drop a pending update and cancel the request in flight.
function Live:cancel()
  self._debounced.cancel()
  self._requester:cancel()
end

--- Cancel everything and free the timer.
function Live:close()
  self:cancel()
  self._debounced.close()
end

--- Whether an error is only the cancellation of a superseded request.
---@param err table|nil
---@return boolean
function M.is_cancelled(err)
  return type(err) == "table" and err.code == lsp.REQUEST_CANCELLED
end

return M
