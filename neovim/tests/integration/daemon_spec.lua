-- Integration: the plugin against the real `kbls serve` ($KBLS_SERVER) on a temporary workspace.
-- Everything waits with vim.wait and a timeout, so a hang fails fast with a message.
local api = require("kbls.api")
local clients = require("kbls.lsp.clients")
local spec_clients = require("helpers.clients")
local kbls_items = require("kbls.items")
local real_server = require("helpers.real_server")
local kbls = require("kbls")
local live_search = require("kbls.live")
local notify = require("kbls.notify")
local request_params = require("kbls.params")
local request = require("kbls.lsp.request")
local windows = require("helpers.windows")
local ws = require("helpers.workspace")

local SERVER = real_server.SERVER
local START_TIMEOUT = real_server.START_TIMEOUT
local REQUEST_TIMEOUT = real_server.REQUEST_TIMEOUT

local CONFIG, STORE = ws.config()
local NOTES = {
  [".kbls.yaml"] = CONFIG,
  ["rust/borrowing.md"] = table.concat({
    "---",
    "tags: [rust, memory]",
    "---",
    "# Borrowing",
    "",
    "References let a function use a value without taking ownership of it.",
    "The borrow checker enforces that references never outlive the data they point to.",
    "",
    "## Mutable references",
    "",
    "You can have only one mutable reference to a particular piece of data at a time.",
    "This prevents data races at compile time: two pointers cannot write the same value",
    "concurrently, and nobody reads while somebody else writes.",
    "",
  }, "\n"),
  ["astronomy/black-holes.md"] = table.concat({
    "# Black holes",
    "",
    "A black hole forms when a massive star collapses under its own gravity at the end of",
    "its life, after the nuclear fusion in its core can no longer hold it up.",
    "",
    "Stellar black holes weigh a few solar masses; supermassive ones sit in galaxy centres.",
    "",
    "## Event horizon",
    "",
    "The event horizon is the boundary beyond which nothing, not even light, can escape the",
    "black hole's gravitational pull. Its radius is the Schwarzschild radius, and an outside",
    "observer sees a clock falling towards the horizon slow down and redshift forever.",
    "",
    "## Hawking radiation",
    "",
    "Quantum effects near the horizon make black holes emit faint thermal radiation, so over",
    "unimaginably long times they evaporate.",
    "",
  }, "\n"),
  ["cooking/sourdough.md"] = table.concat({
    "# Sourdough bread",
    "",
    "Sourdough is leavened by a starter: a fermented mix of flour and water full of wild",
    "yeast and lactic acid bacteria. Feed the starter and wait until it doubles and smells",
    "sour before mixing the dough. See [yeast bread](bread.md) for the basic method.",
    "",
    "## Baking",
    "",
    "Bake the loaf in a preheated dutch oven at 250 °C with the lid on for steam, then",
    "take the lid off to brown the crust.",
    "",
  }, "\n"),
  ["cooking/bread.md"] = table.concat({
    "# Yeast bread",
    "",
    "Bread dough is flour, water, salt and yeast. Knead the dough to develop gluten, let it",
    "rise until doubled, shape the loaf, proof it again and bake it in a hot oven until the",
    "crust is brown. Sourdough replaces commercial yeast with a starter.",
    "",
  }, "\n"),
  ["gardening/tomatoes.md"] = table.concat({
    "# Growing tomatoes",
    "",
    "Tomatoes need full sun, deep watering and a stake or cage. Pinch off the suckers that",
    "grow between the stem and the branches, and mulch against blight.",
    "",
  }, "\n"),
}
local NOTE_COUNT = 5

--- Wait for `fn(done)` to call `done(...)`; returns its arguments or fails with `what`.
local function await(what, fn, timeout)
  local done, args = false, nil
  fn(function(...)
    done, args = true, { n = select("#", ...), ... }
  end)
  local ok = vim.wait(timeout or REQUEST_TIMEOUT, function()
    return done
  end, 20)
  assert(ok, what .. ": no answer within " .. (timeout or REQUEST_TIMEOUT) .. " ms")
  return unpack(args, 1, args.n)
end

--- Run `fn` with vim.notify captured; returns the messages.
local function capture_notify(fn)
  local msgs, orig = {}, vim.notify
  vim.notify = function(msg, level)
    msgs[#msgs + 1] = { msg = msg, level = level }
  end
  local ok, err = pcall(fn)
  vim.notify = orig
  assert(ok, err)
  return msgs
end

local function paths(list)
  return vim.tbl_map(function(item)
    return item.relpath
  end, list)
end

describe("kbls against the real daemon", function()
  local root, client, cwd
  local progress, index_status = {}, {} -- everything received, from the very start

  setup(function()
    real_server.require_server()
    root = ws.create(NOTES)
    cwd = vim.fn.getcwd()
    vim.cmd("cd " .. vim.fn.fnameescape(root))
    vim.api.nvim_create_autocmd("LspProgress", {
      callback = function(ev)
        local value = ev.data and ev.data.params and ev.data.params.value
        if type(value) == "table" then
          progress[#progress + 1] = { client_id = ev.data.client_id, kind = value.kind, title = value.title }
        end
      end,
    })
    vim.api.nvim_create_autocmd("User", {
      pattern = "KblsIndexStatus",
      callback = function(ev)
        index_status[#index_status + 1] = ev.data.status
      end,
    })
    kbls.setup({ cmd = { SERVER, "serve" }, picker = "select", completion = true })
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/rust/borrowing.md"))
    client = real_server.initialized(root)
    -- Wait until the first index is complete: kb/status says ready with every note in it.
    real_server.wait_indexed(client, NOTE_COUNT)
  end)

  teardown(function()
    spec_clients.stop_all()
    for _, c in ipairs(clients.list()) do
      c:stop(true)
    end
    if cwd then
      vim.cmd("cd " .. vim.fn.fnameescape(cwd))
    end
    ws.remove(root)
  end)

  it("attaches one client to a markdown buffer, rooted at the .kbls.yaml folder", function()
    assert.equals(1, #clients.list(0))
    assert.equals(root, client.root_dir)
    assert.is_true(
      client.server_capabilities.hoverProvider == true
        or type(client.server_capabilities.hoverProvider) == "table"
    )
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/cooking/bread.md"))
    assert.is_true(vim.wait(5000, function()
      return clients.list(0)[1] ~= nil
    end, 20))
    assert.equals(client.id, clients.list(0)[1].id)
    assert.equals(1, #clients.list())
  end)

  it("reports indexing as standard LSP progress and kb/indexStatus", function()
    local kinds = {}
    -- `end` may arrive just after kb/status already says ready
    vim.wait(REQUEST_TIMEOUT, function()
      for _, p in ipairs(progress) do
        if p.client_id == client.id then
          kinds[p.kind] = true
        end
      end
      return kinds.begin == true and kinds["end"] == true
    end, 20)
    assert.is_true(kinds.begin == true and kinds["end"] == true, "progress seen: " .. vim.inspect(progress))
    assert.is_true(#index_status > 0, "no kb/indexStatus notification")
    assert.equals("ready", index_status[#index_status].state)
    assert.equals("", kbls.statusline())
  end)

  it("kb/search returns the expected note first", function()
    local err, result = await("kb/search", function(done)
      api.search(
        request_params.search("when does a sourdough starter need feeding"),
        done,
        { client = client }
      )
    end)
    assert.is_nil(err)
    assert.is_table(result.hits)
    assert.is_true(#result.hits > 0, "no hits")
    assert.equals("cooking/sourdough.md", result.hits[1].path)
    local item = kbls_items.item(result.hits[1])
    assert.equals(root .. "/cooking/sourdough.md", item.filename)
    assert.equals("Sourdough bread", item.title)
  end)

  it("choosing an entry in vim.ui.select opens the file at the chunk's line", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/gardening/tomatoes.md"))
    local chosen, shown
    local orig = vim.ui.select
    vim.ui.select = function(items, opts, cb)
      shown = vim.tbl_map(opts.format_item, items)
      for _, item in ipairs(items) do
        if
          item.relpath == "astronomy/black-holes.md"
          and #item.sections > 0
          and item.sections[1] == "Event horizon"
        then
          chosen = item
          break
        end
      end
      chosen = chosen or items[1]
      cb(chosen, 1)
    end
    local ok, e = pcall(kbls.search, "nothing escapes the event horizon, not even light")
    local opened = vim.wait(REQUEST_TIMEOUT, function()
      return chosen ~= nil and vim.api.nvim_buf_get_name(0) == chosen.filename
    end, 20)
    vim.ui.select = orig
    assert(ok, e)
    assert(opened, "no file was opened; entries shown: " .. vim.inspect(shown))
    assert.equals("astronomy/black-holes.md", chosen.relpath, vim.inspect(shown))
    assert.equals(root .. "/astronomy/black-holes.md", vim.api.nvim_buf_get_name(0))
    assert.is_true(chosen.lnum > 1, "the Event horizon chunk should not start at line 1")
    assert.equals(chosen.lnum, vim.api.nvim_win_get_cursor(0)[1])
    local chunk = table.concat(vim.api.nvim_buf_get_lines(0, chosen.lnum - 1, chosen.end_lnum, false), "\n")
    assert.matches("event horizon", chunk:lower(), 1, true)
    assert.matches("astronomy/black%-holes%.md:" .. chosen.lnum, shown[1] and table.concat(shown, "\n") or "")
  end)

  it(":KbRelated lists related notes and not the buffer itself", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/cooking/sourdough.md"))
    assert.is_true(vim.wait(5000, function()
      return clients.list(0)[1] ~= nil
    end, 20))
    vim.api.nvim_win_set_cursor(0, { 3, 0 })
    local listed
    local orig = vim.ui.select
    vim.ui.select = function(items, _, cb)
      listed = items
      cb(nil)
    end
    local msgs = capture_notify(function()
      vim.cmd("KbRelated")
      vim.wait(REQUEST_TIMEOUT, function()
        return listed ~= nil
      end, 20)
    end)
    vim.ui.select = orig
    assert(listed, "no picker was shown; messages: " .. vim.inspect(msgs))
    assert.is_true(#listed > 0)
    local self_path = root .. "/cooking/sourdough.md"
    for _, item in ipairs(listed) do
      assert.are_not.equal(self_path, item.filename)
    end
    assert.is_true(
      vim.tbl_contains(paths(listed), "cooking/bread.md"),
      "bread.md not among " .. vim.inspect(paths(listed))
    )
  end)

  it(":KbRelatedPanel lists the notes related to the cursor's section", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/cooking/sourdough.md"))
    assert.is_true(vim.wait(5000, function()
      return clients.list(0)[1] ~= nil
    end, 20))
    vim.api.nvim_win_set_cursor(0, { 3, 0 })
    local panel = require("kbls.panel")
    vim.cmd("KbRelatedPanel")
    local text = ""
    local shown = vim.wait(REQUEST_TIMEOUT, function()
      text = table.concat(vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false), "\n")
      return text:find("cooking/bread.md", 1, true) ~= nil
    end, 20)
    vim.cmd("KbRelatedPanel")
    assert(shown, "panel: " .. text)
    assert.is_nil(text:find("cooking/sourdough.md:", 1, true), text) -- never the note itself
  end)

  it("kb/related itself never returns the note (server side)", function()
    local uri = vim.uri_from_fname(root .. "/cooking/sourdough.md")
    local err, result = await("kb/related", function(done)
      api.related({ uri = uri, limit = 10 }, done, { client = client })
    end)
    assert.is_nil(err)
    assert.is_true(#result.hits > 0)
    for _, hit in ipairs(result.hits) do
      assert.are_not.equal("cooking/sourdough.md", hit.path)
      assert.is_table(hit.reasons)
    end
  end)

  it("hover in markdown returns the related notes as markdown", function()
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/cooking/sourdough.md"))
    local buf = vim.api.nvim_get_current_buf()
    assert.is_true(vim.wait(5000, function()
      return clients.list(buf)[1] ~= nil
    end, 20))
    vim.api.nvim_win_set_cursor(0, { 3, 0 })
    local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
    local responses = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, REQUEST_TIMEOUT)
    assert.is_table(responses, "no hover response")
    local res = responses[client.id]
    assert.is_nil(res.err)
    assert.is_table(res.result, "hover returned nothing")
    local contents = res.result.contents
    assert.equals("markdown", contents.kind)
    assert.matches("%]%(file://", contents.value)
    assert.is_nil(
      contents.value:find("sourdough.md", 1, true),
      "hover lists the note itself: " .. contents.value
    )

    -- and `K` (vim.lsp.buf.hover) shows it in a floating window
    vim.lsp.buf.hover()
    local float = windows.wait_float(REQUEST_TIMEOUT)
    assert(float, "no hover window")
    local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), "\n")
    assert.is_true(#text > 0)

    -- gx on the first link of the hover opens that note here, at the linked line
    vim.api.nvim_set_current_win(float)
    local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    local row, uri
    for i, l in ipairs(lines) do
      uri = l:match("%((file://[^)]+#L%d+)%)")
      if uri then
        row = i
        break
      end
    end
    assert(row, "no link in the hover: " .. text)
    vim.api.nvim_win_set_cursor(0, { row, (lines[row]:find("[", 1, true)) })
    vim.treesitter.get_parser(0):parse(true) -- a UI parses the inline markdown when it draws
    vim.cmd("normal gx")
    local target = require("kbls.hover_links").parse(uri)
    assert.is_true(vim.wait(5000, function()
      return vim.api.nvim_buf_get_name(0) == target.filename
    end, 20))
    assert.equals(target.lnum, vim.api.nvim_win_get_cursor(0)[1])
    assert.equals("", vim.api.nvim_win_get_config(0).relative)
  end)

  it("workspace/symbol searches the knowledge base", function()
    local responses = vim.lsp.buf_request_sync(
      0,
      "workspace/symbol",
      { query = "schwarzschild radius event horizon" },
      REQUEST_TIMEOUT
    )
    local res = responses and responses[client.id]
    assert.is_table(res, "no workspace/symbol response")
    assert.is_nil(res.err)
    assert.is_true(#res.result > 0)
    assert.matches("black%-holes%.md$", vim.uri_to_fname(res.result[1].location.uri))
  end)

  it("a live search cancels superseded queries and answers the last one", function()
    local live = live_search.new({
      debounce = 0,
      search = { limit = 5 },
      send = function(params, handler)
        return api.search(params, handler, { client = client })
      end,
    })
    local got = {}
    local function cb(hits, err, query)
      got[#got + 1] = { query = query, hits = hits, cancelled = notify.is_cancelled(err), err = err }
    end
    live:send("tom", cb)
    live:send("tomato", cb)
    live:send("tomatoes need full sun", cb)
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        return #got == 3
      end, 20),
      "answers: " .. vim.inspect(got)
    )
    live:close()
    assert.is_true(got[1].cancelled)
    assert.is_true(got[2].cancelled)
    assert.is_nil(got[3].err)
    assert.equals("tomatoes need full sun", got[3].query)
    assert.equals("gardening/tomatoes.md", got[3].hits[1].path)
  end)

  it("an empty prompt of a live picker lists every note, most recently modified first", function()
    local function listing()
      local ls = live_search.new({
        debounce = 0,
        list_empty = true,
        list = function(p, handler)
          return api.notes(p, handler, { client = client })
        end,
      })
      local got
      ls:send("", function(hits, err, _, result)
        got = { hits = hits, err = err, result = result }
      end)
      assert.is_true(vim.wait(REQUEST_TIMEOUT, function()
        return got ~= nil
      end, 20))
      ls:close()
      assert.is_nil(got.err)
      return got
    end
    local got = listing()
    assert.equals(NOTE_COUNT, #got.hits, vim.inspect(got.hits))
    assert.equals(NOTE_COUNT, got.result.total)
    for i, hit in ipairs(got.hits) do
      local st = assert(vim.uv.fs_stat(root .. "/" .. hit.path))
      assert.equals(st.mtime.sec * 1000 + math.floor(st.mtime.nsec / 1e6), hit.modified, hit.path)
      if i > 1 then
        assert.is_true(got.hits[i - 1].modified >= hit.modified, "not most recent first")
      end
    end
    local borrowing = vim.tbl_filter(function(h)
      return h.path == "rust/borrowing.md"
    end, got.hits)[1]
    assert.same({ "memory", "rust" }, borrowing.tags)
    assert.is_true(#borrowing.snippet > 0)

    -- a note written from Neovim moves to the top once the daemon re-indexed it
    local last = got.hits[#got.hits].path
    vim.wait(1100) -- a new mtime second on file systems with coarse timestamps
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. last))
    vim.api.nvim_buf_set_lines(0, -1, -1, false, { "", "One more line, written now." })
    vim.cmd("silent write")
    local top
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        top = listing().hits[1]
        return top and top.path == last
      end, 200),
      "the saved note " .. last .. " was not listed first: " .. vim.inspect(top)
    )
  end)

  it(":KbTags lists the tags with counts and the chosen tag lists its notes", function()
    local shown, prompts = {}, {}
    local orig = vim.ui.select
    vim.ui.select = function(list, opts, cb)
      prompts[#prompts + 1] = opts.prompt
      shown[#shown + 1] = vim.tbl_map(opts.format_item, list)
      for _, entry in ipairs(list) do
        if entry.name == "rust" or entry.relpath == "rust/borrowing.md" then
          return cb(entry, 1)
        end
      end
      cb(nil)
    end
    local ok, e = pcall(vim.cmd, "KbTags")
    local done = vim.wait(REQUEST_TIMEOUT, function()
      return #shown == 2 and vim.api.nvim_buf_get_name(0) == root .. "/rust/borrowing.md"
    end, 20)
    vim.ui.select = orig
    assert(ok, e)
    assert(done, "KbTags did not list the tags and then the notes: " .. vim.inspect(shown))
    assert.same({ "memory (1)", "rust (1)" }, shown[1])
    assert.same({ "kbls tags", "kbls #rust" }, prompts)
    assert.equals(1, #shown[2])
    assert.matches("Borrowing  rust/borrowing.md  %d+%-%d+%-%d+  #memory #rust", shown[2][1])
    local err, result = await("kb/tags", function(cb)
      api.tags(request_params.tags({ prefix = "#RU" }), cb, { client = client })
    end)
    assert.is_nil(err)
    assert.same({ { name = "rust", count = 1 } }, result.tags)
    assert.equals(1, result.total)
  end)

  it(":KbStatus shows version, model and store; :KbReindex queues", function()
    local status_msgs = capture_notify(function()
      local result = await("kb/status", function(done)
        kbls.status(done)
      end)
      assert.is_table(result)
    end)
    local text = status_msgs[1] and status_msgs[1].msg or ""
    assert.matches("kbls %d+%.%d+", text)
    assert.matches("model: ", text)
    assert.matches("store: " .. STORE, text, 1, true)

    local reindex_msgs = capture_notify(function()
      local result = await("kb/reindex", function(done)
        kbls.reindex({ force = false }, done)
      end)
      assert.is_table(result)
      assert.is_number(result.queued)
    end)
    assert.matches("queued", reindex_msgs[1].msg)
  end)

  it(":checkhealth kbls reports OK", function()
    vim.cmd("checkhealth kbls")
    local buf = vim.api.nvim_get_current_buf()
    assert.equals("checkhealth", vim.bo[buf].filetype)
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local text = table.concat(lines, "\n")
    vim.cmd("bwipeout!")
    assert.matches("OK Neovim 0%.1%d", text)
    assert.matches("OK server found: " .. vim.pesc(vim.fn.exepath(SERVER)), text)
    assert.matches("OK kbls %S+ running for " .. vim.pesc(root), text)
    assert.matches("OK model: ", text)
    assert.matches("OK store for " .. vim.pesc(root) .. ": " .. vim.pesc(STORE) .. " ", text)
    assert.matches("telescope", text)
    assert.is_nil(text:find("ERROR", 1, true), text)
  end)

  --- Edit `rel` (a new file of the workspace) with `lines`; write it when `save`, then wait until
  --- the daemon indexed it (kb/status counts `files` notes, nothing queued).
  local function edit_new(rel, lines, save, files)
    local path = root .. "/" .. rel
    vim.fn.mkdir(vim.fs.dirname(path), "p")
    vim.cmd("edit " .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    if vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] ~= lines[1] then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    end
    assert.is_true(vim.wait(5000, function()
      return clients.list(buf)[1] ~= nil
    end, 20))
    if save then
      vim.cmd("silent write")
      local last
      assert(
        vim.wait(START_TIMEOUT, function()
          last = request.sync(client, "kb/status", vim.empty_dict(), REQUEST_TIMEOUT)
          return last ~= nil
            and last.state == "ready"
            and (last.queue or 0) == 0
            and (last.roots[1].files or 0) >= files
        end, 250),
        rel .. " was not indexed; last kb/status: " .. vim.inspect(last)
      )
    end
    return buf
  end

  it("completion after [[ offers first the note the paragraph is about", function()
    local paragraph = "Only one mutable reference to a value may exist at a time, so two pointers never "
      .. "write the same data concurrently and the compiler rules out data races. [["
    local buf = edit_new("drafts/ideas.md", { "# Ideas", "", paragraph }, false)
    -- completion = true wires vim.lsp.completion (autotrigger) into the attached buffer
    assert.is_true(
      vim.wait(5000, function()
        return pcall(vim.api.nvim_get_autocmds, { group = ("nvim.lsp.completion_%d"):format(buf) })
      end, 20),
      "vim.lsp.completion is not enabled for the buffer"
    )
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = 2, character = #paragraph },
      context = { triggerKind = 2, triggerCharacter = "[" },
    }
    local responses = vim.lsp.buf_request_sync(buf, "textDocument/completion", params, REQUEST_TIMEOUT)
    local res = responses and responses[client.id]
    assert.is_table(res, "no completion response")
    assert.is_nil(res.err)
    local list = res.result and (res.result.items or res.result) or {}
    local offered = vim.tbl_map(function(item)
      return item.detail or item.label
    end, list)
    local rank
    for i, item in ipairs(list) do
      if (item.detail or ""):find("rust/borrowing.md", 1, true) then
        rank = i
        break
      end
    end
    assert(rank == 1, "rust/borrowing.md is not the first item: " .. vim.inspect(offered))
    assert.matches("borrowing", list[rank].textEdit.newText:lower(), 1, true)
    vim.cmd("bwipeout!")
  end)

  it(":KbRelatedPanel follows the cursor: another section, other related notes", function()
    local buf = edit_new("mixed/evening.md", {
      "# Evening notes",
      "",
      "## Night sky",
      "",
      "A dying giant star can collapse into an object whose gravity is so strong that light",
      "cannot leave it; a supermassive one sits at the centre of our galaxy. Astronomers find",
      "them by the stars that orbit an invisible mass, and by the hot gas that spirals in and",
      "glows in X-rays before it falls past the point of no return. When two of them merge they",
      "shake space itself, and detectors on Earth hear the gravitational waves of the collision.",
      "",
      "## Vegetable patch",
      "",
      "The plants on the balcony want full sun, deep watering and a stake; pinch the side",
      "shoots between stem and branches and mulch the soil against blight. Water at the",
      "roots in the morning rather than on the leaves, tie the stems to the cage as they",
      "grow, and pick the red fruit when it is ripe. Seedlings go out after the last frost,",
      "planted deep so that roots form along the buried stem, in a sunny and sheltered spot.",
      "",
    }, true, NOTE_COUNT + 1)
    local panel = require("kbls.panel")
    local function first_entry()
      local n = vim.api.nvim_buf_line_count(panel.state.buf)
      for row = 1, n do
        local item = panel.state.shown[row]
        if item then
          return item.relpath
        end
      end
    end
    local win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_cursor(win, { 5, 0 })
    vim.cmd("KbRelatedPanel")
    local first
    local ok = vim.wait(REQUEST_TIMEOUT, function()
      first = first_entry()
      return first == "astronomy/black-holes.md"
    end, 20)
    local night = table.concat(vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false), "\n")
    assert(ok, "night sky section, panel: " .. night)
    -- move to the other section; the panel follows CursorMoved (debounced)
    vim.api.nvim_win_set_cursor(win, { 14, 0 })
    vim.api.nvim_exec_autocmds("CursorMoved", { buffer = buf })
    ok = vim.wait(REQUEST_TIMEOUT, function()
      first = first_entry()
      return first == "gardening/tomatoes.md"
    end, 20)
    local patch = table.concat(vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false), "\n")
    vim.cmd("KbRelatedPanel")
    assert(ok, "vegetable patch section, panel: " .. patch)
    assert.are_not.equal(night, patch)
    assert.is_nil(patch:find("mixed/evening.md:", 1, true), patch)
  end)

  it(":'<,'>KbSearch searches the selection; :KbSearch! fills the quickfix list", function()
    edit_new("drafts/query.md", {
      "# Question",
      "",
      "an outside observer sees a clock slow down near the event horizon, at the Schwarzschild radius",
    }, false)
    vim.cmd("normal! 3GV\27")
    local listed
    local orig = vim.ui.select
    vim.ui.select = function(list, _, cb)
      listed = list
      cb(nil)
    end
    local ok, e = pcall(vim.cmd, "'<,'>KbSearch")
    vim.wait(REQUEST_TIMEOUT, function()
      return listed ~= nil
    end, 20)
    vim.ui.select = orig
    assert(ok, e)
    assert(listed and listed[1], "no picker was shown for the selection")
    assert.equals("astronomy/black-holes.md", listed[1].relpath, vim.inspect(paths(listed)))

    vim.fn.setqflist({}, "r")
    vim.cmd("KbSearch! when does a sourdough starter need feeding")
    local qf = {}
    assert.is_true(
      vim.wait(REQUEST_TIMEOUT, function()
        qf = vim.fn.getqflist()
        return #qf > 0
      end, 20),
      "the quickfix list stayed empty"
    )
    vim.cmd("cclose")
    assert.equals(root .. "/cooking/sourdough.md", vim.api.nvim_buf_get_name(qf[1].bufnr))
    assert.is_true(qf[1].lnum >= 1)
    assert.matches("Sourdough bread", qf[1].text, 1, true)
    vim.cmd("bwipeout!")
  end)
end)
