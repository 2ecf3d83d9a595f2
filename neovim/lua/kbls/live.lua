--- Live search for pickers: `update` as the prompt changes; after `debounce` ms of quiet the
--- query is sent and any request still in flight is cancelled, so only the newest query's hits
--- arrive.
local config = require("kbls.config")
local items = require("kbls.items")
local params = require("kbls.params")
local request = require("kbls.lsp.request")
local util = require("kbls.util")

local M = {}

---@class kbls.LiveSearch
---@field private _requester kbls.Requester
---@field private _debounced kbls.Debounced
---@field private _send fun(params: table, handler: fun(err: table|nil, result: any)): fun()
---@field private _list fun(params: table, handler: fun(err: table|nil, result: any)): fun()
---@field private _search_opts table|nil
---@field private _latest string|nil
---@field private _index table|nil
---@field private _stale boolean|nil
---@field private _autocmd integer|nil
local Live = {}
Live.__index = Live

--- A live search.
---@param opts {send?: fun(params: table, handler: fun(err: table|nil, result: any)): fun(), list?: fun(params: table, handler: fun(err: table|nil, result: any)): fun(), debounce?: integer, search?: table, bufnr?: integer, list_empty?: boolean}|nil
---   `send` defaults to `kbls.api.search`, `list` to `kbls.api.notes`; `search` overrides the
---   `search` options (its `filters` also narrow the listing); `list_empty`: an empty prompt
---   lists the notes, most recently modified first, instead of showing nothing
---@return kbls.LiveSearch
function M.new(opts)
  opts = opts or {}
  local self = setmetatable({}, Live)
  self._search_opts = opts.search
  self._list_empty = opts.list_empty == true
  self._send = opts.send
    or function(p, handler)
      return require("kbls.api").search(p, handler, { bufnr = opts.bufnr })
    end
  self._list = opts.list
    or function(p, handler)
      return require("kbls.api").notes(p, handler, { bufnr = opts.bufnr })
    end
  self._requester = request.requester()
  self._debounced = util.debounce(function(query, cb)
    self:send(query, cb)
  end, opts.debounce or config.options.search.debounce)
  return self
end

--- Send `query` now, cancelling the request in flight. `cb(hits, err, query, result)` is called
--- once for this query: with the hits, with an error, or with `{}` and a RequestCancelled error
--- when a newer query superseded it. An empty query gives `{}` at once without a request, or,
--- with `list_empty`, the notes of `kb/notes` as hits (`kbls.items.note_hit`), most recent first.
---@param query string
---@param cb fun(hits: table[], err: table|nil, query: string, result: table|nil)
function Live:send(query, cb)
  self._latest = query
  local p = params.search(query, self._search_opts)
  local send, listing = self._send, false
  if not p and self._list_empty then
    p, send, listing = params.list_notes(self._search_opts), self._list, true
  end
  if not p then
    self._requester:cancel()
    return cb({}, nil, query, nil)
  end
  self._requester:send(function(handler)
    return send(p, handler)
  end, function(err, result)
    if not err and type(result) == "table" then
      self._index = result.index
      self._stale = false
    end
    local hits = {}
    if type(result) == "table" then
      hits = listing and items.note_hits(result.notes) or result.hits or {}
    end
    cb(hits, err, query, result)
  end)
end

--- The index state of the last answer (`result.index` of kb/search), nil before one.
---@return table|nil
function Live:index()
  return self._index
end

--- Call `fn` when the index becomes ready (`kb/indexStatus`) after an answer that came while it
--- was loading or indexing, or that indexing followed (the first scan can start just after a
--- search), so the picker re-runs its query and shows the full results.
---@param fn fun()
function Live:on_ready(fn)
  if self._autocmd then
    vim.api.nvim_del_autocmd(self._autocmd)
  end
  self._autocmd = vim.api.nvim_create_autocmd("User", {
    pattern = "KblsIndexStatus",
    callback = function(ev)
      local st = ev.data and ev.data.status
      if type(st) ~= "table" or not self._index then
        return
      end
      if st.state ~= "ready" then
        self._stale = true -- the index changes under the last answer
        return
      end
      if self._stale or self._index.state ~= "ready" then
        self._index, self._stale = st, false
        vim.schedule(fn)
      end
    end,
  })
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
---@param cb fun(hits: table[], err: table|nil, query: string, result: table|nil)
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

--- Cancel everything, free the timer and stop watching the index.
function Live:close()
  self:cancel()
  self._debounced.close()
  if self._autocmd then
    pcall(vim.api.nvim_del_autocmd, self._autocmd)
    self._autocmd = nil
  end
end

return M
