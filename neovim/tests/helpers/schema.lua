-- A JSON Schema validator and example generator for the subset docs/protocol.schema.json uses:
-- $ref (#/$defs/...), anyOf, enum, type, properties, required, items, minimum, maximum,
-- minLength, maxLength (in characters). Objects are closed: a property the schema does not
-- declare is an error, so a field renamed on either side fails the contract specs (the server
-- would silently ignore it).
local M = {}

local script = debug.getinfo(1, "S").source:sub(2)
local repo = vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fn.fnamemodify(script, ":p")))))

--- Where the schema is: $KBLS_PROTOCOL_SCHEMA, else docs/protocol.schema.json of the repository.
M.path = os.getenv("KBLS_PROTOCOL_SCHEMA") or (repo .. "/docs/protocol.schema.json")

--- The decoded schema, or nil and why not.
---@return table|nil schema
---@return string|nil why
function M.load()
  local f = io.open(M.path, "r")
  if not f then
    return nil, "no protocol schema at " .. M.path .. " (set KBLS_PROTOCOL_SCHEMA)"
  end
  local text = f:read("*a")
  f:close()
  return vim.json.decode(text), nil
end

local function resolve(root, node)
  while type(node) == "table" and node["$ref"] do
    local name = node["$ref"]:match("^#/%$defs/(.+)$")
    assert(name, "unsupported $ref " .. tostring(node["$ref"]))
    node = assert(root["$defs"][name], "unknown $ref " .. node["$ref"])
  end
  return node
end
M.resolve = resolve

local function is_null(v)
  return v == nil or v == vim.NIL
end

local function is_object(v)
  if type(v) ~= "table" or v == vim.NIL then
    return false
  end
  return getmetatable(v) == getmetatable(vim.empty_dict()) or next(v) == nil or not vim.islist(v)
end

local function is_array(v)
  return type(v) == "table"
    and v ~= vim.NIL
    and vim.islist(v)
    and getmetatable(v) ~= getmetatable(vim.empty_dict())
end

--- Whether a string is well-formed UTF-8 (what JSON on the wire must be).
---@param s string
---@return boolean
function M.valid_utf8(s)
  local i, n = 1, #s
  while i <= n do
    local c = s:byte(i)
    local len = c < 0x80 and 1
      or (c >= 0xC2 and c <= 0xDF) and 2
      or (c >= 0xE0 and c <= 0xEF) and 3
      or (c >= 0xF0 and c <= 0xF4) and 4
      or nil
    if not len or i + len - 1 > n then
      return false
    end
    for j = i + 1, i + len - 1 do
      local b = s:byte(j)
      if b < 0x80 or b > 0xBF then
        return false
      end
    end
    i = i + len
  end
  return true
end

--- Unicode code points in a UTF-8 string (JSON Schema's string length).
---@param s string
---@return integer
function M.code_points(s)
  local _, continuation = s:gsub("[\128-\191]", "")
  return #s - continuation
end

local checks = {
  object = is_object,
  array = is_array,
  string = function(v)
    return type(v) == "string"
  end,
  integer = function(v)
    return type(v) == "number" and v == math.floor(v)
  end,
  number = function(v)
    return type(v) == "number"
  end,
  boolean = function(v)
    return type(v) == "boolean"
  end,
  null = is_null,
}

--- Validate `value` against `node` (a schema node of `root`); returns the list of errors.
---@param root table the whole schema (for $ref)
---@param node table
---@param value any
---@param where string|nil path of the value, for messages
---@return string[]
function M.validate(root, node, value, where)
  where = where or "$"
  node = resolve(root, node)
  local errors = {}
  local function err(msg)
    errors[#errors + 1] = where .. ": " .. msg
  end
  if node.anyOf then
    for _, branch in ipairs(node.anyOf) do
      if #M.validate(root, branch, value, where) == 0 then
        return {}
      end
    end
    err("matches no branch of anyOf: " .. vim.inspect(value))
    return errors
  end
  if node.enum and not vim.tbl_contains(node.enum, value) then
    err(("%s is not one of %s"):format(vim.inspect(value), table.concat(node.enum, ", ")))
  end
  if node.type then
    local check = assert(checks[node.type], "unsupported type " .. node.type)
    if not check(value) then
      err(("expected %s, got %s"):format(node.type, vim.inspect(value)))
      return errors
    end
  end
  if type(value) == "number" then
    if node.minimum and value < node.minimum then
      err(("%s < minimum %s"):format(value, node.minimum))
    end
    if node.maximum and value > node.maximum then
      err(("%s > maximum %s"):format(value, node.maximum))
    end
  end
  if type(value) == "string" then
    if not M.valid_utf8(value) then
      err("not valid UTF-8")
    else
      local n = M.code_points(value)
      if node.maxLength and n > node.maxLength then
        err(("%d characters > maxLength %d"):format(n, node.maxLength))
      end
      if node.minLength and n < node.minLength then
        err(("%d characters < minLength %d"):format(n, node.minLength))
      end
    end
  end
  if node.type == "object" then
    local props = node.properties or {}
    for _, name in ipairs(node.required or {}) do
      if
        is_null(value[name]) and not (props[name] and #M.validate(root, props[name], vim.NIL, where) == 0)
      then
        err("missing required property " .. name)
      end
    end
    for name, v in pairs(value) do
      if props[name] then
        vim.list_extend(errors, M.validate(root, props[name], v, where .. "." .. name))
      else
        err("unknown property " .. tostring(name))
      end
    end
  end
  if node.type == "array" and node.items then
    for i, v in ipairs(value) do
      vim.list_extend(errors, M.validate(root, node.items, v, ("%s[%d]"):format(where, i)))
    end
  end
  return errors
end

--- An example instance of a schema node with a distinct value in every field, optional ones
--- included, so a reader that looks for a field under another name is caught. `overrides`
--- maps a field name to the value to use (e.g. URIs).
---@param root table
---@param node table
---@param overrides table<string, any>|nil
---@return any
function M.example(root, node, overrides)
  overrides = overrides or {}
  local counter = 0
  local function gen(n, name)
    if name and overrides[name] ~= nil then
      return vim.deepcopy(overrides[name])
    end
    n = resolve(root, n)
    counter = counter + 1
    if n.anyOf then
      for _, branch in ipairs(n.anyOf) do
        if resolve(root, branch).type ~= "null" then
          return gen(branch, name)
        end
      end
    end
    if n.enum then
      return n.enum[1]
    end
    local t = n.type
    if t == "object" then
      local out = {}
      for prop, sub in pairs(n.properties or {}) do
        out[prop] = gen(sub, prop)
      end
      return out
    elseif t == "array" then
      return { gen(n.items or {}, name and (name .. "[1]")) }
    elseif t == "string" then
      return (name or "value") .. "-" .. counter
    elseif t == "integer" then
      local v = (n.minimum or 0) + 2 + counter
      return n.maximum and math.min(v, n.maximum) or v
    elseif t == "number" then
      return counter + 0.25
    elseif t == "boolean" then
      return true
    end
    return vim.NIL
  end
  return gen(node, nil)
end

return M
