local config = require("kbls.config")
local fake = require("helpers.fake_server")
local items = require("kbls.items")
local live_search = require("kbls.live")
local notify = require("kbls.notify")
local open = require("kbls.open")
local request_params = require("kbls.params")
local quickfix = require("kbls.quickfix")
local telescope_picker = require("kbls.pickers.telescope")
local ws = require("helpers.workspace")

local ROOT = "/home/me/notes"

describe("kbls.items", function()
  before_each(function()
    config.setup({})
  end)

  it("splits the breadcrumb and drops the title", function()
    assert.same({ "Mutable references" }, items.sections("Borrowing", "Borrowing > Mutable references"))
    assert.same({ "A", "B" }, items.sections("T", "T › A › B"))
    assert.same({}, items.sections("Borrowing", "Borrowing"))
    assert.same({}, items.sections("T", nil))
    assert.same({ "Other", "Sub" }, items.sections("T", "Other > Sub"))
  end)

  it("turns the exclusive LSP range into 1-based inclusive lines", function()
    assert.same(
      { 13, 31 },
      { items.lines({ start = { line = 12, character = 0 }, ["end"] = { line = 31, character = 0 } }) }
    )
    assert.same(
      { 1, 1 },
      { items.lines({ start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } }) }
    )
    assert.same(
      { 5, 6 },
      { items.lines({ start = { line = 4, character = 0 }, ["end"] = { line = 5, character = 3 } }) }
    )
    assert.same(
      { 3, 3 },
      { items.lines({ start = { line = 2, character = 0 }, ["end"] = { line = 2, character = 0 } }) }
    )
  end)

  it("makes an item from a hit", function()
    local item =
      items.item(fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing > Mutable references", 12, 30))
    assert.equals(ROOT .. "/rust/borrowing.md", item.filename)
    assert.equals("rust/borrowing.md", item.relpath)
    assert.equals(13, item.lnum)
    assert.equals(31, item.end_lnum)
    assert.equals(1, item.col)
    assert.equals("Borrowing", item.title)
    assert.same({ "Mutable references" }, item.sections)
    assert.equals("snippet of Borrowing", item.snippet)
  end)

  it("falls back to the file name without a title", function()
    local item = items.item(fake.hit(ROOT, "a/untitled-note.md", vim.NIL, vim.NIL, 0, 0))
    assert.equals("untitled-note", item.title)
    assert.same({}, item.sections)
  end)

  it("displays title, breadcrumb and path:line with highlights", function()
    local item =
      items.item(fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing > Mutable references", 12, 30))
    local text, hls = items.display(item)
    assert.equals("Borrowing › Mutable references  rust/borrowing.md:13", text)
    assert.equals(3, #hls)
    local function span(i)
      return text:sub(hls[i][1][1] + 1, hls[i][1][2])
    end
    assert.equals("Borrowing", span(1))
    assert.equals("KblsTitle", hls[1][2])
    assert.equals(" › Mutable references", span(2))
    assert.equals("KblsBreadcrumb", hls[2][2])
    assert.equals("rust/borrowing.md:13", span(3))
    assert.equals("KblsPath", hls[3][2])
    assert.equals(text, items.format_item(item))
  end)

  it("shows folded hits and related reasons", function()
    local item = items.item(
      fake.hit(ROOT, "b.md", "B", "B", 0, 2, { more = 2, reasons = { "links here", "shared tags: rust" } })
    )
    local text, hls = items.display(item)
    assert.equals("B  b.md:1 (+2)  links here; shared tags: rust", text)
    assert.equals("KblsReason", hls[#hls][2])
    assert.equals("links here; shared tags: rust", text:sub(hls[#hls][1][1] + 1, hls[#hls][1][2]))
  end)

  it("makes telescope-shaped entries", function()
    local hit = fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing > Mutable references", 12, 30)
    local entry = telescope_picker.make_entry(hit)
    assert.equals(ROOT .. "/rust/borrowing.md", entry.filename)
    assert.equals(13, entry.lnum)
    assert.equals(31, entry.lnend)
    assert.equals(1, entry.col)
    assert.is_nil(entry.path) -- telescope would resolve a relative `path` against the cwd
    assert.equals("Borrowing › Mutable references rust/borrowing.md", entry.ordinal)
    local text, hls = entry:display()
    assert.equals("Borrowing › Mutable references  rust/borrowing.md:13  snippet of Borrowing", text)
    assert.equals(4, #hls)
    assert.equals("snippet of Borrowing", text:sub(hls[4][1][1] + 1, hls[4][1][2]))
    assert.equals("KblsSnippet", hls[4][2])
    assert.same(
      { filename = ROOT .. "/rust/borrowing.md", lnum = 13, end_lnum = 31 },
      items.preview_target(entry.value)
    )
  end)

  it("makes quickfix items", function()
    local qf = quickfix.entries({ fake.hit(ROOT, "a.md", "A", "A > S", 3, 4) })
    assert.same(
      { { filename = ROOT .. "/a.md", lnum = 4, end_lnum = 5, col = 1, text = "A › S: snippet of A" } },
      qf
    )
    vim.fn.setqflist(qf)
    assert.equals(4, vim.fn.getqflist()[1].lnum)
  end)
end)

describe("kbls.params", function()
  before_each(function()
    config.setup({ search = { limit = 7, mode = "semantic" } })
  end)

  it("builds kb/search params from the options", function()
    assert.same(
      { query = "who owns it", limit = 7, mode = "semantic", groupByFile = false },
      request_params.search("  who owns it ")
    )
    assert.same(
      { query = "x", limit = 3, mode = "semantic", groupByFile = true, filters = { tags = { "rust" } } },
      request_params.search("x", { limit = 3, group_by_file = true, filters = { tags = { "rust" } } })
    )
  end)

  it("gives nil for an empty query and caps the length", function()
    assert.is_nil(request_params.search(""))
    assert.is_nil(request_params.search("   "))
    assert.is_nil(request_params.search(nil))
    assert.equals(4096, #request_params.search(string.rep("a", 5000)).query)
  end)

  it("builds kb/related params for a buffer", function()
    local root = ws.create({ ["n.md"] = "# N\n" })
    vim.cmd("edit " .. root .. "/n.md")
    local buf = vim.api.nvim_get_current_buf()
    assert.same({ uri = vim.uri_from_fname(root .. "/n.md"), limit = 10 }, request_params.related(buf))
    assert.same(
      { uri = vim.uri_from_fname(root .. "/n.md"), limit = 4, position = { line = 3, character = 0 } },
      request_params.related(buf, { line = 3 }, 4)
    )
    assert.is_nil(request_params.related(vim.api.nvim_create_buf(false, true)))
    vim.cmd("bwipeout!")
    ws.remove(root)
  end)

  it("leaves out the hits of the note itself", function()
    local hits = {
      fake.hit(ROOT, "a.md", "A", "A", 0, 1),
      fake.hit(ROOT, "b.md", "B", "B", 0, 1),
      fake.hit(ROOT, "a.md", "A", "A", 5, 6),
    }
    local left = items.exclude_uri(hits, vim.uri_from_fname(ROOT .. "/a.md"))
    assert.equals(1, #left)
    assert.equals("b.md", left[1].path)
  end)
end)

describe("kbls.open", function()
  local root
  before_each(function()
    local lines = {}
    for i = 1, 60 do
      lines[i] = "line " .. i
    end
    root = ws.create({ ["a.md"] = table.concat(lines, "\n") .. "\n", ["b.md"] = "b\n" })
    vim.cmd("silent! %bwipeout!")
    vim.cmd("silent! tabonly | silent! only")
  end)
  after_each(function()
    vim.cmd("silent! tabonly | silent! only | silent! %bwipeout!")
    ws.remove(root)
  end)

  it("opens the file at the chunk's first line", function()
    open.open({ filename = root .. "/a.md", lnum = 42 })
    assert.equals(root .. "/a.md", vim.api.nvim_buf_get_name(0))
    assert.equals(42, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("splits, vsplits and opens tabs", function()
    vim.cmd("edit " .. root .. "/b.md")
    open.open({ filename = root .. "/a.md", lnum = 5 }, "split")
    assert.equals(2, #vim.api.nvim_tabpage_list_wins(0))
    assert.equals(5, vim.api.nvim_win_get_cursor(0)[1])
    open.open({ filename = root .. "/a.md", lnum = 6 }, "vsplit")
    assert.equals(3, #vim.api.nvim_tabpage_list_wins(0))
    open.open({ filename = root .. "/a.md", lnum = 7 }, "tab")
    assert.equals(2, #vim.api.nvim_list_tabpages())
    assert.equals(7, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("clamps a line past the end and moves within the current file", function()
    open.open({ filename = root .. "/a.md", lnum = 500 })
    assert.equals(60, vim.api.nvim_win_get_cursor(0)[1])
    open.open({ filename = root .. "/a.md", lnum = 3 })
    assert.equals(3, vim.api.nvim_win_get_cursor(0)[1])
  end)
end)

describe("kbls.live", function()
  -- A fake `send`: records params, answers when told, supports cancellation.
  local function fake_send()
    local s = { sent = {}, cancelled = {}, handlers = {} }
    s.fn = function(params, handler)
      local n = #s.sent + 1
      s.sent[n] = params.query
      s.handlers[n] = handler
      return function()
        s.cancelled[#s.cancelled + 1] = params.query
      end
    end
    s.answer = function(n, hits)
      s.handlers[n](nil, { hits = hits })
    end
    return s
  end

  it("debounces a burst of keystrokes into one request for the last query", function()
    local s = fake_send()
    local live = live_search.new({ send = s.fn, debounce = 30 })
    local got = {}
    for _, q in ipairs({ "b", "bo", "bor", "borrow" }) do
      live:update(q, function(hits, err, query)
        got[#got + 1] = { query = query, n = #hits, err = err }
      end)
    end
    assert.same({}, s.sent)
    assert.is_true(vim.wait(1000, function()
      return #s.sent == 1
    end, 5))
    assert.same({ "borrow" }, s.sent)
    s.answer(1, { { uri = "file:///x.md" } })
    assert.same({ { query = "borrow", n = 1 } }, got)
    live:close()
  end)

  it("cancels the request in flight when a newer query is sent", function()
    local s = fake_send()
    local live = live_search.new({ send = s.fn, debounce = 0 })
    local got = {}
    local function cb(_, err, query)
      got[#got + 1] = { query = query, cancelled = notify.is_cancelled(err) }
    end
    live:send("own", cb)
    assert.is_true(live:busy())
    live:send("owner", cb)
    assert.same({ "own", "owner" }, s.sent)
    assert.same({ "own" }, s.cancelled)
    -- the superseded query's callback is released with a RequestCancelled error
    assert.same({ { query = "own", cancelled = true } }, got)
    -- a late answer to the cancelled request is ignored
    s.answer(1, { {} })
    assert.equals(1, #got)
    s.answer(2, { {}, {} })
    assert.same({ query = "owner", cancelled = false }, got[2])
    assert.is_false(live:busy())
    assert.equals("owner", live:latest())
    live:close()
  end)

  it("supersede cancels only a request for another query", function()
    local s = fake_send()
    local live = live_search.new({ send = s.fn, debounce = 0 })
    local got = {}
    live:send("own", function(_, err)
      got[#got + 1] = notify.is_cancelled(err)
    end)
    assert.is_false(live:supersede("own"))
    assert.same({}, s.cancelled)
    assert.is_true(live:supersede("owner"))
    assert.same({ "own" }, s.cancelled)
    assert.same({ true }, got)
    assert.is_false(live:supersede("anything")) -- nothing in flight any more
    live:close()
  end)

  it("remembers the index state and calls on_ready once the index becomes ready", function()
    local s = fake_send()
    local ls = live_search.new({ send = s.fn, debounce = 0 })
    local fired = 0
    ls:on_ready(function()
      fired = fired + 1
    end)
    ls:send("own", function() end)
    s.handlers[1](nil, { hits = {}, index = { state = "loading", pending = 0 } })
    assert.same({ state = "loading", pending = 0 }, ls:index())
    local function status(state)
      vim.api.nvim_exec_autocmds("User", {
        pattern = "KblsIndexStatus",
        data = { client_id = 1, status = { state = state, pending = 0, files = 1, chunks = 1 } },
      })
    end
    status("indexing")
    vim.wait(50)
    assert.equals(0, fired)
    status("ready")
    assert.is_true(vim.wait(500, function()
      return fired == 1
    end, 5))
    status("ready") -- already refreshed: once
    vim.wait(50)
    assert.equals(1, fired)
    ls:close()
    assert.is_nil(ls._autocmd)
  end)

  it("answers an empty query with no hits and no request", function()
    local s = fake_send()
    local live = live_search.new({ send = s.fn, debounce = 0 })
    local got
    live:send("   ", function(hits)
      got = hits
    end)
    assert.same({}, got)
    assert.same({}, s.sent)
    live:close()
  end)

  it("with list_empty, an empty prompt lists the notes (a filter-only query)", function()
    local s = fake_send()
    local params_sent
    local ls = live_search.new({
      debounce = 0,
      list_empty = true,
      send = function(p, handler)
        params_sent = p
        return s.fn(p, handler)
      end,
    })
    ls:send("  ", function() end)
    assert.same(request_params.list_notes(), params_sent)
    assert.equals("path:**", params_sent.query)
    assert.equals(200, params_sent.limit)
    assert.is_true(params_sent.groupByFile)
    ls:close()
  end)

  it("close cancels the pending update and the request in flight", function()
    local s = fake_send()
    local live = live_search.new({ send = s.fn, debounce = 20 })
    live:send("first", function() end)
    live:update("second", function()
      error("must not be called")
    end)
    live:close()
    vim.wait(60)
    assert.same({ "first" }, s.sent)
    assert.same({ "first" }, s.cancelled)
  end)

  it("cancels through the real LSP client ($/cancelRequest)", function()
    local server = fake.new({ delay = 200, hits = { fake.hit(ROOT, "a.md", "A", "A", 0, 1) } })
    local id = vim.lsp.start({ name = "kbls", cmd = server.cmd, root_dir = ROOT }, { attach = false })
    local client = assert(vim.lsp.get_client_by_id(id))
    local live = live_search.new({
      debounce = 0,
      send = function(params, handler)
        return require("kbls.lsp.request").send(client, "kb/search", params, handler)
      end,
    })
    local got = {}
    local function cb(hits, err, query)
      got[#got + 1] = { query = query, n = #hits, cancelled = notify.is_cancelled(err) }
    end
    live:send("a", cb)
    assert.is_true(vim.wait(2000, function()
      return #server.of("kb/search") == 1
    end, 5))
    live:send("ab", cb)
    assert.is_true(vim.wait(2000, function()
      return #got == 2
    end, 5))
    assert.same({ query = "a", n = 0, cancelled = true }, got[1])
    assert.same({ query = "ab", n = 1, cancelled = false }, got[2])
    assert.equals(1, #server.cancelled)
    assert.equals(server.of("kb/search")[1].id, server.cancelled[1])
    assert.equals(1, #server.answered)
    assert.equals("ab", server.answered[1].params.query)
    live:close()
    client:stop(true)
  end)
end)
