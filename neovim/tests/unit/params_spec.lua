local config = require("kbls.config")
local fake = require("helpers.fake_server")
local items = require("kbls.items")
local request_params = require("kbls.params")
local ws = require("helpers.workspace")

local ROOT = "/home/me/notes"

describe("kbls.params", function()
  before_each(function()
    config.setup({ search = { limit = 7, mode = "semantic" } })
  end)

  it("builds kb/search params from the options", function()
    assert.same(
      { query = "who owns it", limit = 7, mode = "semantic", groupByFile = true }, -- one row per note
      request_params.search("  who owns it ")
    )
    assert.same(
      { query = "x", limit = 3, mode = "semantic", groupByFile = false, filters = { tags = { "rust" } } },
      request_params.search("x", { limit = 3, group_by_file = false, filters = { tags = { "rust" } } })
    )
  end)

  it("gives nil for an empty query and caps the length", function()
    assert.is_nil(request_params.search(""))
    assert.is_nil(request_params.search("   "))
    assert.is_nil(request_params.search(nil))
    assert.equals(4096, #request_params.search(string.rep("a", 5000)).query)
  end)

  it("builds kb/related params for a buffer", function()
    local root = ws.create({ ["n.md"] = "# N\n" })
    vim.cmd("edit " .. root .. "/n.md")
    local buf = vim.api.nvim_get_current_buf()
    assert.same({ uri = vim.uri_from_fname(root .. "/n.md"), limit = 10 }, request_params.related(buf))
    assert.same(
      { uri = vim.uri_from_fname(root .. "/n.md"), limit = 4, position = { line = 3, character = 0 } },
      request_params.related(buf, { line = 3 }, 4)
    )
    assert.is_nil(request_params.related(vim.api.nvim_create_buf(false, true)))
    vim.cmd("bwipeout!")
    ws.remove(root)
  end)

  it("leaves out the hits of the note itself", function()
    local hits = {
      fake.hit(ROOT, "a.md", "A", "A", 0, 1),
      fake.hit(ROOT, "b.md", "B", "B", 0, 1),
      fake.hit(ROOT, "a.md", "A", "A", 5, 6),
    }
    local left = items.exclude_uri(hits, vim.uri_from_fname(ROOT .. "/a.md"))
    assert.equals(1, #left)
    assert.equals("b.md", left[1].path)
  end)
end)
