-- Neovim init for scripts/screenshot.sh: the plugin, telescope.nvim and plenary.nvim from the
-- environment, the real `kbls serve`, then the picker of $KBLS_SHOT_MODE: "search" (`:Telescope
-- kbls search` with $KBLS_SHOT_QUERY, one row per note, the first note's further sections listed
-- under it with <C-e>), "notes" (the same with an empty prompt: the notes, most
-- recent first), "tags" (`:Telescope kbls tags`) or "panel" (`:KbRelatedPanel` with the cursor
-- in the "## Moves" section). Once the picker shows its rows (and the
-- preview), xterm's window id ($WINDOWID) is written to $KBLS_SHOT_MARKER for the capture; any
-- failure is written there as "error: ...".
local env = vim.env
local marker = assert(env.KBLS_SHOT_MARKER, "KBLS_SHOT_MARKER is not set")

local function finish(text)
  local f = assert(io.open(marker, "w"))
  f:write(text)
  f:close()
end

vim.opt.runtimepath:prepend(env.KBLS_PLUGIN_DIR)
vim.opt.runtimepath:append(env.KBLS_PLENARY_PATH)
vim.opt.runtimepath:append(env.KBLS_TELESCOPE_PATH)
vim.o.termguicolors = true
vim.o.swapfile = false
vim.o.shadafile = "NONE"

require("telescope").setup({
  defaults = { layout_config = { width = 0.96, height = 0.92, preview_width = 0.42 } },
})
require("telescope").load_extension("kbls")
require("kbls").setup({ cmd = { env.KBLS_SERVER, "serve" }, picker = "telescope" })

local deadline = vim.uv.now() + 120000

--- Poll `check` every 200 ms until it returns true, then call `done`; give up at the deadline.
local function poll(what, check, done)
  local timer = assert(vim.uv.new_timer())
  timer:start(
    200,
    200,
    vim.schedule_wrap(function()
      local ok, result = pcall(check)
      if ok and result then
        timer:stop()
        timer:close()
        done()
      elseif vim.uv.now() > deadline then
        timer:stop()
        timer:close()
        finish("error: timed out waiting for " .. what .. (ok and "" or (": " .. tostring(result))))
      end
    end)
  )
end

local function picker()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "TelescopePrompt" then
      return require("telescope.actions.state").get_current_picker(b)
    end
  end
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    poll("the index to be ready", function()
      local client = require("kbls.lsp.clients").list(0)[1]
      if not (client and client.initialized) then
        return false
      end
      local st = require("kbls.lsp.request").sync(client, "kb/status", vim.empty_dict(), 5000)
      return st and st.state == "ready" and (st.queue or 0) == 0 and st.roots and st.roots[1]
    end, function()
      local mode = env.KBLS_SHOT_MODE or "search"
      if mode == "panel" then
        -- the cursor in the "## Moves" section, then the panel of the notes related to it
        local line = vim.fn.search("^## Moves", "nw")
        vim.api.nvim_win_set_cursor(0, { line > 0 and line + 2 or 1, 0 })
        local panel = require("kbls.panel")
        panel.open()
        return poll("the related notes in the panel", function()
          local text = table.concat(vim.api.nvim_buf_get_lines(panel.state.buf, 0, -1, false), "\n")
          return text:find("%.md:%d") ~= nil
        end, function()
          vim.defer_fn(function()
            finish(env.WINDOWID or "")
          end, 800)
        end)
      end
      if mode == "tags" then
        require("telescope").extensions.kbls.tags({})
      else
        require("telescope").extensions.kbls.search({
          query = mode == "search" and env.KBLS_SHOT_QUERY or nil,
        })
      end
      poll("the picker's rows and preview", function()
        local p = picker()
        if not (p and p.manager and p.manager:num_results() > 1) then
          return false
        end
        if mode == "tags" then
          return true -- no previewer
        end
        local st = p.previewer and p.previewer.state
        return st
          and st.bufnr
          and vim.api.nvim_buf_is_valid(st.bufnr)
          and vim.api.nvim_buf_line_count(st.bufnr) > 1
      end, function()
        local function shoot()
          -- let the last redraw reach the terminal
          vim.defer_fn(function()
            finish(env.WINDOWID or "")
          end, 800)
        end
        if mode ~= "search" then
          return shoot()
        end
        -- <C-e> on the first row: the note's further sections listed under it
        local p = picker()
        local rows = p.manager:num_results()
        local map = vim.api.nvim_buf_call(p.prompt_bufnr, function()
          return vim.fn.maparg("<C-E>", "i", false, true)
        end)
        map.callback()
        poll("the note's sections under its row", function()
          return p.manager:num_results() > rows
        end, shoot)
      end)
    end)
  end,
})
