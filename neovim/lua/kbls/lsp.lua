--- LSP client management for kbls: root detection, one client per root started with
--- `vim.lsp.start`, and the request helpers (asynchronous with cancellation, and synchronous).
---
--- This is the only module that starts or looks up clients, so the rest of the plugin never
--- needs to know how a client was found.
local config = require("kbls.config")

local M = {}

M.name = "kbls"

--- JSON-RPC error code of a cancelled request.
M.REQUEST_CANCELLED = -32800

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Last `kb/indexStatus` per client id.
---@type table<integer, table>
M.index_status = {}

--- Call a client method in a way that works with both 0.10 (`client.f(...)`) and 0.11+
--- (`client:f(...)`).
local function call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

--- Find the workspace root for a path.
---
--- Markers are tried in order and the nearest folder holding the first marker found wins, so
--- `.kbls.yaml` in a sub-folder of a git repository makes that sub-folder the root. A marker may
--- be a list of names of equal priority.
---@param path string a file or folder
---@param markers (string|string[])[]|nil default: the configured `root_markers`
---@return string|nil root absolute path of the root folder
function M.find_root(path, markers)
  markers = markers or config.options.root_markers
  if not path or path == "" then
    return nil
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  local start = vim.fn.isdirectory(path) == 1 and path or vim.fs.dirname(path)
  for _, marker in ipairs(markers) do
    local found = vim.fs.find(marker, { path = start, upward = true, limit = 1 })[1]
    if found then
      return vim.fs.dirname(found)
    end
  end
  return nil
end

--- The root for a buffer: its file's root, or nil for unnamed and special buffers.
---@param bufnr integer|nil
---@return string|nil
function M.buf_root(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  return M.find_root(name)
end

--- Whether `path` lies inside `root` (both absolute).
---@param root string
---@param path string
---@return boolean
function M.contains(root, path)
  root = vim.fs.normalize(root):gsub("/$", "")
  path = vim.fs.normalize(path)
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

--- Clients this module started, by root. `vim.lsp.get_clients` leaves out clients that are
--- still initializing, and a client must be found (not started twice) from its first moment.
---@type table<string, integer>
M._by_root = {}

local function running(client)
  return client ~= nil and not call(client, "is_stopped")
end

--- Running kbls clients (all, or those attached to `bufnr`), initializing ones included.
---@param bufnr integer|nil
---@return vim.lsp.Client[]
function M.clients(bufnr)
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
  for root, id in pairs(M._by_root) do
    local client = vim.lsp.get_client_by_id(id)
    if running(client) then
      add(client)
    else
      M._by_root[root] = nil
    end
  end
  -- Clients started some other way (e.g. `vim.lsp.enable`), once initialized.
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    add(client)
  end
  table.sort(out, function(a, b)
    return a.id < b.id
  end)
  return out
end

--- The running client whose root is `root`, if any.
---@param root string
---@return vim.lsp.Client|nil
function M.client_for_root(root)
  root = vim.fs.normalize(root)
  for _, client in ipairs(M.clients()) do
    if client.root_dir and vim.fs.normalize(client.root_dir) == root then
      return client
    end
  end
  return nil
end

local function set_keymaps(bufnr)
  local maps = config.keymaps()
  local kbls = require("kbls")
  local actions = {
    search = {
      function()
        kbls.search()
      end,
      "kbls: search the knowledge base",
    },
    related = {
      function()
        kbls.related()
      end,
      "kbls: notes related to the cursor",
    },
    status = {
      function()
        kbls.status()
      end,
      "kbls: index status",
    },
    reindex = {
      function()
        kbls.reindex()
      end,
      "kbls: reindex",
    },
  }
  for action, lhs in pairs(maps) do
    local spec = actions[action]
    if spec then
      vim.keymap.set("n", lhs, spec[1], { buffer = bufnr, desc = spec[2] })
    end
  end
end

--- The `vim.lsp.ClientConfig` for a root.
---@param root string
---@return table
function M.client_config(root)
  local opts = config.options
  return {
    name = M.name,
    cmd = opts.cmd,
    cmd_env = opts.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    -- An empty Lua table would be sent as `[]`; the server wants an object.
    init_options = (type(opts.init_options) == "table" and next(opts.init_options) ~= nil)
        and opts.init_options
      or vim.empty_dict(),
    handlers = {
      ["kb/indexStatus"] = function(_, result, ctx)
        M.index_status[ctx.client_id] = result
        vim.api.nvim_exec_autocmds("User", {
          pattern = "KblsIndexStatus",
          modeline = false,
          data = { client_id = ctx.client_id, status = result },
        })
      end,
    },
    on_attach = function(_, bufnr)
      set_keymaps(bufnr)
    end,
    on_exit = function(_, _, client_id)
      M.index_status[client_id] = nil
      if M._by_root[root] == client_id then
        M._by_root[root] = nil
      end
    end,
  }
end

local function reuse(root)
  return function(client, _)
    return client.name == M.name
      and running(client)
      and client.root_dir ~= nil
      and vim.fs.normalize(client.root_dir) == root
  end
end

--- Start (or reuse) the client for a root without attaching a buffer.
---@param root string
---@return integer|nil client_id
function M.start_root(root)
  root = vim.fs.normalize(root)
  local existing = M.client_for_root(root)
  if existing then
    return existing.id
  end
  local id
  if has_011 then
    id = vim.lsp.start(M.client_config(root), { attach = false, reuse_client = reuse(root) })
  else
    ---@diagnostic disable-next-line: deprecated
    id = vim.lsp.start_client(M.client_config(root))
  end
  if id then
    M._by_root[root] = id
  end
  return id
end

--- Start (or reuse) the client for a buffer's root and attach the buffer. One client per root.
---@param bufnr integer|nil default: current buffer
---@return integer|nil client_id nil when the buffer has no root
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.buf_root(bufnr)
  if not root then
    return nil
  end
  root = vim.fs.normalize(root)
  local id = vim.lsp.start(M.client_config(root), { bufnr = bufnr, reuse_client = reuse(root) })
  if id then
    M._by_root[root] = id
  end
  return id
end

--- Stop every kbls client.
---@param force boolean|nil
function M.stop(force)
  for _, client in ipairs(M.clients()) do
    call(client, "stop", force)
  end
end

--- The client to ask for a buffer: one attached to it, else the one for its root (or the cwd's
--- root), else the only one running; starts a client for the root when none runs.
---@param bufnr integer|nil default: current buffer
---@return vim.lsp.Client|nil client
---@return string|nil err why there is none
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local attached = M.clients(bufnr)[1]
  if attached then
    return attached
  end
  local root = M.buf_root(bufnr) or M.find_root(vim.fn.getcwd())
  if root then
    local client = M.client_for_root(root)
    if client then
      return client
    end
  end
  local running = M.clients()
  if #running == 1 then
    return running[1]
  end
  if not root then
    return nil,
      "no kbls workspace here: open a note, or cd into a folder holding one of " .. vim.inspect(
        config.options.root_markers
      )
  end
  local id = M.start_root(root)
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then
    return nil, "could not start " .. vim.inspect(config.options.cmd) .. " for " .. root
  end
  return client
end

--- Run `fn` once the client has finished `initialize` (at once when it has), or call
--- `on_timeout` after `timeout` ms.
---@param client vim.lsp.Client
---@param fn fun()
---@param on_timeout fun()|nil
---@param timeout integer|nil
function M.when_ready(client, fn, on_timeout, timeout)
  if client.initialized then
    return fn()
  end
  timeout = timeout or 30000
  local waited = 0
  local timer = assert(vim.uv.new_timer())
  timer:start(
    20,
    20,
    vim.schedule_wrap(function()
      waited = waited + 20
      local stopped = call(client, "is_stopped")
      if client.initialized or stopped or waited >= timeout then
        if not timer:is_closing() then
          timer:stop()
          timer:close()
        end
        if client.initialized then
          fn()
        elseif on_timeout then
          on_timeout()
        end
      end
    end)
  )
end

--- Send a request; the handler gets `(err, result)` exactly once, unless the request is
--- cancelled with the returned function, in which case it is never called.
---@param client vim.lsp.Client
---@param method string
---@param params table|nil
---@param handler fun(err: table|nil, result: any)
---@param bufnr integer|nil
---@return fun() cancel
function M.request(client, method, params, handler, bufnr)
  local state = { cancelled = false, id = nil }
  local function cancel()
    if state.cancelled then
      return
    end
    state.cancelled = true
    if state.id then
      pcall(call, client, "cancel_request", state.id)
    end
  end
  M.when_ready(client, function()
    if state.cancelled then
      return
    end
    local ok, id = call(client, "request", method, params or vim.empty_dict(), function(err, result)
      if state.cancelled then
        return
      end
      state.cancelled = true -- answered: a later cancel() is a no-op
      handler(err, result)
    end, bufnr)
    if not ok then
      state.cancelled = true
      handler({ code = -32603, message = "kbls: the client is not running" }, nil)
    else
      state.id = id
    end
  end, function()
    if not state.cancelled then
      state.cancelled = true
      handler({ code = -32603, message = "kbls: the server did not initialize in time" }, nil)
    end
  end)
  return cancel
end

--- Send a request and wait for the answer.
---@param client vim.lsp.Client
---@param method string
---@param params table|nil
---@param timeout integer|nil ms, default: `timeout` option
---@return any|nil result
---@return table|string|nil err
function M.request_sync(client, method, params, timeout)
  timeout = timeout or config.options.timeout
  local done, err, result = false, nil, nil
  local cancel = M.request(client, method, params, function(e, r)
    done, err, result = true, e, r
  end)
  local ok = vim.wait(timeout, function()
    return done
  end, 10)
  if not ok then
    cancel()
    return nil, { code = -1, message = ("%s timed out after %d ms"):format(method, timeout) }
  end
  return result, err
end

--- A request slot that keeps at most one request in flight: sending a new one cancels the
--- previous one (its handler is then called with a `RequestCancelled` error so that callers
--- waiting on it are released).
---@class kbls.Requester
---@field private _token table|nil
---@field private _cancel fun()|nil
---@field private _handler fun(err: table|nil, result: any)|nil
local Requester = {}
Requester.__index = Requester

---@return kbls.Requester
function M.requester()
  return setmetatable({}, Requester)
end

--- Cancel the request in flight, if any.
function Requester:cancel()
  local cancel, handler = self._cancel, self._handler
  self._token, self._cancel, self._handler = nil, nil, nil
  if cancel then
    cancel()
  end
  if handler then
    handler({ code = M.REQUEST_CANCELLED, message = "superseded" }, nil)
  end
end

--- Whether a request is in flight.
---@return boolean
function Requester:busy()
  return self._cancel ~= nil
end

--- Send a request, cancelling the one in flight.
---@param send fun(handler: fun(err: table|nil, result: any)): fun() starts the request, returns its cancel
---@param handler fun(err: table|nil, result: any)
function Requester:send(send, handler)
  self:cancel()
  local token = {}
  local answered = false
  self._token = token
  self._handler = handler
  local cancel = send(function(err, result)
    if self._token ~= token then
      return
    end
    answered = true
    self._token, self._cancel, self._handler = nil, nil, nil
    handler(err, result)
  end)
  if not answered and self._token == token then
    self._cancel = cancel
  end
end

return M
