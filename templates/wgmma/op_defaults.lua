-- templates/wgmma/op_defaults.lua -- the wgmma family's kernels of operations beyond dense
-- (templates/formats.lua M.ops) in the default build: per op and key, the op's kernel names in
-- default_rank order (templates/default_set.lua).
-- None yet: the moe kernels (kernel.cu.tpl kMoe) are in `marlin-gen --space full` until a
-- sweep of both families' moe kernels measures their cover (bench/moe_cover.py) and the
-- family's cost model is fitted to them (bench/notes/v48.md: ahead of the mma cover's tiles
-- from M = 1024 on Mixtral and at M = 4096, behind where an expert gets few rows).
return {
  moe = {},
}
