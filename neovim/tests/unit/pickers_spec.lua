local api = require("kbls.api")
local config = require("kbls.config")
local fake = require("helpers.fake_server")
local kbls = require("kbls")
local pickers = require("kbls.pickers")
local ws = require("helpers.workspace")

describe("kbls pickers without telescope", function()
  local root, orig = nil, {}
  before_each(function()
    config.setup({ picker = "select" })
    root = ws.create({ ["a.md"] = ws.numbered_lines(40), ["b.md"] = ws.numbered_lines(40) })
    orig = {
      select = vim.ui.select,
      input = vim.ui.input,
      search = api.search,
      related = api.related,
      tags = api.tags,
      notes = api.notes,
      notify = vim.notify,
    }
  end)
  after_each(function()
    vim.ui.select, vim.ui.input, api.search, api.related, vim.notify =
      orig.select, orig.input, orig.search, orig.related, orig.notify
    api.tags, api.notes = orig.tags, orig.notes
    vim.cmd("silent! %bwipeout!")
    ws.remove(root)
  end)

  it("auto resolves to select when telescope is missing", function()
    assert.is_false(require("kbls.pickers.telescope").available())
    assert.equals("select", pickers.name("auto"))
    assert.equals("select", pickers.name("select"))
  end)

  it("an explicit telescope choice without telescope warns and falls back", function()
    local msg
    vim.notify = function(m)
      msg = m
    end
    assert.equals("select", pickers.name("telescope"))
    assert.matches("telescope.nvim is not installed", msg)
  end)

  it("the telescope extension fails with a clear message without telescope", function()
    local ok, err = pcall(require, "telescope._extensions.kbls")
    assert.is_false(ok)
    assert.matches("requires telescope.nvim", err)
  end)

  it("the telescope picker module loads and refuses clearly", function()
    local t = require("kbls.pickers.telescope")
    local ok, err = pcall(t.live_search, {})
    assert.is_false(ok)
    assert.matches("telescope.nvim and plenary.nvim are needed", err)
  end)

  it(
    ":KbSearch without a query asks with vim.ui.input,"
      .. " then shows the hits with vim.ui.select and opens the choice",
    function()
      local sent, shown
      vim.ui.input = function(opts, cb)
        assert.matches("kbls search", opts.prompt)
        cb("who owns the value")
      end
      api.search = function(params, cb)
        sent = params
        cb(nil, {
          hits = {
            fake.hit(root, "a.md", "A", "A > One", 2, 4),
            fake.hit(root, "b.md", "B", "B > Two", 19, 25),
          },
        })
        return function() end
      end
      vim.ui.select = function(items, opts, cb)
        shown = vim.tbl_map(opts.format_item, items)
        assert.equals("kbls", opts.kind)
        cb(items[2], 2)
      end
      vim.cmd("KbSearch")
      assert.equals("who owns the value", sent.query)
      assert.same({ "A › One  a.md:3", "B › Two  b.md:20" }, shown)
      assert.equals(root .. "/b.md", vim.api.nvim_buf_get_name(0))
      assert.equals(20, vim.api.nvim_win_get_cursor(0)[1])
    end
  )

  it(
    ":KbSearch shows one row per note; its '+N more sections' row lists the note's sections, best first",
    function()
      local sent = {}
      api.search = function(params, cb)
        sent[#sent + 1] = params
        if #sent == 1 then
          cb(nil, {
            hits = {
              fake.hit(root, "a.md", "A", "A > Best", 9, 12, { more = 2 }),
              fake.hit(root, "b.md", "B", "B > Two", 19, 25),
            },
          })
        else
          -- the note's sections for the query, and a hit of another note (a `path:` term widens
          -- the filter): only a.md's are listed
          cb(nil, {
            hits = {
              fake.hit(root, "a.md", "A", "A > Best", 9, 12),
              fake.hit(root, "b.md", "B", "B > Two", 19, 25),
              fake.hit(root, "a.md", "A", "A > Second", 29, 31),
              fake.hit(root, "a.md", "A", "A > Third", 0, 3),
            },
          })
        end
        return function() end
      end
      local shown, prompts = {}, {}
      vim.ui.select = function(list, opts, cb)
        shown[#shown + 1] = vim.tbl_map(opts.format_item, list)
        prompts[#prompts + 1] = opts.prompt
        cb(list[#shown == 1 and 2 or 3], 1) -- the "+2 more sections" row, then the third section
      end
      vim.cmd("KbSearch tag:x how do I undo")
      assert.is_true(sent[1].groupByFile)
      assert.same(
        { "A › Best  a.md:10  +2 more sections", "  +2 more sections of A", "B › Two  b.md:20" },
        shown[1]
      )
      assert.equals("tag:x how do I undo", sent[2].query)
      assert.is_false(sent[2].groupByFile)
      assert.same({ "/a.md" }, sent[2].filters.paths)
      assert.equals(200, sent[2].limit)
      assert.same(
        { "A › Best  a.md:10  2 more sections below", "  › Second  :30", "  › Third  :1" },
        shown[2]
      )
      assert.equals("A: 3 sections", prompts[2])
      assert.equals(root .. "/a.md", vim.api.nvim_buf_get_name(0))
      assert.equals(1, vim.api.nvim_win_get_cursor(0)[1])
    end
  )

  it("a note's sections the hit carries (`sections`) are listed without a second request", function()
    local sent = {}
    local function section(breadcrumb, first, last)
      return {
        range = { start = { line = first, character = 0 }, ["end"] = { line = last + 1, character = 0 } },
        breadcrumb = breadcrumb,
        snippet = "snippet of " .. breadcrumb,
        score = 0.4,
      }
    end
    api.search = function(params, cb)
      sent[#sent + 1] = params
      cb(nil, {
        hits = {
          fake.hit(root, "a.md", "A", "A > Best", 9, 12, {
            more = 2,
            sections = { section("A > Second", 29, 31), section("A > Third", 0, 3) },
          }),
        },
      })
      return function() end
    end
    local shown = {}
    vim.ui.select = function(list, opts, cb)
      shown[#shown + 1] = vim.tbl_map(opts.format_item, list)
      cb(list[#shown == 1 and 2 or 2], 1)
    end
    vim.cmd("KbSearch undo")
    assert.equals(1, #sent)
    assert.same(
      { "A › Best  a.md:10  2 more sections below", "  › Second  :30", "  › Third  :1" },
      shown[2]
    )
    assert.equals(root .. "/a.md", vim.api.nvim_buf_get_name(0))
    assert.equals(30, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("a note's sections carried without snippets are asked for, narrowed to the note", function()
    local sent = {}
    local function section(breadcrumb, first, last)
      return {
        range = { start = { line = first, character = 0 }, ["end"] = { line = last + 1, character = 0 } },
        breadcrumb = breadcrumb,
        snippet = "", -- `kb/search` without `sectionSnippets`
        score = 0.4,
      }
    end
    api.search = function(params, cb)
      sent[#sent + 1] = params
      if #sent == 1 then
        cb(nil, {
          hits = {
            fake.hit(root, "a.md", "A", "A > Best", 9, 12, {
              more = 2,
              sections = { section("A > Second", 29, 31), section("A > Third", 0, 3) },
            }),
          },
        })
      else
        cb(nil, {
          hits = {
            fake.hit(root, "a.md", "A", "A > Best", 9, 12),
            fake.hit(root, "a.md", "A", "A > Second", 29, 31),
            fake.hit(root, "a.md", "A", "A > Third", 0, 3),
          },
        })
      end
      return function() end
    end
    local shown = {}
    vim.ui.select = function(list, opts, cb)
      shown[#shown + 1] = vim.tbl_map(opts.format_item, list)
      cb(list[#shown == 1 and 2 or 2], 1)
    end
    vim.cmd("KbSearch undo")
    assert.equals(2, #sent)
    assert.same({ "/a.md" }, sent[2].filters.paths)
    assert.is_false(sent[2].groupByFile)
    assert.same(
      { "A › Best  a.md:10  2 more sections below", "  › Second  :30", "  › Third  :1" },
      shown[2]
    )
    assert.equals(root .. "/a.md", vim.api.nvim_buf_get_name(0))
    assert.equals(30, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("search.group_by_file = false: a row for every section, nothing to expand", function()
    config.setup({ picker = "select", search = { group_by_file = false } })
    local sent
    api.search = function(params, cb)
      sent = params
      cb(nil, {
        hits = {
          fake.hit(root, "a.md", "A", "A > One", 2, 4),
          fake.hit(root, "a.md", "A", "A > Two", 9, 12),
        },
      })
      return function() end
    end
    local shown
    vim.ui.select = function(list, opts, cb)
      shown = vim.tbl_map(opts.format_item, list)
      cb(nil)
    end
    vim.cmd("KbSearch undo")
    assert.is_false(sent.groupByFile)
    assert.same({ "A › One  a.md:3", "A › Two  a.md:10" }, shown)
  end)

  it(":KbSearch with a query sends it directly; cancelling the selection opens nothing", function()
    local asked = false
    vim.ui.input = function()
      asked = true
    end
    local sent
    api.search = function(params, cb)
      sent = params.query
      cb(nil, { hits = { fake.hit(root, "a.md", "A", "A", 0, 1) } })
      return function() end
    end
    vim.ui.select = function(_, _, cb)
      cb(nil)
    end
    local before = vim.api.nvim_get_current_buf()
    vim.cmd("KbSearch tag:rust borrowing")
    assert.is_false(asked)
    assert.equals("tag:rust borrowing", sent)
    assert.equals(before, vim.api.nvim_get_current_buf())
  end)

  it("reports no results and errors instead of an empty picker", function()
    local msgs = {}
    vim.notify = function(m)
      msgs[#msgs + 1] = m
    end
    vim.ui.select = function()
      error("must not open a picker")
    end
    api.search = function(_, cb)
      cb(nil, { hits = {} })
      return function() end
    end
    kbls.search("nothing")
    api.search = function(_, cb)
      cb({ code = -32602, message = "query: too long" }, nil)
      return function() end
    end
    kbls.search("bad")
    assert.matches("nothing found", msgs[1])
    assert.matches("query: too long", msgs[2])
  end)

  it(":KbTags lists tags with counts; the chosen tag lists its notes, most recent first", function()
    local sent = {}
    api.tags = function(params, cb)
      sent.tags = params
      cb(nil, { tags = { { name = "rust", count = 2 }, { name = "baking", count = 1 } }, total = 2 })
      return function() end
    end
    api.notes = function(params, cb)
      sent.notes = params
      cb(nil, {
        notes = {
          fake.note(root, "b.md", "B", 1764500000000, { "rust" }),
          fake.note(root, "a.md", "A", 1700000000000, { "rust", "memory" }),
        },
        total = 2,
      })
      return function() end
    end
    local prompts, shown = {}, {}
    vim.ui.select = function(list, opts, cb)
      prompts[#prompts + 1] = opts.prompt
      shown[#shown + 1] = vim.tbl_map(opts.format_item, list)
      cb(list[1], 1)
    end
    vim.cmd("KbTags ru")
    assert.same({ prefix = "ru" }, sent.tags)
    assert.same({ "rust (2)", "baking (1)" }, shown[1])
    assert.same({ limit = 200, filters = { tags = { "rust" } } }, sent.notes)
    assert.same({ "kbls tags", "kbls #rust" }, prompts)
    assert.equals(2, #shown[2])
    assert.equals("B  b.md  " .. os.date("%Y-%m-%d", 1764500000) .. "  #rust", shown[2][1])
    assert.matches("#rust #memory", shown[2][2], 1, true)
    -- the chosen note opens at its first line
    assert.equals(root .. "/b.md", vim.api.nvim_buf_get_name(0))
    assert.equals(1, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it(":KbTags says when there are no tags", function()
    local msgs = {}
    vim.notify = function(m)
      msgs[#msgs + 1] = m
    end
    api.tags = function(_, cb)
      cb(nil, { tags = {}, total = 0, index = { state = "ready", pending = 0 } })
      return function() end
    end
    vim.ui.select = function()
      error("must not open a picker")
    end
    vim.cmd("KbTags")
    assert.matches("no tags", msgs[1])
  end)

  it(":KbSearch! puts the hits in the quickfix list; a visual range searches the selection", function()
    local sent, grouped = {}, {}
    api.search = function(params, cb)
      sent[#sent + 1] = params.query
      grouped[#grouped + 1] = params.groupByFile
      cb(nil, {
        hits = { fake.hit(root, "a.md", "A", "A > One", 2, 4), fake.hit(root, "b.md", "B", "B", 19, 25) },
      })
      return function() end
    end
    vim.ui.select = function()
      error("must not open a picker")
    end
    vim.fn.setqflist({}, "r")
    vim.cmd("KbSearch! borrow checker")
    local qf = vim.fn.getqflist({ title = 1, items = 1 })
    assert.equals("borrow checker", sent[1])
    assert.is_false(grouped[1]) -- every matching section, not one row per note
    assert.equals("kbls: borrow checker", qf.title)
    assert.equals(2, #qf.items)
    assert.equals(3, qf.items[1].lnum)
    assert.equals(root .. "/b.md", vim.api.nvim_buf_get_name(qf.items[2].bufnr))
    vim.cmd("cclose")

    vim.cmd("edit " .. root .. "/a.md")
    vim.api.nvim_buf_set_lines(0, 0, 2, false, { "who owns", "the value" })
    vim.cmd("normal! ggVj\27")
    vim.cmd("'<,'>KbSearch!")
    assert.equals("who owns the value", sent[2])
  end)

  it(":'<,'>KbRelated searches notes like the selection (its meaning: a semantic search)", function()
    local sent
    api.search = function(params, cb)
      sent = params
      cb(nil, { hits = { fake.hit(root, "b.md", "B", "B", 19, 25) } })
      return function() end
    end
    vim.ui.select = function(_, _, cb)
      cb(nil)
    end
    vim.cmd("edit " .. root .. "/a.md")
    vim.api.nvim_buf_set_lines(0, 0, 2, false, { "values move", "into functions" })
    vim.cmd("normal! ggvj$\27")
    vim.cmd("'<,'>KbRelated")
    assert.equals("values move into functions", sent.query)
    assert.equals("semantic", sent.mode)
  end)

  it("says when the hits are partial because the index is still loading", function()
    local msgs, shown = {}, nil
    vim.notify = function(m)
      msgs[#msgs + 1] = m
    end
    api.search = function(_, cb)
      cb(
        nil,
        { hits = { fake.hit(root, "a.md", "A", "A", 0, 1) }, index = { state = "loading", pending = 0 } }
      )
      return function() end
    end
    vim.ui.select = function(list)
      shown = list
    end
    kbls.search("anything")
    assert.equals(1, #shown)
    assert.matches("index loading: partial results", msgs[1], 1, true)
    api.search = function(_, cb)
      cb(nil, { hits = {}, index = { state = "loading", pending = 0 } })
      return function() end
    end
    kbls.search("anything")
    assert.matches('nothing found for "anything" (index loading: partial results)', msgs[2], 1, true)
  end)

  it(":KbRelated sends the cursor line and never lists the note itself", function()
    vim.cmd("edit " .. root .. "/a.md")
    vim.api.nvim_win_set_cursor(0, { 7, 0 })
    local sent, shown
    api.related = function(params, cb)
      sent = params
      cb(nil, {
        hits = {
          fake.hit(root, "a.md", "A", "A", 0, 3, { reasons = { "self" } }),
          fake.hit(root, "b.md", "B", "B > Two", 10, 12, { reasons = { "links here" } }),
        },
      })
      return function() end
    end
    vim.ui.select = function(items, opts, cb)
      shown = vim.tbl_map(opts.format_item, items)
      cb(items[1], 1)
    end
    vim.cmd("KbRelated")
    assert.same({ line = 6, character = 0 }, sent.position)
    assert.equals(vim.uri_from_fname(root .. "/a.md"), sent.uri)
    assert.same({ "B › Two  b.md:11  links here" }, shown)
    assert.equals(root .. "/b.md", vim.api.nvim_buf_get_name(0))
    assert.equals(11, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it(":KbRelated! asks about the whole note", function()
    vim.cmd("edit " .. root .. "/a.md")
    local sent
    api.related = function(params, cb)
      sent = params
      cb(nil, { hits = {} })
      return function() end
    end
    vim.notify = function() end
    vim.cmd("KbRelated!")
    assert.is_nil(sent.position)
  end)
end)

describe("kbls user commands", function()
  it("are defined by plugin/kbls.lua", function()
    local cmds = vim.api.nvim_get_commands({})
    local names = { "KbSearch", "KbRelated", "KbRelatedPanel", "KbStatus", "KbReindex", "KbEnable" }
    for _, name in ipairs(names) do
      assert.is_table(cmds[name], name)
    end
    assert.equals("*", cmds.KbSearch.nargs)
    assert.is_true(cmds.KbReindex.bang)
  end)

  it(":KbReindex! forces and :KbStatus shows kb/status", function()
    local orig_reindex, orig_status, orig_notify = api.reindex, api.status, vim.notify
    local params, msgs = nil, {}
    api.reindex = function(p, cb)
      params = p
      cb(nil, { queued = 3 })
      return function() end
    end
    api.status = function(cb)
      cb(nil, { version = "0.1.0", state = "ready", queue = 0, model = "m", dimension = 384, roots = {} })
      return function() end
    end
    vim.notify = function(m)
      msgs[#msgs + 1] = m
    end
    vim.cmd("KbReindex!")
    vim.cmd("KbStatus")
    api.reindex, api.status, vim.notify = orig_reindex, orig_status, orig_notify
    assert.same({ force = true }, params)
    assert.matches("3 file%(s%) queued", msgs[1])
    assert.matches("kbls 0.1.0", msgs[2])
  end)
end)
