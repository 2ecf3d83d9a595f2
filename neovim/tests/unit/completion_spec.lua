-- completion = true: Neovim 0.11's vim.lsp.completion pops up the server's link completion as
-- one types `[[` (autotrigger on the server's trigger characters); off by default.
local fake = require("helpers.fake_server")
local spec_clients = require("helpers.clients")
local ws = require("helpers.workspace")

describe("completion option", function()
  local root, server
  before_each(function()
    root = ws.create({ [".kbls.yaml"] = ws.config(), ["a.md"] = "# A\n\n", ["tides.md"] = "# Tides\n" })
    server = fake.new({
      capabilities = {
        hoverProvider = true,
        completionProvider = { triggerCharacters = { "[", "(" } },
      },
      answer = function(method)
        if method == "textDocument/completion" then
          return { isIncomplete = false, items = { { label = "Tides", insertText = "Tides]]" } } }
        end
        return {}
      end,
    })
  end)
  after_each(function()
    vim.cmd("stopinsert")
    spec_clients.kill_all()
    vim.api.nvim_del_augroup_by_name("kbls")
    ws.remove(root)
  end)

  local function attach(opts)
    require("kbls").setup(vim.tbl_extend("force", { cmd = server.cmd }, opts))
    vim.cmd("edit " .. root .. "/a.md")
    assert.is_true(spec_clients.wait_initialized())
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
  end

  --- InsertCharPre autocmds of Neovim's completion in the buffer (what autotrigger installs).
  local function autotrigger_autocmds()
    return vim.tbl_filter(function(a)
      return a.group_name ~= nil and a.group_name:find("completion", 1, true) ~= nil
    end, vim.api.nvim_get_autocmds({ event = "InsertCharPre", buffer = 0 }))
  end

  it("turns on vim.lsp.completion with autotrigger when it is on", function()
    if not vim.lsp.completion then
      return pending("vim.lsp.completion needs Neovim 0.11")
    end
    attach({ completion = true })
    assert.equals(1, #autotrigger_autocmds())
    -- what the autotrigger does after `[[` (headless, insert mode cannot last across a wait)
    vim.api.nvim_buf_set_lines(0, 1, 2, false, { "[[" })
    vim.api.nvim_win_set_cursor(0, { 2, 2 })
    vim.lsp.completion.get()
    assert.is_true(vim.wait(2000, function()
      return #server.of("textDocument/completion") > 0
    end, 10))
    assert.equals(1, server.of("textDocument/completion")[1].params.position.line)
  end)

  it("leaves completion to the user's setup when it is off (the default)", function()
    attach({})
    assert.equals(0, #autotrigger_autocmds())
    assert.equals("v:lua.vim.lsp.omnifunc", vim.bo.omnifunc) -- <C-x><C-o> still works
  end)
end)
