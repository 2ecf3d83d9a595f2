-- The plugin against the protocol's JSON Schema (docs/protocol.schema.json, generated from the
-- server's wire structs): the constants, every request builder, what reaches the wire, and the
-- result readers. The readers get an example result with a distinct value in every field the
-- schema declares; a field renamed on either side shows up as a missing value.
local api = require("kbls.api")
local config = require("kbls.config")
local contract = require("kbls.contract")
local fake = require("helpers.fake_server")
local items = require("kbls.items")
local params = require("kbls.params")
local schema = require("helpers.schema")
local status = require("kbls.status")
local ws = require("helpers.workspace")

local doc, why = schema.load()
if not doc then
  io.stdout:write("contract_spec: skipped: ", why, "\n")
end

local NOTES = "/tmp/kbls-contract/notes"
local OVERRIDES = {
  uri = vim.uri_from_fname(NOTES .. "/rust/borrowing.md"),
  root = vim.uri_from_fname(NOTES),
  range = { start = { line = 4, character = 0 }, ["end"] = { line = 9, character = 0 } },
}

--- `it` that skips with the reason when there is no schema.
local function check(name, fn)
  if doc then
    it(name, fn)
  else
    pending(name .. " (" .. why .. ")")
  end
end

local function def(name)
  return doc["$defs"][name]
end

local function method(name)
  return doc.methods[name]
end

local function assert_valid(node, value, what)
  local errors = schema.validate(doc, node, value)
  assert.same({}, errors, (what or "value") .. " " .. vim.inspect(value))
end

describe("protocol schema validator", function()
  check("rejects a renamed field, a wrong type, a value out of range and a missing field", function()
    local p = method("kb/search").params
    assert.same({}, schema.validate(doc, p, { query = "x", groupByFile = true }))
    assert.matches(
      "unknown property group_by_file",
      schema.validate(doc, p, { query = "x", group_by_file = true })[1]
    )
    assert.matches("expected boolean", schema.validate(doc, p, { query = "x", groupByFile = "yes" })[1])
    assert.matches("matches no branch", schema.validate(doc, p, { query = "x", limit = 0 })[1])
    assert.matches("missing required property query", schema.validate(doc, p, { limit = 3 })[1])
    assert.matches("maxLength", schema.validate(doc, p, { query = string.rep("é", 4097) })[1])
    assert.matches("not valid UTF%-8", schema.validate(doc, p, { query = "\xe9t\xe9" })[1])
  end)
end)

describe("kbls.contract", function()
  check("modes, limits, query cap and states are the schema's", function()
    local modes = vim.deepcopy(def("Mode").enum)
    local mine = vim.deepcopy(contract.MODES)
    table.sort(modes)
    table.sort(mine)
    assert.same(modes, mine)
    local limit = schema.resolve(doc, def("SearchParams").properties.limit.anyOf[1])
    assert.equals(limit.minimum, contract.MIN_LIMIT)
    assert.equals(limit.maximum, contract.MAX_LIMIT)
    local related_limit = def("RelatedParams").properties.limit
    assert.equals(related_limit.minimum, contract.MIN_LIMIT)
    assert.equals(related_limit.maximum, contract.MAX_LIMIT)
    assert.equals(def("SearchParams").properties.query.maxLength, contract.MAX_QUERY_CHARS)
    local states, mine_states =
      vim.deepcopy(def("IndexInfo").properties.state.enum), vim.deepcopy(contract.STATES)
    table.sort(states)
    table.sort(mine_states)
    assert.same(states, mine_states)
  end)

  check("every method the plugin sends or handles is in the schema", function()
    for key, name in pairs(contract.methods) do
      if key == "index_status" then
        assert.is_table(doc.notifications[name], name)
      else
        assert.is_table(doc.methods[name], name)
      end
    end
  end)

  it("caps a query on a character boundary", function()
    local capped = contract.cap_query(string.rep("é", contract.MAX_QUERY_CHARS + 10))
    assert.equals(contract.MAX_QUERY_CHARS, vim.fn.strchars(capped))
    assert.is_true(schema.valid_utf8(capped))
    assert.equals("short", contract.cap_query("short"))
  end)
end)

describe("request builders against the schema", function()
  local root
  before_each(function()
    config.setup({})
    root = ws.create({ ["n.md"] = "# N\n" })
  end)
  after_each(function()
    vim.cmd("silent! %bwipeout!")
    ws.remove(root)
  end)

  check("kb/search params, for every mode and every option", function()
    local p = method("kb/search").params
    assert_valid(p, params.search("who owns the value"))
    for _, mode in ipairs(contract.MODES) do
      assert_valid(p, params.search("q", { mode = mode }), mode)
    end
    assert_valid(
      p,
      params.search("q", {
        limit = contract.MAX_LIMIT,
        group_by_file = true,
        filters = { paths = { "notes/**" }, tags = { "rust" }, types = { "md" } },
      })
    )
    assert_valid(p, params.search(string.rep("é", contract.MAX_QUERY_CHARS * 2)), "long multibyte query")
  end)

  check("kb/notes and kb/tags params", function()
    local notes = method("kb/notes").params
    assert_valid(notes, params.list_notes(), "the notes listing")
    assert_valid(notes, params.list_notes({ filters = { tags = { "rust" } }, limit = 5, offset = 10 }))
    local tags = method("kb/tags").params
    assert_valid(tags, params.tags())
    assert.equals("{}", vim.json.encode(params.tags()))
    for _, limit in ipairs({ 0, 1, contract.MAX_TAGS, 1e6 }) do
      assert_valid(tags, params.tags({ prefix = " #ru ", limit = limit }), "limit " .. limit)
    end
    assert.equals(def("TagsParams").properties.limit.maximum, contract.MAX_TAGS)
  end)

  check("kb/related, kb/reindex and kb/status params", function()
    vim.cmd("edit " .. root .. "/n.md")
    local buf = vim.api.nvim_get_current_buf()
    assert_valid(method("kb/related").params, params.related(buf))
    assert_valid(method("kb/related").params, params.related(buf, { line = 3 }, 4))
    assert_valid(method("kb/reindex").params, params.reindex())
    assert_valid(
      method("kb/reindex").params,
      params.reindex({ force = true, uris = { vim.uri_from_fname(root) } })
    )
    assert.equals(vim.NIL, method("kb/status").params) -- no params: an empty object on the wire
    assert.equals("{}", vim.json.encode(params.status()))
  end)

  check("what reaches the server through kbls.api is valid", function()
    local server = fake.new({})
    config.setup({ cmd = server.cmd })
    local client = vim.lsp.get_client_by_id(require("kbls.lsp.clients").start_root(root))
    vim.cmd("edit " .. root .. "/n.md")
    local done = 0
    local function count()
      done = done + 1
    end
    api.search(params.search("borrow", { mode = "lexical", limit = 3 }), count, { client = client })
    api.related(params.related(0, { line = 0 }), count, { client = client })
    api.reindex(params.reindex({ force = true }), count, { client = client })
    api.reindex(nil, count, { client = client })
    api.status(count, { client = client })
    api.tags(params.tags({ prefix = "ru" }), count, { client = client })
    api.tags(nil, count, { client = client })
    api.notes(params.list_notes({ filters = { paths = { "a/**" } } }), count, { client = client })
    assert.is_true(vim.wait(3000, function()
      return done == 8
    end, 10))
    for _, req in ipairs(server.requests) do
      local spec = doc.methods[req.method]
      if spec then
        if spec.params == vim.NIL then
          assert.equals("{}", vim.json.encode(req.params), req.method)
        else
          assert_valid(spec.params, req.params, req.method)
        end
      end
    end
    assert.equals(8, #vim.tbl_filter(function(r)
      return doc.methods[r.method] ~= nil
    end, server.requests))
    client:stop(true)
  end)
end)

describe("result readers against the schema", function()
  check("a Hit becomes an item with every field read", function()
    local hit = schema.example(doc, def("Hit"), OVERRIDES)
    assert_valid(def("Hit"), hit, "example hit")
    local item = items.item(hit)
    assert.equals(NOTES .. "/rust/borrowing.md", item.filename)
    assert.equals(hit.uri, item.uri)
    assert.equals(hit.path, item.relpath)
    assert.equals(hit.title, item.title)
    assert.same({ hit.breadcrumb }, item.sections)
    assert.equals(hit.snippet, item.snippet)
    assert.same(hit.reasons, item.reasons)
    assert.equals(hit.score, item.score)
    assert.equals(hit.more, item.more)
    assert.equals(5, item.lnum)
    assert.equals(9, item.end_lnum)
  end)

  check("a search result's hits and index state are read", function()
    local result = schema.example(doc, def("SearchResult"), OVERRIDES)
    assert_valid(method("kb/search").result, result, "example result")
    assert.equals(1, #items.items(result.hits))
    assert.is_string(result.index.state)
    assert.equals(
      "kb: " .. result.index.state .. " (" .. result.index.pending .. ")",
      status.short(result.index)
    )
  end)

  check("a kb/notes note becomes an item at its first line, its date and tags shown", function()
    local result = schema.example(doc, def("NotesResult"), OVERRIDES)
    assert_valid(method("kb/notes").result, result, "example notes result")
    local note = result.notes[1]
    local item = items.items(items.note_hits(result.notes))[1]
    assert.equals(NOTES .. "/rust/borrowing.md", item.filename)
    assert.equals(note.path, item.relpath)
    assert.equals(note.title, item.title)
    assert.equals(note.snippet, item.snippet)
    assert.equals(note.modified, item.modified)
    assert.same(note.tags, item.tags)
    assert.equals(1, item.lnum)
    local shown = items.format_item(item)
    assert.matches(os.date("%Y-%m-%d", math.floor(note.modified / 1000)), shown, 1, true)
    assert.matches("#" .. note.tags[1], shown, 1, true)
  end)

  check("a kb/tags tag is labelled with its count", function()
    local result = schema.example(doc, def("TagsResult"), {})
    assert_valid(method("kb/tags").result, result, "example tags result")
    local tag = result.tags[1]
    assert.equals(("%s (%d)"):format(tag.name, tag.count), items.tag_label(tag))
  end)

  check("kb/status: every field shows in :KbStatus, none as '?'", function()
    local st = schema.example(doc, def("StatusResult"), { uri = OVERRIDES.root })
    assert_valid(method("kb/status").result, st, "example status")
    local text = table.concat(status.lines(st), "\n")
    assert.is_nil(text:find("?", 1, true), text)
    local store = st.roots[1]
    for _, v in ipairs({
      st.version,
      st.state,
      st.queue,
      st.model,
      st.dimension,
      st.embeddedSinceStart,
      st.reusedSinceStart,
      NOTES,
      store.files,
      store.chunks,
      store.store,
      status.human_bytes(store.storeBytes),
      store.sqlite.module,
      store.sqlite.version,
      store.sqlite.vec,
      store.errors[1].path,
      store.errors[1].reason,
    }) do
      assert.matches(tostring(v), text, 1, true)
    end
  end)

  check("kb/indexStatus feeds the statusline", function()
    local note = schema.example(doc, doc.notifications["kb/indexStatus"].params, { state = "indexing" })
    assert_valid(doc.notifications["kb/indexStatus"].params, note, "example notification")
    assert.equals(("kb: indexing (%d)"):format(note.pending), status.short(note))
  end)

  check("the unit tests' fake notes and listings are valid protocol", function()
    local note = fake.note(NOTES, "a.md", "A", 1764500000000, { "rust" })
    assert_valid(def("Note"), note, "fake note")
    assert_valid(
      method("kb/notes").result,
      { notes = { note }, total = 1, index = { state = "ready", pending = 0 } },
      "fake notes result"
    )
  end)

  check("the unit tests' fake hits and answers are valid protocol", function()
    local hit = fake.hit(NOTES, "a.md", "A", "A > B", 2, 4)
    assert_valid(def("Hit"), hit, "fake hit")
    assert_valid(
      method("kb/search").result,
      { hits = { hit }, tookMs = 1, index = { state = "ready", pending = 0 } },
      "fake search result"
    )
  end)
end)
