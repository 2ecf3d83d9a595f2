-- What the picker specs (telescope, snacks, fzf-lua) run against: a workspace of three notes of
-- 40 lines, an in-process fake server answering kb/search, kb/related, kb/notes and kb/tags over
-- them, and kbls set up with its client attached to a.md. A query with "undo" answers a.md with
-- two more sections folded into its row, and those sections when narrowed to a.md's path.
local clients = require("kbls.lsp.clients")
local fake = require("helpers.fake_server")
local ws = require("helpers.workspace")

local M = {}

--- Wait until `cond` holds, or fail naming `what`.
function M.wait(what, cond, timeout, interval)
  assert(vim.wait(timeout or 5000, cond, interval or 10), what)
end

local function ready(state)
  return { state = state or "ready", pending = 0 }
end

--- The fake server's answer to `method`; `fixture.index_state` is what kb/search says of the index.
local function answer(fixture, method, params)
  local root = fixture.root
  if method == "kb/search" and fixture.index_state == "loading" then
    return { hits = {}, tookMs = 1, index = ready("loading") }
  elseif method == "kb/search" then
    local hits = {
      fake.hit(root, "a.md", "Alpha", "Alpha > First", 4, 8),
      fake.hit(root, "b.md", "Beta", "Beta > Second", 19, 24),
    }
    if params.query:find("gamma") then
      hits = { fake.hit(root, "c.md", "Gamma", "Gamma", 29, 31) }
    elseif params.query:find("undo") and params.filters and params.filters.paths then
      -- the sections of one note (`groupByFile` off, narrowed to its path), best first
      hits = {
        fake.hit(root, "a.md", "Alpha", "Alpha > First", 4, 8),
        fake.hit(root, "a.md", "Alpha", "Alpha > Undo a push", 29, 36),
        fake.hit(root, "a.md", "Alpha", "Alpha > Reset", 14, 18),
      }
    elseif params.query:find("undo") then
      -- one row per note: a.md's best section, two more folded into it
      hits[1].more = 2
    end
    return { hits = hits, tookMs = 1, index = ready() }
  elseif method == "kb/related" then
    local hit = fake.hit(root, "b.md", "Beta", "Beta > Second", 19, 24, { reasons = { "links here" } })
    return { hits = { hit } }
  elseif method == "kb/notes" then
    local notes = {
      fake.note(root, "c.md", "Gamma", 1764500000000, { "greek" }),
      fake.note(root, "a.md", "Alpha", 1700000000000, { "greek", "first" }),
    }
    local wanted = params.filters and params.filters.tags and params.filters.tags[1]
    if wanted then
      notes = vim.tbl_filter(function(n)
        return vim.tbl_contains(n.tags, wanted)
      end, notes)
    end
    return { notes = notes, total = #notes, index = ready() }
  elseif method == "kb/tags" then
    local tags = { { name = "greek", count = 2 }, { name = "first", count = 1 } }
    return { tags = tags, total = 2, index = ready() }
  end
  return {}
end

--- The workspace and server, kbls set up with `picker`, a.md open and its client initialized.
---@param picker string the `picker` setting
---@param wait? fun(what: string, cond: fun(): boolean) how the spec waits (default `M.wait`)
---@return table fixture { root, server, index_state = "ready" } (set index_state to "loading" to change kb/search)
function M.start(picker, wait)
  local lines = {}
  for i = 1, 40 do
    lines[i] = "line " .. i
  end
  local text = table.concat(lines, "\n")
  local fixture = { index_state = "ready" }
  fixture.root = ws.create({
    [".kbls.yaml"] = ws.config(),
    ["a.md"] = text,
    ["b.md"] = text,
    ["c.md"] = text,
  })
  fixture.server = fake.new({
    delay = 20,
    answer = function(method, params)
      return answer(fixture, method, params)
    end,
  })
  require("kbls").setup({ cmd = fixture.server.cmd, picker = picker, search = { debounce = 10 } })
  vim.cmd("cd " .. fixture.root)
  vim.cmd("edit " .. fixture.root .. "/a.md")
  local waiter = wait or M.wait
  waiter("client", function()
    local c = clients.list(0)[1]
    return c and c.initialized
  end)
  return fixture
end

--- What `:checkhealth kbls` says. In a float: a health tab at 200 columns trips an assertion in
--- this Neovim build's tabline.
function M.health_text()
  vim.g.health = { style = "float" }
  vim.cmd("checkhealth kbls")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  vim.g.health = nil
  return text
end

--- Close every window, buffer and client, and remove the workspace.
function M.stop(fixture)
  vim.cmd("silent! tabonly | silent! only | silent! %bwipeout!")
  for _, c in ipairs(clients.list()) do
    c:stop(true)
  end
  ws.remove(fixture.root)
end

return M
