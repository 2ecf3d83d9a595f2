--- The fzf-lua picker: live search (`fzf_live`) and a fixed list (`fzf_exec`), with fzf-lua's
--- builtin previewer at the chunk's line and its file actions (`<CR>` opens at the line,
--- `ctrl-s`/`ctrl-v`/`ctrl-t` split, vsplit, tab).
---
--- fzf works on lines: each hit is `path:line:col:` followed by the label and snippet, which
--- is the `file:line:col:text` shape fzf-lua's previewer and actions parse.
local common = require("kbls.pickers.common")
local items = require("kbls.items")
local link = require("kbls.link")
local notify = require("kbls.notify")

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

--- One fzf line for an item: `path:line:1:label  snippet`, colored with fzf-lua's ANSI helpers.
---@param item kbls.Item
---@return string
function M.line(item)
  local utils = require("fzf-lua.utils")
  local label = utils.ansi_codes.bold(items.label(item))
  local snippet = items.one_line_snippet(item)
  local extra = #item.reasons > 0 and table.concat(item.reasons, "; ") or items.note_info(item)
  local reasons = extra ~= "" and ("  " .. extra) or ""
  local text = label .. reasons .. (snippet ~= "" and ("  " .. utils.ansi_codes.grey(snippet)) or "")
  return ("%s:%d:%d:%s"):format(utils.ansi_codes.magenta(shown_path(item)), item.lnum, item.col, text)
end

--- fzf prints the chosen line without its colors.
local function plain(line)
  return (line:gsub("\27%[[%d;]*m", ""))
end

--- The file actions, and `ctrl-l`: insert a link to the chosen note where the cursor was.
---@param shown table<string, kbls.Item> the items by their (plain) line
---@param origin integer the window the picker was opened from
local function file_actions(shown, origin)
  local actions = require("fzf-lua.actions")
  return {
    ["enter"] = actions.file_edit_or_qf,
    ["ctrl-s"] = actions.file_split,
    ["ctrl-v"] = actions.file_vsplit,
    ["ctrl-t"] = actions.file_tabedit,
    ["ctrl-l"] = function(selected)
      local item = selected and selected[1] and shown[plain(selected[1])]
      if item then
        link.insert(item, origin)
      end
    end,
  }
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

--- The fzf-lua options of a list of notes: the builtin previewer, the file actions, the title;
--- `own` adds to them and `overrides` (the caller's options) win.
---@param shown table<string, kbls.Item> the items by their (plain) line
---@param title string
---@param own table
---@param overrides table
---@return table
local function notes_opts(shown, title, own, overrides)
  return vim.tbl_deep_extend("force", {
    prompt = "kbls> ",
    previewer = "builtin",
    file_icons = false,
    git_icons = false,
    actions = file_actions(shown, vim.api.nvim_get_current_win()),
    winopts = { title = " " .. title .. " " },
  }, own, overrides)
end

--- Live search: each change of the prompt reloads fzf with the hits of `kb/search`.
---@param opts table|nil fzf-lua options, plus `query` (initial text), `bufnr`, `search` (overrides of the `search` options), `title`
function M.live_search(opts)
  local fzf_lua = fzf()
  local live, wanted, fzf_opts = common.live_search(opts)
  local shown = {}
  -- Results that came while the index was loading are refreshed once it is ready: fzf reloads
  -- on a change of the prompt, so type a space and delete it (the query ends as it was).
  local fzf_buf
  live:on_ready(function()
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
          live:send(prompt or "", function(hits, err)
            notify.report("search", err)
            for _, line in ipairs(lines(items.items(hits), shown)) do
              add(line)
            end
            add(nil)
          end)
        end)
      end
    end,
    notes_opts(shown, wanted.title, {
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
  return fzf_lua.fzf_exec(lines(list, shown), notes_opts(shown, title, {}, options))
end

return M
