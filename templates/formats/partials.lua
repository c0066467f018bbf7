-- templates/formats/partials.lua -- which partial and struct under templates/formats/ serve
-- each format name, per fragment order: the facts of the format partials, read by every family
-- (the mma family dequantizes into the mma.sync fragment; the wgmma family into the same order,
-- its A operand), so that a format added there is added for every family of that fragment.
--   act:    the MMA wrapper of mgen_ptx.cuh (mma family) and the suffix of the structs;
--   wfmt:   formats/<wfmt>/<fragment>_<act>.cuh defines mgen::<struct><suffix>; `zeros`: its
--           dequant takes zero points (zero_pair / zeros, formats/u4/), the scheme's zero_bits;
--   scheme: the formats/mgen_scales.cuh struct turning packed scales into multipliers
--           (`channel`: for group 0), and the kernel summary's words.
local M = {}

M.act = {
  f16 = { mma = "mma_f16", suffix = "F16" },
  bf16 = { mma = "mma_bf16", suffix = "Bf16" },
}
-- Activation types that are only an input (a layout's a_type, formats.lua): the suffix of the
-- structs that dequantize into their fragments (the kernel's act is then its output's type),
-- and `folds`: the weight formats whose partial for it takes the block scales into the
-- dequantized weights (its dequant reads the step's scale pair: kFoldsScales, which the
-- kernels check against this) instead of leaving them to the FP32 sums.
M.a_type = {
  e4m3 = { suffix = "E4m3", folds = { fe2m1 = true } },
}
M.wfmt = {
  u4b8 = { struct = "DequantU4b8" },
  fe2m1 = { struct = "DequantFe2m1" },
  u4 = { struct = "DequantU4", zeros = true },
}
M.scales = {
  group = { struct = "ScalesNative", channel = "ScalesChannel" },
  nvfp4 = { struct = "ScalesE4M3", summary = "NVFP4 (E4M3 per 16, FP32 global)" },
  mxfp4 = { struct = "ScalesE8M0", summary = "MXFP4 (E8M0 per 32)" },
  asym = { struct = "ScalesNative", channel = "ScalesChannel", zeros = true },
}

-- The dequantization partial of kernel k into fragment order `fragment` ("mma", "wgmma") for
-- activations of type `a` (default k.act; an M.a_type), relative to the generated include/,
-- and its struct.
function M.dequant_of(k, fragment, a)
  a = a or k.act
  local row = M.act[a] or M.a_type[a]
  if row == nil then error(string.format("partials.lua: no activation type '%s'", tostring(a))) end
  return string.format("formats/%s/%s_%s.cuh", k.wfmt, fragment, a), M.wfmt[k.wfmt].struct .. row.suffix
end

-- Whether kernel k's dequantization into activations of type `a` folds its block scales into
-- the weights (M.a_type's folds).
function M.folds_scales(k, a)
  local row = M.a_type[a]
  return row ~= nil and row.folds ~= nil and row.folds[k.wfmt] == true and k.group > 0
end

-- The scales of kernel k: its scheme (formats.schemes), the mgen_scales.cuh struct, and the
-- summary's words.
function M.scales_of(formats, k)
  local scheme = assert(formats.scheme_of(k.wfmt, k.group))
  local family = M.scales[scheme.name]
  if k.group == 0 then return scheme, family.channel, "per-channel" end
  return scheme, family.struct, family.summary or string.format("group-%d", k.group)
end

-- The group scales one pipeline stage (tile_k K elements) of kernel k carries in shared memory,
-- in either family: scale rows (the groups the stage spans, at least one) and bytes per stored
-- scale; 0, 0 per channel (those scales stay in global memory for the epilogue).
function M.stage_scales(formats, k)
  if k.group == 0 then return 0, 0 end
  return math.max(1, k.tile_k // k.group), assert(formats.scheme_of(k.wfmt, k.group)).scale_bytes
end

-- Whether kernel k's dequantization takes zero points (its scheme stores them): both the
-- partial and the scheme must say so, or the table and the partials disagree.
function M.zeros_of(formats, k)
  local scheme = assert(formats.scheme_of(k.wfmt, k.group))
  local table_says = scheme.zero_bits > 0
  if table_says ~= (M.wfmt[k.wfmt].zeros or false) then
    error(string.format("partials.lua: %s's dequant %s zero points, its scheme %s %s", k.wfmt,
                        table_says and "takes no" or "takes", scheme.name,
                        table_says and "stores them" or "stores none"))
  end
  return table_says
end

-- true when the partials cover kernel k's act, wfmt and scheme, else false and why.
function M.covers(formats, k)
  local scheme = formats.scheme_of(k.wfmt, k.group)
  if not scheme then return false, string.format("%s has no scheme with group %d", k.wfmt, k.group) end
  if not M.scales[scheme.name] or not M.wfmt[k.wfmt] or not M.act[k.act] then
    return false, string.format("no format partials for %s/%s/%s", k.act, k.wfmt, scheme.name)
  end
  return true
end

return M
