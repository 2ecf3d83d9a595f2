-- Integration: references, rename and backlinks against the real `kbls serve` ($KBLS_SERVER), through
-- Neovim's own LSP client: `vim.lsp.buf.references()` on a note and on a heading,
-- `vim.lsp.buf.rename()` of a title (the edits land in the linking notes' buffers), `:KbBacklinks`
-- in `vim.ui.select`, and `require("kbls").rename_file` moving a note (the link edits of
-- `workspace/willRenameFiles` applied, then the file moved). A vault folder with a space and an
-- accent, a note name with both.
local clients = require("kbls.lsp.clients")
local kbls = require("kbls")
local real_server = require("helpers.real_server")
local request = require("kbls.lsp.request")
local spec_clients = require("helpers.clients")
local ws = require("helpers.workspace")

local SERVER = os.getenv("KBLS_SERVER") or "kbls"
local START_TIMEOUT = 60000
local REQUEST_TIMEOUT = 20000

local CAFE = "Projets/Café Crème.md"
local HUB = "hub.md"
local READER = "deep/nested/reader.md"
local NOTES = {
  [CAFE] = table.concat({
    "---",
    "title: Café Crème",
    "aliases: [Coffee]",
    "---",
    "Intro about coffee.",
    "",
    "## Brewing Notes",
    "",
    "Steps.",
    "",
  }, "\n"),
  [HUB] = table.concat({
    "# Hub",
    "",
    "- [[Café Crème]] by title",
    "- [[Coffee|a cup]] by alias",
    "- [[Café Crème#Brewing Notes]] anchor as text",
    "- [crème](<Projets/Café Crème.md#brewing-notes>) anchor as slug",
    "",
  }, "\n"),
  [READER] = "# Reader\n\nSee [up](../../Projets/Café%20Crème.md) for coffee.\n",
}

--- The items `vim.lsp.buf.references()` lists, as "relpath:lnum", sorted.
local function references(root)
  local got
  vim.lsp.buf.references(nil, {
    on_list = function(t)
      got = t.items
    end,
  })
  assert.is_true(
    vim.wait(REQUEST_TIMEOUT, function()
      return got ~= nil
    end, 20),
    "no references came"
  )
  local out = {}
  for _, item in ipairs(got) do
    out[#out + 1] = item.filename:sub(#root + 2) .. ":" .. item.lnum
  end
  table.sort(out)
  return out
end

local function buffer_lines(path)
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

describe("references, rename and backlinks against the real daemon", function()
  local root, cwd

  setup(function()
    assert(vim.fn.executable(SERVER) == 1, ("kbls server not found at %q (set KBLS_SERVER)"):format(SERVER))
    local parent = ws.create({})
    root = parent .. "/Mes notes é"
    for rel, text in pairs(vim.tbl_extend("force", NOTES, { [".kbls.yaml"] = ws.config() })) do
      vim.fn.mkdir(vim.fs.dirname(root .. "/" .. rel), "p")
      vim.fn.writefile(vim.split(text, "\n", { plain = true }), root .. "/" .. rel, "b")
    end
    cwd = vim.fn.getcwd()
    vim.cmd("cd " .. vim.fn.fnameescape(root))
    kbls.setup({ cmd = { SERVER, "serve" }, picker = "select" })
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. CAFE))
    real_server.ready_client(3)
  end)

  teardown(function()
    spec_clients.stop_all()
    if cwd then
      vim.cmd("cd " .. vim.fn.fnameescape(cwd))
    end
    ws.remove(vim.fs.dirname(root))
  end)

  it("vim.lsp.buf.references() on a note lists every link to it, by title, alias, anchor and path", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. CAFE))
    vim.api.nvim_win_set_cursor(0, { 5, 0 })
    assert.same({ READER .. ":3", HUB .. ":3", HUB .. ":4", HUB .. ":5", HUB .. ":6" }, references(root))
  end)

  it("on a heading it lists the anchors naming it, as text and as slug", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. CAFE))
    vim.api.nvim_win_set_cursor(0, { 7, 4 })
    assert.same({ HUB .. ":5", HUB .. ":6" }, references(root))
  end)

  it(":KbBacklinks lists the linking notes in the picker and opens the chosen one at its link", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. CAFE))
    local shown
    local orig = vim.ui.select
    vim.ui.select = function(rows, opts, cb)
      shown = { rows = rows, text = vim.tbl_map(opts.format_item, rows), prompt = opts.prompt }
      cb(rows[#rows])
    end
    vim.cmd("KbBacklinks")
    local ok = vim.wait(REQUEST_TIMEOUT, function()
      return shown ~= nil and vim.api.nvim_buf_get_name(0) == root .. "/" .. HUB
    end, 20)
    vim.ui.select = orig
    assert.is_true(ok, "nothing opened: " .. vim.inspect(shown))
    assert.matches("Backlinks of Café Crème.md %(2 notes%)", shown.prompt)
    assert.equals(5, #shown.rows)
    assert.equals(6, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("the code lens on the title counts the backlinks; running it opens the picker", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. CAFE))
    local lens
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        vim.lsp.codelens.refresh({ bufnr = 0 })
        lens = vim.lsp.codelens.get(0)[1]
        return lens ~= nil and lens.command ~= nil
      end, 200),
      "no code lens"
    )
    assert.matches("^2 backlinks · %d+ related$", lens.command.title)
    assert.equals(1, lens.range.start.line)
    local shown
    local orig = vim.ui.select
    vim.ui.select = function(_, opts, cb)
      shown = opts.prompt
      cb(nil)
    end
    vim.lsp.commands[lens.command.command](lens.command, { bufnr = 0, client_id = clients.list(0)[1].id })
    local ok = vim.wait(REQUEST_TIMEOUT, function()
      return shown ~= nil
    end, 20)
    vim.ui.select = orig
    assert.is_true(ok, "the lens's command showed no picker")
    assert.matches("Backlinks of Café Crème.md", shown)
  end)

  it(":KbRelatedPanel shows the note's backlinks below its related notes; <CR> opens one", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. CAFE))
    vim.api.nvim_win_set_cursor(0, { 5, 0 })
    local panel = require("kbls.panel")
    panel.open()
    local lines
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        lines = vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false)
        return vim.tbl_contains(lines, "Backlinks (2 notes)")
      end, 50),
      "no backlinks section: " .. vim.inspect(lines)
    )
    local at = panel.state.backlinks_line
    assert.equals("Backlinks (2 notes)", lines[at])
    assert.matches("^<%-", lines[at + 1])
    local section = table.concat(vim.list_slice(lines, at + 1), " ")
    assert.matches("Hub", section) -- the linking notes' titles, their paragraphs
    assert.matches("Reader", section)
    assert.matches("coffee", section)
    vim.api.nvim_set_current_win(panel.state.win)
    vim.api.nvim_win_set_cursor(panel.state.win, { at + 1, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        local name = vim.api.nvim_buf_get_name(0)
        return name == root .. "/" .. READER or name == root .. "/" .. HUB
      end, 20),
      "<CR> opened " .. vim.api.nvim_buf_get_name(0)
    )
    panel.close()
  end)

  it("vim.lsp.buf.rename() on the title rewrites the links by title in the linking notes' buffers", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. CAFE))
    vim.api.nvim_win_set_cursor(0, { 2, 9 })
    vim.lsp.buf.rename("Café au lait")
    local hub = root .. "/" .. HUB
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        local b = vim.fn.bufnr(hub)
        return b > 0 and vim.api.nvim_buf_get_lines(b, 2, 3, false)[1] == "- [[Café au lait]] by title"
      end, 20),
      vim.inspect(buffer_lines(hub))
    )
    local lines = buffer_lines(hub)
    assert.equals("- [[Coffee|a cup]] by alias", lines[4])
    assert.equals("- [[Café au lait#Brewing Notes]] anchor as text", lines[5])
    assert.equals("title: Café au lait", vim.api.nvim_buf_get_lines(0, 1, 2, false)[1])
    vim.cmd("silent! wall")
  end)

  it("rename_file moves a note and the links to it follow, in their own form", function()
    vim.cmd("silent! wall")
    local client = clients.list(0)[1]
    vim.wait(START_TIMEOUT, function() -- the saved rename is indexed before the move is asked
      local s = request.sync(client, "kb/status", vim.empty_dict(), REQUEST_TIMEOUT)
      return s ~= nil and s.state == "ready" and (s.queue or 0) == 0
    end, 250)
    local old, new = root .. "/" .. CAFE, root .. "/Archive/Café v2.md"
    assert.is_true(kbls.rename_file(old, new))
    assert.is_nil(vim.uv.fs_stat(old))
    assert.is_not_nil(vim.uv.fs_stat(new))
    local hub = buffer_lines(root .. "/" .. HUB)
    assert.equals("- [crème](<Archive/Café v2.md#brewing-notes>) anchor as slug", hub[6])
    assert.equals("- [[Café au lait]] by title", hub[3])
    local reader = buffer_lines(root .. "/" .. READER)
    assert.equals("See [up](../../Archive/Caf%C3%A9%20v2.md) for coffee.", reader[3])
  end)
end)
