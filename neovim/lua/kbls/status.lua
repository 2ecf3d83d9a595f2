--- Text for `kb/status` (`:KbStatus`, the health check) and the short statusline string.
local M = {}

local function human_bytes(n)
  if type(n) ~= "number" then
    return "?"
  end
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local i = 1
  while n >= 1024 and i < #units do
    n = n / 1024
    i = i + 1
  end
  return i == 1 and ("%d %s"):format(n, units[i]) or ("%.1f %s"):format(n, units[i])
end
M.human_bytes = human_bytes

local function s(v)
  if v == nil or v == vim.NIL then
    return "?"
  end
  return tostring(v)
end

--- Lines describing a `kb/status` result.
---@param st table
---@return string[]
function M.lines(st)
  local lines = {
    ("kbls %s — %s, queue %s"):format(s(st.version), s(st.state), s(st.queue)),
    ("model: %s (dimension %s)"):format(s(st.model), s(st.dimension)),
    ("embedded since start: %s, reused: %s"):format(s(st.embeddedSinceStart), s(st.reusedSinceStart)),
  }
  if type(st.error) == "string" then
    lines[#lines + 1] = ("error: %s"):format(st.error)
  end
  local embedding = M.embedding(st)
  if embedding ~= "" then
    lines[#lines + 1] = embedding
  end
  for _, root in ipairs(type(st.roots) == "table" and st.roots or {}) do
    local path = type(root.uri) == "string" and vim.uri_to_fname(root.uri) or s(root.uri)
    lines[#lines + 1] = ("root %s: %s files, %s chunks"):format(path, s(root.files), s(root.chunks))
    -- why the root is refused (its .kbls.yaml) or its indexing fails; nil/null otherwise
    if type(root.error) == "string" then
      lines[#lines + 1] = ("  problem: %s"):format(root.error)
    end
    lines[#lines + 1] = ("  store: %s (%s)"):format(s(root.store), human_bytes(root.storeBytes))
    if type(root.sqlite) == "table" then
      lines[#lines + 1] = ("  sqlite: %s %s, vec %s"):format(
        s(root.sqlite.module),
        s(root.sqlite.version),
        s(root.sqlite.vec)
      )
    end
    for _, e in ipairs(type(root.errors) == "table" and root.errors or {}) do
      lines[#lines + 1] = ("  error: %s: %s"):format(s(e.path), s(e.reason))
    end
  end
  return lines
end

--- "45s", "3m05s", "1h02m" (as `kbls index` prints it).
---@param seconds number
---@return string
function M.duration(seconds)
  local t = math.max(0, math.floor(seconds + 0.5))
  if t < 60 then
    return ("%ds"):format(t)
  elseif t < 3600 then
    return ("%dm%02ds"):format(math.floor(t / 60), t % 60)
  end
  return ("%dh%02dm"):format(math.floor(t / 3600), math.floor((t % 3600) / 60))
end

--- The embedding pass of a `kb/status` or `kb/indexStatus` ("" when no chunk waits): every note
--- is searchable by its words, the vectors follow.
---@param st table|nil
---@return string
function M.embedding(st)
  local waiting = type(st) == "table" and tonumber(st.waiting) or 0
  if not waiting or waiting <= 0 then
    return ""
  end
  local pct = math.floor(100 * (tonumber(st.embedded) or 0))
  local rate = tonumber(st.rate) or 0
  local eta = tonumber(st.etaSeconds)
  return ("embedding: %d%% of the chunks have their vectors, %d waiting, %.1f chunks/s, ETA %s"):format(
    pct,
    waiting,
    rate,
    eta and M.duration(eta) or "unknown"
  )
end

--- What a picker says about results answered before the index was ready ("" when it was):
--- while the daemon loads, a search gets lexical hits or none; while it indexes, some notes are
--- not in yet.
---@param index table|nil the `index` of a search result
---@return string
function M.partial(index)
  if type(index) ~= "table" or index.state == nil or index.state == "ready" then
    return ""
  end
  if index.state == "loading" then
    return "index loading: partial results, refreshed when ready"
  end
  if index.state == "indexing" then
    local pending = tonumber(index.pending) or 0
    local embedded = tonumber(index.embedded)
    if pending == 0 and embedded and embedded < 1 then
      local share = math.floor(100 * embedded)
      return ("%d%% embedded: every note by its words, by meaning as vectors come"):format(share)
    end
    return ("indexing (%d pending): partial results, refreshed when ready"):format(pending)
  end
  return "index " .. tostring(index.state) .. ": see :KbStatus"
end

--- A short index state for a statusline, e.g. "kb: indexing (12)"; "" when ready or unknown.
---@param index table|nil a `kb/indexStatus` or `IndexInfo`
---@return string
function M.short(index)
  if type(index) ~= "table" or index.state == nil or index.state == "ready" then
    return ""
  end
  local pending = tonumber(index.pending) or 0
  if pending > 0 then
    return ("kb: %s (%d)"):format(index.state, pending)
  end
  local waiting = tonumber(index.waiting) or 0
  if waiting > 0 then
    local eta = tonumber(index.etaSeconds)
    return ("kb: embedding %d%%%s"):format(
      math.floor(100 * (tonumber(index.embedded) or 0)),
      eta and (" ETA " .. M.duration(eta)) or ""
    )
  end
  return "kb: " .. index.state
end

return M
