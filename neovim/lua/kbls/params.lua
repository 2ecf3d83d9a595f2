--- Request builders: the params the plugin sends for each `kb/*` method, built in one place from
--- the options (docs/protocol.md; checked against docs/protocol.schema.json by the specs).
local config = require("kbls.config")
local contract = require("kbls.contract")

local M = {}

--- `kb/search` params for a query, or nil for an empty one.
---@param query string|nil
---@param opts {limit?: integer, mode?: string, group_by_file?: boolean, filters?: table}|nil default: `search` options
---@return table|nil
function M.search(query, opts)
  if type(query) ~= "string" then
    return nil
  end
  query = vim.trim(query)
  if query == "" then
    return nil
  end
  opts = vim.tbl_extend("force", config.options.search, opts or {})
  local params = {
    query = contract.cap_query(query),
    limit = opts.limit,
    mode = opts.mode,
    groupByFile = opts.group_by_file and true or false,
  }
  if opts.filters then
    params.filters = opts.filters
  end
  return params
end

--- `kb/notes` params listing the notes, most recently modified first (what a live picker shows
--- for an empty prompt), within the `filters` of the search options (e.g. a tag of `:KbTags`).
---@param opts {filters?: table, limit?: integer, offset?: integer}|nil `limit` default: the most the server sends
---@return table
function M.list_notes(opts)
  opts = opts or {}
  local params = { limit = opts.limit or contract.MAX_LIMIT }
  if opts.offset and opts.offset > 0 then
    params.offset = opts.offset
  end
  if opts.filters then
    params.filters = opts.filters
  end
  return params
end

--- `kb/tags` params: every tag (up to the server's cap), or those starting with `prefix`.
---@param opts {prefix?: string, limit?: integer}|nil
---@return table
function M.tags(opts)
  opts = opts or {}
  local params = {}
  if type(opts.prefix) == "string" and vim.trim(opts.prefix) ~= "" then
    params.prefix = contract.cap_query(vim.trim(opts.prefix))
  end
  if opts.limit then
    params.limit = math.max(1, math.min(contract.MAX_TAGS, math.floor(opts.limit)))
  end
  return next(params) and params or vim.empty_dict()
end

--- `kb/related` params for a buffer: the whole note, or the chunk at `position` (0-based).
---@param bufnr integer
---@param position {line: integer, character?: integer}|nil
---@param limit integer|nil default: `related.limit`
---@return table|nil params nil for a buffer without a file
function M.related(bufnr, position, limit)
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

--- `kb/reindex` params.
---@param opts {force?: boolean, uris?: string[]}|nil
---@return table
function M.reindex(opts)
  opts = opts or {}
  local params = { force = opts.force and true or false }
  if opts.uris then
    params.uris = opts.uris
  end
  return params
end

--- `kb/status` takes no params: an empty JSON object.
---@return table
function M.status()
  return vim.empty_dict()
end

return M
