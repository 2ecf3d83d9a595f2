--- The `kb/*` requests of docs/protocol.md as one-line Lua functions.
---
--- One private funnel, `request`, finds the client and sends; each public function documents
--- its params and returns a cancel function. Callbacks get `(err, result)`.
local clients = require("kbls.lsp.clients")
local contract = require("kbls.contract")
local request = require("kbls.lsp.request")

local M = {}

--- Find the client for `opts.bufnr` (or take `opts.client`) and send `method`.
---@param method string
---@param params table|nil
---@param cb fun(err: table|nil, result: any)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
local function send(method, params, cb, opts)
  opts = opts or {}
  local client, why = opts.client, nil
  if not client then
    client, why = clients.pick(opts.bufnr)
  end
  if not client then
    cb({ code = contract.INTERNAL_ERROR, message = "kbls: " .. tostring(why) }, nil)
    return function() end
  end
  return request.send(client, method, params, cb, opts.bufnr)
end

--- Search the knowledge base.
---@param params {query: string, limit?: integer, mode?: string, filters?: table, groupByFile?: boolean}
---@param cb fun(err: table|nil, result: {hits: table[], tookMs: number, index: table}|nil)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
---@see docs/protocol.md `kb/search`
function M.search(params, cb, opts)
  return send(contract.methods.search, params, cb, opts)
end

--- Notes related to a note, or to the chunk at a position.
---@param params {uri: string, position?: {line: integer, character: integer}, limit?: integer}
---@param cb fun(err: table|nil, result: {hits: table[]}|nil)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
---@see docs/protocol.md `kb/related`
function M.related(params, cb, opts)
  return send(contract.methods.related, params, cb, opts)
end

--- The tags of the knowledge base with the number of notes carrying each, most used first.
---@param params {prefix?: string, limit?: integer}|nil
---@param cb fun(err: table|nil, result: {tags: {name: string, count: integer}[], total: integer, index: table}|nil)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
---@see docs/protocol.md `kb/tags`
function M.tags(params, cb, opts)
  return send(contract.methods.tags, params or vim.empty_dict(), cb, opts)
end

--- A page of the notes, most recently modified first.
---@param params {limit?: integer, offset?: integer, filters?: table}|nil
---@param cb fun(err: table|nil, result: {notes: table[], total: integer, index: table}|nil)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
---@see docs/protocol.md `kb/notes`
function M.notes(params, cb, opts)
  return send(contract.methods.notes, params or vim.empty_dict(), cb, opts)
end

--- The links from other notes to one note, with their section and paragraph.
---@param params {uri: string}
---@param cb fun(err: table|nil, result: {backlinks: table[], notes: integer}|nil)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
---@see docs/protocol.md `kb/backlinks`
function M.backlinks(params, cb, opts)
  return send(contract.methods.backlinks, params, cb, opts)
end

--- The daemon's version, model and per-root stores.
---@param cb fun(err: table|nil, result: table|nil)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
---@see docs/protocol.md `kb/status`
function M.status(cb, opts)
  return send(contract.methods.status, vim.empty_dict(), cb, opts)
end

--- Queue a reindex.
---@param params {force?: boolean, uris?: string[]}|nil
---@param cb fun(err: table|nil, result: {queued: integer}|nil)
---@param opts {bufnr?: integer, client?: vim.lsp.Client}|nil
---@return fun() cancel
---@see docs/protocol.md `kb/reindex`
function M.reindex(params, cb, opts)
  return send(contract.methods.reindex, params or vim.empty_dict(), cb, opts)
end

return M
