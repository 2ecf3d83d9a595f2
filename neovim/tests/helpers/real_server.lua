-- The real `kbls serve` ($KBLS_SERVER) in integration specs: the client started for a root once it
-- initialized, the index once it is ready, and the LSP log's tail when either does not come.
local clients = require("kbls.lsp.clients")
local request = require("kbls.lsp.request")

local M = {}

M.SERVER = os.getenv("KBLS_SERVER") or "kbls"
M.START_TIMEOUT = 60000 -- model load + first index of a few notes, on a slow CI machine
M.REQUEST_TIMEOUT = 20000

--- Fail unless the server can be run.
function M.require_server()
  assert(
    vim.fn.executable(M.SERVER) == 1,
    ("kbls server not found at %q: run `make venv` (or set KBLS_SERVER)"):format(M.SERVER)
  )
end

--- The last `n` lines of Neovim's LSP log (the daemon's stderr ends up there).
---@param n integer
---@return string
function M.log_tail(n)
  local ok, lines = pcall(vim.fn.readfile, vim.lsp.get_log_path())
  if not ok or #lines == 0 then
    return "(the LSP log is empty)"
  end
  return table.concat(vim.list_slice(lines, math.max(1, #lines - n + 1)), "\n")
end

--- The kbls client started for `root`, once it initialized; an error with the log otherwise.
---@param root string
---@return vim.lsp.Client
function M.initialized(root)
  local id = clients._by_root[root]
  assert(id, "no client was started for " .. root)
  local attached = vim.wait(M.START_TIMEOUT, function()
    local c = vim.lsp.get_client_by_id(id)
    return c == nil or c:is_stopped() or c.initialized == true
  end, 50)
  local c = vim.lsp.get_client_by_id(id)
  if not (attached and c and not c:is_stopped() and c.initialized) then
    vim.wait(500) -- let the log be written
    error(
      ("the client did not %s within %d ms; `%s serve` stderr (from %s):\n%s"):format(
        attached and "stay up" or "initialize",
        M.START_TIMEOUT,
        M.SERVER,
        vim.lsp.get_log_path(),
        M.log_tail(40)
      ),
      0
    )
  end
  return c
end

--- Wait until kb/status says ready, nothing queued, with at least `files` notes in its first root.
---@param client vim.lsp.Client
---@param files integer
function M.wait_indexed(client, files)
  local last
  local ready = vim.wait(M.START_TIMEOUT, function()
    local st = request.sync(client, "kb/status", vim.empty_dict(), M.REQUEST_TIMEOUT)
    last = st
    return st ~= nil
      and st.state == "ready"
      and (st.queue or 0) == 0
      and type(st.roots) == "table"
      and st.roots[1] ~= nil
      and (st.roots[1].files or 0) >= files
  end, 250)
  assert(
    ready,
    "the index was not ready within "
      .. M.START_TIMEOUT
      .. " ms; last kb/status: "
      .. vim.inspect(last)
      .. "\nLSP log:\n"
      .. M.log_tail(20)
  )
end

--- The kbls client of the current buffer once it initialized, with its index ready and at least
--- `files` notes in its first root (`wait_indexed`).
---@param files integer
---@return vim.lsp.Client
function M.ready_client(files)
  local started = vim.wait(M.START_TIMEOUT, function()
    local c = clients.list(0)[1]
    return c ~= nil and c.initialized == true
  end, 50)
  assert(started, "the client did not initialize; LSP log:\n" .. M.log_tail(20))
  local client = clients.list(0)[1]
  M.wait_indexed(client, files)
  return client
end

return M
