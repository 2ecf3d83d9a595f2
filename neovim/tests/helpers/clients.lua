-- The end of a spec that ran real clients: buffers wiped, every kbls client stopped and gone.
local clients = require("kbls.lsp.clients")

local M = {}

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

return M
