--- The Telescope picker: a thin layer over `kbls.live` (requests) and `kbls.items` (display).
---
--- Live search follows telescope's own `lsp_dynamic_workspace_symbols`: `finders.new_dynamic`
--- whose `fn` sends `kb/search` (cancelling the request in flight) and waits on a plenary
--- oneshot channel, `sorters.highlighter_only` because the server ranks, and the picker's
--- `debounce` option. The "kbls" previewer shows the note with the section highlighted and in
--- view. `<CR>`, `<C-x>`, `<C-v>` and `<C-t>` are telescope's select actions, which open the
--- note with `kbls.open` (the cursor on the section's first line); `<C-e>` lists a note's
--- further sections under its row, or folds them.
local common = require("kbls.pickers.common")
local config = require("kbls.config")
local items = require("kbls.items")
local link = require("kbls.link")
local open = require("kbls.open")
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

--- A Telescope entry for a row (`entry_maker`): a `kbls.Item`, or a hit as the server sent it.
--- `filename`/`lnum`/`lnend`/`col` are what telescope's previewers and `select_*` actions read.
---@param row kbls.Item|table
---@return table entry
function M.make_entry(row)
  local item = row.hit and row or items.item(row)
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

--- The previewer: the note, the section highlighted (`TelescopePreviewLine`) and in view from
--- its first line (`kbls.open.reveal`); titled "kbls preview", or with telescope's
--- `dynamic_preview_title` "kbls: <path>".
---@param opts table picker options (`preview`, `file_encoding` as telescope's previewers take them)
---@return table previewer
function M.previewer(opts)
  local previewers = require("telescope.previewers")
  local conf = require("telescope.config").values
  local ns = vim.api.nvim_create_namespace("kbls-telescope-preview")
  local function show(self, bufnr, entry)
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    for line = entry.lnum, entry.lnend do
      pcall(vim.api.nvim_buf_set_extmark, bufnr, ns, line - 1, 0, {
        end_row = line,
        hl_group = "TelescopePreviewLine",
        hl_eol = true,
      })
    end
    if
      vim.api.nvim_win_is_valid(self.state.winid) and vim.api.nvim_win_get_buf(self.state.winid) == bufnr
    then
      open.reveal(self.state.winid, entry.lnum, entry.lnend)
    end
  end
  return previewers.new_buffer_previewer({
    title = "kbls preview",
    dyn_title = function(_, entry)
      return "kbls: " .. entry.value.relpath
    end,
    get_buffer_by_name = function(_, entry)
      return entry.filename
    end,
    define_preview = function(self, entry)
      conf.buffer_previewer_maker(entry.filename, self.state.bufnr, {
        bufname = self.state.bufname,
        winid = self.state.winid,
        preview = opts.preview,
        file_encoding = opts.file_encoding,
        callback = function(bufnr)
          show(self, bufnr, entry)
        end,
      })
    end,
  })
end

--- `<CR>`, `<C-x>`, `<C-v>`, `<C-t>` (telescope's `select_*` actions, so remapping them works):
--- close the picker and open the note with `kbls.open`.
local function select_with_open()
  local action_set = require("telescope.actions.set")
  action_set.select:replace(function(prompt_bufnr, kind)
    local entry = require("telescope.actions.state").get_selected_entry()
    require("telescope.actions").close(prompt_bufnr)
    if entry then
      local how = ({ horizontal = "split", vertical = "vsplit", tab = "tab" })[kind] or "edit"
      open.open(entry.value, how)
    end
  end)
end

--- `<C-e>`: list the further sections of the selected note under its row, or fold them; the
--- note's row stays selected.
---@param map fun(mode: string|string[], lhs: string, rhs: function)
---@param rows kbls.LiveRows
---@param picker fun(): table the picker
---@param shown fun(): kbls.Item[] the rows shown
local function map_expand(map, rows, picker, shown)
  local wanted -- the file name of the note to select once the rows are back
  map({ "i", "n" }, "<C-e>", function()
    local entry = require("telescope.actions.state").get_selected_entry()
    if entry and rows:expand(entry.value) then
      wanted = entry.value.filename
      picker():refresh()
    end
  end)
  return function(p)
    if not wanted then
      return
    end
    for index, item in ipairs(shown()) do
      if item.filename == wanted and not item.child then
        wanted = nil
        p:set_selection(p:get_row(index))
        return
      end
    end
  end
end

--- The rows in the order Telescope is given them: as they are for an ascending layout; for the
--- default descending one (the best row at the bottom, next to the prompt), each expanded note's
--- sections before it, last first, so that they show under the note's row there too.
---@param rows kbls.Item[]
---@param descending boolean
---@return kbls.Item[]
function M.order(rows, descending)
  if not descending then
    return rows
  end
  local out, group = {}, {}
  local function flush()
    for i = #group, 1, -1 do
      out[#out + 1] = group[i]
    end
    group = {}
  end
  for _, row in ipairs(rows) do
    if not row.child then
      flush()
    end
    group[#group + 1] = row
  end
  flush()
  return out
end

--- Live search: every (debounced) keystroke sends `kb/search`.
---@param opts table|nil telescope picker options, plus `query` (initial text), `bufnr`, `search` (overrides of the `search` options), `title`
function M.live_search(opts)
  local t = deps()
  local rows, wanted
  rows, wanted, opts = common.live_search(opts)
  local origin = vim.api.nvim_get_current_win()
  local picker -- set below; the finder shows the index state in its results title
  local shown = {}
  local finder = t.finders.new_dynamic({
    entry_maker = opts.entry_maker or M.make_entry,
    fn = function(prompt)
      local tx, rx = t.channel.oneshot()
      rows:fetch(prompt, tx)
      shown = M.order(rx(), picker ~= nil and picker.sorting_strategy ~= "ascending")
      M.show_state(picker, rows.live:index())
      return shown
    end,
  })
  -- Closing the picker cancels the requests still in flight.
  local close = finder.close
  finder.close = function(self)
    rows:close()
    return close(self)
  end
  picker = t.pickers.new(opts, {
    prompt_title = wanted.title,
    default_text = wanted.query,
    finder = finder,
    sorter = t.sorters.highlighter_only(opts),
    previewer = M.previewer(opts),
    debounce = config.options.search.debounce,
    attach_mappings = function(prompt_bufnr, map)
      map_insert_link(map, origin)
      select_with_open()
      picker:register_completion_callback(map_expand(map, rows, function()
        return picker
      end, function()
        return shown
      end))
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
              rows.live:supersede(current)
            end
          end)
        end,
      })
      return true
    end,
  })
  -- Results that came while the index was loading are refreshed once it is ready.
  rows.live:on_ready(function()
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
      finder = t.finders.new_table({ results = list, entry_maker = M.make_entry }),
      sorter = t.conf.generic_sorter(options),
      previewer = M.previewer(options),
      attach_mappings = function(_, map)
        map_insert_link(map, origin)
        select_with_open()
        return true
      end,
    })
    :find()
end

return M
