local status = require("kbls.status")

describe("kbls.status", function()
  local st = {
    version = "0.1.0",
    state = "ready",
    queue = 0,
    model = "sentence-transformers/all-MiniLM-L6-v2 (int8, bundled)",
    dimension = 384,
    embeddedSinceStart = 12,
    reusedSinceStart = 340,
    roots = {
      {
        uri = "file:///home/me/notes",
        store = "/home/me/.cache/kbls/notes-3f2a9c1b",
        storeBytes = 5242880,
        files = 210,
        chunks = 1432,
        sqlite = { module = "sqlean", version = "3.50.4", vec = "v0.1.9" },
        errors = { { path = "broken.md", reason = "invalid UTF-8 at byte 12" } },
      },
    },
  }

  it("describes version, model, roots, stores and errors", function()
    local text = table.concat(status.lines(st), "\n")
    assert.matches("kbls 0.1.0", text, 1, true)
    assert.matches("all-MiniLM-L6-v2", text, 1, true)
    assert.matches("root /home/me/notes: 210 files, 1432 chunks", text, 1, true)
    assert.matches("store: /home/me/.cache/kbls/notes-3f2a9c1b (5.0 MiB)", text, 1, true)
    assert.matches("error: broken.md: invalid UTF-8 at byte 12", text, 1, true)
  end)

  it("says why the index or a root is in error (a refused .kbls.yaml, a failing index job)", function()
    local refused = vim.deepcopy(st)
    refused.state = "error"
    refused.error = "/home/me/notes: store: .kbls is inside the workspace root"
    refused.roots[1].error = "store: .kbls is inside the workspace root"
    local text = table.concat(status.lines(refused), "\n")
    assert.matches("error: /home/me/notes: store: .kbls is inside", text, 1, true)
    assert.matches("  problem: store: .kbls is inside the workspace root", text, 1, true)
    assert.is_nil(table.concat(status.lines(st), "\n"):find("problem:", 1, true))
  end)

  it("tolerates missing fields and JSON nulls", function()
    local lines = status.lines({ state = "loading", model = vim.NIL })
    assert.matches("kbls %? — loading", lines[1])
    assert.matches("model: %?", lines[2])
  end)

  it("shows the embedding pass: share, chunks waiting, rate and ETA", function()
    local embedding = vim.deepcopy(st)
    embedding.state, embedding.embedded, embedding.waiting, embedding.rate, embedding.etaSeconds =
      "indexing", 0.42, 818, 31.2, 65
    local text = table.concat(status.lines(embedding), "\n")
    local expected = "embedding: 42% of the chunks have their vectors, 818 waiting, 31.2 chunks/s, ETA 1m05s"
    assert.matches(expected, text, 1, true)
    assert.is_nil(table.concat(status.lines(st), "\n"):find("embedding:", 1, true))
    local index = { state = "indexing", pending = 0, embedded = 0.42, waiting = 818, etaSeconds = 26 }
    assert.equals("kb: embedding 42% ETA 26s", status.short(index))
    assert.matches("42%% embedded: every note by its words", status.partial(index))
    assert.equals("1h02m", status.duration(3725))
  end)

  it("formats sizes", function()
    assert.equals("512 B", status.human_bytes(512))
    assert.equals("1.5 KiB", status.human_bytes(1536))
    assert.equals("?", status.human_bytes(nil))
  end)

  it("gives a short statusline string, empty when ready", function()
    assert.equals("", status.short(nil))
    assert.equals("", status.short({ state = "ready", pending = 0 }))
    assert.equals("kb: indexing (12)", status.short({ state = "indexing", pending = 12 }))
    assert.equals("kb: loading", status.short({ state = "loading", pending = 0 }))
  end)

  it("says when results are partial because the index is not ready", function()
    assert.equals("", status.partial(nil))
    assert.equals("", status.partial({ state = "ready", pending = 0 }))
    assert.matches(
      "index loading: partial results",
      status.partial({ state = "loading", pending = 0 }),
      1,
      true
    )
    assert.matches("indexing (4 pending)", status.partial({ state = "indexing", pending = 4 }), 1, true)
    assert.matches("see :KbStatus", status.partial({ state = "error" }), 1, true)
  end)
end)
