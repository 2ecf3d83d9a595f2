-- The open Telescope picker and its rows, for the specs that drive telescope.nvim.
local M = {}

--- The picker whose prompt is open, and its prompt buffer; nil when none is.
function M.picker()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "TelescopePrompt" then
      return require("telescope.actions.state").get_current_picker(b), b
    end
  end
end

--- The picker's non-blank result lines.
function M.result_lines(p)
  return vim.tbl_filter(function(l)
    return vim.trim(l) ~= ""
  end, vim.api.nvim_buf_get_lines(p.results_bufnr, 0, -1, false))
end

return M
