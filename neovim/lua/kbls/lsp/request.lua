--- Request plumbing over a `vim.lsp.Client`: wait for `initialize`, send with a cancel function
--- that guarantees the handler runs at most once, a synchronous variant, and a slot that keeps
--- one request in flight (live search).
local config = require("kbls.config")
local contract = require("kbls.contract")

local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Call a client method in a way that works with both 0.10 (`client.f(...)`) and 0.11+
--- (`client:f(...)`).
function M.call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
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
      local stopped = M.call(client, "is_stopped")
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
function M.send(client, method, params, handler, bufnr)
  local state = { cancelled = false, id = nil }
  local function cancel()
    if state.cancelled then
      return
    end
    state.cancelled = true
    if state.id then
      pcall(M.call, client, "cancel_request", state.id)
    end
  end
  M.when_ready(client, function()
    if state.cancelled then
      return
    end
    local ok, id = M.call(client, "request", method, params or vim.empty_dict(), function(err, result)
      if state.cancelled then
        return
      end
      state.cancelled = true -- answered: a later cancel() is a no-op
      handler(err, result)
    end, bufnr)
    if not ok then
      state.cancelled = true
      handler({ code = contract.INTERNAL_ERROR, message = "kbls: the client is not running" }, nil)
    else
      state.id = id
    end
  end, function()
    if not state.cancelled then
      state.cancelled = true
      handler(
        { code = contract.INTERNAL_ERROR, message = "kbls: the server did not initialize in time" },
        nil
      )
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
function M.sync(client, method, params, timeout)
  timeout = timeout or config.options.timeout
  local done, err, result = false, nil, nil
  local cancel = M.send(client, method, params, function(e, r)
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
    handler({ code = contract.REQUEST_CANCELLED, message = "superseded" }, nil)
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
