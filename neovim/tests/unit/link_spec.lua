local items = require("kbls.items")
local link = require("kbls.link")
local ws = require("helpers.workspace")

local function item(filename, title)
  return { filename = filename, title = title }
end

describe("kbls.link", function()
  it("makes paths relative, with ../ where needed", function()
    assert.equals("b.md", link.relative("/n", "/n/b.md"))
    assert.equals("rust/b.md", link.relative("/n", "/n/rust/b.md"))
    assert.equals("../cooking/bread.md", link.relative("/n/rust", "/n/cooking/bread.md"))
    assert.equals("../../x.md", link.relative("/n/a/b", "/n/x.md"))
  end)

  it("writes a markdown link from the note being edited", function()
    assert.equals(
      "[Bread](../cooking/bread.md)",
      link.markdown(item("/n/cooking/bread.md", "Bread"), "/n/rust/own.md")
    )
    assert.equals(
      "[My note](<my notes/a b.md>)",
      link.markdown(item("/n/my notes/a b.md", "My note"), "/n/x.md")
    )
    assert.equals("[a \\[draft\\]](a.md)", link.markdown(item("/n/a.md", "a [draft]"), "/n/x.md"))
  end)

  it("inserts the link after the cursor and moves past it", function()
    local root = ws.create({ ["rust/own.md"] = "see \n", ["cooking/bread.md"] = "# Bread\n" })
    vim.cmd("edit " .. root .. "/rust/own.md")
    vim.api.nvim_win_set_cursor(0, { 1, 3 })
    local hit = require("helpers.fake_server").hit(root, "cooking/bread.md", "Bread", "Bread", 0, 1)
    local text = link.insert(items.item(hit))
    assert.equals("[Bread](../cooking/bread.md)", text)
    assert.equals("see [Bread](../cooking/bread.md)", vim.api.nvim_get_current_line())
    assert.equals(4 + #text - 1, vim.api.nvim_win_get_cursor(0)[2])
    vim.cmd("bwipeout!")
    ws.remove(root)
  end)
end)
