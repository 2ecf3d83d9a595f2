local clients = require("kbls.lsp.clients")
local config = require("kbls.config")
local contract = require("kbls.contract")
local fake = require("helpers.fake_server")
local index_status = require("kbls.lsp.index_status")
local request = require("kbls.lsp.request")
local lsp_root = require("kbls.lsp.root")
local ws = require("helpers.workspace")

-- Initializing clients too: vim.lsp.get_clients() leaves them out.
local function stop_all()
  clients.stop(true)
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop(true)
  end
  vim.wait(2000, function()
    return #vim.lsp.get_clients() == 0 and #clients.list() == 0
  end, 10)
end

describe("kbls.lsp.root", function()
  local root
  before_each(function()
    config.setup({})
    root = ws.create({
      ["repo/.git/HEAD"] = "ref: refs/heads/main\n",
      ["repo/code/x.md"] = "x\n",
      ["repo/notes/.kbls.yaml"] = ws.config(),
      ["repo/notes/rust/borrowing.md"] = "# Borrowing\n",
      ["loose/n.md"] = "n\n",
    })
  end)
  after_each(function()
    ws.remove(root)
  end)

  it("prefers the nearest .kbls.yaml over .git", function()
    config.setup({ root_markers = { ".kbls.yaml", ".git" } })
    assert.equals(root .. "/repo/notes", lsp_root.find(root .. "/repo/notes/rust/borrowing.md"))
  end)

  it("by default a .git folder alone is no knowledge base", function()
    assert.is_nil(lsp_root.find(root .. "/repo/code/x.md"))
  end)

  it("falls back to .git when it is opted in", function()
    config.setup({ root_markers = { ".kbls.yaml", ".git" } })
    assert.equals(root .. "/repo", lsp_root.find(root .. "/repo/code/x.md"))
    assert.equals(root .. "/repo/notes", lsp_root.find(root .. "/repo/notes/rust/borrowing.md"))
  end)

  it("finds the root from a folder", function()
    assert.equals(root .. "/repo/notes", lsp_root.find(root .. "/repo/notes/rust"))
  end)

  it("gives nil without a marker", function()
    assert.is_nil(lsp_root.find(root .. "/loose/n.md", { ".kbls.yaml", "no-such-marker-here" }))
    assert.is_nil(lsp_root.find(""))
  end)

  it("accepts a list of markers of equal priority", function()
    assert.equals(
      root .. "/repo/notes",
      lsp_root.find(root .. "/repo/notes/rust/borrowing.md", { { ".git", ".kbls.yaml" } })
    )
  end)

  it("gives a buffer's root, and nil for unnamed or special buffers", function()
    vim.cmd("edit " .. root .. "/repo/notes/rust/borrowing.md")
    assert.equals(root .. "/repo/notes", lsp_root.for_buffer(0))
    assert.is_nil(lsp_root.for_buffer(vim.api.nvim_create_buf(false, true)))
    local term = vim.api.nvim_create_buf(false, false)
    vim.bo[term].buftype = "nofile"
    assert.is_nil(lsp_root.for_buffer(term))
    vim.cmd("bwipeout!")
  end)

  it("tells whether a path lies inside a root", function()
    assert.is_true(lsp_root.contains("/a/b", "/a/b/c.md"))
    assert.is_true(lsp_root.contains("/a/b/", "/a/b"))
    assert.is_false(lsp_root.contains("/a/b", "/a/bc/d.md"))
  end)
end)

describe("kbls.lsp.clients", function()
  local root, server
  before_each(function()
    server = fake.new({ delay = 10 })
    config.setup({ cmd = server.cmd })
    root = ws.create({
      ["a/.kbls.yaml"] = ws.config(),
      ["a/one.md"] = "# One\n",
      ["a/sub/two.md"] = "# Two\n",
      ["b/.kbls.yaml"] = ws.config(),
      ["b/three.md"] = "# Three\n",
    })
  end)
  after_each(function()
    vim.cmd("silent! %bwipeout!")
    stop_all()
    ws.remove(root)
  end)

  it("starts one client per root and attaches buffers", function()
    vim.cmd("edit " .. root .. "/a/one.md")
    local id1 = clients.start(0)
    vim.cmd("edit " .. root .. "/a/sub/two.md")
    local id2 = clients.start(0)
    vim.cmd("edit " .. root .. "/b/three.md")
    local id3 = clients.start(0)
    assert.is_number(id1)
    assert.equals(id1, id2)
    assert.are_not.equal(id1, id3)
    assert.equals(2, #clients.list())
    assert.equals(root .. "/a", vim.lsp.get_client_by_id(id1).root_dir)
    assert.equals(1, #clients.list(0))
    assert.equals(root .. "/a", clients.for_root(root .. "/a").root_dir)
  end)

  it("setup attaches buffers of the configured filetypes, already open ones too", function()
    vim.cmd("edit " .. root .. "/a/one.md")
    assert.equals("markdown", vim.bo.filetype)
    assert.equals(0, #clients.list(0))
    require("kbls").setup({ cmd = server.cmd })
    assert.equals(1, #clients.list(0))
    vim.cmd("edit " .. root .. "/b/three.md")
    assert.equals(1, #clients.list(0))
    assert.equals(root .. "/b", clients.list(0)[1].root_dir)
    vim.api.nvim_del_augroup_by_name("kbls")
  end)

  it("a README in a git repository without .kbls.yaml starts no client until opted in", function()
    local repo = ws.create({ [".git/HEAD"] = "ref: refs/heads/main\n", ["README.md"] = "# Code\n" })
    require("kbls").setup({ cmd = server.cmd })
    vim.cmd("edit " .. repo .. "/README.md")
    assert.equals("markdown", vim.bo.filetype)
    vim.wait(50)
    assert.equals(0, #clients.list())
    assert.equals(0, #server.of("initialize"))
    require("kbls").setup({ cmd = server.cmd, root_markers = { ".kbls.yaml", ".git" } })
    assert.equals(1, #clients.list(0))
    assert.equals(repo, clients.list(0)[1].root_dir)
    vim.api.nvim_del_augroup_by_name("kbls")
    vim.cmd("bwipeout!")
    ws.remove(repo)
  end)

  it(":KbEnable writes a minimal .kbls.yaml, never over one, and attaches the open notes", function()
    local repo = ws.create({ [".git/HEAD"] = "ref: refs/heads/main\n", ["docs/guide.md"] = "# Guide\n" })
    require("kbls").setup({ cmd = server.cmd })
    local cwd = vim.fn.getcwd()
    vim.cmd("cd " .. repo)
    vim.cmd("edit " .. repo .. "/docs/guide.md")
    assert.equals(0, #clients.list())
    local msgs, orig = {}, vim.notify
    vim.notify = function(m)
      msgs[#msgs + 1] = m
    end
    vim.cmd("KbEnable")
    local text = table.concat(vim.fn.readfile(repo .. "/.kbls.yaml"), "\n")
    assert.matches("written by :KbEnable", text, 1, true)
    assert.equals(1, #clients.list(0))
    assert.equals(repo, clients.list(0)[1].root_dir)
    vim.fn.writefile({ "store: mine" }, repo .. "/.kbls.yaml")
    vim.cmd("KbEnable")
    vim.notify = orig
    vim.cmd("cd " .. cwd)
    assert.same({ "store: mine" }, vim.fn.readfile(repo .. "/.kbls.yaml"))
    assert.matches("wrote " .. repo .. "/.kbls.yaml", msgs[1], 1, true)
    assert.matches("already exists", msgs[2], 1, true)
    vim.api.nvim_del_augroup_by_name("kbls")
    vim.cmd("bwipeout!")
    ws.remove(repo)
  end)

  it(":KbEnable outside the current directory means the note's own folder", function()
    local notes = ws.create({ ["n.md"] = "# N\n" })
    vim.cmd("edit " .. notes .. "/n.md")
    assert.equals(notes, require("kbls.enable").default_folder(0))
    vim.cmd("bwipeout!")
    ws.remove(notes)
  end)

  it("picks the client of the buffer, of the cwd's root, or starts one", function()
    vim.cmd("edit " .. root .. "/a/one.md")
    local a = vim.lsp.get_client_by_id(clients.start(0))
    assert.equals(a.id, clients.pick(0).id)
    local scratch = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_set_current_buf(scratch)
    local cwd = vim.fn.getcwd()
    vim.cmd("cd " .. root .. "/b")
    local b, err = clients.pick(0)
    vim.cmd("cd " .. cwd)
    assert.is_nil(err)
    assert.equals(root .. "/b", b.root_dir)
    assert.are_not.equal(a.id, b.id)
  end)

  it("explains when there is no workspace", function()
    config.setup({ cmd = server.cmd, root_markers = { "no-such-marker-anywhere" } })
    vim.api.nvim_set_current_buf(vim.api.nvim_create_buf(false, true))
    local client, err = clients.pick(0)
    assert.is_nil(client)
    assert.matches("no kbls workspace", err)
  end)

  it("sends requests once the client is initialized and gets the answer", function()
    local client = vim.lsp.get_client_by_id(clients.start_root(root .. "/a"))
    local result, err = request.sync(client, "kb/status", {}, 2000)
    assert.is_nil(err)
    assert.same({}, result)
    assert.equals(1, #server.of("kb/status"))
  end)

  it("a cancelled request never calls its handler and sends $/cancelRequest", function()
    server = fake.new({ delay = 300 })
    config.setup({ cmd = server.cmd })
    local client = vim.lsp.get_client_by_id(clients.start_root(root .. "/a"))
    vim.wait(2000, function()
      return client.initialized
    end)
    local called = false
    local cancel = request.send(client, "kb/search", { query = "x" }, function()
      called = true
    end)
    cancel()
    vim.wait(400)
    assert.is_false(called)
    assert.equals(1, #server.cancelled)
  end)

  it("request_sync times out with a message", function()
    server = fake.new({ delay = 1000 })
    config.setup({ cmd = server.cmd })
    local client = vim.lsp.get_client_by_id(clients.start_root(root .. "/a"))
    local result, err = request.sync(client, "kb/search", { query = "x" }, 100)
    assert.is_nil(result)
    assert.matches("timed out", err.message)
  end)

  it("records kb/indexStatus and fires User KblsIndexStatus", function()
    local client = vim.lsp.get_client_by_id(clients.start_root(root .. "/a"))
    local seen
    vim.api.nvim_create_autocmd("User", {
      pattern = "KblsIndexStatus",
      once = true,
      callback = function(ev)
        seen = ev.data
      end,
    })
    local handler = client.handlers["kb/indexStatus"] or client.config.handlers["kb/indexStatus"]
    handler(nil, { state = "indexing", pending = 3 }, { client_id = client.id, method = "kb/indexStatus" })
    assert.same({ state = "indexing", pending = 3 }, index_status.by_client[client.id])
    assert.equals(client.id, seen.client_id)
    vim.cmd("edit " .. root .. "/a/one.md")
    clients.start(0)
    assert.equals("kb: indexing (3)", require("kbls").statusline())
  end)
end)

describe("kbls.lsp.request requester", function()
  it("keeps one request in flight", function()
    local r = request.requester()
    local log = {}
    local function send(tag)
      return function(_)
        log[#log + 1] = "send " .. tag
        return function()
          log[#log + 1] = "cancel " .. tag
        end
      end
    end
    local results = {}
    r:send(send("1"), function(err)
      results[#results + 1] = err and err.code
    end)
    r:send(send("2"), function() end)
    assert.same({ "send 1", "cancel 1", "send 2" }, log)
    assert.same({ contract.REQUEST_CANCELLED }, results)
  end)

  it("copes with a synchronous answer", function()
    local r = request.requester()
    local got
    r:send(function(handler)
      handler(nil, 42)
      return function()
        error("must not cancel an answered request")
      end
    end, function(_, res)
      got = res
    end)
    assert.equals(42, got)
    assert.is_false(r:busy())
    r:cancel()
  end)
end)
