--- The `kb/*` protocol's constants, written once for the plugin: method names, search modes, the
--- limit range, the query cap and the JSON-RPC error codes the plugin handles.
---
--- They mirror `server/kbls/limits.py`; `tests/unit/contract_spec.lua` checks them (and every
--- request builder and result reader) against `docs/protocol.schema.json`, so a change on one
--- side fails a test instead of a request.
local M = {}

M.methods = {
  search = "kb/search",
  related = "kb/related",
  status = "kb/status",
  reindex = "kb/reindex",
  tags = "kb/tags",
  notes = "kb/notes",
  backlinks = "kb/backlinks",
  index_status = "kb/indexStatus",
}

--- How a search ranks: both signals fused, the embedding alone, or full-text alone.
M.MODES = { "hybrid", "semantic", "lexical" }

--- Results per request (`limit` of kb/search and kb/related).
M.MIN_LIMIT = 1
M.MAX_LIMIT = 200

--- Tags per `kb/tags` answer (its `limit`).
M.MAX_TAGS = 1000

--- Longest query the server accepts, in characters.
M.MAX_QUERY_CHARS = 4096

--- Index states of `kb/indexStatus`, `kb/status` and a search result's `index`.
M.STATES = { "loading", "indexing", "ready", "error" }

--- JSON-RPC error codes.
M.REQUEST_CANCELLED = -32800
M.INTERNAL_ERROR = -32603

---@param mode any
---@return boolean
function M.is_mode(mode)
  return vim.tbl_contains(M.MODES, mode)
end

---@param limit any
---@return boolean
function M.is_limit(limit)
  return type(limit) == "number"
    and limit == math.floor(limit)
    and limit >= M.MIN_LIMIT
    and limit <= M.MAX_LIMIT
end

--- The query cut to the server's cap, on a character boundary (never inside a UTF-8 sequence).
---@param query string
---@return string
function M.cap_query(query)
  if vim.fn.strchars(query) <= M.MAX_QUERY_CHARS then
    return query
  end
  return vim.fn.strcharpart(query, 0, M.MAX_QUERY_CHARS)
end

return M
