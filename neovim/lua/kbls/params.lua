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

--- The query that lists notes rather than searching: a filter-only query (`path:**`) makes the
--- server list every note, one entry each, ordered by path.
M.LIST_NOTES_QUERY = "path:**"

--- `kb/search` params listing the notes (what a live picker shows for an empty prompt).
---@param opts {mode?: string}|nil default: `search` options
---@return table
function M.list_notes(opts)
  opts = vim.tbl_extend("force", config.options.search, opts or {})
  return { query = M.LIST_NOTES_QUERY, limit = contract.MAX_LIMIT, mode = opts.mode, groupByFile = true }
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
