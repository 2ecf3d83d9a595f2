-- The Telescope extension against telescope.nvim + plenary.nvim checkouts
-- (KBLS_TELESCOPE_PATH, KBLS_PLENARY_PATH), with an in-process fake server.
local clients = require("kbls.lsp.clients")
local fake = require("helpers.fake_server")
local picker_fixture = require("helpers.picker_fixture")
local open_picker = require("helpers.telescope")

local wait = picker_fixture.wait

local picker, result_lines = open_picker.picker, open_picker.result_lines

--- Wait for a picker showing `rows` results; returns it and its prompt buffer.
local function wait_rows(what, rows)
  local p, b
  wait(what, function()
    p, b = picker()
    return p ~= nil and #result_lines(p) == rows
  end)
  return p, b
end

describe("telescope extension", function()
  local root, server, fixture
  setup(function()
    vim.cmd("runtime! plugin/telescope.lua")
    -- room for the preview window (telescope hides it below 120 columns)
    vim.o.columns, vim.o.lines = 200, 60
  end)

  before_each(function()
    fixture = picker_fixture.start("telescope")
    root, server = fixture.root, fixture.server
  end)

  after_each(function()
    local p, b = picker()
    if p then
      require("telescope.actions").close(b)
    end
    vim.wait(100) -- let scheduled previews finish before the files go away
    picker_fixture.stop(fixture)
  end)

  it("loads through telescope's extension manager", function()
    local telescope = require("telescope")
    telescope.setup({ extensions = { kbls = { layout_strategy = "vertical" } } })
    local ext = telescope.load_extension("kbls")
    assert.is_function(ext.search)
    assert.is_function(ext.related)
    assert.is_function(require("telescope._extensions")._health.kbls)
  end)

  it("search: live results from kb/search, then <CR> opens the file at the chunk's line", function()
    require("telescope").load_extension("kbls")
    require("telescope").extensions.kbls.search({ query = "alpha" })
    local p
    wait("picker with results", function()
      p = picker()
      return p ~= nil and #result_lines(p) == 2
    end)
    assert.equals(1, #server.of("kb/search"))
    assert.equals("alpha", server.of("kb/search")[1].params.query)
    local text = table.concat(result_lines(p), "\n")
    assert.matches("Alpha › First  a.md:5  snippet of Alpha", text, 1, true) -- the snippet too
    assert.matches("Beta › Second  b.md:20", text, 1, true)

    -- typing a new query sends a new kb/search
    local _, b = picker()
    vim.api.nvim_buf_set_lines(b, 0, -1, false, { p.prompt_prefix .. "gamma" })
    wait("re-query", function()
      return #result_lines(p) == 1 and table.concat(result_lines(p)):find("Gamma", 1, true) ~= nil
    end)
    assert.equals("gamma", server.of("kb/search")[#server.of("kb/search")].params.query)

    require("telescope.actions").select_default(b)
    wait("file opened", function()
      return vim.api.nvim_buf_get_name(0) == root .. "/c.md"
    end)
    assert.equals(30, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it(":Telescope kbls with no sub-command opens the live search", function()
    require("telescope").load_extension("kbls")
    vim.cmd("Telescope kbls")
    -- an empty prompt lists the notes
    local p, b = wait_rows("picker listing the notes", 2)
    assert.same({ limit = 200 }, server.of("kb/notes")[1].params)
    assert.equals(0, #server.of("kb/search"))
    local listed = table.concat(result_lines(p), "\n")
    assert.matches(
      "Gamma  c.md  " .. os.date("%Y-%m-%d", 1764500000) .. "  #greek  snippet of Gamma",
      listed,
      1,
      true
    )
    vim.api.nvim_buf_set_lines(b, 0, -1, false, { p.prompt_prefix .. "gamma" })
    wait("results", function()
      return #result_lines(p) == 1 and table.concat(result_lines(p)):find("Gamma", 1, true) ~= nil
    end)
    assert.equals("gamma", server.of("kb/search")[#server.of("kb/search")].params.query)
  end)

  it("tags: lists tags with counts; <CR> opens the search filtered by the tag", function()
    require("telescope").load_extension("kbls")
    vim.cmd("Telescope kbls tags")
    local p, b = wait_rows("tag picker", 2)
    local text = table.concat(result_lines(p), "\n")
    assert.matches("greek (2)", text, 1, true)
    assert.matches("first (1)", text, 1, true)
    assert.equals("greek", require("telescope.actions.state").get_selected_entry().value.name)
    require("telescope.actions").select_default(b)
    wait("the search of the tag", function()
      p, b = picker()
      return p ~= nil and p.prompt_title == "kbls #greek" and #result_lines(p) == 2
    end)
    assert.same({ limit = 200, filters = { tags = { "greek" } } }, server.of("kb/notes")[1].params)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, { p.prompt_prefix .. "gamma" })
    wait("a search within the tag", function()
      return #server.of("kb/search") > 0 and #result_lines(p) == 1
    end)
    assert.same({ tags = { "greek" } }, server.of("kb/search")[#server.of("kb/search")].params.filters)
  end)

  it("search: opened while the index loads, shows the state and re-runs when it is ready", function()
    require("telescope").load_extension("kbls")
    fixture.index_state = "loading"
    require("telescope").extensions.kbls.search({ query = "alpha" })
    local p
    wait("the loading state in the results title", function()
      p = picker()
      local border = p and p.layout and p.layout.results and p.layout.results.border
      if not (border and border.bufnr and vim.api.nvim_buf_is_valid(border.bufnr)) then
        return false
      end
      local top = vim.api.nvim_buf_get_lines(border.bufnr, 0, 1, false)[1] or ""
      return top:find("index loading", 1, true) ~= nil
    end)
    assert.equals(0, #result_lines(p))
    assert.equals(1, #server.of("kb/search"))
    fixture.index_state = "ready"
    server.notify("kb/indexStatus", { state = "ready", pending = 0, files = 3, chunks = 6 })
    wait("results once ready", function()
      return #result_lines(p) == 2
    end)
    assert.equals(2, #server.of("kb/search"))
    assert.equals("alpha", server.of("kb/search")[2].params.query)
    local top = vim.api.nvim_buf_get_lines(p.layout.results.border.bufnr, 0, 1, false)[1]
    assert.is_nil(top:find("loading", 1, true), top)
  end)

  it("search: <C-l> inserts a link to the selected note where the cursor was", function()
    require("telescope").load_extension("kbls")
    local note = vim.api.nvim_get_current_buf()
    vim.api.nvim_win_set_cursor(0, { 1, 5 })
    require("telescope").extensions.kbls.search({ query = "beta" })
    local _, b = wait_rows("picker with results", 2)
    require("telescope.actions").move_selection_next(b)
    local map = vim.api.nvim_buf_call(b, function()
      return vim.fn.maparg("<C-L>", "i", false, true)
    end)
    assert.is_function(map.callback)
    map.callback()
    wait("link inserted", function()
      return vim.api.nvim_buf_get_lines(note, 0, 1, false)[1] == "line 1[Beta](b.md)"
    end)
    assert.is_nil(picker())
  end)

  it("search: a request in flight is cancelled when the prompt moves on", function()
    require("telescope").load_extension("kbls")
    -- a slow server: every answer takes 400 ms
    local slow = fake.new({
      delay = 400,
      answer = function(_, params)
        local name = params.query:find("gamma") and "Gamma" or "Alpha"
        return { hits = { fake.hit(root, name == "Gamma" and "c.md" or "a.md", name, name, 0, 1) } }
      end,
    })
    for _, c in ipairs(clients.list()) do
      c:stop(true)
    end
    require("kbls").setup({ cmd = slow.cmd, picker = "telescope", search = { debounce = 10 } })
    clients.start(0)
    wait("slow client", function()
      local c = clients.list(0)[1]
      return c and c.initialized
    end)
    local started = vim.uv.hrtime()
    require("telescope").extensions.kbls.search({ query = "alpha" })
    local p, b
    wait("first request", function()
      p, b = picker()
      return p ~= nil and #slow.of("kb/search") == 1
    end)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, { p.prompt_prefix .. "gamma" })
    wait("gamma results", function()
      return table.concat(result_lines(p), "\n"):find("Gamma", 1, true) ~= nil
    end)
    local elapsed = (vim.uv.hrtime() - started) / 1e6
    assert.equals(2, #slow.of("kb/search"))
    assert.same({ slow.of("kb/search")[1].id }, slow.cancelled)
    assert.equals("gamma", slow.of("kb/search")[2].params.query)
    -- the first answer was not waited for: one slow answer, not two
    assert.is_true(elapsed < 800, ("took %d ms"):format(elapsed))
  end)

  it("search: <C-v> opens the entry in a vertical split", function()
    require("telescope").load_extension("kbls")
    vim.cmd("Telescope kbls search query=beta")
    local _, b = wait_rows("picker with results", 2)
    local wins = #vim.api.nvim_tabpage_list_wins(0)
    -- move to the second entry (Beta) and use the <C-v> action
    require("telescope.actions").move_selection_next(b)
    local entry = require("telescope.actions.state").get_selected_entry()
    require("telescope.actions").select_vertical(b)
    wait("vsplit", function()
      return vim.api.nvim_buf_get_name(0) == entry.filename
    end)
    assert.equals(entry.lnum, vim.api.nvim_win_get_cursor(0)[1])
    assert.is_true(#vim.api.nvim_tabpage_list_wins(0) >= 2, "windows before: " .. wins)
  end)

  it("search: the previewer shows the file scrolled to the chunk, highlighted", function()
    require("telescope").load_extension("kbls")
    require("telescope").extensions.kbls.search({ query = "beta" })
    local p, b = wait_rows("picker with results", 2)
    require("telescope.actions").move_selection_next(b)
    local entry = require("telescope.actions.state").get_selected_entry()
    assert.equals("b.md", entry.value.relpath)
    local previewer = p.previewer
    wait("preview", function()
      local st = previewer and previewer.state
      return st
        and st.bufnr
        and vim.api.nvim_buf_is_valid(st.bufnr)
        and vim.api.nvim_buf_line_count(st.bufnr) == 40
        and #vim.api.nvim_buf_get_extmarks(st.bufnr, -1, 0, -1, { details = true }) > 0
    end)
    local st = previewer.state
    local marks = vim.api.nvim_buf_get_extmarks(st.bufnr, -1, 0, -1, { details = true })
    local lines = {}
    for _, m in ipairs(marks) do
      if m[4].hl_group == "TelescopePreviewLine" then
        lines[m[2] + 1] = true
      end
    end
    for l = 20, 25 do
      assert.is_true(lines[l] == true, "line " .. l .. " not highlighted")
    end
    assert.is_nil(lines[19])
    assert.is_nil(lines[26])
    local cursor = vim.api.nvim_win_get_cursor(st.winid)[1]
    assert.is_true(cursor >= 20 and cursor <= 25, "preview cursor at " .. cursor)
  end)

  it("related: lists the related notes, never the buffer", function()
    require("telescope").load_extension("kbls")
    vim.api.nvim_win_set_cursor(0, { 6, 0 })
    vim.cmd("Telescope kbls related")
    local p
    wait("picker", function()
      p = picker()
      return p ~= nil and #result_lines(p) == 1
    end)
    assert.matches("Beta › Second  b.md:20  links here", result_lines(p)[1], 1, true)
    assert.same({ line = 5, character = 0 }, server.of("kb/related")[1].params.position)
  end)

  --- The callback of a mapping of the prompt (insert mode).
  local function mapping(b, lhs)
    local map = vim.api.nvim_buf_call(b, function()
      return vim.fn.maparg(lhs, "i", false, true)
    end)
    assert.is_function(map.callback, lhs .. " is not mapped")
    return map.callback
  end

  it("search: one row per note; <C-e> lists its further sections under it, <C-e> again folds them", function()
    require("telescope").load_extension("kbls")
    require("telescope").extensions.kbls.search({ query = "undo" })
    local p, b = wait_rows("one row per note", 2)
    assert.is_true(server.of("kb/search")[1].params.groupByFile)
    assert.matches(
      "Alpha › First  a.md:5  +2 more sections  snippet of Alpha",
      table.concat(result_lines(p), "\n"),
      1,
      true
    )
    mapping(b, "<C-E>")()
    wait("the sections of a.md under its row", function()
      return #result_lines(p) == 4
    end)
    local asked = server.of("kb/search")[2].params
    assert.same({ "/a.md" }, asked.filters.paths)
    assert.is_false(asked.groupByFile)
    assert.equals("undo", asked.query)
    local text = table.concat(result_lines(p), "\n")
    assert.matches("Alpha › First  a.md:5  2 more sections below", text, 1, true)
    assert.matches("  › Undo a push  :30", text, 1, true)
    assert.matches("  › Reset  :15", text, 1, true)
    assert.equals(2, #server.of("kb/search")) -- the note's hits were not asked for again
    wait("the note's row still selected", function()
      local e = require("telescope.actions.state").get_selected_entry()
      return e and e.value.relpath == "a.md" and not e.value.child
    end)
    -- on screen, top to bottom: the next note, the note, its sections best first (Telescope's
    -- default layout puts the first result at the bottom, by the prompt)
    local top_down = {}
    for i = 4, 1, -1 do
      top_down[#top_down + 1] = p.manager:get_entry(i).value.sections[1]
    end
    assert.same({ "Second", "First", "Undo a push", "Reset" }, top_down)
    assert.is_true(p.manager:get_entry(1).value.child and p.manager:get_entry(2).value.child)
    local lines = result_lines(p)
    assert.matches("Alpha › First", lines[#lines - 2], 1, true)
    assert.matches("› Undo a push", lines[#lines - 1], 1, true)
    -- <C-e> on a section folds its note again
    require("telescope.actions").move_selection_next(b)
    assert.is_true(require("telescope.actions.state").get_selected_entry().value.child)
    mapping(b, "<C-E>")()
    wait("folded", function()
      return #result_lines(p) == 2
    end)
    assert.equals(2, #server.of("kb/search"))
    wait("the note's row selected again", function()
      local e = require("telescope.actions.state").get_selected_entry()
      return e and e.value.relpath == "a.md" and not e.value.child
    end)
  end)

  it("search: <CR> on a section puts the cursor on its first line and shows the whole section", function()
    require("telescope").load_extension("kbls")
    vim.cmd("split")
    vim.cmd("resize 10")
    local win = vim.api.nvim_get_current_win()
    require("telescope").extensions.kbls.search({ query = "undo" })
    local p, b = wait_rows("rows", 2)
    mapping(b, "<C-E>")()
    wait("sections", function()
      return #result_lines(p) == 4
    end)
    wait("the note's row selected", function()
      local e = require("telescope.actions.state").get_selected_entry()
      return e and e.value.relpath == "a.md" and not e.value.child
    end)
    require("telescope.actions").move_selection_next(b)
    assert.equals("Undo a push", require("telescope.actions.state").get_selected_entry().value.sections[1])
    require("telescope.actions").select_default(b)
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

  it("search: the preview is titled after kbls", function()
    require("telescope").load_extension("kbls")
    require("telescope").extensions.kbls.search({ query = "alpha" })
    local p = wait_rows("rows", 2)
    local title
    wait("the preview's title", function()
      local border = p.layout and p.layout.preview and p.layout.preview.border
      if not (border and border.bufnr and vim.api.nvim_buf_is_valid(border.bufnr)) then
        return false
      end
      title = vim.api.nvim_buf_get_lines(border.bufnr, 0, 1, false)[1] or ""
      return p.previewer.state and p.previewer.state.bufnr ~= nil and title:find("kbls", 1, true) ~= nil
    end)
    assert.matches("kbls preview", title, 1, true)
    assert.is_nil(title:find("Grep", 1, true), title)
  end)

  it(":KbSearch uses telescope when it is the picker", function()
    vim.cmd("KbSearch alpha")
    local p
    wait("picker", function()
      p = picker()
      return p ~= nil and #result_lines(p) == 2
    end)
    assert.equals("alpha", server.of("kb/search")[1].params.query)
  end)
end)
