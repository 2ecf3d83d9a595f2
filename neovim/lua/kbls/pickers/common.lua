--- What the picker modules (telescope, snacks, fzf-lua) share: the error when their plugin is
--- missing, the kbls part of `live_search(opts)` (the live search, its rows with expandable
--- notes, its initial query and title), and handing a chosen tag on once the picker has closed.
local live_search = require("kbls.live")
local notify = require("kbls.notify")
local sections = require("kbls.pickers.sections")

local M = {}

--- Raise the error a picker gives when its plugin cannot be loaded.
---@param available boolean
---@param needed string what is missing, e.g. "fzf-lua is needed"
---@param picker string the picker's name
---@param them string|nil "it" (default) or "them"
function M.require_plugin(available, needed, picker, them)
  if not available then
    local message = 'kbls: %s for the %s picker; set picker = "select" or install %s'
    error(message:format(needed, picker, them or "it"), 0)
  end
end

---@class kbls.LiveRows
---@field live kbls.LiveSearch
---@field expansion kbls.Expansion
---@field reuse boolean the next `fetch` of the same prompt shows the last hits again (a note was expanded or folded)
---@field private _last {prompt: string, hits: table[]}|nil
local LiveRows = {}
LiveRows.__index = LiveRows

--- The rows for `prompt`: the hits of a live search (errors reported), each expanded note
--- followed by its further sections. After `expand`, the same prompt reuses the last hits.
---@param prompt string
---@param cb fun(rows: kbls.Item[])
function LiveRows:fetch(prompt, cb)
  local last = self._last
  if self.reuse and last and last.prompt == prompt then
    self.reuse = false
    return self.expansion:rows(prompt, last.hits, cb)
  end
  self.reuse = false
  self.live:send(prompt, function(hits, err)
    notify.report("search", err)
    self._last = { prompt = prompt, hits = hits }
    self.expansion:rows(prompt, hits, cb)
  end)
end

--- Expand or fold the note of a row; true when the picker should fetch its rows again.
---@param item kbls.Item|nil
---@return boolean
function LiveRows:expand(item)
  local changed = self.expansion:toggle(item)
  self.reuse = changed
  return changed
end

--- Cancel every request (closing the picker).
function LiveRows:close()
  self.expansion:cancel()
  self.live:close()
end

--- The kbls options of a picker's `live_search(opts)` taken out of a copy of `opts`: a live
--- search (`kbls.live`) for the buffer the picker was opened from, listing the notes while the
--- prompt is empty, and its rows (`kbls.LiveRows`); the initial query; the title. The rest of
--- `opts` is the picker's own.
---@param opts table|nil picker options, plus `query`, `bufnr`, `search` (overrides of the `search` options), `title`
---@return kbls.LiveRows rows
---@return {query: string|nil, title: string} wanted
---@return table picker_opts
function M.live_search(opts)
  opts = vim.deepcopy(opts or {})
  -- A picker's finder runs while its prompt buffer is current: ask the client of the buffer the
  -- picker was opened from.
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local live = live_search.new({ bufnr = bufnr, search = opts.search, list_empty = true })
  local rows = setmetatable({
    live = live,
    expansion = sections.new({ bufnr = bufnr, search = opts.search }),
    reuse = false,
  }, LiveRows)
  local wanted = { query = opts.query, title = opts.title or "kbls search" }
  opts.query, opts.search, opts.bufnr, opts.title = nil, nil, nil, nil
  return rows, wanted, opts
end

--- Hand the chosen tag to `on_choose` once the picker has closed (it may open another picker).
---@param on_choose fun(tag: table)
---@param tag table|nil nothing happens without one
function M.choose_tag(on_choose, tag)
  if tag then
    vim.schedule(function()
      on_choose(tag)
    end)
  end
end

return M
