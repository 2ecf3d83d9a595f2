-- The fzf-lua picker against a real fzf-lua checkout (KBLS_FZF_LUA_PATH) and the `fzf` binary,
-- with an in-process fake server: live search in fzf's terminal, re-query as one types,
-- opening a hit at its line, related notes, and "auto".
local picker_fixture = require("helpers.picker_fixture")
local pickers = require("kbls.pickers")

local function wait(what, cond, timeout)
  assert(vim.wait(timeout or 10000, cond, 20), what)
end

--- The terminal buffer fzf runs in, and its text.
local function fzf_screen()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "terminal" and vim.bo[b].filetype == "fzf" then
      return b, table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
    end
  end
  return nil, ""
end

local function type_keys(buf, keys)
  vim.api.nvim_chan_send(vim.bo[buf].channel, keys)
end

local has_fzf = vim.fn.executable("fzf") == 1

describe("fzf-lua picker", function()
  local root, server, fixture
  setup(function()
    vim.o.columns, vim.o.lines = 200, 60
    if vim.v.servername == "" then
      vim.fn.serverstart() -- fzf's reload calls back into this Neovim over RPC
    end
  end)

  before_each(function()
    fixture = picker_fixture.start("auto", wait)
    root, server = fixture.root, fixture.server
  end)

  after_each(function()
    local buf = fzf_screen()
    if buf then
      pcall(type_keys, buf, "\027")
      vim.wait(300)
    end
    picker_fixture.stop(fixture)
  end)

  it("is what picker = 'auto' chooses without telescope and snacks", function()
    assert.is_false(require("kbls.pickers.telescope").available())
    assert.is_false(require("kbls.pickers.snacks").available())
    assert.equals("fzf-lua", pickers.name("auto"))
  end)

  it(":checkhealth kbls reports the picker it found and uses", function()
    local text = picker_fixture.health_text()
    assert.matches("OK fzf-lua found", text, 1, true)
    assert.matches("telescope.nvim not found", text, 1, true)
    assert.matches('picker = "auto": :KbSearch and :KbRelated use fzf-lua', text, 1, true)
  end)

  local function with_fzf(name, fn)
    if has_fzf then
      it(name, fn)
    else
      pending(name .. " (no `fzf` binary: apt-get install fzf)")
    end
  end

  with_fzf(":KbSearch shows live hits, re-queries as one types, <CR> opens the hit at its line", function()
    vim.cmd("KbSearch alpha")
    local buf, screen
    wait("fzf with results", function()
      buf, screen = fzf_screen()
      return screen:find("Beta › Second", 1, true) ~= nil
    end)
    assert.equals("alpha", server.of("kb/search")[1].params.query)
    -- the title first, the path after it (fzf shows the row, not the `path:line:col:` fzf-lua reads)
    assert.matches("> Alpha › First  a.md:5  snippet of Alpha", screen, 1, true)
    assert.matches("  Beta › Second  b.md:20  snippet of Beta", screen, 1, true)
    assert.is_nil(screen:find("a.md:5:1:", 1, true), screen)
    -- the builtin previewer shows the first hit's file at the chunk's first line
    local preview
    wait("preview", function()
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        local b = vim.api.nvim_win_get_buf(win)
        if
          b ~= buf
          and vim.api.nvim_win_get_config(win).relative ~= ""
          and vim.api.nvim_buf_line_count(b) == 40
        then
          preview = win
          return true
        end
      end
      return false
    end)
    assert.equals(5, vim.api.nvim_win_get_cursor(preview)[1])

    type_keys(buf, "\021gamma") -- ctrl-u clears the prompt, then type
    wait("re-query", function()
      screen = select(2, fzf_screen())
      return screen:find("Gamma", 1, true) ~= nil and screen:find("Beta", 1, true) == nil
    end)
    assert.equals("gamma", server.of("kb/search")[#server.of("kb/search")].params.query)

    type_keys(buf, "\r")
    wait("file opened", function()
      return vim.api.nvim_buf_get_name(0) == root .. "/c.md"
    end)
    assert.equals(30, vim.api.nvim_win_get_cursor(0)[1])
  end)

  with_fzf("an empty prompt lists the notes", function()
    vim.cmd("KbSearch")
    wait("fzf listing the notes", function()
      local screen = select(2, fzf_screen())
      return screen:find("Alpha", 1, true) ~= nil
    end)
    assert.same({ limit = 200 }, server.of("kb/notes")[1].params)
    local screen = select(2, fzf_screen())
    assert.matches("Gamma  c.md  " .. os.date("%Y-%m-%d", 1764500000) .. "  #greek", screen, 1, true)
    assert.is_true(screen:find("Gamma  c.md", 1, true) < screen:find("Alpha  a.md", 1, true), screen)
  end)

  with_fzf(":KbTags lists tags with counts; enter opens the search of its notes", function()
    vim.cmd("KbTags")
    local buf
    wait("fzf listing the tags", function()
      local screen
      buf, screen = fzf_screen()
      return screen:find("greek (2)", 1, true) ~= nil and screen:find("first (1)", 1, true) ~= nil
    end)
    vim.wait(200)
    type_keys(buf, "\r")
    wait("the search of the tag", function()
      local screen = select(2, fzf_screen())
      return #server.of("kb/notes") > 0 and screen:find("Gamma", 1, true) ~= nil
    end)
    assert.same({ limit = 200, filters = { tags = { "greek" } } }, server.of("kb/notes")[1].params)
  end)

  with_fzf("opened while the index loads, re-runs the query when it is ready", function()
    fixture.index_state = "loading"
    vim.cmd("KbSearch alpha")
    wait("first request", function()
      return #server.of("kb/search") >= 1 and fzf_screen() ~= nil
    end)
    vim.wait(200)
    local _, screen = fzf_screen()
    assert.is_nil(screen:find("Alpha", 1, true))
    local before = #server.of("kb/search")
    fixture.index_state = "ready"
    server.notify("kb/indexStatus", { state = "ready", pending = 0, files = 3, chunks = 6 })
    wait("results once ready", function()
      screen = select(2, fzf_screen())
      return screen:find("Beta › Second", 1, true) ~= nil
    end)
    assert.is_true(#server.of("kb/search") > before)
    assert.equals("alpha", server.of("kb/search")[#server.of("kb/search")].params.query)
  end)

  with_fzf("ctrl-l inserts a link to the chosen note where the cursor was", function()
    local note = vim.api.nvim_get_current_buf()
    vim.api.nvim_win_set_cursor(0, { 1, 5 })
    vim.cmd("KbSearch gamma")
    local buf
    wait("fzf with results", function()
      local screen
      buf, screen = fzf_screen()
      return screen:find("Gamma", 1, true) ~= nil
    end)
    type_keys(buf, "\012") -- ctrl-l
    wait("link inserted", function()
      return vim.api.nvim_buf_get_lines(note, 0, 1, false)[1] == "line 1[Gamma](c.md)"
    end)
  end)

  with_fzf("a row starts with the title, not the path", function()
    vim.o.columns = 100
    vim.cmd("KbSearch alpha")
    local screen
    wait("fzf with results", function()
      screen = select(2, fzf_screen())
      return screen:find("Beta", 1, true) ~= nil
    end)
    assert.matches("\n> Alpha › First", screen, 1, true)
    vim.o.columns = 200
  end)

  with_fzf("one row per note; ctrl-e lists its further sections under it, <CR> on one opens it", function()
    vim.cmd("split")
    vim.cmd("resize 10")
    local win = vim.api.nvim_get_current_win()
    vim.cmd("KbSearch undo")
    local buf, screen
    wait("one row per note", function()
      buf, screen = fzf_screen()
      return screen:find("+2 more sections", 1, true) ~= nil
    end)
    assert.is_true(server.of("kb/search")[1].params.groupByFile)
    assert.matches("> Alpha › First  a.md:5  +2 more sections  snippet of Alpha", screen, 1, true)
    vim.wait(200)
    type_keys(buf, "\005") -- ctrl-e
    wait("the sections of a.md under its row", function()
      screen = select(2, fzf_screen())
      return screen:find("› Undo a push  :30", 1, true) ~= nil
    end)
    assert.matches("Alpha › First  a.md:5  2 more sections below", screen, 1, true)
    assert.matches("› Reset  :15", screen, 1, true)
    local asked = vim.tbl_filter(function(r)
      return r.params.filters ~= nil
    end, server.of("kb/search"))
    assert.same({ "/a.md" }, asked[1].params.filters.paths)
    assert.is_false(asked[1].params.groupByFile)
    -- the cursor to the first section under the note, then open it
    local lines = vim.split(screen, "\n")
    local at, want
    for i, line in ipairs(lines) do
      if line:find("^>") then
        at = i
      end
      if line:find("Undo a push", 1, true) then
        want = i
      end
    end
    type_keys(buf, ("\014"):rep(want - at)) -- ctrl-n
    wait("the section selected", function()
      return select(2, fzf_screen()):find("> %s*› Undo a push") ~= nil
    end)
    type_keys(buf, "\r")
    wait("opened", function()
      return vim.api.nvim_get_current_win() == win and vim.api.nvim_buf_get_name(0) == root .. "/a.md"
    end)
    wait("normal mode at the section", function()
      return vim.fn.mode() == "n" and vim.fn.line(".") == 30
    end)
    assert.same({ 30, 0 }, vim.api.nvim_win_get_cursor(win))
    local top, bottom = vim.fn.line("w0"), vim.fn.line("w$")
    assert.is_true(
      top <= 30 and bottom >= 37,
      ("the window shows %d-%d of the section 30-37"):format(top, bottom)
    )
  end)

  with_fzf(":KbRelated lists the related notes with their reasons", function()
    vim.api.nvim_win_set_cursor(0, { 6, 0 })
    vim.cmd("KbRelated")
    local screen
    wait("fzf with the related note", function()
      screen = select(2, fzf_screen())
      return screen:find("links here", 1, true) ~= nil
    end)
    assert.matches("Beta › Second  b.md:20  links here", screen, 1, true)
    assert.same({ line = 5, character = 0 }, server.of("kb/related")[1].params.position)
  end)
end)
