-- testlib.lua -- the tiny harness of the Lua unit tests in tests/gen: test, eq, raises, finish.
local M = {}

M.failures, M.count = 0, 0

-- Runs fn; a raised error is a failure reported with the test's name.
function M.test(name, fn)
  M.count = M.count + 1
  local ok, err = pcall(fn)
  if not ok then
    M.failures = M.failures + 1
    io.stderr:write("FAIL ", name, ": ", type(err) == "table" and tostring(err.message) or tostring(err), "\n")
  end
end

function M.eq(got, want, what)
  if got ~= want then
    error(string.format("%s: got %q, want %q", what or "value", tostring(got), tostring(want)), 2)
  end
end

-- Runs fn, expecting an error whose message (string, or table .message/.usage) contains `needle`.
function M.raises(needle, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("no error; expected " .. needle, 2) end
  local msg = type(err) == "table" and (err.message or err.usage) or tostring(err)
  if not msg:find(needle, 1, true) then
    error(string.format("error %q does not contain %q", msg, needle), 2)
  end
end

-- A reader of source files below `root`: read("templates/x.lua") -> its text (the loader that
-- enumerate.load_spec and load_module take).
function M.reader(root)
  return function(path)
    local f = assert(io.open(root .. "/" .. path, "rb"))
    local s = f:read("a")
    f:close()
    return s
  end
end

return M
