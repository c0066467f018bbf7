/* tools_api.h -- MGEN__TOOLS_API marks the few internal functions that libmgen.so exports for
 * marlin-tune (the list: mgen_internal.h). marlin-tune links the shared library rather than
 * the static archive, so that an install holds every kernel once; what it needs beyond the
 * public API (parsing format names and M buckets as the cache spells them, reading cache files
 * as mgen_cache_load does, naming a kernel's family) is these, taken from the library itself
 * rather than from a second compiled copy that could disagree with it.
 * They are not the library's ABI: no installed header declares them and any release may
 * change them (marlin-tune refuses a libmgen.so of another version). tests/install/
 * install_test.sh checks that libmgen.so exports mgen.h's MGEN_API functions and the
 * functions declared with this mark, nothing else. */
#ifndef MGEN_TOOLS_API_H
#define MGEN_TOOLS_API_H

#if defined(__GNUC__) || defined(__clang__)
#define MGEN__TOOLS_API __attribute__((visibility("default")))
#else
#define MGEN__TOOLS_API
#endif

#endif /* MGEN_TOOLS_API_H */
