--- One row per note, and a note's further sections on demand. `kb/search` with `groupByFile`
--- answers each note once (its best section, with `more`: how many more of its sections
--- matched, and `sections`: the best of those); expanding a row (`<C-e>` in the live pickers)
--- lists those sections after it: the hit's own `sections` when they are all there with their
--- snippets, else asked for with the same query narrowed to that note (a server without
--- `sections`, more of them than it sends, or sent without snippets: `kb/search` leaves them out
--- unless asked for `sectionSnippets`, as a picker shows them only once a note is expanded).
local api = require("kbls.api")
local config = require("kbls.config")
local contract = require("kbls.contract")
local items = require("kbls.items")
local notify = require("kbls.notify")
local params = require("kbls.params")

local M = {}

--- A `filters.paths` glob for one root-relative path: anchored at the root, the glob
--- characters escaped. Trailing blanks (which a filter drops) become `*`: the answer is then a
--- superset, and the hits are narrowed to the note's URI anyway.
---@param path string
---@return string
function M.path_glob(path)
  local escaped = path:gsub("[\\%[%]%*%?]", "\\%0"):gsub("%s+$", "*")
  return "/" .. escaped
end

--- `kb/search` params for the sections of `item`'s note that match `query` (nil for an empty
--- query). The note's path is added to the search's own filters; a `path:` term of the query
--- widens it, so the caller keeps the hits of the note's URI only.
---@param item kbls.Item
---@param query string
---@param search table|nil overrides of the `search` options
---@return table|nil
function M.params(item, query, search)
  local opts = vim.tbl_extend("force", config.options.search, search or {})
  local filters = vim.deepcopy(opts.filters or {})
  filters.paths = { M.path_glob(item.relpath) }
  opts =
    vim.tbl_extend("force", opts, { group_by_file = false, limit = contract.MAX_LIMIT, filters = filters })
  return params.search(query, opts)
end

--- The further sections of a grouped row: the note's hits for the query, best first, without
--- the row's own section, at most `item.more` (the sections the grouped answer counted).
---@param item kbls.Item
---@param hits table[]
---@return kbls.Item[]
function M.children(item, hits)
  local out = {}
  for _, hit in ipairs(hits) do
    local child = items.item(hit)
    if child.filename == item.filename and child.lnum ~= item.lnum and #out < item.more then
      child.child = true
      out[#out + 1] = child
    end
  end
  return out
end

--- The hits of a grouped hit's further sections as it carries them (`sections`), or nil when it
--- does not carry all `more` of them, each with its snippet.
---@param hit table
---@return table[]|nil
function M.carried(hit)
  local carried = type(hit.sections) == "table" and hit.sections or {}
  if #carried == 0 or #carried < (hit.more or 0) then
    return nil
  end
  for _, section in ipairs(carried) do
    if type(section.snippet) ~= "string" or section.snippet == "" then
      return nil
    end
  end
  return vim.tbl_map(function(section)
    return vim.tbl_extend("force", hit, {
      range = section.range,
      breadcrumb = section.breadcrumb,
      snippet = section.snippet,
      score = section.score,
      more = 0,
      sections = {},
    })
  end, carried)
end

---@class kbls.Expansion
---@field private _bufnr integer|nil
---@field private _search table|nil
---@field private _query string|nil the query the expanded rows are for
---@field private _open table<string, boolean> expanded notes, by file name
---@field private _fetched table<string, table[]> their hits, by file name
---@field private _pending {cancels: fun()[], cb: fun(rows: kbls.Item[])}|nil the rows being built
local Expansion = {}
Expansion.__index = Expansion

--- The expanded notes of one picker.
---@param opts {bufnr?: integer, search?: table, query?: string}|nil the client's buffer, the search options, the query shown
---@return kbls.Expansion
function M.new(opts)
  opts = opts or {}
  return setmetatable(
    { _bufnr = opts.bufnr, _search = opts.search, _query = opts.query, _open = {}, _fetched = {} },
    Expansion
  )
end

--- Expand the note of a row (a grouped row or one of its sections), or fold it again.
---@param item kbls.Item|nil
---@return boolean changed false for a row without further sections
function Expansion:toggle(item)
  if not item or not (item.child or item.more > 0) then
    return false
  end
  self._open[item.filename] = not self._open[item.filename] or nil
  return true
end

--- Whether a note's sections are shown.
---@param item kbls.Item
---@return boolean
function Expansion:is_open(item)
  return self._open[item.filename] == true
end

--- Cancel the section requests in flight; the rows they were for are given as `{}`.
function Expansion:cancel()
  local pending = self._pending
  self._pending = nil
  if pending then
    for _, cancel in ipairs(pending.cancels) do
      pcall(cancel)
    end
    pending.cb({})
  end
end

--- The rows for the hits of `query`: one per hit, each expanded note followed by its further
--- sections (asked for once per query). A new query folds every note again. `cb(rows)` is
--- called once: at once when nothing needs asking, with `{}` when rows for a newer query were
--- asked for first.
---@param query string
---@param hits table[]
---@param cb fun(rows: kbls.Item[])
function Expansion:rows(query, hits, cb)
  self:cancel()
  if query ~= self._query then
    self._query, self._open, self._fetched = query, {}, {}
  end
  local list = items.items(hits)
  local function build()
    local rows = {}
    for _, item in ipairs(list) do
      rows[#rows + 1] = item
      local fetched = item.more > 0 and self._open[item.filename] and self._fetched[item.filename]
      if fetched then
        local children = M.children(item, fetched)
        item.expanded = #children > 0
        vim.list_extend(rows, children)
      end
    end
    cb(rows)
  end
  local pending = { cancels = {}, cb = cb }
  self._pending = pending
  local waiting = 1 -- this loop, then each request
  local function settled()
    waiting = waiting - 1
    if waiting == 0 and self._pending == pending then
      self._pending = nil
      build()
    end
  end
  for _, item in ipairs(list) do
    if item.more > 0 and self._open[item.filename] and not self._fetched[item.filename] then
      self._fetched[item.filename] = M.carried(item.hit)
    end
    local p = item.more > 0
      and self._open[item.filename]
      and not self._fetched[item.filename]
      and M.params(item, query, self._search)
    if p then
      waiting = waiting + 1
      pending.cancels[#pending.cancels + 1] = api.search(p, function(err, result)
        notify.report("search", err)
        self._fetched[item.filename] = result and result.hits or {}
        settled()
      end, { bufnr = self._bufnr })
    end
  end
  settled()
end

return M
