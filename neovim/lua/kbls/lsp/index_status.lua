--- The last `kb/indexStatus` notification of each client, and the handler that records it and
--- fires `User KblsIndexStatus` (for statuslines and pickers waiting for a ready index).
local M = {}

--- Last `kb/indexStatus` per client id.
---@type table<integer, table>
M.by_client = {}

--- The `kb/indexStatus` notification handler (`handlers` of the client config).
---@param result table
---@param ctx {client_id: integer}
function M.handler(_, result, ctx)
  M.by_client[ctx.client_id] = result
  vim.api.nvim_exec_autocmds("User", {
    pattern = "KblsIndexStatus",
    modeline = false,
    data = { client_id = ctx.client_id, status = result },
  })
end

--- Forget a client (it exited).
---@param client_id integer
function M.forget(client_id)
  M.by_client[client_id] = nil
end

return M
