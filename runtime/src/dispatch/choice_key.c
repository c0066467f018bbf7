/* choice_key.c -- mgen__choice_key_of (select.h): the choice key of a call, its functional key
 * with the layout resolved, its shape and the bucket of its M.
 */
#include <string.h>

#include "dispatch/bucket.h"
#include "dispatch/select.h"
#include "formats/formats.h"

mgen__choice_key mgen__choice_key_of(const mgen_weights *w, int m) {
  mgen__choice_key ck;
  memset(&ck, 0, sizeof ck);
  ck.key.act = (int)w->act;
  ck.key.wfmt = (int)w->wfmt;
  ck.key.scheme = (int)w->scheme;
  ck.key.group = w->group;
  ck.key.layout = mgen__layout_resolve((int)w->wfmt, (int)w->layout);
  ck.key.op = MGEN_OP_DENSE; /* mgen_gemm and mgen_tune compute the plain GEMM */
  ck.n = w->n;
  ck.k = w->k;
  ck.bucket = mgen__bucket_of(m);
  return ck;
}
