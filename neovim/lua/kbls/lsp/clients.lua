--- The client registry: one kbls client per root, started with `vim.lsp.start`, found again
--- from its first moment (before `initialize` completes), and the choice of the client a
--- request goes to. Clients started by `vim.lsp.enable("kbls")` are found too.
local client_config = require("kbls.lsp.client_config")
local config = require("kbls.config")
local request = require("kbls.lsp.request")
local root = require("kbls.lsp.root")

local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Clients this module started, by root. `vim.lsp.get_clients` leaves out clients that are
--- still initializing, and a client must be found (not started twice) from its first moment.
---@type table<string, integer>
M._by_root = {}

local function running(client)
  return client ~= nil and not request.call(client, "is_stopped")
end

--- Running kbls clients (all, or those attached to `bufnr`), initializing ones included.
---@param bufnr integer|nil
---@return vim.lsp.Client[]
function M.list(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local seen, out = {}, {}
  local function add(client)
    if running(client) and not seen[client.id] and (bufnr == nil or client.attached_buffers[bufnr]) then
      seen[client.id] = true
      out[#out + 1] = client
    end
  end
  for dir, id in pairs(M._by_root) do
    local client = vim.lsp.get_client_by_id(id)
    if running(client) then
      add(client)
    else
      M._by_root[dir] = nil
    end
  end
  -- Clients started some other way (e.g. `vim.lsp.enable`), once initialized.
  for _, client in ipairs(vim.lsp.get_clients({ name = client_config.name })) do
    add(client)
  end
  table.sort(out, function(a, b)
    return a.id < b.id
  end)
  return out
end

--- The running client whose root is `dir`, if any.
---@param dir string
---@return vim.lsp.Client|nil
function M.for_root(dir)
  dir = vim.fs.normalize(dir)
  for _, client in ipairs(M.list()) do
    if client.root_dir and vim.fs.normalize(client.root_dir) == dir then
      return client
    end
  end
  return nil
end

local function reuse(dir)
  return function(client, _)
    return client.name == client_config.name
      and running(client)
      and client.root_dir ~= nil
      and vim.fs.normalize(client.root_dir) == dir
  end
end

local function remember(dir, id)
  if id then
    M._by_root[dir] = id
  end
  return id
end

--- Start (or reuse) the client for a root without attaching a buffer.
---@param dir string
---@return integer|nil client_id
function M.start_root(dir)
  dir = vim.fs.normalize(dir)
  local existing = M.for_root(dir)
  if existing then
    return existing.id
  end
  if has_011 then
    return remember(
      dir,
      vim.lsp.start(client_config.for_root(dir), { attach = false, reuse_client = reuse(dir) })
    )
  end
  ---@diagnostic disable-next-line: deprecated
  return remember(dir, vim.lsp.start_client(client_config.for_root(dir)))
end

--- Start (or reuse) the client for a buffer's root and attach the buffer. One client per root.
---@param bufnr integer|nil default: current buffer
---@return integer|nil client_id nil when the buffer has no root
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local dir = root.for_buffer(bufnr)
  if not dir then
    return nil
  end
  dir = vim.fs.normalize(dir)
  return remember(
    dir,
    vim.lsp.start(client_config.for_root(dir), { bufnr = bufnr, reuse_client = reuse(dir) })
  )
end

--- Stop every kbls client.
---@param force boolean|nil
function M.stop(force)
  for _, client in ipairs(M.list()) do
    request.call(client, "stop", force)
  end
end

--- The client to ask for a buffer: one attached to it, else the one for its root (or the cwd's
--- root), started when none runs; outside any root, the only client running.
---@param bufnr integer|nil default: current buffer
---@return vim.lsp.Client|nil client
---@return string|nil err why there is none
function M.pick(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local attached = M.list(bufnr)[1]
  if attached then
    return attached
  end
  local dir = root.for_buffer(bufnr) or root.find(vim.fn.getcwd())
  if not dir then
    local all = M.list()
    if #all == 1 then
      return all[1]
    end
    return nil,
      "no kbls workspace here: open a note, or cd into a folder holding one of " .. vim.inspect(
        config.options.root_markers
      ) .. " (:KbEnable makes a folder a knowledge base)"
  end
  local existing = M.for_root(dir)
  if existing then
    return existing
  end
  local id = M.start_root(dir)
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then
    return nil, "could not start " .. vim.inspect(config.options.cmd) .. " for " .. dir
  end
  return client
end

return M
