--- The fzf-lua picker: live search (`fzf_live`) and a fixed list (`fzf_exec`), with fzf-lua's
--- builtin previewer at the chunk's line; `enter`, `ctrl-s`/`ctrl-v`/`ctrl-t` open the note with
--- `kbls.open` (the cursor on the section's first line; several chosen: fzf-lua's file actions),
--- `ctrl-e` lists a note's further sections under its row, or folds them.
---
--- fzf works on lines: each hit is `path:line:col:`, the `file:line:col:text` shape fzf-lua's
--- previewer and actions parse, then (after fzf-lua's invisible delimiter) the row as shown:
--- the title first, the path dimmed after it. fzf shows only that second field (`--with-nth`),
--- so a long path never pushes the title out of a narrow list.
local common = require("kbls.pickers.common")
local items = require("kbls.items")
local link = require("kbls.link")
local open = require("kbls.open")

local M = {}

--- Whether fzf-lua can be loaded (it needs the `fzf` binary itself to open).
---@return boolean
function M.available()
  return (pcall(require, "fzf-lua"))
end

local function fzf()
  common.require_plugin(M.available(), "fzf-lua is needed", "fzf-lua")
  return require("fzf-lua")
end

--- The path fzf-lua resolves against its `cwd` (the current directory): relative when inside it.
---@param item kbls.Item
---@return string
local function shown_path(item)
  return vim.fn.fnamemodify(item.filename, ":.")
end

--- One fzf line for an item: `path:line:1:`, fzf-lua's delimiter, then the row shown (colored
--- with fzf-lua's ANSI helpers): title › breadcrumb, the path dimmed, the further sections,
--- the reasons or the date and tags, the snippet.
---@param item kbls.Item
---@return string
function M.line(item)
  local utils = require("fzf-lua.utils")
  local c = utils.ansi_codes
  local parts = {}
  for _, chunk in ipairs(items.chunks(item)) do
    local text, hl = chunk[1], chunk[2]
    if hl == items.hl.title then
      text = c.bold(text)
    elseif hl == items.hl.path then
      text = c.grey(text)
    elseif hl == items.hl.more then
      text = c.cyan(text)
    end
    parts[#parts + 1] = text
  end
  local snippet = items.one_line_snippet(item)
  if snippet ~= "" then
    parts[#parts + 1] = "  " .. c.grey(snippet)
  end
  return ("%s:%d:%d:%s%s"):format(shown_path(item), item.lnum, item.col, utils.nbsp, table.concat(parts))
end

--- fzf prints the chosen line without its colors.
local function plain(line)
  return (line:gsub("\27%[[%d;]*m", ""))
end

--- The actions: open through `kbls.open` (several chosen lines: fzf-lua's file actions, which
--- send them to the quickfix list); `ctrl-l`: insert a link to the chosen note where the cursor
--- was; with `rows` (a live search), `ctrl-e`: expand or fold the note's row and reload.
---@param shown table<string, kbls.Item> the items by their (plain) line
---@param origin integer the window the picker was opened from
---@param rows kbls.LiveRows|nil
local function note_actions(shown, origin, rows)
  local actions = require("fzf-lua.actions")
  local function opener(how, fallback)
    return function(selected, opts)
      local item = selected and #selected == 1 and shown[plain(selected[1])]
      if item then
        open.open(item, how)
      elseif selected and #selected > 0 then
        fallback(selected, opts)
      end
    end
  end
  local out = {
    ["enter"] = opener("edit", actions.file_edit_or_qf),
    ["ctrl-s"] = opener("split", actions.file_split),
    ["ctrl-v"] = opener("vsplit", actions.file_vsplit),
    ["ctrl-t"] = opener("tab", actions.file_tabedit),
    ["ctrl-l"] = function(selected)
      local item = selected and selected[1] and shown[plain(selected[1])]
      if item then
        link.insert(item, origin)
      end
    end,
  }
  if rows then
    out["ctrl-e"] = {
      fn = function(selected)
        rows:expand(selected and selected[1] and shown[plain(selected[1])])
      end,
      reload = true,
    }
  end
  return out
end

--- Lines for items, remembering which item each line is.
---@param list kbls.Item[]
---@param shown table<string, kbls.Item>
---@return string[]
local function lines(list, shown)
  return vim.tbl_map(function(item)
    local line = M.line(item)
    shown[plain(line)] = item
    return line
  end, list)
end

--- The fzf-lua options of a list of notes: the builtin previewer, the actions, only the row
--- shown of each line, the title; `own` adds to them and `overrides` (the caller's options) win.
---@param shown table<string, kbls.Item> the items by their (plain) line
---@param title string
---@param rows kbls.LiveRows|nil a live search's rows (`ctrl-e` expands them)
---@param own table
---@param overrides table
---@return table
local function notes_opts(shown, title, rows, own, overrides)
  local nbsp = require("fzf-lua.utils").nbsp
  return vim.tbl_deep_extend("force", {
    prompt = "kbls> ",
    previewer = "builtin",
    file_icons = false,
    git_icons = false,
    actions = note_actions(shown, vim.api.nvim_get_current_win(), rows),
    fzf_opts = { ["--delimiter"] = nbsp, ["--with-nth"] = "2.." },
    winopts = { title = " " .. title .. " " },
  }, own, overrides)
end

--- Live search: each change of the prompt reloads fzf with the hits of `kb/search`.
---@param opts table|nil fzf-lua options, plus `query` (initial text), `bufnr`, `search` (overrides of the `search` options), `title`
function M.live_search(opts)
  local fzf_lua = fzf()
  local rows, wanted, fzf_opts = common.live_search(opts)
  local shown = {}
  -- Results that came while the index was loading are refreshed once it is ready: fzf reloads
  -- on a change of the prompt, so type a space and delete it (the query ends as it was).
  local fzf_buf
  rows.live:on_ready(function()
    if fzf_buf and vim.api.nvim_buf_is_valid(fzf_buf) and vim.bo[fzf_buf].channel > 0 then
      vim.api.nvim_chan_send(vim.bo[fzf_buf].channel, " \127")
    end
  end)
  return fzf_lua.fzf_live(
    function(args)
      local prompt = type(args) == "table" and args[1] or args
      -- fzf-lua runs this in its coroutine; `add` writes one line, `add(nil)` ends the list.
      return function(add)
        vim.schedule(function()
          local winobj = require("fzf-lua.utils").fzf_winobj()
          fzf_buf = winobj and winobj.fzf_bufnr or fzf_buf
          rows:fetch(prompt or "", function(list)
            for _, line in ipairs(lines(list, shown)) do
              add(line)
            end
            add(nil)
          end)
        end)
      end
    end,
    notes_opts(shown, wanted.title, rows, {
      query = wanted.query,
      exec_empty_query = true, -- an empty prompt lists the notes
    }, fzf_opts)
  )
end

--- Pick a tag (`kb/tags`, most used first); `enter` calls `options.on_choose(tag)`.
---@param list {name: string, count: integer}[]
---@param options {title?: string, on_choose: fun(tag: table)}
function M.show_tags(list, options)
  local fzf_lua = fzf()
  local by_line = {}
  local lines_shown = vim.tbl_map(function(tag)
    local line = items.tag_label(tag)
    by_line[line] = tag
    return line
  end, list)
  return fzf_lua.fzf_exec(lines_shown, {
    prompt = "tags> ",
    winopts = { title = " " .. (options.title or "kbls tags") .. " " },
    actions = {
      ["enter"] = function(selected)
        common.choose_tag(options.on_choose, selected and selected[1] and by_line[plain(selected[1])])
      end,
    },
  })
end

--- Show a fixed list of items (related notes).
---@param list kbls.Item[]
---@param options {title?: string}|nil
function M.show_hits(list, options)
  options = vim.deepcopy(options or {})
  local fzf_lua = fzf()
  local shown = {}
  local title = options.title or "kbls"
  options.title = nil
  return fzf_lua.fzf_exec(lines(list, shown), notes_opts(shown, title, nil, {}, options))
end

return M
