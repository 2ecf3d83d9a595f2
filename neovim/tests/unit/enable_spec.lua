-- `lsp/kbls.lua`: Neovim 0.11's vim.lsp.enable("kbls") attaches without the plugin's own client
-- code, only inside a knowledge base; the plugin's commands then use that client.
local clients = require("kbls.lsp.clients")
local config = require("kbls.config")
local fake = require("helpers.fake_server")
local ws = require("helpers.workspace")

describe("vim.lsp.enable('kbls')", function()
  local notes, repo, server
  before_each(function()
    config.setup({})
    server = fake.new({ hits = {} })
    notes = ws.create({ [".kbls.yaml"] = ws.config(), ["a/one.md"] = "# One\n" })
    repo = ws.create({ [".git/HEAD"] = "ref: refs/heads/main\n", ["README.md"] = "# Code\n" })
    vim.lsp.config("kbls", { cmd = server.cmd })
    vim.lsp.enable("kbls")
  end)
  after_each(function()
    vim.lsp.enable("kbls", false)
    vim.cmd("silent! %bwipeout!")
    for _, c in ipairs(clients.list()) do
      c:stop(true)
    end
    vim.wait(2000, function()
      return #clients.list() == 0
    end, 10)
    ws.remove(notes)
    ws.remove(repo)
  end)

  it("is configured by lsp/kbls.lua from the plugin's options", function()
    local cfg = vim.lsp.config.kbls
    assert.is_table(cfg)
    assert.same({ "markdown" }, cfg.filetypes)
    assert.is_function(cfg.root_dir)
    assert.is_function(cfg.handlers["kb/indexStatus"])
    assert.equals("{}", vim.json.encode(cfg.init_options))
  end)

  it("attaches to a note inside a .kbls.yaml folder, rooted there", function()
    vim.cmd("edit " .. notes .. "/a/one.md")
    local client
    assert.is_true(vim.wait(3000, function()
      client = vim.lsp.get_clients({ bufnr = 0, name = "kbls" })[1]
      return client ~= nil and client.initialized == true
    end, 10))
    assert.equals(notes, client.root_dir)
    assert.equals(vim.uri_from_fname(notes), client.workspace_folders[1].uri)
    -- the plugin's commands find and use it
    assert.equals(client.id, clients.pick(0).id)
    local answered
    require("kbls.api").search({ query = "one" }, function(err, result)
      answered = { err = err, result = result }
    end)
    assert.is_true(vim.wait(2000, function()
      return answered ~= nil
    end, 10))
    assert.is_nil(answered.err)
    assert.equals(1, #server.of("kb/search"))
    assert.equals(1, #server.of("initialize"))
  end)

  it("starts nothing for a README outside a knowledge base", function()
    vim.cmd("edit " .. repo .. "/README.md")
    assert.equals("markdown", vim.bo.filetype)
    vim.wait(100)
    assert.same({}, vim.lsp.get_clients({ name = "kbls" }))
    assert.equals(0, #server.of("initialize"))
  end)
end)
