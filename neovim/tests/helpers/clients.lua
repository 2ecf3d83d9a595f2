-- Real kbls clients in specs: waiting for one to attach, and the end of a spec that ran them
-- (buffers wiped, every kbls client stopped and gone).
local clients = require("kbls.lsp.clients")

local M = {}

--- Wait until the current buffer's kbls client has initialized (at most `timeout` ms, 3 s by
--- default); true when it did.
---@param timeout integer?
---@return boolean
function M.wait_initialized(timeout)
  return vim.wait(timeout or 3000, function()
    local c = clients.list(0)[1]
    return c ~= nil and c.initialized
  end, 10)
end

--- Wipe every buffer, stop every kbls client (politely: shutdown, exit) and wait until none is
--- left (at most 5 s).
function M.stop_all()
  vim.cmd("silent! %bwipeout!")
  for _, c in ipairs(clients.list()) do
    c:stop()
  end
  vim.wait(5000, function()
    return #clients.list() == 0
  end, 50)
end

--- Close every window but one, wipe every buffer and kill every kbls client (no shutdown
--- handshake: the end of a spec against a fake server, which needs none).
function M.kill_all()
  vim.cmd("silent! only | silent! %bwipeout!")
  for _, c in ipairs(clients.list()) do
    c:stop(true)
  end
end

return M
