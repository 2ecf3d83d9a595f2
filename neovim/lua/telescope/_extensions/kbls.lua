--- Telescope extension: `:Telescope kbls` (search), `:Telescope kbls search`,
--- `:Telescope kbls tags` and `:Telescope kbls related`.
---
--- Only maps exports onto `kbls.pickers.telescope`; all logic lives in picker-independent
--- modules. Configure with `require("telescope").setup({ extensions = { kbls = { ... } } })`:
--- the table is passed to every picker as default options (e.g. a theme or `layout_config`).
local has_telescope, telescope = pcall(require, "telescope")
if not has_telescope then
  error("kbls: this extension requires telescope.nvim (https://github.com/nvim-telescope/telescope.nvim)", 0)
end

local ext_config = {}

local function with_config(fn)
  return function(opts)
    return fn(vim.tbl_deep_extend("force", {}, ext_config, opts or {}))
  end
end

return telescope.register_extension({
  setup = function(ext, _)
    ext_config = vim.deepcopy(ext or {})
  end,
  exports = {
    -- `:Telescope kbls` with no sub-command calls the export named like the extension.
    kbls = with_config(function(opts)
      require("kbls.pickers.telescope").live_search(opts)
    end),
    search = with_config(function(opts)
      require("kbls.pickers.telescope").live_search(opts)
    end),
    tags = with_config(function(opts)
      require("kbls").tags(vim.tbl_extend("force", opts, { picker = "telescope" }))
    end),
    related = with_config(function(opts)
      require("kbls").related(vim.tbl_extend("force", opts, { picker = "telescope" }))
    end),
  },
  health = function()
    local health = require("kbls.health")
    health.check_server()
    health.check_pickers()
  end,
})
