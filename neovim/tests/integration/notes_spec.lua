-- Integration: the note features of the real `kbls serve` through Neovim's own LSP client, in a
-- vault under a folder with a space and an accent: link diagnostics, their quick fixes through
-- vim.lsp.buf.code_action() (did you mean, create the missing note) and the outline
-- (textDocument/documentSymbol, as vim.lsp.buf.document_symbol() lists it).
local kbls = require("kbls")
local real_server = require("helpers.real_server")
local spec_clients = require("helpers.clients")
local ws = require("helpers.workspace")

local VAULT = "My Notes/Cahier \195\169t\195\169"
local RECIPE = table.concat({
  "---",
  "type: recipe",
  "tags: [baking]",
  "created: 2024-03-02",
  "---",
  "# %s",
  "",
  "%s",
  "",
}, "\n")
local JOURNAL = {
  "# Summer journal",
  "",
  "Tonight I bake [[Sourdugh bread]] with a dark crust from the dutch oven.",
  "Then [[Focaccia]]: an Italian flat bread with olive oil and rosemary, baked in a tray.",
  "Plans: [[Caf\195\169 plans#Budget]] and [[Caf\195\169 plans#Opening hours]].",
  "",
  "## Evening",
  "",
  "```",
  "[[Not a link in code]]",
  "```",
}

local function vault_notes()
  return {
    [VAULT .. "/.kbls.yaml"] = ws.config(),
    [VAULT .. "/recipes/sourdough-bread.md"] = RECIPE:format(
      "Sourdough bread",
      "Feed the starter, mix flour, water and salt, proof overnight and bake in a dutch oven."
    ),
    [VAULT .. "/recipes/pizza-dough.md"] = RECIPE:format(
      "Pizza dough",
      "Flour, water, yeast and olive oil; stretch thin and bake on a hot stone."
    ),
    [VAULT .. "/recipes/pancakes.md"] = RECIPE:format("Pancakes", "Eggs, milk and flour fried in butter."),
    [VAULT .. "/projects/Caf\195\169 plans.md"] = "# Caf\195\169 plans\n\nA coffee house.\n\n## Budget\n\n"
      .. "Rent.\n",
  }
end

describe("note features through Neovim's LSP client", function()
  local base, root, client, buf

  setup(function()
    real_server.require_server()
    base = ws.create(vault_notes())
    root = base .. "/" .. VAULT
    kbls.setup({ cmd = { real_server.SERVER, "serve" }, picker = "select" })
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/recipes/pancakes.md"))
    client = real_server.initialized(root)
    real_server.wait_indexed(client, 4)
    local path = root .. "/journal/summer.md"
    vim.fn.mkdir(vim.fs.dirname(path), "p")
    vim.cmd("edit " .. vim.fn.fnameescape(path))
    buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, JOURNAL)
    assert.is_true(
      vim.wait(5000, function()
        return vim.lsp.get_clients({ bufnr = buf, name = client.name })[1] ~= nil
      end, 20),
      "the client did not attach to " .. path
    )
  end)

  teardown(function()
    spec_clients.stop_all()
    ws.remove(base)
  end)

  --- kbls's diagnostics of `buf` once there are `n`, as { line, code, text of the range }.
  local function diagnostics(n)
    local found
    local ok = vim.wait(real_server.REQUEST_TIMEOUT, function()
      found = vim.tbl_filter(function(d)
        return d.source == "kbls"
      end, vim.diagnostic.get(buf))
      return #found == n
    end, 50)
    local why = ("%d kbls diagnostics, not %d: %s"):format(#(found or {}), n, vim.inspect(found))
    assert(ok, why .. "\n" .. real_server.log_tail(10))
    table.sort(found, function(a, b)
      return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
    end)
    return vim.tbl_map(function(d)
      local line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1]
      return { d.lnum, d.code, line:sub(d.col + 1, d.end_col) }
    end, found)
  end

  it("shows a diagnostic for each broken link and none in code", function()
    assert.same({
      { 2, "missing_note", "[[Sourdugh bread]]" },
      { 3, "missing_note", "[[Focaccia]]" },
      { 4, "missing_heading", "[[Caf\195\169 plans#Opening hours]]" },
    }, diagnostics(3))
  end)

  --- Apply the code action at (row, col) whose title starts with `prefix`.
  local function apply(row, col, prefix)
    vim.api.nvim_win_set_cursor(0, { row, col })
    local titles = {}
    vim.lsp.buf.code_action({
      apply = true,
      filter = function(action)
        titles[#titles + 1] = action.title
        return vim.startswith(action.title, prefix)
      end,
    })
    return titles
  end

  it("fixes a typo with the first 'did you mean' action", function()
    local titles = apply(3, #"Tonight I bake [[Sour", 'Did you mean "Sourdough bread"')
    local fixed = vim.wait(real_server.REQUEST_TIMEOUT, function()
      return vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1]:find("[[Sourdough bread]]", 1, true) ~= nil
    end, 20)
    assert(fixed, "not rewritten; actions offered: " .. vim.inspect(titles))
    assert.same({
      { 3, "missing_note", "[[Focaccia]]" },
      { 4, "missing_heading", "[[Caf\195\169 plans#Opening hours]]" },
    }, diagnostics(2))
  end)

  it("creates the missing note beside its kind with their front matter", function()
    local titles = apply(4, #"Then [[Foc", "Create note")
    local created = root .. "/recipes/focaccia.md"
    local made = vim.wait(real_server.REQUEST_TIMEOUT, function()
      local b = vim.fn.bufnr(created)
      return b ~= -1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == "---"
    end, 20)
    assert(made, "no buffer of " .. created .. "; actions offered: " .. vim.inspect(titles))
    local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr(created), 0, -1, false)
    assert.same({ "---", "type: recipe", "tags: []" }, vim.list_slice(lines, 1, 3))
    assert.truthy(vim.tbl_contains(lines, "# Focaccia"))
    -- Neovim makes the note a buffer; once it is written and indexed the link is no longer broken
    vim.api.nvim_buf_call(vim.fn.bufnr(created), function()
      vim.cmd("write")
    end)
    assert.equals(1, vim.fn.filereadable(created))
    assert.same({ { 4, "missing_heading", "[[Caf\195\169 plans#Opening hours]]" } }, diagnostics(1))
  end)

  it("lists the outline with vim.lsp.buf.document_symbol()", function()
    local listed
    vim.lsp.buf.document_symbol({
      on_list = function(options)
        listed = options.items
      end,
    })
    assert.is_true(vim.wait(real_server.REQUEST_TIMEOUT, function()
      return listed ~= nil
    end, 20))
    assert.same(
      { { 1, "[String] Summer journal" }, { 7, "[String] Evening" } },
      vim.tbl_map(function(item)
        return { item.lnum, item.text }
      end, listed)
    )
  end)
end)
