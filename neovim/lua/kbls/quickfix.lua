--- Search hits as a quickfix list, so a result list can be walked with `:cnext`.
local items = require("kbls.items")

local M = {}

--- Quickfix items (`setqflist`) for hits.
---@param hits table[]
---@return table[]
function M.entries(hits)
  return vim.tbl_map(function(item)
    local text = items.label(item)
    local snippet = items.one_line_snippet(item)
    if snippet ~= "" then
      text = text .. ": " .. snippet
    end
    return { filename = item.filename, lnum = item.lnum, end_lnum = item.end_lnum, col = 1, text = text }
  end, items.items(hits))
end

--- Replace the quickfix list with the hits and open the quickfix window.
---@param hits table[]
---@param title string
function M.show(hits, title)
  vim.fn.setqflist({}, " ", { title = title, items = M.entries(hits) })
  vim.cmd("botright copen")
end

return M
