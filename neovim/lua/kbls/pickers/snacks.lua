--- The snacks.nvim picker (`Snacks.picker`): live search and a fixed list, with snacks' file
--- preview (scrolled to the chunk, the chunk highlighted); `<CR>`, `<C-s>`/`<C-v>`/`<C-t>` (the
--- `confirm`, `edit_split`, `edit_vsplit` and `tab` actions) open the note with `kbls.open`
--- (the cursor on the section's first line), `<C-e>` lists a note's further sections under its
--- row, or folds them.
---
--- Live search follows snacks' own LSP sources: a `live` picker whose async finder sends the
--- prompt as `kb/search` (through `kbls.live`, which cancels the request in flight) and suspends
--- until the answer; the server ranks, so snacks' matcher does not re-filter.
local common = require("kbls.pickers.common")
local config = require("kbls.config")
local items = require("kbls.items")
local link = require("kbls.link")
local open = require("kbls.open")
local status = require("kbls.status")

local M = {}

--- Whether snacks.nvim with its picker can be loaded.
---@return boolean
function M.available()
  local ok, snacks = pcall(require, "snacks")
  return ok and type(snacks) == "table" and (pcall(require, "snacks.picker"))
end

local function snacks()
  common.require_plugin(M.available(), "snacks.nvim is needed", "snacks")
  return require("snacks")
end

--- A snacks picker item for a kbls item: `file`/`pos`/`end_pos` are what snacks' file
--- previewer and jump action read (`pos` 1-based line, 0-based column; `end_pos` is the line
--- after the chunk, column 0, so the whole chunk is highlighted).
---@param item kbls.Item
---@return table
function M.to_snacks(item)
  return {
    text = items.ordinal(item),
    file = item.filename,
    pos = { item.lnum, 0 },
    end_pos = { item.end_lnum + 1, 0 },
    kbls = item,
  }
end

--- The row of an item: title, breadcrumb, path:line, reasons, then the snippet.
---@param entry table a snacks item
---@return table[] chunks `{ {text, hl_group}, ... }`
function M.format(entry)
  local chunks = vim.tbl_map(function(chunk)
    return { chunk[1], chunk[2] }
  end, items.chunks(entry.kbls))
  local snippet = items.one_line_snippet(entry.kbls)
  if snippet ~= "" then
    chunks[#chunks + 1] = { "  " .. snippet, items.hl.snippet }
  end
  return chunks
end

--- The actions of a list of notes: the open actions through `kbls.open`; `<C-l>` (the
--- `kbls_insert_link` action): close the picker and insert a link to the note where the cursor
--- was; with `rows` (a live search), `<C-e>` (`kbls_expand`): expand or fold the note's row.
---@param origin integer the window the picker was opened from
---@param rows kbls.LiveRows|nil
---@return table picker options
local function note_actions(origin, rows)
  local function opener(how)
    return function(picker, item)
      picker:close()
      if item then
        vim.schedule(function()
          open.open(item.kbls, how)
        end)
      end
    end
  end
  local keys = { ["<c-l>"] = { "kbls_insert_link", mode = { "i", "n" } } }
  local actions = {
    confirm = opener("edit"),
    edit_split = opener("split"),
    edit_vsplit = opener("vsplit"),
    tab = opener("tab"),
    kbls_insert_link = function(picker, item)
      picker:close()
      if item then
        link.insert(item.kbls, origin)
      end
    end,
  }
  if rows then
    keys["<c-e>"] = { "kbls_expand", mode = { "i", "n" } }
    actions.kbls_expand = function(picker, item)
      if not (item and rows:expand(item.kbls)) then
        return
      end
      -- the note's own row stays selected (it is above its sections)
      for index, shown in ipairs(picker:items()) do
        if shown.kbls.filename == item.kbls.filename and not shown.kbls.child then
          picker.list:set_target(index, nil, { force = true })
          break
        end
      end
      picker:find({ refresh = true })
    end
  end
  return {
    actions = actions,
    win = { input = { keys = keys }, list = { keys = keys } },
  }
end

--- Live search: each change of the prompt sends `kb/search`.
---@param opts table|nil snacks picker options, plus `query` (initial text), `bufnr`, `search` (overrides of the `search` options)
---@return table picker
function M.live_search(opts)
  local Snacks = snacks()
  local rows, wanted, snacks_opts = common.live_search(opts)
  local title = wanted.title
  local picker =
    Snacks.picker.pick(vim.tbl_deep_extend("force", note_actions(vim.api.nvim_get_current_win(), rows), {
      source = "kbls",
      title = title,
      live = true,
      supports_live = true,
      search = wanted.query,
      format = M.format,
      preview = "file",
      matcher = { sort_empty = false },
      sort = { fields = { "idx" } },
      finder = function(_, ctx)
        local prompt = ctx.filter.search
        ---@async
        return function(cb)
          local async = ctx.async
          local list, done = {}, false
          vim.schedule(function()
            rows:fetch(prompt, function(found)
              list, done = found, true
              async:resume()
            end)
          end)
          while not done do
            async:suspend()
          end
          -- the title tells when the results are partial (the index was not ready)
          local note = status.partial(rows.live:index())
          ctx.picker.title = note ~= "" and (title .. " — " .. note) or title
          for _, item in ipairs(list) do
            cb(M.to_snacks(item))
          end
        end
      end,
      on_close = function()
        rows:close()
      end,
      debounce = config.options.search.debounce,
    }, snacks_opts))
  -- Results that came while the index was loading are refreshed once it is ready.
  rows.live:on_ready(function()
    if not picker.closed then
      picker:find()
    end
  end)
  return picker
end

--- Pick a tag (`kb/tags`, most used first); `<CR>` closes the picker and calls
--- `options.on_choose(tag)`.
---@param list {name: string, count: integer}[]
---@param options {title?: string, on_choose: fun(tag: table)}
---@return table picker
function M.show_tags(list, options)
  local Snacks = snacks()
  return Snacks.picker.pick({
    source = "kbls_tags",
    title = options.title or "kbls tags",
    items = vim.tbl_map(function(tag)
      return { text = tag.name, kbls_tag = tag }
    end, list),
    format = function(entry)
      local tag = entry.kbls_tag
      return { { tag.name, items.hl.title }, { (" (%d)"):format(tag.count), items.hl.path } }
    end,
    preview = "none",
    layout = { hidden = { "preview" } },
    -- the server's order (most used first) while the prompt is empty
    sort = { fields = { "score:desc", "idx" } },
    confirm = function(picker, entry)
      picker:close()
      common.choose_tag(options.on_choose, entry and entry.kbls_tag)
    end,
  })
end

--- Show a fixed list of items (related notes).
---@param list kbls.Item[]
---@param options {title?: string}|nil
---@return table picker
function M.show_hits(list, options)
  options = vim.deepcopy(options or {})
  local Snacks = snacks()
  return Snacks.picker.pick(vim.tbl_deep_extend("force", note_actions(vim.api.nvim_get_current_win()), {
    source = "kbls_related",
    title = options.title or "kbls",
    items = vim.tbl_map(M.to_snacks, list),
    format = M.format,
    preview = "file",
    sort = { fields = { "score:desc", "idx" } },
  }, options))
end

return M
