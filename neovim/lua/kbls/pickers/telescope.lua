--- The Telescope picker: a thin layer over `kbls.live` (requests) and `kbls.items` (display).
---
--- Live search follows telescope's own `lsp_dynamic_workspace_symbols`: `finders.new_dynamic`
--- whose `fn` sends `kb/search` (cancelling the request in flight) and waits on a plenary
--- oneshot channel, `sorters.highlighter_only` because the server ranks, the picker's `debounce`
--- option, and the grep previewer, which scrolls to `lnum` and highlights `lnum`..`lnend`.
--- `<CR>`, `<C-x>`, `<C-v>` and `<C-t>` are telescope's default select actions, which read
--- `filename`/`lnum`/`col` from the entries.
local common = require("kbls.pickers.common")
local config = require("kbls.config")
local items = require("kbls.items")
local link = require("kbls.link")
local notify = require("kbls.notify")
local status = require("kbls.status")

local M = {}

--- Whether telescope.nvim (and plenary.nvim) can be loaded.
---@return boolean
function M.available()
  return (pcall(require, "telescope")) and (pcall(require, "plenary.async.control"))
end

local function deps()
  common.require_plugin(M.available(), "telescope.nvim and plenary.nvim are needed", "telescope", "them")
  return {
    pickers = require("telescope.pickers"),
    finders = require("telescope.finders"),
    sorters = require("telescope.sorters"),
    conf = require("telescope.config").values,
    channel = require("plenary.async.control").channel,
  }
end

--- A row: title › breadcrumb, `path:line`, reasons, then the snippet on one line, so a hit makes
--- sense where Telescope hides the previewer (below 120 columns).
---@param entry table
---@return string text
---@return table highlights
function M.display(entry)
  local text, highlights = items.display(entry.value)
  local snippet = items.one_line_snippet(entry.value)
  if snippet ~= "" then
    local start = #text + 2
    text = text .. "  " .. snippet
    highlights[#highlights + 1] = { { start, #text }, items.hl.snippet }
  end
  return text, highlights
end

--- A Telescope entry for a hit (`entry_maker`): `filename`/`lnum`/`lnend`/`col` are what
--- telescope's grep previewer and `select_*` actions read.
---@param hit table
---@return table entry
function M.make_entry(hit)
  local item = items.item(hit)
  return {
    value = item,
    ordinal = items.ordinal(item),
    display = M.display,
    filename = item.filename,
    lnum = item.lnum,
    lnend = item.end_lnum,
    col = item.col,
    text = item.snippet,
  }
end

--- `<C-l>`: close the picker and insert a link to the selected note where the cursor was.
---@param map fun(mode: string|string[], lhs: string, rhs: function)
---@param origin integer the window the picker was opened from
local function map_insert_link(map, origin)
  map({ "i", "n" }, "<C-l>", function(prompt_bufnr)
    local entry = require("telescope.actions.state").get_selected_entry()
    require("telescope.actions").close(prompt_bufnr)
    if entry then
      link.insert(entry.value, origin)
    end
  end)
end

--- Live search: every (debounced) keystroke sends `kb/search`.
---@param opts table|nil telescope picker options, plus `query` (initial text), `bufnr`, `search` (overrides of the `search` options), `title`
function M.live_search(opts)
  local t = deps()
  local live, wanted
  live, wanted, opts = common.live_search(opts)
  local origin = vim.api.nvim_get_current_win()
  local picker -- set below; the finder shows the index state in its results title
  local finder = t.finders.new_dynamic({
    entry_maker = opts.entry_maker or M.make_entry,
    fn = function(prompt)
      local tx, rx = t.channel.oneshot()
      live:send(prompt, function(hits, err)
        notify.report("search", err)
        tx(hits)
      end)
      local hits = rx()
      M.show_state(picker, live:index())
      return hits
    end,
  })
  -- Closing the picker cancels the request still in flight.
  local close = finder.close
  finder.close = function(self)
    live:close()
    return close(self)
  end
  picker = t.pickers.new(opts, {
    prompt_title = wanted.title,
    default_text = wanted.query,
    finder = finder,
    sorter = t.sorters.highlighter_only(opts),
    previewer = t.conf.grep_previewer(opts),
    debounce = config.options.search.debounce,
    attach_mappings = function(prompt_bufnr, map)
      map_insert_link(map, origin)
      -- Telescope waits for the finder before it reads the next prompt: when the prompt
      -- changes under a request in flight, cancel that request so the newest query goes
      -- out at once. Scheduled, and compared with the query in flight, so that the request
      -- for the current prompt is never the one cancelled.
      vim.api.nvim_buf_attach(prompt_bufnr, false, {
        on_lines = function()
          vim.schedule(function()
            local ok, current = pcall(function()
              local line = vim.api.nvim_buf_get_lines(prompt_bufnr, 0, 1, false)[1] or ""
              return line:sub(#(picker.prompt_prefix or "") + 1)
            end)
            if ok and current then
              live:supersede(current)
            end
          end)
        end,
      })
      return true
    end,
  })
  -- Results that came while the index was loading are refreshed once it is ready.
  live:on_ready(function()
    if vim.api.nvim_buf_is_valid(picker.prompt_bufnr) then
      picker:refresh()
    end
  end)
  picker:find()
  return picker
end

--- Show the index state (partial results) in the results title, or the plain title when ready.
---@param picker table|nil
---@param index table|nil
function M.show_state(picker, index)
  if not picker then
    return
  end
  local note = status.partial(index)
  vim.schedule(function()
    local border = picker.layout and picker.layout.results and picker.layout.results.border
    if border and border.change_title then
      pcall(border.change_title, border, note ~= "" and ("Results: " .. note) or "Results")
    end
    picker.kbls_state = note
  end)
end

--- A Telescope entry for a `kb/tags` tag: its name (what the sorter filters on) and count.
---@param tag {name: string, count: integer}
---@return table entry
function M.make_tag_entry(tag)
  return {
    value = tag,
    ordinal = tag.name,
    display = function()
      local label = items.tag_label(tag)
      return label, { { { 0, #tag.name }, items.hl.title }, { { #tag.name, #label }, items.hl.path } }
    end,
  }
end

--- Pick a tag; `<CR>` closes the picker and calls `options.on_choose(tag)`.
---@param list {name: string, count: integer}[] most used first
---@param options {title?: string, on_choose: fun(tag: table)}
function M.show_tags(list, options)
  local t = deps()
  local on_choose, title = options.on_choose, options.title or "kbls tags"
  local popts = vim.deepcopy(options)
  popts.on_choose, popts.title = nil, nil
  t.pickers
    .new(popts, {
      prompt_title = title,
      finder = t.finders.new_table({ results = list, entry_maker = M.make_tag_entry }),
      sorter = t.conf.generic_sorter(popts),
      attach_mappings = function(prompt_bufnr)
        local actions = require("telescope.actions")
        actions.select_default:replace(function()
          local entry = require("telescope.actions.state").get_selected_entry()
          actions.close(prompt_bufnr)
          common.choose_tag(on_choose, entry and entry.value)
        end)
        return true
      end,
    })
    :find()
end

--- Show a fixed list of items (related notes); `<CR>`/`<C-x>`/`<C-v>`/`<C-t>` open them.
---@param list kbls.Item[]
---@param options {title?: string}|nil
function M.show_hits(list, options)
  options = vim.deepcopy(options or {})
  local t = deps()
  local title = options.title or "kbls"
  options.title = nil
  local origin = vim.api.nvim_get_current_win()
  t.pickers
    .new(options, {
      prompt_title = title,
      finder = t.finders.new_table({
        results = vim.tbl_map(function(item)
          return item.hit
        end, list),
        entry_maker = M.make_entry,
      }),
      sorter = t.conf.generic_sorter(options),
      previewer = t.conf.grep_previewer(options),
      attach_mappings = function(_, map)
        map_insert_link(map, origin)
        return true
      end,
    })
    :find()
end

return M
