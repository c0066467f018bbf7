/* abi.c -- prints the sizes and field offsets of mgen.h's structures, one "struct field offset"
 * line each ("struct - size" for the size), for test_marlin_gen.py to compare with ctypes'. */
#include <stddef.h>
#include <stdio.h>

#include "mgen/mgen.h"

#define SIZE(s) printf(#s " - %zu\n", sizeof(s))
#define OFF(s, f) printf(#s " " #f " %zu\n", offsetof(s, f))

int main(void) {
  SIZE(mgen_tensor), OFF(mgen_tensor, dtype), OFF(mgen_tensor, ndim), OFF(mgen_tensor, shape);
  SIZE(mgen_weights), OFF(mgen_weights, group), OFF(mgen_weights, d_q), OFF(mgen_weights, layout);
  OFF(mgen_weights, d_bias);
  SIZE(mgen_gptq), OFF(mgen_gptq, scales), OFF(mgen_gptq, g_idx), OFF(mgen_gptq, zeros);
  SIZE(mgen_ct), OFF(mgen_ct, weight_scale), OFF(mgen_ct, weight_g_idx);
  SIZE(mgen_awq), OFF(mgen_awq, qzeros), OFF(mgen_awq, scales);
  SIZE(mgen_ctx_opts), OFF(mgen_ctx_opts, log), OFF(mgen_ctx_opts, max_workspaces);
  OFF(mgen_ctx_opts, plain_launches), OFF(mgen_ctx_opts, max_sms);
  SIZE(mgen_tune_result), OFF(mgen_tune_result, us), OFF(mgen_tune_result, candidates);
  SIZE(mgen_pack_src), OFF(mgen_pack_src, scales), OFF(mgen_pack_src, global_scale);
  OFF(mgen_pack_src, zeros), OFF(mgen_pack_src, zeros_bytes);
  SIZE(mgen_moe_route), OFF(mgen_moe_route, topk), OFF(mgen_moe_route, num_experts);
  OFF(mgen_moe_route, local_experts), OFF(mgen_moe_route, block_rows);
  OFF(mgen_moe_route, d_topk_ids), OFF(mgen_moe_route, d_expert_map);
  OFF(mgen_moe_route, d_sorted_ids), OFF(mgen_moe_route, d_block_experts);
  OFF(mgen_moe_route, d_num_padded), OFF(mgen_moe_route, unsorted);
  return 0;
}
