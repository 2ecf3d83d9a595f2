--- Search hits as picker items: a `Hit` of `kb/search`/`kb/related` (or a `Note` of `kb/notes`,
--- read as a hit at the note's first line) turned into a file, lines and labels, and the one-line
--- display every picker shows (with highlight groups); and the label of a `kb/tags` tag.
local M = {}

--- Separator shown between title and sections.
M.SEP = " › "

--- Highlight groups used in displays (defined with `default = true` in `kbls.setup`).
M.hl = {
  title = "KblsTitle",
  breadcrumb = "KblsBreadcrumb",
  path = "KblsPath",
  reason = "KblsReason",
  snippet = "KblsSnippet",
  more = "KblsMore",
  score = "KblsScore",
}

---@class kbls.Item
---@field hit table the Hit as the server sent it
---@field uri string
---@field filename string absolute path
---@field relpath string path relative to its root
---@field lnum integer first line of the chunk, 1-based
---@field end_lnum integer last line of the chunk, 1-based, inclusive
---@field col integer always 1
---@field title string
---@field sections string[] breadcrumb headings below the title
---@field snippet string
---@field reasons string[]
---@field score number
---@field more integer further sections of the note folded into this row (`groupByFile`)
---@field expanded boolean|nil its further sections are listed below it
---@field child boolean|nil a further section of the note in the row above (an expanded note)
---@field modified integer|nil a listed note's modification time, ms since the epoch
---@field tags string[] a listed note's tags

--- Breadcrumb headings below the title ("Borrowing > Mutable references" → {"Mutable references"}).
---@param title string|nil
---@param breadcrumb string|nil
---@return string[]
function M.sections(title, breadcrumb)
  if type(breadcrumb) ~= "string" or breadcrumb == "" then
    return {}
  end
  local parts = vim.split((breadcrumb:gsub("%s+›%s+", " > ")), "%s+>%s+")
  if parts[1] == title then
    table.remove(parts, 1)
  end
  return vim.tbl_filter(function(p)
    return p ~= ""
  end, parts)
end

--- Convert an LSP range (end exclusive) into 1-based first and last lines.
---@param range table
---@return integer lnum
---@return integer end_lnum
function M.lines(range)
  local s, e = range.start, range["end"]
  local lnum = s.line + 1
  local last = e.line -- `end` is exclusive: {line = endLine + 1, character = 0}
  if e.character > 0 then
    last = e.line + 1
  end
  return lnum, math.max(lnum, last)
end

--- A Hit of `kb/search` or `kb/related` as a picker item.
---@param hit table
---@return kbls.Item
function M.item(hit)
  local lnum, end_lnum = M.lines(hit.range)
  local filename = vim.uri_to_fname(hit.uri)
  local title = hit.title
  if type(title) ~= "string" or title == "" then
    title = vim.fn.fnamemodify(filename, ":t:r")
  end
  return {
    hit = hit,
    uri = hit.uri,
    filename = filename,
    relpath = type(hit.path) == "string" and hit.path ~= "" and hit.path
      or vim.fn.fnamemodify(filename, ":~:."),
    lnum = lnum,
    end_lnum = end_lnum,
    col = 1,
    title = title,
    sections = M.sections(title, hit.breadcrumb),
    snippet = type(hit.snippet) == "string" and hit.snippet or "",
    reasons = type(hit.reasons) == "table" and hit.reasons or {},
    score = type(hit.score) == "number" and hit.score or 0,
    more = type(hit.more) == "number" and hit.more or 0,
    modified = type(hit.modified) == "number" and hit.modified or nil,
    tags = type(hit.tags) == "table" and hit.tags or {},
  }
end

--- A `Note` of `kb/notes` in the shape of a hit at the note's first line, so every picker
--- shows, previews and opens it like a search hit.
---@param note table
---@return table hit
function M.note_hit(note)
  return {
    uri = note.uri,
    path = note.path,
    root = note.root,
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } },
    title = note.title,
    breadcrumb = "",
    snippet = note.snippet,
    score = 0,
    reasons = {},
    more = 0,
    modified = note.modified,
    tags = note.tags,
  }
end

--- The notes of a `kb/notes` answer as hits, in server order (most recent first).
---@param notes table[]|nil
---@return table[]
function M.note_hits(notes)
  return vim.tbl_map(M.note_hit, notes or {})
end

--- What a listed note shows instead of a line number: its date and tags ("2026-11-30  #rust").
---@param item kbls.Item
---@return string
function M.note_info(item)
  local parts = {}
  if item.modified then
    parts[1] = os.date("%Y-%m-%d", math.floor(item.modified / 1000))
  end
  if #item.tags > 0 then
    parts[#parts + 1] = "#" .. table.concat(item.tags, " #")
  end
  return table.concat(parts, "  ")
end

--- The label of a `kb/tags` tag: "rust (12)".
---@param tag {name: string, count: integer}
---@return string
function M.tag_label(tag)
  return ("%s (%d)"):format(tag.name, tag.count)
end

--- Items for a list of hits, in server order.
---@param hits table[]|nil
---@return kbls.Item[]
function M.items(hits)
  return vim.tbl_map(M.item, hits or {})
end

--- "Title › Section › Subsection".
---@param item kbls.Item
---@return string
function M.label(item)
  local parts = { item.title }
  vim.list_extend(parts, item.sections)
  return table.concat(parts, M.SEP)
end

--- The snippet on one line.
---@param item kbls.Item
---@return string
function M.one_line_snippet(item)
  return vim.trim((item.snippet:gsub("%s+", " ")))
end

--- What a row says of the note's further sections: "+3 more sections" folded into it,
--- "3 more sections below" once expanded, "" when there are none.
---@param item kbls.Item
---@return string
function M.more_label(item)
  if item.more <= 0 then
    return ""
  end
  local sections = item.more == 1 and "section" or "sections"
  if item.expanded then
    return ("%d more %s below"):format(item.more, sections)
  end
  return ("+%d more %s"):format(item.more, sections)
end

--- The display of an item as chunks `{ {text, hl_group|nil}, ... }`: title, breadcrumb,
--- `path:line`, the further sections folded into the row, then (for related notes) the
--- reasons. A further section of an expanded note (`child`) shows its sections and line only,
--- indented under the note.
---@param item kbls.Item
---@return table[]
function M.chunks(item)
  if item.child then
    local heading = #item.sections > 0 and table.concat(item.sections, M.SEP) or item.title
    return {
      { "  ", nil },
      { M.SEP:sub(2) .. heading, M.hl.breadcrumb },
      { "  ", nil },
      { (":%d"):format(item.lnum), M.hl.path },
    }
  end
  local chunks = { { item.title, M.hl.title } }
  if #item.sections > 0 then
    chunks[#chunks + 1] = { M.SEP .. table.concat(item.sections, M.SEP), M.hl.breadcrumb }
  end
  local where = item.modified and item.relpath or ("%s:%d"):format(item.relpath, item.lnum)
  chunks[#chunks + 1] = { "  ", nil }
  chunks[#chunks + 1] = { where, M.hl.path }
  local more = M.more_label(item)
  if more ~= "" then
    chunks[#chunks + 1] = { "  ", nil }
    chunks[#chunks + 1] = { more, M.hl.more }
  end
  if #item.reasons > 0 then
    chunks[#chunks + 1] = { "  ", nil }
    chunks[#chunks + 1] = { table.concat(item.reasons, "; "), M.hl.reason }
  end
  local info = M.note_info(item)
  if info ~= "" then
    chunks[#chunks + 1] = { "  ", nil }
    chunks[#chunks + 1] = { info, M.hl.reason }
  end
  return chunks
end

--- The one-line display of an item with its highlights.
---@param item kbls.Item
---@return string display
---@return table highlights `{ { {start, end}, group }, ... }`, 0-based byte columns, end exclusive
function M.display(item)
  local text, highlights, col = {}, {}, 0
  for _, chunk in ipairs(M.chunks(item)) do
    text[#text + 1] = chunk[1]
    if chunk[2] then
      highlights[#highlights + 1] = { { col, col + #chunk[1] }, chunk[2] }
    end
    col = col + #chunk[1]
  end
  return table.concat(text), highlights
end

--- The display string only (for `vim.ui.select`'s `format_item`).
---@param item kbls.Item
---@return string
function M.format_item(item)
  return (M.display(item))
end

--- The text pickers filter on.
---@param item kbls.Item
---@return string
function M.ordinal(item)
  return M.label(item) .. " " .. item.relpath
end

--- Where a previewer should show an item: the file, the line to scroll to and the range to
--- highlight (1-based, inclusive).
---@param item kbls.Item
---@return {filename: string, lnum: integer, end_lnum: integer}
function M.preview_target(item)
  return { filename = item.filename, lnum = item.lnum, end_lnum = item.end_lnum }
end

--- Drop the hits of one note (the server already leaves the note out of `kb/related`; this keeps
--- the promise even for a symlinked path).
---@param hits table[]
---@param uri string
---@return table[]
function M.exclude_uri(hits, uri)
  local function key(u)
    local ok, path = pcall(vim.uri_to_fname, u)
    if not ok then
      return u
    end
    return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
  end
  local self = key(uri)
  return vim.tbl_filter(function(hit)
    return key(hit.uri) ~= self
  end, hits or {})
end

return M
