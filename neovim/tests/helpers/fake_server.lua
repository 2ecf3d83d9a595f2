-- An in-process LSP server for unit tests (`cmd` as a function): answers `initialize`,
-- `kb/search`, `kb/notes` and `kb/tags` after `delay` ms from canned hits, notes and tags, honours `$/cancelRequest` with a
-- RequestCancelled error, and records every request and notification.
local M = {}

--- A Hit in the protocol's shape.
function M.hit(root, path, title, breadcrumb, start_line, end_line, extra)
  local h = {
    uri = vim.uri_from_fname(root .. "/" .. path),
    path = path,
    root = vim.uri_from_fname(root),
    range = {
      start = { line = start_line, character = 0 },
      ["end"] = { line = end_line + 1, character = 0 },
    },
    title = title,
    breadcrumb = breadcrumb,
    snippet = "snippet of " .. tostring(title),
    score = 0.5,
    signals = { semantic = 1, lexical = vim.NIL },
    reasons = {},
    more = 0,
  }
  return vim.tbl_extend("force", h, extra or {})
end

--- A Note of `kb/notes` in the protocol's shape (`modified`: ms since the epoch).
function M.note(root, path, title, modified, tags)
  return {
    uri = vim.uri_from_fname(root .. "/" .. path),
    path = path,
    root = vim.uri_from_fname(root),
    title = title,
    tags = tags or {},
    modified = modified,
    snippet = "snippet of " .. tostring(title),
  }
end

--- Create a server. `opts.delay` (ms) delays answers; `opts.answer(method, params)` returns
--- the result (default: `{hits = opts.hits}` for kb/search, `{notes = opts.notes}` for kb/notes,
--- `{tags = opts.tags}` for kb/tags, `{}` otherwise); `opts.capabilities`
--- replaces the server capabilities.
function M.new(opts)
  opts = opts or {}
  local server = { requests = {}, notifications = {}, cancelled = {}, answered = {} }
  local next_id = 0
  local pending = {}

  function server.cmd(dispatchers)
    server.dispatchers = dispatchers
    local closing = false
    local rpc = {}
    function rpc.request(method, params, callback, notify_reply)
      next_id = next_id + 1
      local id = next_id
      table.insert(server.requests, { id = id, method = method, params = params })
      local function reply(err, result)
        if pending[id] == nil then
          return
        end
        pending[id] = nil
        if notify_reply then
          notify_reply(id)
        end
        callback(err, result)
      end
      pending[id] = reply
      if method == "initialize" then
        vim.schedule(function()
          reply(nil, {
            capabilities = opts.capabilities or { hoverProvider = true, workspaceSymbolProvider = true },
          })
        end)
      elseif method == "shutdown" then
        vim.schedule(function()
          reply(nil, vim.NIL)
        end)
      else
        local result
        if opts.answer then
          result = opts.answer(method, params)
        elseif method == "kb/search" then
          result = { hits = opts.hits or {}, tookMs = 1, index = { state = "ready", pending = 0 } }
        elseif method == "kb/notes" then
          local notes = opts.notes or {}
          result = { notes = notes, total = #notes, index = { state = "ready", pending = 0 } }
        elseif method == "kb/tags" then
          local tags = opts.tags or {}
          result = { tags = tags, total = #tags, index = { state = "ready", pending = 0 } }
        else
          result = {}
        end
        vim.defer_fn(function()
          if pending[id] then
            table.insert(server.answered, { id = id, method = method, params = params })
          end
          reply(nil, result)
        end, opts.delay or 0)
      end
      return true, id
    end
    function rpc.notify(method, params)
      table.insert(server.notifications, { method = method, params = params })
      if method == "$/cancelRequest" and pending[params.id] then
        table.insert(server.cancelled, params.id)
        pending[params.id]({ code = -32800, message = "cancelled" }, nil)
      elseif method == "exit" then
        closing = true
        vim.schedule(function()
          dispatchers.on_exit(0, 0)
        end)
      end
      return true
    end
    function rpc.is_closing()
      return closing
    end
    function rpc.terminate()
      closing = true
    end
    return rpc
  end

  --- Send a notification to the client (e.g. `kb/indexStatus`).
  function server.notify(method, params)
    server.dispatchers.notification(method, params)
  end

  --- Requests of one method.
  function server.of(method)
    return vim.tbl_filter(function(r)
      return r.method == method
    end, server.requests)
  end

  return server
end

return M
