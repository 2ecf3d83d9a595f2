local config = require("kbls.config")
local fake = require("helpers.fake_server")
local items = require("kbls.items")
local quickfix = require("kbls.quickfix")
local telescope_picker = require("kbls.pickers.telescope")

local ROOT = "/home/me/notes"

describe("kbls.items", function()
  before_each(function()
    config.setup({})
  end)

  it("splits the breadcrumb and drops the title", function()
    assert.same({ "Mutable references" }, items.sections("Borrowing", "Borrowing > Mutable references"))
    assert.same({ "A", "B" }, items.sections("T", "T › A › B"))
    assert.same({}, items.sections("Borrowing", "Borrowing"))
    assert.same({}, items.sections("T", nil))
    assert.same({ "Other", "Sub" }, items.sections("T", "Other > Sub"))
  end)

  it("turns the exclusive LSP range into 1-based inclusive lines", function()
    assert.same(
      { 13, 31 },
      { items.lines({ start = { line = 12, character = 0 }, ["end"] = { line = 31, character = 0 } }) }
    )
    assert.same(
      { 1, 1 },
      { items.lines({ start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } }) }
    )
    assert.same(
      { 5, 6 },
      { items.lines({ start = { line = 4, character = 0 }, ["end"] = { line = 5, character = 3 } }) }
    )
    assert.same(
      { 3, 3 },
      { items.lines({ start = { line = 2, character = 0 }, ["end"] = { line = 2, character = 0 } }) }
    )
  end)

  it("makes an item from a hit", function()
    local item =
      items.item(fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing > Mutable references", 12, 30))
    assert.equals(ROOT .. "/rust/borrowing.md", item.filename)
    assert.equals("rust/borrowing.md", item.relpath)
    assert.equals(13, item.lnum)
    assert.equals(31, item.end_lnum)
    assert.equals(1, item.col)
    assert.equals("Borrowing", item.title)
    assert.same({ "Mutable references" }, item.sections)
    assert.equals("snippet of Borrowing", item.snippet)
  end)

  it("falls back to the file name without a title", function()
    local item = items.item(fake.hit(ROOT, "a/untitled-note.md", vim.NIL, vim.NIL, 0, 0))
    assert.equals("untitled-note", item.title)
    assert.same({}, item.sections)
  end)

  it("displays title, breadcrumb and path:line with highlights", function()
    local item =
      items.item(fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing > Mutable references", 12, 30))
    local text, hls = items.display(item)
    assert.equals("Borrowing › Mutable references  rust/borrowing.md:13", text)
    assert.equals(3, #hls)
    local function span(i)
      return text:sub(hls[i][1][1] + 1, hls[i][1][2])
    end
    assert.equals("Borrowing", span(1))
    assert.equals("KblsTitle", hls[1][2])
    assert.equals(" › Mutable references", span(2))
    assert.equals("KblsBreadcrumb", hls[2][2])
    assert.equals("rust/borrowing.md:13", span(3))
    assert.equals("KblsPath", hls[3][2])
    assert.equals(text, items.format_item(item))
  end)

  it("shows folded hits and related reasons", function()
    local item = items.item(
      fake.hit(ROOT, "b.md", "B", "B", 0, 2, { more = 2, reasons = { "links here", "shared tags: rust" } })
    )
    local text, hls = items.display(item)
    assert.equals("B  b.md:1  +2 more sections  links here; shared tags: rust", text)
    assert.equals("KblsReason", hls[#hls][2])
    assert.equals("links here; shared tags: rust", text:sub(hls[#hls][1][1] + 1, hls[#hls][1][2]))
    assert.equals("KblsMore", hls[#hls - 1][2])
    assert.equals("+2 more sections", text:sub(hls[#hls - 1][1][1] + 1, hls[#hls - 1][1][2]))
  end)

  it("says how many sections a row holds, one or several, folded or listed below it", function()
    local one = items.item(fake.hit(ROOT, "b.md", "B", "B", 0, 2, { more = 1 }))
    assert.equals("+1 more section", items.more_label(one))
    local three = items.item(fake.hit(ROOT, "b.md", "B", "B", 0, 2, { more = 3 }))
    assert.equals("+3 more sections", items.more_label(three))
    three.expanded = true
    assert.equals("3 more sections below", items.more_label(three))
    assert.equals("", items.more_label(items.item(fake.hit(ROOT, "b.md", "B", "B", 0, 2))))
  end)

  it("shows a further section of an expanded note indented, by its heading and line only", function()
    local child = items.item(fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing > Slices", 40, 50))
    child.child = true
    assert.equals("  › Slices  :41", (items.display(child)))
    local top = items.item(fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing", 0, 5))
    top.child = true
    assert.equals("  › Borrowing  :1", (items.display(top)))
  end)

  it("makes telescope-shaped entries", function()
    local hit = fake.hit(ROOT, "rust/borrowing.md", "Borrowing", "Borrowing > Mutable references", 12, 30)
    local entry = telescope_picker.make_entry(hit)
    assert.equals(ROOT .. "/rust/borrowing.md", entry.filename)
    assert.equals(13, entry.lnum)
    assert.equals(31, entry.lnend)
    assert.equals(1, entry.col)
    assert.is_nil(entry.path) -- telescope would resolve a relative `path` against the cwd
    assert.equals("Borrowing › Mutable references rust/borrowing.md", entry.ordinal)
    local text, hls = entry:display()
    assert.equals("Borrowing › Mutable references  rust/borrowing.md:13  snippet of Borrowing", text)
    assert.equals(4, #hls)
    assert.equals("snippet of Borrowing", text:sub(hls[4][1][1] + 1, hls[4][1][2]))
    assert.equals("KblsSnippet", hls[4][2])
    assert.same(
      { filename = ROOT .. "/rust/borrowing.md", lnum = 13, end_lnum = 31 },
      items.preview_target(entry.value)
    )
  end)

  it("makes quickfix items", function()
    local qf = quickfix.entries({ fake.hit(ROOT, "a.md", "A", "A > S", 3, 4) })
    assert.same(
      { { filename = ROOT .. "/a.md", lnum = 4, end_lnum = 5, col = 1, text = "A › S: snippet of A" } },
      qf
    )
    vim.fn.setqflist(qf)
    assert.equals(4, vim.fn.getqflist()[1].lnum)
  end)
end)
