-- Integration: Neovim 0.11's vim.lsp.enable("kbls") (lsp/kbls.lua) against the real
-- `kbls serve` ($KBLS_SERVER), without require("kbls").setup().
local spec_clients = require("helpers.clients")
local ws = require("helpers.workspace")

local SERVER = os.getenv("KBLS_SERVER") or "kbls"
local TIMEOUT = 60000

describe("vim.lsp.enable('kbls') with the real daemon", function()
  local root
  setup(function()
    assert(vim.fn.executable(SERVER) == 1, ("kbls server not found at %q (set KBLS_SERVER)"):format(SERVER))
    root = ws.create({
      [".kbls.yaml"] = ws.config(),
      ["tides.md"] = "# Tides\n\nThe moon's gravity pulls the oceans into two bulges,"
        .. " so most coasts see two high tides a day.\n",
      ["bread.md"] = "# Bread\n\nKnead the dough, let it rise, bake it in a hot oven.\n",
    })
    vim.lsp.config("kbls", { cmd = { SERVER, "serve" } })
    vim.lsp.enable("kbls")
  end)
  teardown(function()
    vim.lsp.enable("kbls", false)
    spec_clients.stop_all()
    ws.remove(root)
  end)

  it("attaches to a note and answers kb/status and kb/search", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/bread.md"))
    local client
    assert.is_true(
      vim.wait(TIMEOUT, function()
        client = vim.lsp.get_clients({ bufnr = 0, name = "kbls" })[1]
        return client ~= nil and client.initialized == true
      end, 50),
      "no kbls client attached; LSP log: " .. vim.lsp.get_log_path()
    )
    assert.equals(root, client.root_dir)
    local ready = vim.wait(TIMEOUT, function()
      local res = client:request_sync("kb/status", vim.empty_dict(), 10000, 0)
      local st = res and res.result
      return st ~= nil and st.state == "ready" and st.roots[1] ~= nil and st.roots[1].files >= 2
    end, 250)
    assert.is_true(ready, "the index did not become ready")
    local res = client:request_sync(
      "kb/search",
      require("kbls.params").search("why are there two high tides each day"),
      10000,
      0
    )
    assert.is_nil(res.err)
    assert.equals("tides.md", res.result.hits[1].path)
  end)
end)
