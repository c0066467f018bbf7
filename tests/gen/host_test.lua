-- host_test.lua -- unit tests of mgen_host's file functions (gen/fileio.c), run by host_test.c:
-- names with "/" or NUL are refused, a staged file appears only when committed, unchanged
-- content is not staged, a committed file replaces a symbolic link rather than its target.
local testlib_dir, dir = ...
package.path = testlib_dir .. "/?.lua;" .. package.path
local t = require("testlib")
local host = require("mgen_host")
local test, eq, raises = t.test, t.eq, t.raises

local function read(path)
  local f = io.open(path, "rb")
  if f == nil then return nil end
  local s = f:read("a")
  f:close()
  return s
end

test("file names are one path component without NUL", function()
  for _, name in ipairs({ "a/b", "../x", "x\0.cu", "", ".", "..", "/x" }) do
    raises("not a file name", host.stage_file, dir, name, "data")
    raises("not a file name", host.commit_file, dir .. "/tmp", dir, name)
  end
  raises("path holds a NUL byte", host.stage_file, dir .. "\0/..", "x", "data")
  raises("path holds a NUL byte", host.read_file, dir .. "/x\0y")
  raises("path holds a NUL byte", host.make_dirs, dir .. "/x\0y")
  eq(#host.list_dir(dir), 0, "nothing written by the refused calls")
end)

test("stage, then commit", function()
  local tmp = host.stage_file(dir, "a.cu", "one")
  eq(tmp:sub(1, #dir + 7), dir .. "/.a.cu.", "a hidden temporary beside the file")
  eq(read(dir .. "/a.cu"), nil, "not there before commit")
  eq(read(tmp), "one")
  host.commit_file(tmp, dir, "a.cu")
  eq(read(dir .. "/a.cu"), "one")
  eq(read(tmp), nil, "the temporary is renamed")
  eq(host.stage_file(dir, "a.cu", "one"), false, "unchanged content is not staged")
  local forced = host.stage_file(dir, "a.cu", "one", true)
  eq(type(forced), "string", "force stages unchanged content")
  host.remove_file(forced)
end)

test("a committed file replaces a link, not its target", function()
  local f = assert(io.open(dir .. "/target", "wb"))
  f:write("target")
  f:close()
  assert(os.execute(string.format("ln -s '%s/target' '%s/link.cu'", dir, dir)))
  host.commit_file(host.stage_file(dir, "link.cu", "new"), dir, "link.cu")
  eq(read(dir .. "/target"), "target", "the link's target")
  eq(read(dir .. "/link.cu"), "new")
end)

test("make_dirs lists what it made; real_path resolves", function()
  local made = host.make_dirs(dir .. "/x/y/z")
  eq(#made, 3)
  eq(made[1], dir .. "/x")
  eq(made[3], dir .. "/x/y/z")
  eq(#host.make_dirs(dir .. "/x/y"), 0, "existing folders")
  for i = 3, 1, -1 do host.remove_dir(made[i]) end
  eq(#host.list_dir(dir .. "/x"), 0, "removed")
  raises("Not a directory", host.make_dirs, dir .. "/a.cu/sub")
  eq(host.real_path(dir .. "/./a.cu"), host.real_path(dir) .. "/a.cu")
end)

io.write(string.format("host_test: %d/%d passed\n", t.count - t.failures, t.count))
return t.failures == 0
