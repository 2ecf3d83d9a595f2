-- luacheck: the linter that lint.sh runs where selene cannot be installed (no selene build on
-- PyPI, npm or Debian). Same environment as selene.toml/vim.yml: Lua 5.1 (LuaJIT) plus `vim`.
std = "luajit"
globals = { "vim" }
-- Code lines follow stylua.toml's column_width; stylua cannot wrap strings or `---@` annotations.
max_line_length = 110
max_string_line_length = false
max_comment_line_length = false
files["tests/**/*_spec.lua"] = { std = "+busted" }
exclude_files = { ".cache/**", ".tools/**" }
