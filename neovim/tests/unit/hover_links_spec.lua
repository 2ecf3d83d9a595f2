-- `gx` on a link of kbls' hover opens the note in Neovim at the line (the links are
-- file://…#L5, which the system handler cannot open); other URIs still go to vim.ui.open.
local fake = require("helpers.fake_server")
local hover_links = require("kbls.hover_links")
local spec_clients = require("helpers.clients")
local windows = require("helpers.windows")
local ws = require("helpers.workspace")

describe("hover links", function()
  local root
  before_each(function()
    root = ws.create({
      [".kbls.yaml"] = ws.config(),
      ["a.md"] = "# A\n\nsome text\n",
      ["cooking/b.md"] = ws.numbered_lines(40),
    })
  end)
  after_each(function()
    spec_clients.kill_all()
    hover_links.uninstall()
    ws.remove(root)
  end)

  it("parses the hover's file links, and only those", function()
    local uri = vim.uri_from_fname(root .. "/cooking/b.md")
    assert.same({ filename = root .. "/cooking/b.md", lnum = 20 }, hover_links.parse(uri .. "#L20"))
    assert.is_nil(hover_links.parse(uri))
    assert.is_nil(hover_links.parse(vim.uri_from_fname(root .. "/missing.md") .. "#L3"))
    assert.is_nil(hover_links.parse("https://example.org/#L3"))
    assert.is_nil(hover_links.parse(nil))
  end)

  it("gx in the hover float opens the linked note at its line", function()
    local target = vim.uri_from_fname(root .. "/cooking/b.md") .. "#L20"
    local server = fake.new({
      answer = function(method)
        if method == "textDocument/hover" then
          return {
            contents = {
              kind = "markdown",
              value = "**Related notes**\n\n- [B › Second](" .. target .. ") — links here",
            },
          }
        end
        return {}
      end,
    })
    require("kbls").setup({ cmd = server.cmd })
    vim.cmd("edit " .. root .. "/a.md")
    assert.is_true(spec_clients.wait_initialized())
    vim.lsp.buf.hover()
    local float = windows.wait_float(3000)
    assert(float, "no hover window")
    vim.api.nvim_set_current_win(float)
    local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    local row
    for i, l in ipairs(lines) do
      if l:find("B › Second", 1, true) then
        row = i
      end
    end
    assert.is_number(row, vim.inspect(lines))
    vim.api.nvim_win_set_cursor(0, { row, (lines[row]:find("B", 1, true)) })
    -- A UI parses the markdown_inline injection when it draws the float; headless, parse it here.
    vim.treesitter.get_parser(0):parse(true)
    vim.cmd("normal gx")
    assert.is_true(vim.wait(2000, function()
      return vim.api.nvim_buf_get_name(0) == root .. "/cooking/b.md"
    end, 10))
    assert.equals(20, vim.api.nvim_win_get_cursor(0)[1])
    assert.equals("", vim.api.nvim_win_get_config(0).relative)
    vim.api.nvim_del_augroup_by_name("kbls")
  end)

  it("leaves other URIs to the original vim.ui.open, and can be turned off", function()
    local seen
    local orig = vim.ui.open
    vim.ui.open = function(uri)
      seen = uri
      return nil, nil
    end
    require("kbls").setup({})
    vim.ui.open("https://example.org/")
    assert.equals("https://example.org/", seen)
    require("kbls").setup({ hover_links = false })
    vim.ui.open(vim.uri_from_fname(root .. "/a.md") .. "#L1")
    assert.equals(vim.uri_from_fname(root .. "/a.md") .. "#L1", seen)
    vim.ui.open = orig
    vim.api.nvim_del_augroup_by_name("kbls")
  end)
end)
