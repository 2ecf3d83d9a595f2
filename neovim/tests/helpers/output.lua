-- busted output handler: one line per test, failure details, then "N passed, N failed" as the
-- last line (the line CI parses). Pending tests are reported as skipped on the line before.
return function(_)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  local pretty = require("pl.pretty")

  local function out(s)
    io.stdout:write(s, "\n")
    io.stdout:flush()
  end

  local function message(m)
    if type(m) == "string" then
      return m
    elseif m == nil then
      return "nil error"
    end
    return pretty.write(m)
  end

  local function describe_failure(f, kind)
    local where = f.element
        and f.element.trace
        and f.element.trace.short_src
        and (f.element.trace.short_src .. ":" .. tostring(f.element.trace.currentline))
      or "?"
    local s = ("%s %s (%s)\n%s"):format(kind, f.name or "?", where, message(f.message))
    if f.trace and f.trace.traceback and os.getenv("KBLS_TEST_VERBOSE") then
      s = s .. "\n" .. f.trace.traceback
    end
    return s
  end

  handler.testEnd = function(element, _, status)
    local name = handler.getFullName(element)
    if status == "success" then
      out("ok      " .. name)
    elseif status == "pending" then
      out("skipped " .. name)
    else
      out("FAILED  " .. name)
    end
    return nil, true
  end

  handler.fileError = function(element, _, msg)
    out(("ERROR   %s: %s"):format(element.name or element.descriptor or "?", message(msg)))
    return nil, true
  end

  handler.suiteEnd = function()
    for _, f in ipairs(handler.failures) do
      out("")
      out(describe_failure(f, "Failure:"))
    end
    for _, e in ipairs(handler.errors) do
      out("")
      out(describe_failure(e, "Error:"))
    end
    local failed = handler.failuresCount + handler.errorsCount
    out("")
    if handler.pendingsCount > 0 then
      out(("%d skipped"):format(handler.pendingsCount))
    end
    out(("%d passed, %d failed"):format(handler.successesCount, failed))
    return nil, true
  end

  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  busted.subscribe({ "error", "file" }, handler.fileError)
  busted.subscribe({ "failure", "file" }, handler.fileError)
  busted.subscribe({ "error", "describe" }, handler.fileError)

  return handler
end
