-- Telescope against the real `kbls serve` ($KBLS_SERVER), opened the moment the client is up,
-- while the daemon is still loading its model: the picker must fill in by itself once the
-- index is ready (it used to stay empty until the prompt changed), and bare `:Telescope kbls`
-- must open the search. Then `:Telescope kbls tags` lists the real tags and the chosen tag's
-- search lists its notes, most recently modified first. And a search shows one row per note,
-- <C-e> lists a note's further sections under it (the note under a folder with a space and a
-- name with `[`, `#`, `%`), and <CR> on one opens it at its first line.
local clients = require("kbls.lsp.clients")
local notes = require("helpers.notes")
local spec_clients = require("helpers.clients")
local open_picker = require("helpers.telescope")
local ws = require("helpers.workspace")

local SERVER = os.getenv("KBLS_SERVER") or "kbls"
local TIMEOUT = 90000

local picker, result_lines = open_picker.picker, open_picker.result_lines

describe("telescope with the real daemon", function()
  local root
  setup(function()
    assert(vim.fn.executable(SERVER) == 1, ("kbls server not found at %q (set KBLS_SERVER)"):format(SERVER))
    vim.cmd("runtime! plugin/telescope.lua")
    vim.o.columns, vim.o.lines = 200, 60
    root = ws.create({
      [".kbls.yaml"] = ws.config(),
      ["tides.md"] = "# Tides\n\nThe moon's gravity pulls the oceans into two bulges,"
        .. " so most coasts see two high tides a day.\n",
      ["bread.md"] = "# Bread\n\nKnead the dough, let it rise, bake it in a hot oven. #kitchen\n",
      ["stars.md"] = "# Stars\n\nA star shines by fusing hydrogen into helium in its core. #sky\n",
      ["moon.md"] = "# Moon\n\nThe moon has phases: new, crescent, full. #sky\n",
      [notes.GIT_NOTE] = notes.GIT_TEXT,
    })
    require("kbls").setup({ cmd = { SERVER, "serve" }, picker = "telescope", search = { debounce = 10 } })
    require("telescope").load_extension("kbls")
  end)
  teardown(function()
    local p, b = picker()
    if p then
      require("telescope.actions").close(b)
    end
    spec_clients.stop_all()
    ws.remove(root)
  end)

  it("a picker opened while the daemon loads fills in once the index is ready", function()
    vim.cmd("cd " .. vim.fn.fnameescape(root))
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/bread.md"))
    assert.is_true(vim.wait(TIMEOUT, function()
      local c = clients.list(0)[1]
      return c ~= nil and c.initialized == true
    end, 20))
    -- at once: the model is still loading
    vim.cmd("Telescope kbls query=why\\ are\\ there\\ two\\ high\\ tides\\ each\\ day")
    local p
    assert.is_true(vim.wait(5000, function()
      p = picker()
      return p ~= nil
    end, 20))
    local filled = vim.wait(TIMEOUT, function()
      local lines = result_lines(p)
      return #lines > 0 and table.concat(lines, "\n"):find("tides.md", 1, true) ~= nil
    end, 50)
    assert.is_true(filled, "the picker stayed: " .. vim.inspect(result_lines(p)))
    -- the first row is the tides note (telescope lists the best match at the bottom by default)
    local selected = require("telescope.actions.state").get_selected_entry()
    assert.equals("tides.md", selected.value.relpath)
    require("telescope.actions").close(select(2, picker()))
  end)

  it("search: one row per note; <C-e> lists the note's sections under it; <CR> opens one", function()
    vim.cmd("silent! only")
    local win = vim.api.nvim_get_current_win()
    require("telescope").extensions.kbls.search({ query = notes.GIT_QUERY })
    local p, b
    assert.is_true(
      vim.wait(TIMEOUT, function()
        p, b = picker()
        local e = p and require("telescope.actions.state").get_selected_entry()
        return e ~= nil and e.value.relpath == notes.GIT_NOTE
      end, 20),
      "the git note is not the first row: " .. vim.inspect(p and result_lines(p))
    )
    local note = require("telescope.actions.state").get_selected_entry().value
    assert.is_true(note.more >= 2, "sections folded into the note's row: " .. note.more)
    local before = #result_lines(p)
    local text = table.concat(result_lines(p), "\n")
    assert.matches(("+%d more sections"):format(note.more), text, 1, true)
    local seen = {}
    for i = 1, p.manager:num_results() do
      local relpath = p.manager:get_entry(i).value.relpath
      assert.is_nil(seen[relpath], "a note listed twice: " .. text)
      seen[relpath] = true
    end
    local expand = vim.api.nvim_buf_call(b, function()
      return vim.fn.maparg("<C-E>", "i", false, true)
    end)
    expand.callback()
    assert.is_true(
      vim.wait(10000, function()
        return #result_lines(p) == before + note.more
      end, 20),
      vim.inspect(result_lines(p))
    )
    -- the note's sections under its row, best first (entries 1..more: the layout reads upwards)
    local children = {}
    for i = note.more, 1, -1 do
      local item = p.manager:get_entry(i).value
      assert.is_true(item.child, vim.inspect(result_lines(p)))
      assert.equals(note.filename, item.filename)
      children[#children + 1] = item
    end
    assert.is_true(vim.wait(5000, function()
      local e = require("telescope.actions.state").get_selected_entry()
      return e ~= nil and e.value.relpath == notes.GIT_NOTE and not e.value.child
    end, 20))
    require("telescope.actions").move_selection_next(b)
    require("telescope.actions").select_default(b)
    assert.is_true(vim.wait(5000, function()
      return vim.api.nvim_buf_get_name(0) == note.filename and vim.fn.mode() == "n"
    end, 20))
    assert.equals(win, vim.api.nvim_get_current_win())
    assert.same({ children[1].lnum, 0 }, vim.api.nvim_win_get_cursor(win))
    assert.matches("^## ", vim.api.nvim_get_current_line())
    assert.is_true(vim.fn.line("w0") <= children[1].lnum and vim.fn.line("w$") >= children[1].end_lnum)
  end)

  it("tags: the real tags with counts; <CR> lists the tag's notes, most recent first", function()
    -- moon.md becomes the most recently modified note of #sky
    local stamp = os.time() + 60
    vim.uv.fs_utime(root .. "/moon.md", stamp, stamp)
    vim.uv.fs_utime(root .. "/stars.md", stamp - 3600, stamp - 3600)
    local client = clients.list(0)[1]
    local reindexed = false
    require("kbls.api").reindex({ force = false }, function()
      reindexed = true
    end, { client = client })
    assert.is_true(vim.wait(TIMEOUT, function()
      if not reindexed then
        return false
      end
      local r = require("kbls.lsp.request").sync(client, "kb/notes", { limit = 1 }, 5000)
      return r and r.notes[1] and r.notes[1].path == "moon.md"
    end, 200))
    vim.cmd("Telescope kbls tags")
    local p, b
    assert.is_true(vim.wait(10000, function()
      p, b = picker()
      return p ~= nil and p.prompt_title == "kbls tags" and #result_lines(p) == 2
    end, 20))
    local text = table.concat(result_lines(p), "\n")
    assert.matches("sky (2)", text, 1, true)
    assert.matches("kitchen (1)", text, 1, true)
    assert.equals("sky", require("telescope.actions.state").get_selected_entry().value.name)
    require("telescope.actions").select_default(b)
    assert.is_true(vim.wait(10000, function()
      p = picker()
      return p ~= nil and p.prompt_title == "kbls #sky" and #result_lines(p) == 2
    end, 20))
    -- the selected (first) entry is the most recent note of the tag
    assert.equals("moon.md", require("telescope.actions.state").get_selected_entry().value.relpath)
    assert.matches("#sky", table.concat(result_lines(p), "\n"), 1, true)
  end)
end)
