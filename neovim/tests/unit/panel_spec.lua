-- :KbRelatedPanel: a side window of notes related to the cursor's section that follows the
-- cursor, opens a note with <CR> and inserts a link with <C-l>.
local fake = require("helpers.fake_server")
local panel = require("kbls.panel")
local spec_clients = require("helpers.clients")
local ws = require("helpers.workspace")

describe(":KbRelatedPanel", function()
  local root, server
  before_each(function()
    local text = ws.numbered_lines(40)
    root = ws.create({
      [".kbls.yaml"] = ws.config(),
      ["a.md"] = text,
      ["b.md"] = text,
      ["c.md"] = text,
    })
    server = fake.new({
      delay = 10,
      answer = function(method, params)
        if method == "kb/related" then
          -- the first section of a.md relates to b.md, the rest to c.md
          local line = params.position and params.position.line or 0
          local hit = line < 10
              and fake.hit(root, "b.md", "Beta", "Beta > Second", 19, 24, { reasons = { "links here" } })
            or fake.hit(root, "c.md", "Gamma", "Gamma", 29, 31, { reasons = { "similar section" } })
          return { hits = { hit } }
        end
        return {}
      end,
    })
    require("kbls").setup({ cmd = server.cmd })
    panel.DEBOUNCE = 10
    vim.cmd("edit " .. root .. "/a.md")
    assert.is_true(spec_clients.wait_initialized())
  end)
  local columns = vim.o.columns
  after_each(function()
    vim.o.columns = columns
    panel.close()
    spec_clients.kill_all()
    vim.api.nvim_del_augroup_by_name("kbls")
    ws.remove(root)
  end)

  local function panel_text()
    return table.concat(vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false), "\n")
  end

  local function move_to(line)
    vim.api.nvim_win_set_cursor(0, { line, 0 })
    vim.api.nvim_exec_autocmds("CursorMoved", { buffer = 0 })
  end

  it("toggles a side window that follows the cursor from section to section", function()
    local source = vim.api.nvim_get_current_win()
    move_to(3)
    vim.cmd("KbRelatedPanel")
    assert.is_true(panel.is_open())
    assert.equals(source, vim.api.nvim_get_current_win()) -- the cursor stays in the note
    assert.is_true(vim.wait(2000, function()
      return panel_text():find("0.50  Beta › Second\n      links here\n      b.md:20", 1, true) ~= nil
    end, 10))
    assert.matches("Related to a.md:3", panel_text(), 1, true)
    assert.same({ line = 2, character = 0 }, server.of("kb/related")[1].params.position)

    move_to(25)
    assert.is_true(vim.wait(2000, function()
      return panel_text():find("0.50  Gamma\n      similar section\n      c.md:30", 1, true) ~= nil
    end, 10))
    assert.is_nil(panel_text():find("Beta", 1, true))
    local asked = #server.of("kb/related")
    move_to(25) -- same place: no new request
    vim.wait(50)
    assert.equals(asked, #server.of("kb/related"))

    vim.cmd("KbRelatedPanel")
    assert.is_false(panel.is_open())
    move_to(3)
    vim.wait(50)
    assert.equals(asked, #server.of("kb/related")) -- no longer following
  end)

  it("<CR> opens the note at its section; <C-l> inserts a link into the note", function()
    local source = vim.api.nvim_get_current_win()
    vim.api.nvim_buf_set_lines(0, 0, 1, false, { "see " })
    vim.api.nvim_win_set_cursor(0, { 1, 3 })
    panel.open()
    assert.is_true(vim.wait(2000, function()
      return panel_text():find("Beta", 1, true) ~= nil
    end, 10))
    vim.api.nvim_set_current_win(panel.state.win)
    vim.api.nvim_win_set_cursor(0, { 3, 0 })
    vim.api.nvim_feedkeys(vim.keycode("<C-l>"), "x", false)
    assert.equals(
      "see [Beta](b.md)",
      vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(source), 0, 1, false)[1]
    )
    vim.api.nvim_set_current_win(panel.state.win)
    vim.api.nvim_win_set_cursor(0, { 3, 0 })
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
    assert.equals(source, vim.api.nvim_get_current_win())
    assert.equals(root .. "/b.md", vim.api.nvim_buf_get_name(0))
    assert.equals(20, vim.api.nvim_win_get_cursor(0)[1])
    assert.is_true(panel.is_open())
  end)

  it("in an 80-column Neovim: score first, then the reasons, every line within the panel", function()
    vim.o.columns = 80
    local title = "Rewriting history without losing work"
    local reasons = { "similar to § Undo the last commit but keep the changes staged (0.76)", "links here" }
    server = fake.new({
      delay = 10,
      answer = function(method)
        if method == "kb/related" then
          local hit = fake.hit(
            root,
            "git/deeply nested/rewriting-history.md",
            title,
            title .. " > Final steps",
            19,
            24,
            {
              reasons = reasons,
              score = 0.7614,
            }
          )
          return { hits = { hit } }
        end
        return {}
      end,
    })
    spec_clients.kill_all()
    require("kbls").setup({ cmd = server.cmd })
    vim.cmd("edit! " .. root .. "/a.md")
    assert.is_true(spec_clients.wait_initialized())
    panel.open()
    assert.is_true(vim.wait(2000, function()
      return panel_text():find("0.76", 1, true) ~= nil
    end, 10))
    local width = vim.api.nvim_win_get_width(panel.state.win)
    assert.is_true(width <= 40, "panel width " .. width)
    assert.is_true(vim.api.nvim_win_get_width(0) >= 39, "the note keeps half the screen")
    local lines = vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false)
    for i, line in ipairs(lines) do
      assert.is_true(vim.fn.strdisplaywidth(line) <= width, ("line %d is cut: %q"):format(i, line))
    end
    local block = table.concat(vim.list_slice(lines, 3), "\n")
    assert.matches("^0%.76  Rewriting", block)
    local flat = block:gsub("%s+", " ")
    assert.matches(title .. " › Final steps", flat, 1, true)
    assert.matches(table.concat(reasons, "; "), flat, 1, true)
    assert.matches("git/deeply nested/rewriting-history.md:20", (block:gsub("\n%s+", "")), 1, true)
    assert.is_true(flat:find("Final steps", 1, true) < flat:find("similar to", 1, true))
    -- a wider panel wraps the block again
    local before = #lines
    vim.api.nvim_win_set_width(panel.state.win, 70)
    vim.api.nvim_exec_autocmds("WinResized", {}) -- what a UI fires (a headless Neovim does not)
    assert.is_true(
      vim.wait(1000, function()
        return #vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false) < before
      end, 10),
      "the block was not wrapped again at 70 columns"
    )
    lines = vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false)
    -- <CR> on any line of the block opens the note
    vim.api.nvim_set_current_win(panel.state.win)
    vim.api.nvim_win_set_cursor(0, { #lines, 0 })
    local item = panel.state.shown[#lines]
    assert.equals(title, item and item.title)
    assert.equals(item, panel.state.shown[3])
  end)

  it("wraps at spaces, and breaks a word wider than the line", function()
    local lines = panel.wrap({ { "aaa bbb ccc", "X" } }, 8, 2)
    local text = vim.tbl_map(function(chunks)
      return table.concat(vim.tbl_map(function(c)
        return c[1]
      end, chunks))
    end, lines)
    assert.same({ "aaa bbb", "  ccc" }, text)
    local long = panel.wrap({ { "abcdefghijklmnop", "X" } }, 8, 2)
    for _, chunks in ipairs(long) do
      local line = table.concat(vim.tbl_map(function(c)
        return c[1]
      end, chunks))
      assert.is_true(vim.fn.strdisplaywidth(line) <= 8, line)
    end
    assert.equals(3, #long)
  end)

  it("closes cleanly when its window is closed", function()
    panel.open()
    vim.api.nvim_win_close(panel.state.win, true)
    assert.is_true(vim.wait(500, function()
      return not panel.is_open() and panel.state.group == nil
    end, 10))
  end)
end)
