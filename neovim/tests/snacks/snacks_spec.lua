-- The snacks.nvim picker against a real snacks.nvim checkout (KBLS_SNACKS_PATH), with an
-- in-process fake server: live search, preview, opening a hit, related notes, and "auto".
local picker_fixture = require("helpers.picker_fixture")
local pickers = require("kbls.pickers")

local wait = picker_fixture.wait

local function active()
  return require("snacks.picker.core.picker").get()[1]
end

--- The row snacks shows for an item (the picker's format, resolved by snacks).
local function row(picker, item)
  return table.concat(vim.tbl_map(function(chunk)
    return chunk[1]
  end, picker.format(item, picker)))
end

local function texts(picker)
  return vim.tbl_map(function(item)
    return item.kbls.title
  end, picker:items())
end

--- Wait for the active picker to hold `count` items; returns it.
local function wait_items(what, count)
  local p
  wait(what, function()
    p = active()
    return p ~= nil and #p:items() == count
  end)
  return p
end

--- Wait until the active picker shows `count` rows in its list window (rendered, so a move of
--- the cursor is not undone by a render still to come); returns it.
local function wait_rendered(what, count)
  local p
  wait(what, function()
    p = active()
    if not (p and #p:items() == count and not p:is_active() and p.list.win.buf) then
      return false
    end
    local shown = vim.tbl_filter(function(line)
      return vim.trim(line) ~= ""
    end, vim.api.nvim_buf_get_lines(p.list.win.buf, 0, -1, false))
    return #shown == count
  end)
  return p
end

describe("snacks picker", function()
  local root, server, fixture
  setup(function()
    vim.o.columns, vim.o.lines = 200, 60
    require("snacks").setup({})
  end)

  before_each(function()
    fixture = picker_fixture.start("auto")
    root, server = fixture.root, fixture.server
  end)

  after_each(function()
    local p = active()
    if p then
      p:close()
    end
    vim.wait(100)
    picker_fixture.stop(fixture)
  end)

  it("is what picker = 'auto' chooses without telescope", function()
    assert.is_false(require("kbls.pickers.telescope").available())
    assert.is_true(require("kbls.pickers.snacks").available())
    assert.equals("snacks", pickers.name("auto"))
  end)

  it(":checkhealth kbls reports the picker it found and uses", function()
    local text = picker_fixture.health_text()
    assert.matches("OK snacks.nvim found", text, 1, true)
    assert.matches("telescope.nvim not found", text, 1, true)
    assert.matches('picker = "auto": :KbSearch and :KbRelated use snacks.nvim', text, 1, true)
  end)

  it(":KbSearch opens a live search; typing re-queries; <CR> opens the hit at its line", function()
    vim.cmd("KbSearch alpha")
    local p = wait_items("picker with results", 2)
    assert.equals("alpha", server.of("kb/search")[1].params.query)
    assert.same({ "Alpha", "Beta" }, texts(p))
    -- the rows show title, breadcrumb and path:line
    assert.equals("Alpha › First  a.md:5  snippet of Alpha", row(p, p:items()[1]))

    -- type into the prompt: snacks re-runs a live finder on TextChanged
    vim.api.nvim_buf_set_lines(p.input.win.buf, 0, -1, false, { "gamma" })
    vim.api.nvim_exec_autocmds("TextChanged", { buffer = p.input.win.buf })
    wait("re-query", function()
      return #p:items() == 1 and p:items()[1].kbls.title == "Gamma"
    end)
    assert.equals("gamma", server.of("kb/search")[#server.of("kb/search")].params.query)

    p:action("confirm")
    wait("file opened", function()
      return vim.api.nvim_buf_get_name(0) == root .. "/c.md"
    end)
    assert.equals(30, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("an empty prompt lists the notes", function()
    vim.cmd("KbSearch")
    local p = wait_items("picker listing the notes", 2)
    assert.same({ limit = 200 }, server.of("kb/notes")[1].params)
    assert.same({ "Gamma", "Alpha" }, texts(p)) -- most recent first
    assert.equals(
      "Gamma  c.md  " .. os.date("%Y-%m-%d", 1764500000) .. "  #greek  snippet of Gamma",
      row(p, p:items()[1])
    )
  end)

  it(":KbTags lists tags with counts; confirming one opens the search of its notes", function()
    vim.cmd("KbTags")
    local p = wait_items("tag picker", 2)
    assert.same(
      { "greek (2)", "first (1)" },
      vim.tbl_map(function(item)
        return row(p, item)
      end, p:items())
    )
    p:action("confirm")
    wait("the search of the tag", function()
      p = active()
      return p ~= nil and (p.title or ""):find("kbls #greek", 1, true) ~= nil and #p:items() == 2
    end)
    assert.same({ limit = 200, filters = { tags = { "greek" } } }, server.of("kb/notes")[1].params)
  end)

  it("opened while the index loads, shows the state and re-runs when it is ready", function()
    fixture.index_state = "loading"
    require("kbls").search("alpha")
    local p
    wait("the loading state in the title", function()
      p = active()
      return p ~= nil
        and #server.of("kb/search") == 1
        and (p.title or ""):find("index loading", 1, true) ~= nil
    end)
    assert.equals(0, #p:items())
    fixture.index_state = "ready"
    server.notify("kb/indexStatus", { state = "ready", pending = 0, files = 3, chunks = 6 })
    wait("results once ready", function()
      return #p:items() == 2
    end)
    assert.equals(2, #server.of("kb/search"))
    assert.equals("kbls search", p.title)
  end)

  it("<C-l> inserts a link to the selected note where the cursor was", function()
    local note = vim.api.nvim_get_current_buf()
    vim.api.nvim_win_set_cursor(0, { 1, 5 })
    require("kbls").search("beta")
    local p = wait_items("picker with results", 2)
    p.list:move(2, true)
    p:action("kbls_insert_link")
    wait("link inserted", function()
      return vim.api.nvim_buf_get_lines(note, 0, 1, false)[1] == "line 1[Beta](b.md)"
    end)
    assert.is_nil(active())
  end)

  it("previews the file scrolled to the chunk with the chunk highlighted", function()
    require("kbls").search("beta")
    local p = wait_items("picker with results", 2)
    p.list:move(2, true)
    wait("preview of b.md", function()
      local buf = p.preview and p.preview.win and p.preview.win.buf
      return buf
        and vim.api.nvim_buf_is_valid(buf)
        and vim.api.nvim_buf_line_count(buf) == 40
        and p:current().kbls.relpath == "b.md"
        and #vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true }) > 0
    end)
    local buf = p.preview.win.buf
    local marks = vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })
    local span
    for _, m in ipairs(marks) do
      if m[4].hl_group == "SnacksPickerSearch" then
        span = { m[2] + 1, m[4].end_row }
      end
    end
    assert.same({ 20, 25 }, span)
    local cursor = vim.api.nvim_win_get_cursor(p.preview.win.win)[1]
    assert.equals(20, cursor)
  end)

  it("one row per note; <C-e> lists its further sections under it, <C-e> again folds them", function()
    require("kbls").search("undo")
    local p = wait_items("one row per note", 2)
    assert.is_true(server.of("kb/search")[1].params.groupByFile)
    assert.equals("Alpha › First  a.md:5  +2 more sections  snippet of Alpha", row(p, p:items()[1]))
    p:action("kbls_expand")
    wait_rendered("the sections of a.md under its row", 4)
    local asked = server.of("kb/search")[2].params
    assert.same({ "/a.md" }, asked.filters.paths)
    assert.is_false(asked.groupByFile)
    assert.same(
      {
        "Alpha › First  a.md:5  2 more sections below  snippet of Alpha",
        "  › Undo a push  :30  snippet of Alpha",
        "  › Reset  :15  snippet of Alpha",
        "Beta › Second  b.md:20  snippet of Beta",
      },
      vim.tbl_map(function(item)
        return row(p, item)
      end, p:items())
    )
    assert.equals(2, #server.of("kb/search"))
    assert.equals("a.md", p:current().kbls.relpath)
    assert.is_nil(p:current().kbls.child)
    -- <C-e> on a section folds its note again, and the note's row is selected
    p.list:move(2, true)
    assert.is_true(p:current().kbls.child)
    p:action("kbls_expand")
    wait("folded", function()
      return #p:items() == 2 and p:current() ~= nil and p:current().kbls.relpath == "a.md"
    end)
    assert.equals(2, #server.of("kb/search"))
  end)

  it("<CR> on a section puts the cursor on its first line and shows the whole section", function()
    vim.cmd("split")
    vim.cmd("resize 10")
    local win = vim.api.nvim_get_current_win()
    require("kbls").search("undo")
    local p = wait_items("rows", 2)
    p:action("kbls_expand")
    wait_rendered("sections", 4)
    p.list:move(2, true)
    assert.equals("Undo a push", p:current().kbls.sections[1])
    p:action("confirm")
    wait("opened", function()
      return vim.api.nvim_get_current_win() == win and vim.fn.mode() == "n" and vim.fn.line(".") == 30
    end)
    assert.same({ 30, 0 }, vim.api.nvim_win_get_cursor(win))
    local top, bottom = vim.fn.line("w0"), vim.fn.line("w$")
    assert.is_true(
      top <= 30 and bottom >= 37,
      ("the window shows %d-%d of the section 30-37"):format(top, bottom)
    )
  end)

  it(":KbRelated lists the related notes with their reasons", function()
    vim.api.nvim_win_set_cursor(0, { 6, 0 })
    vim.cmd("KbRelated")
    local p = wait_items("picker", 1)
    assert.equals("b.md", p:items()[1].kbls.relpath)
    assert.equals("Beta › Second  b.md:20  links here  snippet of Beta", row(p, p:items()[1]))
    assert.same({ line = 5, character = 0 }, server.of("kb/related")[1].params.position)
  end)
end)
