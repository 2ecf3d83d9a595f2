local config = require("kbls.config")

local script = debug.getinfo(1, "S").source:sub(2)
local plugin_root = vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fn.fnamemodify(script, ":p"))))

local function read(path)
  local f = assert(io.open(plugin_root .. "/" .. path, "r"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("documentation", function()
  local help = read("doc/kbls.txt")
  local readme = read("README.md")

  it("documents every option in :help and the README", function()
    for key, value in pairs(config.defaults) do
      assert.matches("*kbls-option-" .. key .. "*", help, 1, true)
      assert.matches(key, readme, 1, true)
      if type(value) == "table" and not vim.islist(value) then
        for sub in pairs(value) do
          assert.matches(sub, help, 1, true)
          assert.matches(sub, readme, 1, true)
        end
      end
    end
  end)

  it("documents every user command", function()
    for name in pairs(vim.api.nvim_get_commands({})) do
      if name:match("^Kb") then
        assert.matches("*:" .. name .. "*", help, 1, true)
        assert.matches(":" .. name, readme, 1, true)
      end
    end
  end)

  it("has valid help tags, and :help kbls opens it", function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. "/doc", "p")
    vim.fn.writefile(vim.fn.readfile(plugin_root .. "/doc/kbls.txt"), dir .. "/doc/kbls.txt")
    vim.cmd("helptags " .. vim.fn.fnameescape(dir .. "/doc")) -- E154 on a duplicate tag
    local tags = vim.fn.readfile(dir .. "/doc/tags")
    assert.is_true(#tags > 30)
    local rtp = vim.o.runtimepath
    vim.opt.runtimepath:prepend(dir)
    vim.cmd("help kbls")
    local name = vim.api.nvim_buf_get_name(0)
    vim.cmd("helpclose")
    vim.cmd("help :KbSearch")
    local line = vim.api.nvim_get_current_line()
    vim.cmd("helpclose")
    vim.o.runtimepath = rtp
    vim.fn.delete(dir, "rf")
    assert.matches("kbls.txt$", name)
    assert.matches("KbSearch", line)
  end)

  it("keeps help lines within 78 columns", function()
    for i, line in ipairs(vim.split(help, "\n")) do
      assert.is_true(
        vim.fn.strdisplaywidth(line) <= 78,
        ("doc/kbls.txt:%d is %d columns"):format(i, vim.fn.strdisplaywidth(line))
      )
    end
  end)
end)
