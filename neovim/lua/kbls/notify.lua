--- Messages to the user, all prefixed and titled "kbls"; a superseded request is never reported.
local contract = require("kbls.contract")

local M = {}

---@param msg string
---@param level integer|nil default INFO
function M.notify(msg, level)
  vim.notify("kbls: " .. msg, level or vim.log.levels.INFO, { title = "kbls" })
end

--- Whether an error is only the cancellation of a superseded request.
---@param err any
---@return boolean
function M.is_cancelled(err)
  return type(err) == "table" and err.code == contract.REQUEST_CANCELLED
end

--- Report a failed request as an error. Returns true when there was an error (reported, or a
--- silent cancellation), so callers can `if notify.report(...) then return end`.
---@param what string
---@param err any
---@return boolean
function M.report(what, err)
  if err == nil then
    return false
  end
  if not M.is_cancelled(err) then
    local msg = type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
    M.notify(("%s failed: %s"):format(what, msg), vim.log.levels.ERROR)
  end
  return true
end

return M
