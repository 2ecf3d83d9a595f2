-- Integration: how results read, against the real `kbls serve` ($KBLS_SERVER), with
-- `vim.ui.select`: one row per note and a note's further sections on demand (the note under a
-- folder with a space and a name with `[`, `#`, `%` and an accent, which the path filter of the
-- sections request must escape), section rows back with `group_by_file = false`, a chosen
-- section opened with its first line under the cursor and the whole section in view, and
-- `:KbRelatedPanel` in an 80-column Neovim: score first, the server's reasons, nothing cut.
local clients = require("kbls.lsp.clients")
local config = require("kbls.config")
local kbls = require("kbls")
local notes = require("helpers.notes")
local panel = require("kbls.panel")
local real_server = require("helpers.real_server")
local request = require("kbls.lsp.request")
local sections = require("kbls.pickers.sections")
local spec_clients = require("helpers.clients")
local ws = require("helpers.workspace")

local SERVER = os.getenv("KBLS_SERVER") or "kbls"
local REQUEST_TIMEOUT = 20000

local NOTE, QUERY = notes.GIT_NOTE, notes.GIT_QUERY

local function paragraph(...)
  return table.concat({ ... }, " ")
end

local NOTES = {
  [NOTE] = notes.GIT_TEXT,
  ["git/branches.md"] = table.concat({
    "# Branches",
    "",
    paragraph(
      "A git branch is a movable pointer to a commit. Create one with git switch -c, merge it",
      "back with git merge, delete it with git branch -d once it is merged."
    ),
    "",
  }, "\n"),
  ["cooking/sourdough.md"] = table.concat({
    "# Sourdough bread",
    "",
    paragraph(
      "Sourdough is leavened by a starter: a fermented mix of flour and water full of wild",
      "yeast. Feed the starter and wait until it doubles before mixing the dough. See",
      "[yeast bread](bread.md) for the basic method. #baking"
    ),
    "",
  }, "\n"),
  ["cooking/bread.md"] = table.concat({
    "# Yeast bread",
    "",
    paragraph(
      "Bread dough is flour, water, salt and yeast. Knead the dough, let it rise until doubled,",
      "shape the loaf and bake it in a hot oven. Sourdough replaces the yeast with a starter. #baking"
    ),
    "",
  }, "\n"),
}

--- Run a search with `vim.ui.select` answering through `choose(rows, formatted)` (the row to
--- choose, or nil); returns every list shown, formatted.
local function search(query, choose)
  local shown, asked = {}, 0
  local orig = vim.ui.select
  vim.ui.select = function(rows, opts, cb)
    asked = asked + 1
    local formatted = vim.tbl_map(opts.format_item, rows)
    shown[#shown + 1] = { rows = rows, text = formatted, prompt = opts.prompt }
    cb(choose(rows, formatted, asked))
  end
  local ok, err = pcall(kbls.search, query)
  return shown, function()
    vim.ui.select = orig
    assert(ok, err)
  end
end

describe("results against the real daemon", function()
  local root, cwd

  setup(function()
    assert(vim.fn.executable(SERVER) == 1, ("kbls server not found at %q (set KBLS_SERVER)"):format(SERVER))
    root = ws.create(vim.tbl_extend("force", NOTES, { [".kbls.yaml"] = ws.config() }))
    cwd = vim.fn.getcwd()
    vim.cmd("cd " .. vim.fn.fnameescape(root))
    kbls.setup({ cmd = { SERVER, "serve" }, picker = "select" })
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/git/branches.md"))
    real_server.ready_client(4)
  end)

  teardown(function()
    panel.close()
    spec_clients.stop_all()
    if cwd then
      vim.cmd("cd " .. vim.fn.fnameescape(cwd))
    end
    ws.remove(root)
  end)

  it("one row per note; the note's '+N more sections' row lists its sections, and one opens", function()
    vim.cmd("silent! only")
    vim.cmd("resize 12")
    local win = vim.api.nvim_get_current_win()
    local chosen
    local shown, done = search(QUERY, function(rows, _, asked)
      if asked == 1 then
        for _, row in ipairs(rows) do
          if row.more_of and row.more_of.relpath == NOTE then
            return row
          end
        end
        return nil
      end
      chosen = rows[2]
      return chosen
    end)
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        return vim.api.nvim_buf_get_name(0) == root .. "/" .. NOTE
      end, 20),
      "nothing opened; shown: "
        .. vim.inspect(vim.tbl_map(function(s)
          return s.text
        end, shown))
    )
    done()
    local first = shown[1]
    local listed_notes, seen = {}, {}
    for _, row in ipairs(first.rows) do
      if not row.more_of then
        assert.is_nil(seen[row.relpath], "a note listed twice: " .. vim.inspect(first.text))
        seen[row.relpath] = true
        listed_notes[#listed_notes + 1] = row
      end
    end
    assert.equals(NOTE, listed_notes[1].relpath, vim.inspect(first.text))
    local more = listed_notes[1].more
    assert.is_true(more >= 2, "sections folded into the note's row: " .. more)
    assert.matches(("+%d more sections"):format(more), first.text[1], 1, true)
    assert.equals(("  +%d more sections of Rewriting git history"):format(more), first.text[2])
    -- the note's sections: its row's own first, then the `more` others, all of that note
    local listed = shown[2].rows
    assert.equals(more + 1, #listed, vim.inspect(shown[2].text))
    for _, row in ipairs(listed) do
      assert.equals(root .. "/" .. NOTE, row.filename)
    end
    assert.equals(listed_notes[1].lnum, listed[1].lnum)
    assert.is_true(listed[2].child)
    -- opened at the chosen section: cursor on its first line, normal mode, all of it in view
    assert.same({ chosen.lnum, 0 }, vim.api.nvim_win_get_cursor(win))
    assert.equals("n", vim.api.nvim_get_mode().mode)
    assert.is_true(vim.fn.line("w0") <= chosen.lnum and vim.fn.line("w$") >= chosen.end_lnum)
    assert.matches("^## ", vim.api.nvim_buf_get_lines(0, chosen.lnum - 1, chosen.lnum, false)[1])
  end)

  it("a note's sections asked for by path (for more than a hit carries) are that note's", function()
    local client = clients.list(0)[1]
    local grouped = request.sync(client, "kb/search", require("kbls.params").search(QUERY), REQUEST_TIMEOUT)
    local hit = grouped.hits[1]
    assert.equals(NOTE, hit.path)
    local item = require("kbls.items").item(hit)
    local p = sections.params(item, QUERY)
    assert.same({ "/My Notes/Über \\[draft\\] #1 50%.md" }, p.filters.paths)
    local narrowed = request.sync(client, "kb/search", p, REQUEST_TIMEOUT)
    assert.is_true(narrowed ~= nil and #narrowed.hits >= hit.more + 1, vim.inspect(narrowed))
    for _, h in ipairs(narrowed.hits) do
      assert.equals(NOTE, h.path)
    end
    local children = sections.children(item, narrowed.hits)
    assert.equals(hit.more, #children)
  end)

  it("search.group_by_file = false brings back a row for every matching section", function()
    config.options.search.group_by_file = false
    local shown, done = search(QUERY, function()
      return nil
    end)
    config.options.search.group_by_file = true
    assert.is_true(vim.wait(REQUEST_TIMEOUT, function()
      return shown[1] ~= nil
    end, 20))
    done()
    local of_note = vim.tbl_filter(function(row)
      return row.relpath == NOTE
    end, shown[1].rows)
    assert.is_true(#of_note >= 3, vim.inspect(shown[1].text))
    for _, text in ipairs(shown[1].text) do
      assert.is_nil(text:find("more section", 1, true), text)
    end
  end)

  it(":KbRelatedPanel at 80 columns: the score first, the server's reasons, nothing cut", function()
    vim.o.columns = 80
    vim.cmd("silent! only")
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/cooking/sourdough.md"))
    vim.api.nvim_win_set_cursor(0, { 3, 0 })
    local client = clients.list(0)[1]
    local related = request.sync(client, "kb/related", {
      uri = vim.uri_from_fname(root .. "/cooking/sourdough.md"),
      position = { line = 2, character = 0 },
      limit = config.options.related.limit,
    }, REQUEST_TIMEOUT)
    assert.is_true(related ~= nil and #related.hits > 0, vim.inspect(related))
    vim.cmd("KbRelatedPanel")
    local lines = {}
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        lines = vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false)
        return table.concat(lines, "\n"):find("cooking/bread.md:", 1, true) ~= nil
      end, 20),
      table.concat(lines, "\n")
    )
    local width = vim.api.nvim_win_get_width(panel.state.win)
    assert.is_true(width <= 40, "panel width " .. width)
    for i, line in ipairs(lines) do
      assert.is_true(vim.fn.strdisplaywidth(line) <= width, ("line %d is cut: %q"):format(i, line))
    end
    local text = table.concat(vim.list_slice(lines, 3), "\n")
    local flat = text:gsub("\n%s+", " ")
    for _, hit in ipairs(related.hits) do
      local head = ("%.2f  %s"):format(hit.score, hit.title)
      assert.matches("\n" .. vim.pesc(head), "\n" .. text)
      local reasons = table.concat(hit.reasons, "; ")
      assert.matches(reasons, flat, 1, true)
      assert.is_true(flat:find(head, 1, true) < flat:find(reasons, 1, true))
    end
    vim.cmd("KbRelatedPanel")
  end)
end)
