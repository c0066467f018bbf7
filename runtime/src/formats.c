/* formats.c -- the weight-format rules of formats.h, as data. */
#include "formats.h"

#include "mgen/mgen.h"

/* u4b8 group sizes the packed layout is defined for, besides MGEN_GROUP_CHANNEL. */
static const int u4b8_groups[] = {32, 64, 128};

int mgen__act_valid(int act) { return act == MGEN_ACT_F16 || act == MGEN_ACT_BF16; }

int mgen__wfmt_valid(int wfmt) { return wfmt == MGEN_WFMT_U4B8 || wfmt == MGEN_WFMT_FE2M1; }

int mgen__scheme_valid(int scheme) {
  return scheme == MGEN_SCHEME_GROUP || scheme == MGEN_SCHEME_NVFP4 ||
         scheme == MGEN_SCHEME_MXFP4;
}

int mgen__scheme_fits(int wfmt, int scheme) {
  if (wfmt == MGEN_WFMT_U4B8) return scheme == MGEN_SCHEME_GROUP;
  return wfmt == MGEN_WFMT_FE2M1 && (scheme == MGEN_SCHEME_NVFP4 || scheme == MGEN_SCHEME_MXFP4);
}

int mgen__scheme_block(int scheme) {
  return scheme == MGEN_SCHEME_NVFP4 ? 16 : scheme == MGEN_SCHEME_MXFP4 ? 32 : 0;
}

int mgen__group_valid(int wfmt, int scheme, int group) {
  if (!mgen__scheme_fits(wfmt, scheme)) return 0;
  if (wfmt == MGEN_WFMT_FE2M1) return group == mgen__scheme_block(scheme);
  if (group == MGEN_GROUP_CHANNEL) return 1;
  for (unsigned i = 0; i < sizeof u4b8_groups / sizeof u4b8_groups[0]; i++)
    if (group == u4b8_groups[i]) return 1;
  return 0;
}

/* group_valid implies a valid wfmt and a scheme that fits it. */
int mgen__format_valid(int act, int wfmt, int scheme, int group) {
  return mgen__act_valid(act) && mgen__group_valid(wfmt, scheme, group);
}
