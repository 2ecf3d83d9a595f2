-- Runs busted specs inside Neovim:  nvim --headless --clean -l tests/runner.lua SPEC_OR_DIR...
-- The plugin folder goes on 'runtimepath'; busted comes from the system's Lua 5.1 tree
-- (Debian's lua-busted) or from KBLS_BUSTED_LPATH/KBLS_BUSTED_CPATH. The last line printed is
-- "N passed, N failed"; the exit status is non-zero on any failure.
local script = debug.getinfo(1, "S").source:sub(2)
local tests_dir = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(script, ":p")))
local plugin_root = vim.fs.dirname(tests_dir)

vim.opt.runtimepath:prepend(plugin_root)
vim.opt.runtimepath:append(plugin_root .. "/after")

-- Picker plugins only for their own spec folders (tests/telescope, tests/snacks, tests/fzf_lua):
-- the other specs check the behaviour without them.
local picker_paths = {
  telescope = { "KBLS_PLENARY_PATH", "KBLS_TELESCOPE_PATH" },
  snacks = { "KBLS_SNACKS_PATH" },
  fzf_lua = { "KBLS_FZF_LUA_PATH" },
}
for i = 1, #arg do
  for folder, vars in pairs(picker_paths) do
    if arg[i]:find("tests/" .. folder, 1, true) then
      for _, var in ipairs(vars) do
        local p = os.getenv(var)
        if p and p ~= "" then
          vim.opt.runtimepath:append(p)
        end
      end
    end
  end
end
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local lpath = os.getenv("KBLS_BUSTED_LPATH") or "/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua"
local cpath = os.getenv("KBLS_BUSTED_CPATH") or "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;/usr/lib/lua/5.1/?.so"
package.path = tests_dir .. "/?.lua;" .. lpath .. ";" .. package.path
package.cpath = cpath .. ";" .. package.cpath

-- Load plugin/kbls.lua as Neovim would at startup (commands).
vim.cmd("runtime! plugin/kbls.lua")

local files = {}
for i = 1, #arg do
  files[#files + 1] = arg[i]
end
if #files == 0 then
  files = { tests_dir .. "/unit" }
end

_G.arg = {
  [0] = script,
  "--output=" .. tests_dir .. "/helpers/output.lua",
  "--pattern=_spec%.lua$",
  "--no-auto-insulate",
}
vim.list_extend(_G.arg, files)

local ok, err = pcall(require, "busted.runner")
if not ok then
  io.stdout:write(
    "cannot load busted (apt-get install lua-busted): ",
    tostring(err),
    "\n0 passed, 1 failed\n"
  )
  os.exit(1)
end
-- Called through pcall, busted exits the process itself (status = failures + errors).
local ran, run_err = pcall(err, { standalone = false })
if not ran then
  io.stdout:write("busted crashed: ", tostring(run_err), "\n0 passed, 1 failed\n")
  os.exit(1)
end
os.exit(0)
