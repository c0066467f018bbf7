${banner}
// mgen_params_${family}.h -- mgen_kernel_desc.params of a ${family} kernel, in the order
// ${spec} declares them (M.params, the one place it is written): index, count, names.
// The family's runtime file reads params[] by these names only, so the spec and the runtime
// cannot disagree on what an entry means.
#ifndef MGEN_PARAMS_${id}_H
#define MGEN_PARAMS_${id}_H

#include <stddef.h> /* NULL */

#include "mgen/mgen_kernel.h"

typedef enum mgen__${family}_param {
//% for _, p in ipairs(params) do
  MGEN_${id}_${p.id} = ${p.index}, /* ${p.doc} */
//% end
  MGEN_${id}_PARAMS = ${count}
} mgen__${family}_param;

/* The names of params[0..], NULL-terminated (the manifest's params column; family.h param_names). */
#define MGEN_${id}_PARAM_NAMES { \
//% for _, p in ipairs(params) do
  "${p.name}", \
//% end
  NULL}

/* The descriptor holds MGEN_FAMILY_PARAMS of them: the spec may declare no more. */
#ifdef __cplusplus
static_assert(MGEN_${id}_PARAMS <= MGEN_FAMILY_PARAMS, "${spec}: more params than mgen_kernel_desc.params holds");
#else
_Static_assert(MGEN_${id}_PARAMS <= MGEN_FAMILY_PARAMS, "${spec}: more params than mgen_kernel_desc.params holds");
#endif

#endif /* MGEN_PARAMS_${id}_H */
