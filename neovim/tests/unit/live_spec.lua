local fake = require("helpers.fake_server")
local live_search = require("kbls.live")
local notify = require("kbls.notify")
local request_params = require("kbls.params")

local ROOT = "/home/me/notes"

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

  -- A live search over a fake send (debounce: ms, 0 by default), and that fake.
  local function new_live(debounce)
    local s = fake_send()
    return live_search.new({ send = s.fn, debounce = debounce or 0 }), s
  end

  -- Counts the times `live` calls on_ready (in `.fired`).
  local function count_ready(live)
    local counter = { fired = 0 }
    live:on_ready(function()
      counter.fired = counter.fired + 1
    end)
    return counter
  end

  -- The kb/indexStatus notification of client 1, as the plugin re-fires it.
  local function index_status(state, count)
    vim.api.nvim_exec_autocmds("User", {
      pattern = "KblsIndexStatus",
      data = { client_id = 1, status = { state = state, pending = 0, files = count, chunks = count } },
    })
  end

  it("debounces a burst of keystrokes into one request for the last query", function()
    local live, s = new_live(30)
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
    local live, s = new_live()
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
    local live, s = new_live()
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
    local ls, s = new_live()
    local ready = count_ready(ls)
    ls:send("own", function() end)
    s.handlers[1](nil, { hits = {}, index = { state = "loading", pending = 0 } })
    assert.same({ state = "loading", pending = 0 }, ls:index())
    index_status("indexing", 1)
    vim.wait(50)
    assert.equals(0, ready.fired)
    index_status("ready", 1)
    assert.is_true(vim.wait(500, function()
      return ready.fired == 1
    end, 5))
    index_status("ready", 1) -- already refreshed: once
    vim.wait(50)
    assert.equals(1, ready.fired)
    ls:close()
    assert.is_nil(ls._autocmd)
  end)

  it("calls on_ready after indexing that followed an answer said to be ready", function()
    local ls, s = new_live()
    local ready = count_ready(ls)
    index_status("ready", 0) -- before any answer: nothing to refresh
    ls:send("tides", function() end)
    s.handlers[1](nil, { hits = {}, index = { state = "ready", pending = 0 } })
    index_status("ready", 0)
    vim.wait(50)
    assert.equals(0, ready.fired) -- nothing changed since the answer
    index_status("indexing", 0) -- the first scan starts after the answer
    index_status("ready", 0)
    assert.is_true(vim.wait(500, function()
      return ready.fired == 1
    end, 5))
    ls:close()
  end)

  it("answers an empty query with no hits and no request", function()
    local live, s = new_live()
    local got
    live:send("   ", function(hits)
      got = hits
    end)
    assert.same({}, got)
    assert.same({}, s.sent)
    live:close()
  end)

  it("with list_empty, an empty prompt lists the notes with kb/notes, most recent first", function()
    local s = fake_send()
    local listed, searched, last_search = {}, 0, nil
    local notes = {
      fake.note(ROOT, "new.md", "New", 1764500000000, { "rust" }),
      fake.note(ROOT, "old.md", "Old", 1700000000000),
    }
    local ls = live_search.new({
      debounce = 0,
      list_empty = true,
      search = { filters = { tags = { "rust" } } },
      send = function(p, handler)
        searched, last_search = searched + 1, p
        return s.fn(p, handler)
      end,
      list = function(p, handler)
        listed[#listed + 1] = p
        handler(nil, { notes = notes, total = 2, index = { state = "ready", pending = 0 } })
        return function() end
      end,
    })
    local got
    ls:send("  ", function(hits, err)
      got = { hits = hits, err = err }
    end)
    assert.equals(0, searched)
    assert.same({ request_params.list_notes({ filters = { tags = { "rust" } } }) }, listed)
    assert.same({ limit = 200, filters = { tags = { "rust" } } }, listed[1])
    assert.is_nil(got.err)
    assert.same(
      { "new.md", "old.md" },
      vim.tbl_map(function(h)
        return h.path
      end, got.hits)
    )
    assert.same(
      { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } },
      got.hits[1].range
    )
    assert.equals("ready", ls:index().state)
    -- typing searches within the same filters
    ls:send("borrow", function() end)
    assert.equals(1, searched)
    assert.same({ tags = { "rust" } }, last_search.filters)
    ls:close()
  end)

  it("close cancels the pending update and the request in flight", function()
    local live, s = new_live(20)
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
