-- templates/formats.lua -- the format table: every activation type, weight format, scale scheme,
-- packed weight layout and operation, as data. The single source of truth: the specs read it
-- (require("formats")), marlin-gen renders it into <out>/include/mgen_formats.h
-- (templates/formats.h.tpl: X-macro lists) from which the runtime, tools, bench and tests build
-- every name map and validity rule, and tests/runtime/test_formats.c checks that mgen.h's and
-- mgen_kernel.h's public enums agree with it.
--
-- Adding a weight format = one row in `wfmts`, its rows in `schemes`, its dequantization
-- partials (templates/formats/, per kernel family), its keys in each family's defaults.lua,
-- and its runtime side (README, "Adding ... a quant format": runtime/src/formats/<fmt>.c and
-- <fmt>_ops.c with a line in each registry, packing code in runtime/src/prepare/).
-- `enum` values are stable: they appear in cache files and in the public ABI. Never reuse one.
local M = {}

-- Activation (and output) types: kernel-name field, mgen_act value, device C type, bytes, and
-- `nonfinite`: the bits of a value that are all ones exactly when it is inf or NaN (the
-- exponent field), by which packing rejects non-finite scales of this type.
M.acts = {
  { name = "f16", enum = 1, c_type = "__half", bytes = 2, nonfinite = 0x7c00 },
  { name = "bf16", enum = 2, c_type = "__nv_bfloat16", bytes = 2, nonfinite = 0x7f80 },
}

-- Packed weight layouts: how kernels read the packed codes and scales (weights are packed for
-- one layout); `families` names the kernel families with kernels that read it (a family's spec
-- says which of its kernels do: wgmma by tile_k, mma by arch); `a_type`: the kernels
-- that read it take activations of this type (FP8 E4M3 with FP32 row scales: mgen_gemm_a8),
-- their output and scales of the weights' act; false: the act itself.
M.layouts = {
  { name = "mma", enum = 1, families = { "mma", "wgmma" }, a_type = false,
    doc = "mma.sync m16n8k16 B fragments, Marlin's interleave (runtime/src/formats/layout.h)" },
  { name = "e4m3", enum = 2, families = { "wgmma", "mma" }, a_type = "e4m3",
    doc = "W4A8 words: .e4m3 A fragments of wgmma m64nNk32 and mma.sync m16n8k32 from two words each (runtime/src/formats/layout.h, \"W4A8 words\"); u4b8, u4 (zero points subtracted in the bytes), and fe2m1 as MXFP4 (its block scales folded into the E4M3 weights)" },
}

-- Weight formats: kernel-name field, mgen_wfmt value, bits per code, the layouts it can be
-- packed in (the first is the default, what mgen_weights.layout = 0 means).
M.wfmts = {
  { name = "u4b8", enum = 1, bits = 4, layouts = { "mma", "e4m3" },
    doc = "GPTQ symmetric int4, stored as q + 8 (0..15)" },
  { name = "fe2m1", enum = 2, bits = 4, layouts = { "mma", "e4m3" },
    doc = "FP4 E2M1 (NVFP4 / MXFP4)" },
  { name = "u4", enum = 3, bits = 4, layouts = { "mma", "e4m3" },
    doc = "asymmetric int4: codes 0..15 and a zero point per group and column, (q - z) * s" },
}

-- Scale schemes: mgen_scheme value, the weight format they scale, the group sizes they exist
-- for (K elements per scale; 0 = one scale per output column), how a scale is stored ("act":
-- the activation type; "e4m3", "e8m0": one byte), bytes per stored scale, whether the
-- checkpoint carries an FP32 global scale, whether the packed scale buffer ends with n FP32
-- column factors, `nonfinite` of a one-byte storage as of an activation type (the bits all ones
-- exactly in its NaN: E4M3 has no inf and S.1111.111 is its NaN, E8M0's NaN is 0xff in OCP MX;
-- 0 for "act", whose type's own applies), and a scale byte that, repeated over the whole scale
-- buffer, makes valid finite positive scales of every activation type (the tuner's scratch
-- weights: 0x3c is f16 1.06, bf16 0.0115, e4m3 1.5, e8m0 2^-67, and FP32 column factors
-- 0.0115). A (wfmt, group) pair has at most one scheme: kernel names carry wfmt and group only.
-- `zero_bits`: bits of a zero point per (scale row, column), stored after the scales
-- (layout.h, "Zero points"); 0: none (the code's bias is fixed). `layouts`: those of its weight
-- format's layouts that weights of this scheme can be packed in (NVFP4 has no W4A8 form:
-- layout.h, "W4A8 words"); every layout of a format must be some scheme's.
-- tests/runtime/test_format_rules.c checks these rules on every row (and groups against the
-- kernels' tile K).
M.schemes = {
  { name = "group", enum = 0, wfmt = "u4b8", groups = { 0, 32, 64, 128 }, scale = "act",
    scale_bytes = 2, global_scale = false, column_factors = false, nonfinite = 0,
    safe_scale_byte = 0x3c, zero_bits = 0, layouts = { "mma", "e4m3" },
    doc = "scales of the activation type per group of K elements, or per output column" },
  { name = "nvfp4", enum = 1, wfmt = "fe2m1", groups = { 16 }, scale = "e4m3",
    scale_bytes = 1, global_scale = true, column_factors = true, nonfinite = 0x7f,
    safe_scale_byte = 0x3c, zero_bits = 0, layouts = { "mma" },
    doc = "FP8 E4M3 scale per 16 K elements + FP32 global scale" },
  { name = "mxfp4", enum = 2, wfmt = "fe2m1", groups = { 32 }, scale = "e8m0",
    scale_bytes = 1, global_scale = false, column_factors = true, nonfinite = 0xff,
    safe_scale_byte = 0x3c, zero_bits = 0, layouts = { "mma", "e4m3" },
    doc = "E8M0 (power of two) scale per 32 K elements (OCP MX)" },
  { name = "asym", enum = 3, wfmt = "u4", groups = { 0, 32, 64, 128 }, scale = "act",
    scale_bytes = 2, global_scale = false, column_factors = false, nonfinite = 0,
    safe_scale_byte = 0x3c, zero_bits = 4, layouts = { "mma", "e4m3" },
    doc = "scales of the activation type and 4-bit zero points per group of K elements, or per output column" },
}

-- Operations: what a kernel computes from its operands, as mgen_op (mgen_kernel_desc.op, the
-- kernel-choice key, the cache key text). `name` is the op field of a kernel (k.op: an axis
-- named "op" of a family that computes several, else the implicit op, naming.lua's
-- IMPLICIT_OP, which is also the only op a kernel name does not spell out). Enum 0 is the
-- plain GEMM, so a descriptor or key that leaves .op zero is dense.
M.ops = {
  { name = "dense", enum = 0, doc = "C = A * W^T, one weight matrix per call" },
  { name = "moe", enum = 1,
    doc = "grouped GEMM over experts: C[pair] = A[row of the pair] * W_e^T, rows grouped by expert" },
}

-- Lookups by name, and the scheme of a (wfmt, group) pair.
local function index(list, what)
  local by = {}
  for _, row in ipairs(list) do
    if by[row.name] then error(string.format("formats.lua: %s '%s' appears twice", what, row.name)) end
    by[row.name] = row
  end
  return by
end
M.act = index(M.acts, "activation type")
M.wfmt = index(M.wfmts, "weight format")
M.scheme = index(M.schemes, "scale scheme")
M.layout = index(M.layouts, "layout")
M.op = index(M.ops, "operation")

local function contains(list, x)
  for _, y in ipairs(list) do
    if y == x then return true end
  end
  return false
end

-- Whether kernels of family `family` read layout `layout` (its row's families).
function M.read_by(layout, family)
  return contains(M.layout[layout].families, family)
end

-- The names of a list of rows (M.acts, M.wfmts, ...), in order: a spec's axis values.
function M.names(list)
  local out = {}
  for i, row in ipairs(list) do out[i] = row.name end
  return out
end

-- The format fields of kernel k's descriptor (mgen_kernel_desc: act, wfmt, scheme, layout, as
-- names and as the C enumerators of mgen_kernel.h), for a family whose kernels read `layout`,
-- merged with the family's own fields `extra`: what a spec's derive(k) returns.
function M.kernel_fields(k, layout, extra)
  local scheme = assert(M.scheme_of(k.wfmt, k.group))
  if not M.op[k.op] then error(string.format("formats.lua has no operation '%s'", tostring(k.op))) end
  local out = {
    act_enum = "MGEN_ACT_" .. string.upper(k.act),
    act_type = M.act[k.act].c_type,
    wfmt_enum = "MGEN_WFMT_" .. string.upper(k.wfmt),
    scheme = scheme.name,
    scheme_enum = "MGEN_SCHEME_" .. string.upper(scheme.name),
    layout = layout,
    layout_enum = "MGEN_LAYOUT_" .. string.upper(layout),
  }
  for key, v in pairs(extra) do out[key] = v end
  return out
end

-- Whether weights of format `wfmt` can be packed in layout `layout` (its row's layouts), and
-- with `group`, weights of the scheme of (wfmt, group) (that scheme's layouts).
function M.packed_in(wfmt, layout, group)
  if not contains(M.wfmt[wfmt].layouts, layout) then return false end
  if group == nil then return true end
  local scheme = M.scheme_of(wfmt, group)
  return scheme ~= nil and contains(scheme.layouts, layout)
end

-- The scheme of weights (wfmt, group), or nil, "why".
function M.scheme_of(wfmt, group)
  local found, groups = nil, {}
  for _, s in ipairs(M.schemes) do
    if s.wfmt == wfmt then
      for _, g in ipairs(s.groups) do
        groups[#groups + 1] = g == 0 and "gc" or tostring(g)
        if g == group then
          if found then
            error(string.format("formats.lua: %s group %d has two schemes, %s and %s", wfmt,
                                group, found.name, s.name))
          end
          found = s
        end
      end
    end
  end
  if found then return found end
  return nil, string.format("%s has groups %s, not %d", wfmt, table.concat(groups, ", "), group)
end

-- Consistency of the rows (run once, at load): names and enums unique, references resolve.
for _, list in ipairs({ M.acts, M.wfmts, M.schemes, M.layouts, M.ops }) do
  local seen = {}
  for _, row in ipairs(list) do
    if seen[row.enum] then
      error(string.format("formats.lua: '%s' and '%s' share enum %d", seen[row.enum], row.name, row.enum))
    end
    seen[row.enum] = row.name
  end
end
for _, w in ipairs(M.wfmts) do
  for _, l in ipairs(w.layouts) do
    if not M.layout[l] then error(string.format("formats.lua: wfmt %s: no layout '%s'", w.name, l)) end
    local used = false
    for _, s in ipairs(M.schemes) do used = used or (s.wfmt == w.name and contains(s.layouts, l)) end
    if not used then error(string.format("formats.lua: wfmt %s: no scheme of it is packed in '%s'", w.name, l)) end
  end
end
for _, s in ipairs(M.schemes) do
  if not M.wfmt[s.wfmt] then error(string.format("formats.lua: scheme %s: no wfmt '%s'", s.name, s.wfmt)) end
  for _, l in ipairs(s.layouts) do
    if not contains(M.wfmt[s.wfmt].layouts, l) then
      error(string.format("formats.lua: scheme %s: layout '%s' is not one of %s's", s.name, l, s.wfmt))
    end
  end
  for _, g in ipairs(s.groups) do M.scheme_of(s.wfmt, g) end
  if (s.scale == "act") ~= (s.nonfinite == 0) then
    error(string.format("formats.lua: scheme %s: nonfinite must be 0 exactly for \"act\" scales", s.name))
  end
end

return M
