local open = require("kbls.open")
local ws = require("helpers.workspace")

describe("kbls.open", function()
  local root
  before_each(function()
    local lines = {}
    for i = 1, 60 do
      lines[i] = "line " .. i
    end
    root = ws.create({ ["a.md"] = table.concat(lines, "\n") .. "\n", ["b.md"] = "b\n" })
    vim.cmd("silent! %bwipeout!")
    vim.cmd("silent! tabonly | silent! only")
  end)
  after_each(function()
    vim.cmd("silent! tabonly | silent! only | silent! %bwipeout!")
    ws.remove(root)
  end)

  it("opens the file at the chunk's first line", function()
    open.open({ filename = root .. "/a.md", lnum = 42 })
    assert.equals(root .. "/a.md", vim.api.nvim_buf_get_name(0))
    assert.equals(42, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("splits, vsplits and opens tabs", function()
    vim.cmd("edit " .. root .. "/b.md")
    open.open({ filename = root .. "/a.md", lnum = 5 }, "split")
    assert.equals(2, #vim.api.nvim_tabpage_list_wins(0))
    assert.equals(5, vim.api.nvim_win_get_cursor(0)[1])
    open.open({ filename = root .. "/a.md", lnum = 6 }, "vsplit")
    assert.equals(3, #vim.api.nvim_tabpage_list_wins(0))
    open.open({ filename = root .. "/a.md", lnum = 7 }, "tab")
    assert.equals(2, #vim.api.nvim_list_tabpages())
    assert.equals(7, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("clamps a line past the end and moves within the current file", function()
    open.open({ filename = root .. "/a.md", lnum = 500 })
    assert.equals(60, vim.api.nvim_win_get_cursor(0)[1])
    open.open({ filename = root .. "/a.md", lnum = 3 })
    assert.equals(3, vim.api.nvim_win_get_cursor(0)[1])
  end)
end)
