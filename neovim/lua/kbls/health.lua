--- `:checkhealth kbls`: Neovim version, the daemon and its version, the store and model from
--- `kb/status`, and which pickers are installed.
local clients = require("kbls.lsp.clients")
local config = require("kbls.config")
local contract = require("kbls.contract")
local pickers = require("kbls.pickers")
local request = require("kbls.lsp.request")
local root = require("kbls.lsp.root")
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
    -- kbls is not on the package index yet: a clone (or the wheel a kbls VSIX carries) is the source.
    health.error(("server `%s` not found"):format(exe), {
      "Install the server as a tool from a clone of kbls: "
        .. "`git clone https://github.com/kbls/kbls && cd kbls`, "
        .. "then `uv tool install ./` (or `pipx install ./`); `kbls` lands in ~/.local/bin",
      "Or from the wheel a kbls VSIX carries: `uv tool install /path/to/kbls-VERSION-py3-none-any.whl`",
      "Or in the clone: `make venv`, then set `cmd` in require('kbls').setup("
        .. "{ cmd = { '/path/to/kbls/.venv/bin/kbls', 'serve' } })",
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
  local result, err = request.sync(client, contract.methods.status, vim.empty_dict())
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
  for _, store in ipairs(type(result.roots) == "table" and result.roots or {}) do
    health.ok(
      ("store for %s: %s (%s, %s files, %s chunks)"):format(
        type(store.uri) == "string" and vim.uri_to_fname(store.uri) or "?",
        tostring(store.store),
        status.human_bytes(store.storeBytes),
        tostring(store.files),
        tostring(store.chunks)
      )
    )
    for _, e in ipairs(type(store.errors) == "table" and store.errors or {}) do
      health.warn(("could not index %s: %s"):format(tostring(e.path), tostring(e.reason)))
    end
  end
  if result.state == "error" then
    health.error("the index is in the error state; see :LspLog")
  end
end

--- Report which pickers are installed and which one `picker` chooses.
function M.check_pickers()
  local found = pickers.found()
  for _, name in ipairs(pickers.order) do
    if vim.tbl_contains(found, name) then
      health.ok(("%s found"):format(pickers.plugins[name]))
    else
      health.info(("%s not found (optional)"):format(pickers.plugins[name]))
    end
  end
  if vim.tbl_contains(found, "telescope") then
    health.ok("`:Telescope kbls` (search), `:Telescope kbls related` are available")
  end
  local chosen = pickers.name()
  health.ok(
    ("picker = %q: :KbSearch and :KbRelated use %s"):format(config.options.picker, pickers.plugins[chosen])
  )
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
  local running = clients.list()
  if #running == 0 then
    local here = root.for_buffer(0) or root.find(vim.fn.getcwd())
    local markers = config.options.root_markers
    health.info(
      "no kbls client is running"
        .. (here and (" (root here: " .. here .. ")") or (" (no " .. vim.inspect(markers) .. " here)"))
        .. "; open a note of a configured filetype inside a folder with .kbls.yaml"
        .. " (:KbEnable writes one), then run :checkhealth kbls again"
    )
  end
  for _, client in ipairs(running) do
    M.check_client(client)
  end

  health.start("kbls: pickers")
  M.check_pickers()
end

return M
