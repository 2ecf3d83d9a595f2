--- `:KbRelatedPanel`: a side window listing the notes related to the section under the cursor,
--- following the cursor in note buffers (debounced; a request still in flight is cancelled when
--- the cursor moves on). Each note is a block: its score, then its title and sections, why it is
--- related and where, wrapped to the window's width so that nothing is cut. `<CR>` on any line of
--- a block opens the note at its section, `<C-l>` inserts a link to it. Below them, the note's
--- backlinks (`kb/backlinks`, asked once per note): each linking note at its link, with the words
--- of its paragraph.
local api = require("kbls.api")
local config = require("kbls.config")
local items = require("kbls.items")
local link = require("kbls.link")
local notify = require("kbls.notify")
local open = require("kbls.open")
local params = require("kbls.params")
local request = require("kbls.lsp.request")
local status = require("kbls.status")
local util = require("kbls.util")

local M = {}

--- The panel's width: 40% of the columns, from `MIN_WIDTH` to `WIDTH`.
M.WIDTH = 60
M.MIN_WIDTH = 30
M.DEBOUNCE = 300
--- Where a block's lines after the score start ("0.82  ").
local INDENT = 6
local ns = vim.api.nvim_create_namespace("kbls-panel")

---@class kbls.PanelState
---@field win integer|nil the panel window
---@field buf integer|nil the panel buffer
---@field source integer|nil the window the panel follows
---@field shown table<integer, kbls.Item> panel line -> item
---@field key string|nil buffer:line of the last request
---@field requester kbls.Requester|nil
---@field debounced kbls.Debounced|nil
---@field group integer|nil
---@field last table|nil what was rendered last (rendered again when the width changes)
---@field width integer|nil the width it was wrapped to
---@field backlinks kbls.Item[]|nil the followed note's backlinks (`backlinks_uri`'s)
---@field backlinks_uri string|nil
---@field backlink_notes integer|nil how many notes link there
---@field backlinks_line integer|nil the panel line of the "Backlinks" title
M.state = { shown = {} }

---@return boolean
function M.is_open()
  return M.state.win ~= nil and vim.api.nvim_win_is_valid(M.state.win)
end

local function is_note(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr)
    and vim.bo[bufnr].buftype == ""
    and vim.tbl_contains(config.options.filetypes, vim.bo[bufnr].filetype)
end

--- Chunks `{ {text, hl_group|nil}, ... }` as lines no wider than `width` columns, broken at
--- spaces and after slashes (a word wider than a line is broken where it must); every line
--- after the first starts with `indent` spaces.
---@param chunks table[]
---@param width integer
---@param indent integer
---@return table[][] lines of chunks
function M.wrap(chunks, width, indent)
  local lines, line, used = {}, {}, 0
  local function newline()
    lines[#lines + 1] = line
    line, used = { { (" "):rep(indent), nil } }, indent
  end
  for _, chunk in ipairs(chunks) do
    -- a word ends at a space or after a slash, so that a path breaks between its folders
    for space, word in chunk[1]:gmatch("(%s*)([^%s/]*/?)") do
      if space ~= "" or word ~= "" then
        local need = vim.fn.strdisplaywidth(space .. word)
        if used + need > width and used > indent then
          newline()
          space, need = "", vim.fn.strdisplaywidth(word)
        end
        while used + need > width and word ~= "" do
          -- a word wider than the line: as much as fits, then the rest on the next line
          local fit = math.max(1, width - used - vim.fn.strdisplaywidth(space))
          local head = vim.fn.strcharpart(word, 0, fit)
          while vim.fn.strdisplaywidth(head) > fit and vim.fn.strchars(head) > 1 do
            head = vim.fn.strcharpart(head, 0, vim.fn.strchars(head) - 1)
          end
          line[#line + 1] = { space .. head, chunk[2] }
          word, space = vim.fn.strcharpart(word, vim.fn.strchars(head)), ""
          newline()
          need = vim.fn.strdisplaywidth(word)
        end
        if space .. word ~= "" then
          line[#line + 1] = { space .. word, chunk[2] }
          used = used + need
        end
      end
    end
  end
  lines[#lines + 1] = line
  return lines
end

--- The block of lines of one related note: the score and the title › sections, then why it is
--- related (the server's reasons), then `path:line`, each wrapped to `width`.
---@param item kbls.Item
---@param width integer
---@return table[][] lines of chunks
function M.block(item, width)
  local mark = item.backlink and "<-" or ("%.2f"):format(item.score)
  local head = { { ("%-" .. INDENT .. "s"):format(mark), items.hl.score } }
  head[#head + 1] = { item.title, items.hl.title }
  if #item.sections > 0 then
    head[#head + 1] = { items.SEP .. table.concat(item.sections, items.SEP), items.hl.breadcrumb }
  end
  local out = M.wrap(head, width, INDENT)
  local pad = { (" "):rep(INDENT), nil }
  local why = item.backlink and item.snippet or table.concat(item.reasons, "; ")
  if why ~= "" then
    vim.list_extend(out, M.wrap({ pad, { why, items.hl.reason } }, width, INDENT))
  end
  local where = ("%s:%d"):format(item.relpath, item.lnum)
  vim.list_extend(out, M.wrap({ pad, { where, items.hl.path } }, width, INDENT))
  return out
end

--- Replace the panel's text; `entries` are items, or nil with a message.
local function render(header, entries, message)
  local st = M.state
  if not (st.buf and vim.api.nvim_buf_is_valid(st.buf)) then
    return
  end
  st.last = { header, entries, message }
  local width = M.is_open() and vim.api.nvim_win_get_width(st.win) or M.WIDTH
  st.width = width
  local lines, marks = { header, "" }, {}
  st.shown = {}
  if message then
    lines[#lines + 1] = message
  end
  local shown_entries = vim.list_extend({}, entries or {})
  local backlinks = st.backlinks or {}
  local section_at = nil
  if #backlinks > 0 then
    shown_entries[#shown_entries + 1] = false -- the section's title goes here
    vim.list_extend(shown_entries, backlinks)
  end
  for _, item in ipairs(shown_entries) do
    if item == false then
      lines[#lines + 1] = ""
      lines[#lines + 1] = ("Backlinks (%d %s)"):format(
        st.backlink_notes,
        st.backlink_notes == 1 and "note" or "notes"
      )
      marks[#lines] = { { 0, #lines[#lines], items.hl.title } }
      section_at = #lines
    end
    for _, chunks in ipairs(item and M.block(item, width) or {}) do
      local text, col, hls = {}, 0, {}
      for _, chunk in ipairs(chunks) do
        text[#text + 1] = chunk[1]
        if chunk[2] then
          hls[#hls + 1] = { col, col + #chunk[1], chunk[2] }
        end
        col = col + #chunk[1]
      end
      lines[#lines + 1] = table.concat(text)
      st.shown[#lines] = item
      marks[#lines] = hls
    end
  end
  st.backlinks_line = section_at
  vim.bo[st.buf].modifiable = true
  vim.api.nvim_buf_set_lines(st.buf, 0, -1, false, lines)
  vim.bo[st.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(st.buf, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(st.buf, ns, 0, 0, { end_col = #header, hl_group = items.hl.title })
  for row, hls in pairs(marks) do
    for _, hl in ipairs(hls) do
      vim.api.nvim_buf_set_extmark(st.buf, ns, row - 1, hl[1], { end_col = hl[2], hl_group = hl[3] })
    end
  end
end

--- Ask for the backlinks of the note at `uri` (once per note; the panel shows them below the
--- related notes). A server that cannot answer leaves the section out.
---@param bufnr integer
---@param uri string
local function ask_backlinks(bufnr, uri)
  local st = M.state
  if st.backlinks_uri == uri then
    return
  end
  st.backlinks_uri, st.backlinks, st.backlink_notes = uri, nil, 0
  api.backlinks({ uri = uri }, function(err, result)
    if err or st.backlinks_uri ~= uri or type(result) ~= "table" then
      return
    end
    local list = items.items(vim.tbl_map(require("kbls.backlinks").hit, result.backlinks or {}))
    for _, item in ipairs(list) do
      item.backlink = true
    end
    st.backlinks, st.backlink_notes = list, result.notes or #list
    if st.last then
      render(unpack(st.last, 1, 3))
    end
  end, { bufnr = bufnr })
end

--- Ask for the notes related to the cursor's line of `win`, unless that was the last question.
---@param win integer
function M.update(win)
  local st = M.state
  if not M.is_open() or not vim.api.nvim_win_is_valid(win) then
    return
  end
  local bufnr = vim.api.nvim_win_get_buf(win)
  if not is_note(bufnr) then
    return
  end
  st.source = win
  local line = vim.api.nvim_win_get_cursor(win)[1]
  local key = bufnr .. ":" .. line
  if key == st.key then
    return
  end
  st.key = key
  local p = params.related(bufnr, { line = line - 1 }, config.options.related.limit)
  if not p then
    return
  end
  ask_backlinks(bufnr, p.uri)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
  local header = ("Related to %s:%d"):format(name, line)
  st.requester:send(function(handler)
    return api.related(p, handler, { bufnr = bufnr })
  end, function(err, result)
    if notify.is_cancelled(err) then
      return
    end
    if err then
      st.key = nil -- ask again on the next move
      return render(header, nil, "kbls: " .. (err.message or vim.inspect(err)))
    end
    local list = items.items(items.exclude_uri(result and result.hits or {}, p.uri))
    local note = status.partial(result and result.index)
    render(
      header,
      list,
      #list == 0 and ("no related notes" .. (note ~= "" and (" (" .. note .. ")") or "")) or nil
    )
  end)
end

--- The item on the panel's cursor line.
---@return kbls.Item|nil
local function current_item()
  local st = M.state
  return st.shown[vim.api.nvim_win_get_cursor(0)[1]]
end

--- Go back to the followed window (the last note window).
local function source_win()
  local win = M.state.source
  if win and vim.api.nvim_win_is_valid(win) then
    return win
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if w ~= M.state.win and vim.api.nvim_win_get_config(w).relative == "" then
      return w
    end
  end
end

local function map_keys(buf)
  vim.keymap.set("n", "<CR>", function()
    local item = current_item()
    local win = source_win()
    if item and win then
      vim.api.nvim_set_current_win(win)
      open.open(item)
    end
  end, { buffer = buf, desc = "kbls: open the related note" })
  vim.keymap.set("n", "<C-l>", function()
    local item = current_item()
    local win = source_win()
    if item and win then
      link.insert(item, win)
    end
  end, { buffer = buf, desc = "kbls: insert a link to the related note" })
  vim.keymap.set("n", "q", M.close, { buffer = buf, desc = "kbls: close the panel" })
end

--- Open the panel to the right of the current window and follow the cursor.
function M.open()
  if M.is_open() then
    return
  end
  local st = M.state
  local source = vim.api.nvim_get_current_win()
  st.buf = vim.api.nvim_create_buf(false, true)
  vim.bo[st.buf].bufhidden = "wipe"
  vim.bo[st.buf].filetype = "kbls-related"
  vim.api.nvim_buf_set_name(st.buf, "kbls://related")
  vim.cmd("botright vsplit")
  st.win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(st.win, st.buf)
  vim.api.nvim_win_set_width(
    st.win,
    math.max(M.MIN_WIDTH, math.min(M.WIDTH, math.floor(vim.o.columns * 0.4)))
  )
  for opt, value in pairs({ number = false, relativenumber = false, wrap = false, winfixwidth = true }) do
    vim.wo[st.win][opt] = value
  end
  map_keys(st.buf)
  vim.api.nvim_set_current_win(source)
  st.requester = request.requester()
  st.debounced = util.debounce(M.update, M.DEBOUNCE)
  st.group = vim.api.nvim_create_augroup("kbls-panel", { clear = true })
  vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "BufEnter" }, {
    group = st.group,
    callback = function(ev)
      if M.is_open() and is_note(ev.buf) and vim.api.nvim_get_current_win() ~= st.win then
        st.debounced.call(vim.api.nvim_get_current_win())
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "WinResized", "VimResized" }, {
    group = st.group,
    callback = function()
      if M.is_open() and st.last and vim.api.nvim_win_get_width(st.win) ~= st.width then
        render(unpack(st.last, 1, 3))
      end
    end,
  })
  vim.api.nvim_create_autocmd("WinClosed", {
    group = st.group,
    pattern = tostring(st.win),
    callback = function()
      vim.schedule(M.close)
    end,
  })
  render("Related notes", nil, "move the cursor in a note")
  M.update(source)
end

--- Close the panel and stop following the cursor.
function M.close()
  local st = M.state
  if st.group then
    pcall(vim.api.nvim_del_augroup_by_id, st.group)
  end
  if st.debounced then
    st.debounced.close()
  end
  if st.requester then
    st.requester:cancel()
  end
  if st.win and vim.api.nvim_win_is_valid(st.win) then
    pcall(vim.api.nvim_win_close, st.win, true)
  end
  M.state = { shown = {} }
end

--- Open or close the panel.
function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open()
  end
end

return M
