--- `:checkhealth kbls`: Neovim version, the daemon and its version, the store and model from
--- `kb/status`, and whether Telescope is there.
local config = require("kbls.config")
local lsp = require("kbls.lsp")
local status = require("kbls.status")

local M = {}

local health = vim.health

local function version_string()
  local v = vim.version()
  return ("%d.%d.%d"):format(v.major, v.minor, v.patch)
end

--- Ask the executable for its version (`kbls --version`), bounded by a timeout.
---@param exe string
---@return string|nil
local function cli_version(exe)
  local ok, obj = pcall(function()
    return vim.system({ exe, "--version" }, { text = true }):wait(3000)
  end)
  if ok and obj and obj.code == 0 then
    local out = vim.trim((obj.stdout or "") .. " " .. (obj.stderr or ""))
    return out ~= "" and out or nil
  end
  return nil
end

--- Report the daemon executable; returns whether it was found.
---@return boolean
function M.check_server()
  local cmd = config.options.cmd
  if type(cmd) == "function" then
    health.info("cmd is a function; not checking the executable")
    return true
  end
  local exe = cmd[1]
  local path = vim.fn.exepath(exe)
  if path == "" then
    health.error(("server `%s` not found"):format(exe), {
      "Install kbls (`pip install kbls`) or set `cmd` in require('kbls').setup({ cmd = { '/path/to/kbls', 'serve' } })",
    })
    return false
  end
  local v = cli_version(path)
  health.ok(("server found: %s%s"):format(path, v and (" (" .. v .. ")") or ""))
  return true
end

--- Report `kb/status` of a running client.
---@param client vim.lsp.Client
function M.check_client(client)
  local result, err = lsp.request_sync(client, "kb/status", vim.empty_dict())
  if not result then
    health.error(
      ("kb/status failed for %s: %s"):format(
        client.root_dir or "?",
        err and (err.message or vim.inspect(err)) or "no answer"
      )
    )
    return
  end
  health.ok(
    ("kbls %s running for %s (state: %s)"):format(
      tostring(result.version),
      client.root_dir or "?",
      tostring(result.state)
    )
  )
  if result.model and result.model ~= vim.NIL then
    health.ok(("model: %s (dimension %s)"):format(tostring(result.model), tostring(result.dimension)))
  else
    health.warn("model: not loaded yet")
  end
  for _, root in ipairs(type(result.roots) == "table" and result.roots or {}) do
    health.ok(
      ("store for %s: %s (%s, %s files, %s chunks)"):format(
        type(root.uri) == "string" and vim.uri_to_fname(root.uri) or "?",
        tostring(root.store),
        status.human_bytes(root.storeBytes),
        tostring(root.files),
        tostring(root.chunks)
      )
    )
    for _, e in ipairs(type(root.errors) == "table" and root.errors or {}) do
      health.warn(("could not index %s: %s"):format(tostring(e.path), tostring(e.reason)))
    end
  end
  if result.state == "error" then
    health.error("the index is in the error state; see :LspLog")
  end
end

--- Report whether Telescope is there (optional).
function M.check_telescope()
  if require("kbls.pickers.telescope").available() then
    health.ok("telescope.nvim found: `:Telescope kbls search` and `:Telescope kbls related` are available")
  else
    health.info("telescope.nvim not found (optional): :KbSearch and :KbRelated use vim.ui.select")
  end
end

function M.check()
  health.start("kbls")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version_string())
  else
    health.error("Neovim " .. version_string() .. " is too old: kbls needs 0.10 or newer")
  end
  local problems = config.validate(config.options)
  if #problems == 0 then
    health.ok("configuration is valid")
  else
    for _, p in ipairs(problems) do
      health.error("configuration: " .. p)
    end
  end
  M.check_server()

  health.start("kbls: running servers")
  local clients = lsp.clients()
  if #clients == 0 then
    local root = lsp.buf_root(0) or lsp.find_root(vim.fn.getcwd())
    health.info(
      "no kbls client is running"
        .. (root and (" (root here: " .. root .. ")") or "")
        .. "; open a note of a configured filetype to start one, then run :checkhealth kbls again"
    )
  end
  for _, client in ipairs(clients) do
    M.check_client(client)
  end

  health.start("kbls: pickers")
  M.check_telescope()
end

return M
