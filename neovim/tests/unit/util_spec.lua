local util = require("kbls.util")

describe("kbls.util.debounce", function()
  it("runs once, with the last arguments, after the quiet time", function()
    local calls = {}
    local d = util.debounce(function(...)
      calls[#calls + 1] = { ... }
    end, 30)
    d.call("a")
    d.call("ab")
    d.call("abc", 2)
    assert.equals(0, #calls)
    assert.is_true(d.pending())
    assert.is_true(vim.wait(1000, function()
      return #calls == 1
    end, 5))
    vim.wait(60)
    assert.same({ { "abc", 2 } }, calls)
    assert.is_false(d.pending())
    d.close()
  end)

  it("restarts the wait on every call", function()
    local fired_at
    local start = vim.uv.hrtime()
    local d = util.debounce(function()
      fired_at = (vim.uv.hrtime() - start) / 1e6
    end, 40)
    d.call()
    vim.wait(25)
    d.call()
    assert.is_true(vim.wait(1000, function()
      return fired_at ~= nil
    end, 5))
    assert.is_true(fired_at >= 60, "fired after " .. fired_at .. " ms")
    d.close()
  end)

  it("cancel drops the pending call; flush runs it now", function()
    local n = 0
    local d = util.debounce(function()
      n = n + 1
    end, 20)
    d.call()
    d.cancel()
    vim.wait(60)
    assert.equals(0, n)
    d.call()
    d.flush()
    assert.equals(1, n)
    vim.wait(60)
    assert.equals(1, n)
    d.close()
  end)

  it("runs at once with a zero delay", function()
    local got
    local d = util.debounce(function(x)
      got = x
    end, 0)
    d.call(7)
    assert.equals(7, got)
    d.close()
  end)
end)
