/* formats.h -- which weights exist: the (activation, weight format, scale scheme, group)
 * combinations of mgen.h's mgen_weights. Pure C and the one statement of these rules:
 * weights.c checks weights by them, the cache parser (cache_file.c) records, and the fuzzers
 * (tests/fuzz) what they generate.
 *
 *   wfmt   scheme   group
 *   u4b8   group    32, 64, 128 or MGEN_GROUP_CHANNEL (scales of the activation type)
 *   fe2m1  nvfp4    16 (E4M3 block scales + an FP32 global scale)
 *   fe2m1  mxfp4    32 (E8M0 block scales)
 */
#ifndef MGEN_FORMATS_H
#define MGEN_FORMATS_H

/* 1 if act is an mgen_act (f16, bf16), else 0. */
int mgen__act_valid(int act);
/* 1 if wfmt is an mgen_wfmt (u4b8, fe2m1), else 0. */
int mgen__wfmt_valid(int wfmt);
/* 1 if scheme is an mgen_scheme (group, nvfp4, mxfp4), else 0. */
int mgen__scheme_valid(int scheme);
/* 1 if `scheme` is a scale scheme of `wfmt` (u4b8: group; fe2m1: nvfp4 or mxfp4), else 0. */
int mgen__scheme_fits(int wfmt, int scheme);
/* K elements per block scale of an fe2m1 scheme (nvfp4 16, mxfp4 32); 0 for other schemes. */
int mgen__scheme_block(int scheme);
/* 1 if `group` is a group size of (wfmt, scheme) per the table above, else 0. */
int mgen__group_valid(int wfmt, int scheme, int group);
/* All of the above: 1 if (act, wfmt, scheme, group) describes weights that exist. */
int mgen__format_valid(int act, int wfmt, int scheme, int group);

#endif /* MGEN_FORMATS_H */
