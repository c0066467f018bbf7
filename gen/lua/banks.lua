-- banks.lua -- shared-memory bank model of one warp-wide instruction: the bank of every lane's
-- address, the wavefronts the instruction takes, and the fewest it could take.
--
-- Model (NVIDIA sm_80 .. sm_90 shared memory):
--   * 32 banks of 4-byte words: byte address a lies in word a // 4, bank (a // 4) % 32. An
--     access of `width` bytes at a (aligned to width) touches words a // 4 .. (a + width - 1) // 4.
--   * A warp's request is served in phases: ldmatrix (kind "ldsm") one 8x8 matrix at a time,
--     whose 8 row addresses (16 bytes each) come from 8 lanes (ldmatrix.x4: lanes 0-7, 8-15,
--     16-23, 24-31); other 16-byte accesses (LDS.128, STS.128, cp.async 16 B) in half-warps
--     (lanes 0-15, 16-31); 8 bytes or less in one phase of all 32 lanes.
--   * Within a phase every bank delivers one word per wavefront, and lanes that address the same
--     word share it (broadcast on reads; one write wins), so
--       wavefronts(phase) = max over banks of the number of DISTINCT words of that bank addressed,
--       minimum(phase)    = ceil(4 * distinct words / 128)   (128 bytes per wavefront at best).
--   * An instruction's wavefronts and minimum are the sums over its phases; conflicts = wavefronts
--     - minimum (ncu: "L1 Wavefronts Shared Excessive"); "ways" is the largest wavefronts /
--     minimum of a phase (an 8-way conflict: 8 times the wavefronts the bytes need).
--   * Calibrated on an H200 with ncu's per-instruction counters (L1 Wavefronts Shared, Ideal,
--     Excessive) of six kernels: equal for every ldmatrix.x4, LDS.128/64/32 and STS.128/64/32
--     instruction; cp.async has no conflicts there either, but its wavefront counts move with
--     timing. What decided the phases: 16-byte loads where 4 lanes share each vector take 2
--     wavefronts (quarter-warp phases would give 4), 8-byte loads of that pattern take 1
--     (half-warp phases would give 2), and ldmatrix.x4 over rows of 128 bytes under
--     Swizzle<3,4,4> (rows 2i and 2i+1 in the same banks) takes 8 (half-warps would give 4).
--   * Other kinds of access (a copy engine's writes, a tensor core's operand reads, barriers)
--     are a family's own: its shared-memory model declares them (templates/<family>/smem.lua,
--     its kinds table) and gives each access of such a kind its lanes per phase
--     (`phase_lanes`); this model applies them in the same terms and knows no kind beyond the
--     LSU instructions above.
--   * An inactive lane (false) addresses nothing. Dropping lanes never adds wavefronts but can
--     lower the minimum, so a predicated tail is its own instance, with its inactive lanes.
--
-- An access (what a spec's smem_accesses(k) returns a list of):
--   { name = "A ldmatrix.x4", kind = "ldsm", instr = "ldmatrix.x4", width = 16,
--     phase_lanes = nil | lanes per phase (1, 2, 4, 8, 16 or 32; nil: by kind and width, below),
--     event = "stage", buffer = nil | "A tile" (what the addresses are offsets in; buffers
--     must start on 128-byte boundaries), waived = nil | "why a conflict here is accepted",
--     instances = { { label = "warp 0, kb 0", addrs = { [1] = lane 0's byte address, ...
--                     [32] = lane 31's, false where inactive } }, ... } }
-- Each instance is one warp-wide instruction (one warp, one loop iteration). Nothing here knows
-- what the addresses mean.
local M = {}

M.banks = 32
M.word = 4
M.wavefront_bytes = M.banks * M.word -- 128

local widths = { [1] = true, [2] = true, [4] = true, [8] = true, [16] = true }

local function fail(fmt, ...)
  error({ message = string.format(fmt, ...) }, 0)
end

-- Lanes per phase of an access of `width` bytes and ncu kind `kind`: `declared` where the
-- access's model declares them (its kind's phase_lanes), 8 for ldmatrix (one 8x8 matrix), else
-- 256 bytes' worth, at most the warp (16 for 16 bytes, 32 for 8 or fewer).
local phase_sizes = { [1] = true, [2] = true, [4] = true, [8] = true, [16] = true, [32] = true }
function M.phase_lanes(width, kind, declared)
  if declared ~= nil then return declared end
  if kind == "ldsm" then return 8 end
  return math.min(32, 256 // width)
end

-- Bank model of one instruction of ncu kind `kind` ("ldsm", "ld", "st", "ldgsts", or one a
-- family's model declares, with `declared` lanes per phase): `width` bytes per lane at
-- addrs[lane + 1] (false: inactive).
-- Returns { width, kind, lanes (per phase), wavefronts, min, conflicts, ways, active,
--           phases = { { first, last, wavefronts, min, ways, words, hot_bank } } }, where
-- words is the most distinct words in one bank (= wavefronts) and hot_bank that bank.
function M.analyze(width, addrs, kind, declared)
  local per, wb = M.phase_lanes(width, kind, declared), M.word
  local r = { width = width, kind = kind, lanes = per, wavefronts = 0, min = 0, conflicts = 0,
    ways = 0, active = 0, phases = {} }
  for first = 0, 31, per do
    local words, count = {}, {} -- word -> true; bank -> distinct words
    local distinct, wavefronts, hot = 0, 0, nil
    for lane = first + 1, first + per do
      local a = addrs[lane]
      if a then
        r.active = r.active + 1
        for w = a // wb, (a + width - 1) // wb do
          if not words[w] then
            words[w] = true
            distinct = distinct + 1
            local b = w % M.banks
            local c = (count[b] or 0) + 1
            count[b] = c
            if c > wavefronts then wavefronts, hot = c, b end
          end
        end
      end
    end
    local min = (distinct * wb + M.wavefront_bytes - 1) // M.wavefront_bytes
    local ways = min > 0 and (wavefronts + min - 1) // min or 0
    r.phases[#r.phases + 1] = { first = first, last = first + per - 1, wavefronts = wavefronts,
      min = min, ways = ways, words = wavefronts, hot_bank = hot }
    r.wavefronts = r.wavefronts + wavefronts
    r.min = r.min + min
    if ways > r.ways then r.ways = ways end
  end
  r.conflicts = r.wavefronts - r.min
  return r
end

-- The kinds this model knows: LSU instructions, with their phases by kind and width.
M.lsu_kinds = { ld = true, st = true, ldgsts = true, ldsm = true }

-- Checks an access as a spec returned it, against the LSU kinds and `kinds` (the family's
-- model's own: kind -> { phase_lanes = n | nil }); raises "<where>: <problem>".
function M.check(a, where, kinds)
  if type(a) ~= "table" then fail("%s: must be a table, not a %s", where, type(a)) end
  for _, f in ipairs({ "name", "kind", "instr", "event" }) do
    if type(a[f]) ~= "string" then fail("%s: %s must be a string", where, f) end
  end
  where = where .. " (" .. a.name .. ")"
  if not widths[a.width] then fail("%s: width must be 1, 2, 4, 8 or 16 bytes", where) end
  if a.phase_lanes ~= nil and not phase_sizes[a.phase_lanes] then
    fail("%s: phase_lanes must be nil or 1, 2, 4, 8, 16 or 32 (lanes per phase)", where)
  end
  local own = kinds and kinds[a.kind]
  if not M.lsu_kinds[a.kind] and own == nil then
    fail("%s: kind '%s' is neither an LSU kind (ld, st, ldgsts, ldsm) nor one the model "
      .. "declares (its kinds table)", where, a.kind)
  end
  if own and a.phase_lanes ~= own.phase_lanes then
    fail("%s: phase_lanes %s, but the model declares %s for kind '%s'", where,
      tostring(a.phase_lanes), tostring(own.phase_lanes), a.kind)
  end
  if a.buffer ~= nil and type(a.buffer) ~= "string" then
    fail("%s: buffer must be nil or a string (what the addresses are offsets in)", where)
  end
  if a.waived ~= nil and type(a.waived) ~= "string" then
    fail("%s: waived must be nil or a string (the reason)", where)
  end
  if type(a.instances) ~= "table" or #a.instances == 0 then
    fail("%s: instances must be a non-empty list", where)
  end
  for i, inst in ipairs(a.instances) do
    local w = string.format("%s: instances[%d]", where, i)
    if type(inst) ~= "table" or type(inst.label) ~= "string" or type(inst.addrs) ~= "table" then
      fail("%s: must be { label = string, addrs = list }", w)
    end
    if #inst.addrs ~= 32 then fail("%s: addrs has %d lanes, expected 32", w, #inst.addrs) end
    local any = false
    for lane = 1, 32 do
      local x = inst.addrs[lane]
      if x ~= false then
        if math.type(x) ~= "integer" or x < 0 then
          fail("%s: lane %d: address %s is not a non-negative integer (false: inactive)", w,
            lane - 1, tostring(x))
        end
        if x % a.width ~= 0 then
          fail("%s: lane %d: address %d is not aligned to %d bytes", w, lane - 1, x, a.width)
        end
        any = true
      end
    end
    if not any then fail("%s: no active lane (leave the instance out)", w) end
  end
end

-- analyze(), memoized on the pattern: shifting every address by a multiple of 128 bytes moves
-- no bank, so instructions equal up to such a shift share one result (many do: warps, rows).
local patterns = {}

local function analyze_pattern(width, addrs, kind, declared)
  local base
  for lane = 1, 32 do
    local a = addrs[lane]
    if a and (base == nil or a < base) then base = a end
  end
  base = base - base % M.wavefront_bytes
  local parts = { width, M.phase_lanes(width, kind, declared) }
  for lane = 1, 32 do
    local a = addrs[lane]
    parts[lane + 1] = a and a - base or "-"
  end
  local key = table.concat(parts, ",")
  local r = patterns[key]
  if r == nil then
    r = M.analyze(width, addrs, kind, declared)
    patterns[key] = r
  end
  return r
end

-- Analysis of every instance of an access: { access, instances = n, wavefronts, min, conflicts
-- (sums over the instances), worst = { label, result, addrs } (most conflicts; first on ties) }.
-- Cached per access table: a spec may return the same table for kernels with equal traffic.
local cache = setmetatable({}, { __mode = "k" })

function M.prove_access(a)
  if cache[a] then return cache[a] end
  local p = { access = a, instances = #a.instances, wavefronts = 0, min = 0, conflicts = 0 }
  for _, inst in ipairs(a.instances) do
    local r = analyze_pattern(a.width, inst.addrs, a.kind, a.phase_lanes)
    p.wavefronts, p.min = p.wavefronts + r.wavefronts, p.min + r.min
    p.conflicts = p.conflicts + r.conflicts
    if p.worst == nil or r.conflicts > p.worst.result.conflicts then
      p.worst = { label = inst.label, result = r, addrs = inst.addrs }
    end
  end
  cache[a] = p
  return p
end

-- The proof of a list of accesses: { accesses = { prove_access(a), ... }, conflicted = the
-- subset with conflicts and no waiver, waived = the subset with conflicts and a waiver }.
function M.prove(accesses)
  local out = { accesses = {}, conflicted = {}, waived = {} }
  for _, a in ipairs(accesses) do
    local p = M.prove_access(a)
    out.accesses[#out.accesses + 1] = p
    if p.conflicts > 0 then
      local list = a.waived and out.waived or out.conflicted
      list[#list + 1] = p
    end
  end
  return out
end

-- "A ldmatrix.x4 8-way (32 wavefronts, min 4)": one access's worst instruction.
function M.summary(p)
  local r = p.worst.result
  return string.format("%s %d-way (%d wavefronts, min %d)", p.access.name, r.ways, r.wavefronts,
    r.min)
end

-- The lane -> address -> bank table of one instruction (addrs, and its analysis r), as lines
-- (no newlines), with a summary line after each phase.
function M.table_lines(r, addrs)
  local per = r.lanes
  local lines = { "   lane   address  banks  phase" }
  for lane = 0, 31 do
    local a = addrs[lane + 1]
    if a then
      local first, last = (a // M.word) % M.banks, ((a + r.width - 1) // M.word) % M.banks
      local banks = first == last and string.format("%d", first) or string.format("%d-%d", first, last)
      lines[#lines + 1] = string.format("   %4d  %8d  %-5s  %d", lane, a, banks, lane // per)
    else
      lines[#lines + 1] = string.format("   %4d  %8s  %-5s  %d", lane, "-", "-", lane // per)
    end
    local p = r.phases[lane // per + 1]
    if lane == p.last then
      lines[#lines + 1] = string.format("         phase %d (lanes %d-%d): %d wavefront%s, min %d%s",
        lane // per, p.first, p.last, p.wavefronts, p.wavefronts == 1 and "" or "s", p.min,
        p.wavefronts > p.min and string.format(": %d words in bank %d (%d-way)", p.words,
          p.hot_bank, p.ways) or "")
    end
  end
  return lines
end

return M
