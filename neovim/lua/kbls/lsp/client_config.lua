--- The `vim.lsp.ClientConfig` of kbls, built from the options: for one root (the plugin's own
--- clients) and for `vim.lsp.config`/`vim.lsp.enable("kbls")` (`lsp/kbls.lua`).
local config = require("kbls.config")
local contract = require("kbls.contract")
local index_status = require("kbls.lsp.index_status")
local root = require("kbls.lsp.root")

local M = {}

M.name = "kbls"

--- `initializationOptions`: an empty Lua table would be sent as `[]`; the server wants an object.
---@return table
local function init_options()
  local opts = config.options.init_options
  if type(opts) == "table" and next(opts) ~= nil then
    return opts
  end
  return vim.empty_dict()
end

--- The parts shared by both configs.
---@return table
local function base()
  local opts = config.options
  return {
    name = M.name,
    cmd = opts.cmd,
    cmd_env = opts.cmd_env,
    init_options = init_options(),
    -- Read by the server through workspace/configuration. `K` is a deliberate request, so the
    -- hover answers in prose too (VS Code's mouse hover answers on headings and links only).
    settings = { kbls = { hover = { prose = true } } },
    -- Neovim declares no file operations: kbls then offers no `willRename`, which oil.nvim,
    -- nvim-tree and snacks.rename look for before asking for the link edits of a move.
    capabilities = vim.tbl_deep_extend(
      "force",
      vim.lsp.protocol.make_client_capabilities(),
      { workspace = { fileOperations = { willRename = true } } }
    ),
    handlers = { [contract.methods.index_status] = index_status.handler },
    on_exit = function(_, _, client_id)
      index_status.forget(client_id)
    end,
  }
end

--- The config of the client for one root.
---@param dir string
---@return table
function M.for_root(dir)
  local cfg = base()
  cfg.root_dir = dir
  cfg.workspace_folders = { { uri = vim.uri_from_fname(dir), name = vim.fs.basename(dir) } }
  return cfg
end

--- The config `vim.lsp.enable("kbls")` uses: the configured filetypes, and a root only where a
--- root marker is found (so no client starts for a file outside a knowledge base).
---@return table
function M.for_enable()
  local cfg = base()
  cfg.filetypes = config.options.filetypes
  cfg.root_dir = function(bufnr, on_dir)
    local dir = root.for_buffer(bufnr)
    if dir then
      on_dir(dir)
    end
  end
  return cfg
end

return M
