--- Configuration for kbls.nvim: the documented defaults and the merge of the user's options.
---
--- Every other module reads options through `require("kbls.config").options`, so there is one
--- place that knows the shape of the configuration (see `:help kbls-configuration`).
local contract = require("kbls.contract")

local M = {}

--- The default keymaps used when `keymaps = true`.
M.default_keymaps = {
  search = "<leader>ks",
  related = "<leader>kr",
  status = "<leader>ki",
}

M.defaults = {
  -- Command that starts the daemon (stdio). A string is split on whitespace.
  cmd = { "kbls", "serve" },
  -- Extra environment for the daemon.
  cmd_env = nil,
  -- Buffers of these filetypes start (or attach to) a client for their root.
  filetypes = { "markdown" },
  -- Root detection, in priority order: a folder is a knowledge base when it (or a parent) holds
  -- `.kbls.yaml`. Add ".git" to index any git repository's notes too (opt-in: a README in a code
  -- project then starts a daemon). An entry may be a list of names of equal priority.
  root_markers = { ".kbls.yaml" },
  -- Start the daemon automatically for buffers of `filetypes`.
  auto_attach = true,
  -- Sent as `initializationOptions`; any `.kbls.yaml` key, e.g. { search = { limit = 20 } }.
  init_options = {},
  -- Picker for :KbSearch / :KbRelated: "auto" (the first installed of telescope, snacks, fzf-lua,
  -- else "select"), "telescope", "snacks", "fzf-lua" or "select" (vim.ui.select).
  picker = "auto",
  search = {
    -- `limit` and `mode` of kb/search ("hybrid", "semantic", "lexical").
    limit = 20,
    mode = "hybrid",
    -- One row per note: its best section, with "+N more sections" (<C-e> lists them under it).
    -- false: a row for every matching section.
    group_by_file = true,
    -- Milliseconds to wait after a keystroke before sending a live query.
    debounce = 150,
  },
  related = {
    limit = 10,
  },
  -- Neovim 0.11's built-in completion (vim.lsp.completion) with autotrigger in attached buffers,
  -- for the server's link completion after `[[` and `](`. Off by default: nvim-cmp and
  -- blink.cmp already take LSP items, and <C-x><C-o> (omnifunc) always works.
  completion = false,
  -- The code lens on a note's title, "12 backlinks · 5 related" (refreshed on entering the buffer,
  -- leaving insert mode and writing); running it (vim.lsp.codelens.run()) opens :KbBacklinks.
  code_lens = true,
  -- `gx` on a link of the hover (file://…#L5) opens the note here, at the line, instead of
  -- handing it to the system (vim.ui.open is wrapped for those links only).
  hover_links = true,
  -- Milliseconds a synchronous request (health check, :KbStatus) may take.
  timeout = 5000,
  -- Buffer-local keymaps in attached buffers: false (default), true for `default_keymaps`, or a
  -- table such as { search = "<leader>fs", related = false }.
  keymaps = false,
}

M.options = vim.deepcopy(M.defaults)

--- Values of the `picker` option.
M.pickers = { "auto", "telescope", "snacks", "fzf-lua", "select" }

--- Normalise `cmd`: a string is split on whitespace, a function is kept as is.
---@param cmd string|string[]|function
---@return string[]|function
local function normalize_cmd(cmd)
  if type(cmd) == "string" then
    return vim.split(vim.trim(cmd), "%s+")
  end
  return cmd
end

--- Check merged options; returns a list of problems (empty when all is well).
---@param opts table
---@return string[]
function M.validate(opts)
  local problems = {}
  local function check(cond, msg)
    if not cond then
      problems[#problems + 1] = msg
    end
  end
  check(
    type(opts.cmd) == "function" or (type(opts.cmd) == "table" and #opts.cmd > 0),
    "cmd must be a non-empty list of strings or a function"
  )
  check(type(opts.filetypes) == "table", "filetypes must be a list")
  check(
    type(opts.root_markers) == "table" and #opts.root_markers > 0,
    "root_markers must be a non-empty list"
  )
  check(vim.tbl_contains(M.pickers, opts.picker), "picker must be one of " .. table.concat(M.pickers, ", "))
  check(
    type(opts.search) == "table" and contract.is_mode(opts.search.mode),
    "search.mode must be one of " .. table.concat(contract.MODES, ", ")
  )
  local range = ("an integer from %d to %d"):format(contract.MIN_LIMIT, contract.MAX_LIMIT)
  check(
    type(opts.search) == "table" and contract.is_limit(opts.search.limit),
    "search.limit must be " .. range
  )
  check(
    type(opts.related) == "table" and contract.is_limit(opts.related.limit),
    "related.limit must be " .. range
  )
  check(
    type(opts.search) == "table" and type(opts.search.debounce) == "number" and opts.search.debounce >= 0,
    "search.debounce must be a number >= 0"
  )
  check(type(opts.hover_links) == "boolean", "hover_links must be a boolean")
  check(type(opts.completion) == "boolean", "completion must be a boolean")
  check(
    type(opts.keymaps) == "boolean" or type(opts.keymaps) == "table",
    "keymaps must be a boolean or a table"
  )
  return problems
end

--- Merge user options over the defaults. Bad values are reported once and replaced by defaults,
--- so a typo never leaves the plugin without a working configuration.
---@param user table|nil
---@return table options the merged options (also stored in `M.options`)
function M.setup(user)
  user = user or {}
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user)
  -- Lists replace rather than merge: tbl_deep_extend would keep defaults past the user's length.
  for _, key in ipairs({ "cmd", "filetypes", "root_markers" }) do
    if user[key] ~= nil then
      merged[key] = vim.deepcopy(user[key])
    end
  end
  merged.cmd = normalize_cmd(merged.cmd)
  local problems = M.validate(merged)
  if #problems > 0 then
    vim.notify(
      "kbls: invalid options, using defaults for them: " .. table.concat(problems, "; "),
      vim.log.levels.WARN
    )
    local defaults = vim.deepcopy(M.defaults)
    for key, value in pairs(merged) do
      local single = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), { [key] = value })
      single.cmd = normalize_cmd(single.cmd)
      if #M.validate(single) == 0 then
        defaults[key] = single[key]
      end
    end
    merged = defaults
  end
  M.options = merged
  return merged
end

--- The keymaps to set, as { action = lhs } with disabled ones left out.
---@param opts table|nil options (default: the current ones)
---@return table<string, string>
function M.keymaps(opts)
  local km = (opts or M.options).keymaps
  if km == false or km == nil then
    return {}
  end
  local source = km == true and M.default_keymaps or km
  local out = {}
  for action, lhs in pairs(source) do
    if type(lhs) == "string" and lhs ~= "" then
      out[action] = lhs
    end
  end
  return out
end

return M
