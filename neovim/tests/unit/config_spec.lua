local config = require("kbls.config")

describe("kbls.config", function()
  after_each(function()
    config.setup({})
  end)

  it("has documented defaults", function()
    local o = config.setup()
    assert.same({ "kbls", "serve" }, o.cmd)
    assert.same({ "markdown" }, o.filetypes)
    assert.same({ ".kbls.yaml" }, o.root_markers) -- .git roots are opt-in
    assert.equals("auto", o.picker)
    assert.is_false(o.keymaps)
    assert.equals(150, o.search.debounce)
    assert.equals("hybrid", o.search.mode)
  end)

  it("deep-merges nested tables and keeps the other defaults", function()
    local o = config.setup({ search = { limit = 5 } })
    assert.equals(5, o.search.limit)
    assert.equals("hybrid", o.search.mode)
    assert.equals(150, o.search.debounce)
    assert.same(o, config.options)
  end)

  it("replaces lists instead of merging them element-wise", function()
    local o = config.setup({ root_markers = { ".notes" }, filetypes = { "markdown", "text" } })
    assert.same({ ".notes" }, o.root_markers)
    assert.same({ "markdown", "text" }, o.filetypes)
  end)

  it("splits a string cmd on whitespace", function()
    assert.same(
      { "/opt/kbls/bin/kbls", "serve", "--log", "debug" },
      config.setup({ cmd = " /opt/kbls/bin/kbls serve  --log debug" }).cmd
    )
  end)

  it("does not modify the defaults", function()
    config.setup({ search = { limit = 3 }, cmd = { "x" } })
    assert.equals(20, config.defaults.search.limit)
    assert.same({ "kbls", "serve" }, config.defaults.cmd)
  end)

  it("warns about bad values and falls back to the default for them only", function()
    local notified
    local orig = vim.notify
    vim.notify = function(msg)
      notified = msg
    end
    local o = config.setup({ picker = "fzf", search = { limit = 9 } })
    vim.notify = orig
    assert.matches("picker", notified)
    assert.equals("auto", o.picker)
    assert.equals(9, o.search.limit)
  end)

  it("validates search mode and limit", function()
    local opts = vim.deepcopy(config.defaults)
    opts.search.mode = "fuzzy"
    opts.search.limit = 500
    local problems = config.validate(opts)
    assert.equals(2, #problems)
  end)

  it("keymaps are off by default, defaults with true, selectable with a table", function()
    assert.same({}, config.keymaps(config.setup({})))
    assert.same(config.default_keymaps, config.keymaps(config.setup({ keymaps = true })))
    assert.same(
      { search = "<leader>fs" },
      config.keymaps(config.setup({ keymaps = { search = "<leader>fs", related = false } }))
    )
  end)
end)
