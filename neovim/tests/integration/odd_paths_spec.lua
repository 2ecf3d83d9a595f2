-- Integration: link completion and go-to-definition with the real `kbls serve` in a vault whose
-- path needs escaping in a URI (`My Notes/Notizen Über`), on notes named with a space, a
-- decomposed `é`, `#`, `[`, `%`, `+` and `;`. Neovim sends those names escaped its own way
-- (`vim.uri_from_fname`); the server used to find no open document for them and answered nothing.
local kbls = require("kbls")
local real_server = require("helpers.real_server")
local spec_clients = require("helpers.clients")
local ws = require("helpers.workspace")

local VAULT = "My Notes/Notizen \195\156ber" -- Ü composed
local TARGET = "\195\156ber Caf\195\169/sourdough bread.md" -- é composed
--- the notes being written: é decomposed (e + U+0301), `#`, `[`; and `%`, `+`, `;`
local DRAFTS = { "Cafe\204\129 #1/ideas [draft].md", "100% c++;x.md" }
local PARAGRAPH = "The jar of wild yeast needs flour and water every day until it doubles and smells sour, "
  .. "then it leavens the loaf. [["

local function vault_notes()
  local config = ws.config()
  return {
    [VAULT .. "/.kbls.yaml"] = config,
    [VAULT .. "/" .. TARGET] = "# Sourdough bread\n\nA starter of wild yeast and lactic bacteria, fed with"
      .. " flour and water, leavens the dough; bake the loaf in a hot dutch oven.\n",
    [VAULT .. "/garden/tomatoes.md"] = "# Growing tomatoes\n\nTomatoes need sun, water and a stake.\n",
    [VAULT .. "/space/black holes.md"] = "# Black holes\n\nA massive star collapses under its own gravity.\n",
  }
end

describe("link features in a vault whose path needs escaping", function()
  local base, root, client

  setup(function()
    real_server.require_server()
    base = ws.create(vault_notes())
    root = base .. "/" .. VAULT
    kbls.setup({ cmd = { real_server.SERVER, "serve" }, picker = "select", completion = true })
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/garden/tomatoes.md"))
    client = real_server.initialized(root)
    real_server.wait_indexed(client, 3)
  end)

  teardown(function()
    spec_clients.stop_all()
    ws.remove(base)
  end)

  --- A new buffer for `rel` holding `lines` (not saved), once the client attached to it.
  local function draft(rel, lines)
    local path = root .. "/" .. rel
    vim.fn.mkdir(vim.fs.dirname(path), "p")
    vim.cmd("edit " .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    assert.equals(path, vim.api.nvim_buf_get_name(buf))
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    assert.is_true(
      vim.wait(5000, function()
        return vim.lsp.get_clients({ bufnr = buf, name = client.name })[1] ~= nil
      end, 20),
      "the client did not attach to " .. path
    )
    return buf
  end

  for _, rel in ipairs(DRAFTS) do
    it("completes [[ by meaning in " .. rel, function()
      local buf = draft(rel, { "# Ideas", "", PARAGRAPH })
      assert.matches("%%", vim.uri_from_bufnr(buf)) -- the URI Neovim sends is escaped
      local params = {
        textDocument = { uri = vim.uri_from_bufnr(buf) },
        position = { line = 2, character = #PARAGRAPH },
        context = { triggerKind = 2, triggerCharacter = "[" },
      }
      local responses =
        vim.lsp.buf_request_sync(buf, "textDocument/completion", params, real_server.REQUEST_TIMEOUT)
      local res = responses and responses[client.id]
      assert.is_table(res, "no completion response")
      assert.is_nil(res.err)
      local items = res.result and (res.result.items or res.result) or vim.NIL
      local why = "no items: " .. vim.inspect(res.result) .. "\n" .. real_server.log_tail(5)
      assert(type(items) == "table" and items[1], why)
      assert.equals("Sourdough bread", items[1].label)
      assert.matches("sourdough bread.md", items[1].detail, 1, true)
      vim.cmd("bwipeout!")
    end)

    it("jumps to the linked note with vim.lsp.buf.definition() from " .. rel, function()
      local buf = draft(rel, { "# Ideas", "", "Feed it first, see [[Sourdough bread]] for the loaf." })
      vim.api.nvim_win_set_cursor(0, { 3, #"Feed it first, see [[Sour" })
      vim.lsp.buf.definition()
      local target = root .. "/" .. TARGET
      local jumped = vim.wait(real_server.REQUEST_TIMEOUT, function()
        return vim.api.nvim_buf_get_name(0) == target
      end, 20)
      assert(
        jumped,
        "now in " .. vim.api.nvim_buf_get_name(0) .. ", not " .. target .. "\n" .. real_server.log_tail(5)
      )
      -- the real file, not a new buffer of a misread name
      assert.equals("# Sourdough bread", vim.api.nvim_buf_get_lines(0, 0, 1, false)[1])
      vim.cmd("bwipeout! " .. buf)
    end)
  end
end)
