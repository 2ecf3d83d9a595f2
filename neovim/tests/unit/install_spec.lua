-- Installing the plugin as users do: scripts/publish-neovim.sh splits neovim/ (committed HEAD)
-- into its own repository; a clone of it under a 'packpath' start folder (`:h packages`, what
-- lazy.nvim and packer do too) gives the commands, :help kbls and vim.lsp.config("kbls") in a
-- fresh Neovim; luarocks (when installed) builds its rockspec as rocks.nvim would.
local script = debug.getinfo(1, "S").source:sub(2)
local plugin_root = vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fn.fnamemodify(script, ":p"))))
local repo = vim.fs.dirname(plugin_root)

local function run(cmd, opts)
  local obj = vim.system(cmd, vim.tbl_extend("force", { text = true }, opts or {})):wait(120000)
  assert(
    obj.code == 0,
    table.concat(cmd, " ") .. " failed (" .. tostring(obj.code) .. "):\n" .. (obj.stderr or "")
  )
  return vim.trim(obj.stdout or "")
end

local has_git_repo = vim.uv.fs_stat(repo .. "/.git") ~= nil and vim.fn.executable("git") == 1

describe("the published plugin", function()
  local tmp, clone
  setup(function()
    if not has_git_repo then
      return
    end
    tmp = vim.fn.tempname()
    vim.fn.mkdir(tmp, "p")
    run({ "git", "init", "--quiet", "--bare", tmp .. "/kbls.nvim.git" })
    local commit = run({ "bash", repo .. "/scripts/publish-neovim.sh", tmp .. "/kbls.nvim.git", "main" })
    assert.matches("^%x+$", commit:match("[^\n]+$"))
    clone = tmp .. "/site/pack/kbls/start/kbls.nvim"
    run({ "git", "clone", "--quiet", "--branch", "main", tmp .. "/kbls.nvim.git", clone })
  end)
  teardown(function()
    if tmp then
      vim.fn.delete(tmp, "rf")
    end
  end)

  local function check(name, fn)
    if has_git_repo then
      it(name, fn)
    else
      pending(name .. " (not a git checkout of the kbls repository)")
    end
  end

  check("has the plugin at its root", function()
    for _, path in ipairs({
      "lua/kbls/init.lua",
      "plugin/kbls.lua",
      "lsp/kbls.lua",
      "doc/kbls.txt",
      "kbls.nvim-scm-1.rockspec",
      "LICENSE",
      "README.md",
    }) do
      assert.is_truthy(vim.uv.fs_stat(clone .. "/" .. path), path)
    end
    assert.is_nil(vim.uv.fs_stat(clone .. "/server"))
  end)

  check("loads as a start package in a fresh Neovim", function()
    local probe = tmp .. "/probe.lua"
    vim.fn.writefile({
      "local out = {}",
      "out.search = vim.fn.exists(':KbSearch')",
      "out.related = vim.fn.exists(':KbRelated')",
      "out.loaded = pcall(require, 'kbls')",
      "out.from = vim.api.nvim_get_runtime_file('lua/kbls/init.lua', false)[1]",
      "local cfg = vim.lsp.config.kbls",
      "out.cmd = cfg and cfg.cmd",
      "out.filetypes = cfg and cfg.filetypes",
      "vim.cmd('helptags ALL')",
      "out.help = pcall(vim.cmd, 'help kbls')",
      "io.stdout:write(vim.json.encode(out))",
    }, probe)
    local nvim = vim.v.progpath
    local out = run({
      nvim,
      "--headless",
      "--clean",
      "--cmd",
      "set packpath^=" .. vim.fn.fnameescape(tmp .. "/site"),
      "-l",
      probe,
    }, { env = { XDG_DATA_HOME = tmp .. "/data", XDG_STATE_HOME = tmp .. "/state" } })
    local got = vim.json.decode(out:match("{.*}"))
    assert.equals(2, got.search)
    assert.equals(2, got.related)
    assert.is_true(got.loaded)
    assert.equals(vim.uv.fs_realpath(clone) .. "/lua/kbls/init.lua", vim.uv.fs_realpath(got.from))
    assert.same({ "kbls", "serve" }, got.cmd)
    assert.same({ "markdown" }, got.filetypes)
    assert.is_true(got.help)
  end)

  local has_luarocks = vim.fn.executable("luarocks") == 1
  local rocks_check = has_luarocks and check
    or function(name)
      pending(name .. " (luarocks not installed: apt-get install luarocks)")
    end
  rocks_check("its rockspec builds with luarocks (modules and runtime folders)", function()
    local tree = tmp .. "/rocks"
    run({ "luarocks", "--lua-version", "5.1", "lint", "kbls.nvim-scm-1.rockspec" }, { cwd = clone })
    run({
      "luarocks",
      "--lua-version",
      "5.1",
      "--tree",
      tree,
      "make",
      "--deps-mode",
      "none",
      "kbls.nvim-scm-1.rockspec",
    }, { cwd = clone })
    assert.is_truthy(vim.uv.fs_stat(tree .. "/share/lua/5.1/kbls/init.lua"))
    assert.is_truthy(vim.uv.fs_stat(tree .. "/share/lua/5.1/kbls/lsp/clients.lua"))
    local rock = tree .. "/lib/luarocks/rocks-5.1/kbls.nvim/scm-1"
    for _, dir in ipairs({ "plugin/kbls.lua", "lsp/kbls.lua", "doc/kbls.txt" }) do
      assert.is_truthy(vim.uv.fs_stat(rock .. "/" .. dir), dir)
    end
  end)
end)
