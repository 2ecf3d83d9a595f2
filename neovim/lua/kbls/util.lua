--- Small helpers without dependencies on the rest of the plugin: a trailing debounce.
local M = {}

---@class kbls.Debounced
---@field call fun(...) schedule the function with these arguments, replacing a pending call
---@field cancel fun() drop the pending call
---@field flush fun() run the pending call now
---@field pending fun(): boolean whether a call is waiting
---@field close fun() cancel and free the timer

--- Trailing debounce: `fn` runs `ms` milliseconds after the last `call`, with the arguments of
--- that last call, on the main loop.
---@param fn fun(...)
---@param ms integer
---@return kbls.Debounced
function M.debounce(fn, ms)
  local timer = assert(vim.uv.new_timer())
  local args, has_args = nil, false
  local self = {}

  local function fire()
    if not has_args then
      return
    end
    local a = args
    args, has_args = nil, false
    fn(unpack(a, 1, a.n))
  end

  function self.call(...)
    args, has_args = { n = select("#", ...), ... }, true
    if ms <= 0 then
      timer:stop()
      return fire()
    end
    timer:stop()
    timer:start(ms, 0, vim.schedule_wrap(fire))
  end

  function self.cancel()
    timer:stop()
    args, has_args = nil, false
  end

  function self.flush()
    timer:stop()
    fire()
  end

  function self.pending()
    return has_args
  end

  function self.close()
    self.cancel()
    if not timer:is_closing() then
      timer:close()
    end
  end

  return self
end

return M
