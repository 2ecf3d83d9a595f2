local clients = require("kbls.lsp.clients")
local config = require("kbls.config")
local fake = require("helpers.fake_server")
local ws = require("helpers.workspace")

local function checkhealth()
  vim.cmd("checkhealth kbls")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  return text
end

describe(":checkhealth kbls", function()
  local root, store
  before_each(function()
    local text
    text, store = ws.config()
    root = ws.create({ [".kbls.yaml"] = text, ["a.md"] = "# A\n" })
  end)
  after_each(function()
    vim.cmd("silent! %bwipeout!")
    for _, c in ipairs(clients.list()) do
      c:stop(true)
    end
    vim.wait(1000, function()
      return #clients.list() == 0
    end)
    ws.remove(root)
  end)

  it("reports a missing server as an error with advice", function()
    config.setup({ cmd = { "/nonexistent/kbls", "serve" } })
    local text = checkhealth()
    assert.matches("OK Neovim 0%.%d+%.%d+", text)
    assert.matches("ERROR server `/nonexistent/kbls` not found", text, 1, true)
    assert.matches("setup", text)
    assert.matches("no kbls client is running", text)
    assert.matches("telescope.nvim not found", text)
    assert.matches("snacks.nvim not found", text)
    assert.matches("fzf-lua not found", text, 1, true)
    assert.matches('picker = "auto": :KbSearch and :KbRelated use vim.ui.select', text, 1, true)
    -- install advice that works: kbls is not on the package index, so a tool install of a clone
    -- or of a VSIX's wheel; never a bare pip install (PEP 668 refuses it)
    assert.matches("git clone https://github.com/kbls/kbls && cd kbls", text, 1, true)
    assert.matches("`uv tool install ./` (or `pipx install ./`)", text, 1, true)
    assert.matches("`uv tool install /path/to/kbls-VERSION-py3-none-any.whl`", text, 1, true)
    assert.is_nil(text:find("uv tool install kbls", 1, true), text)
    assert.is_nil(text:find("pipx install kbls", 1, true), text)
    assert.is_nil(text:find("`pip install", 1, true), text)
  end)

  it("reports the server's version, the model and the store of a running client", function()
    local server = fake.new({
      answer = function(method)
        if method == "kb/status" then
          return {
            version = "9.9.9",
            state = "ready",
            queue = 0,
            model = "the-model (int8, bundled)",
            dimension = 384,
            roots = {
              {
                uri = vim.uri_from_fname(root),
                store = store,
                storeBytes = 2048,
                files = 1,
                chunks = 2,
                errors = { { path = "bad.md", reason = "invalid UTF-8" } },
              },
            },
          }
        end
        return {}
      end,
    })
    config.setup({ cmd = server.cmd })
    clients.start_root(root)
    local text = checkhealth()
    assert.matches("cmd is a function", text)
    assert.matches("OK kbls 9.9.9 running for " .. root, text, 1, true)
    assert.matches("OK model: the-model (int8, bundled) (dimension 384)", text, 1, true)
    assert.matches("OK store for " .. root .. ": " .. store .. " (2.0 KiB, 1 files, 2 chunks)", text, 1, true)
    assert.matches("WARNING could not index bad.md: invalid UTF-8", text, 1, true)
    assert.is_nil(text:find("ERROR", 1, true), text)
  end)

  it("finds an executable server", function()
    config.setup({ cmd = { "sh", "serve" } })
    local text = checkhealth()
    assert.matches("OK server found: " .. vim.fn.exepath("sh"), text, 1, true)
  end)
end)
