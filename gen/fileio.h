/* fileio.h -- marlin-gen's file IO and embedded files, exposed to Lua as module `mgen_host`.
 *
 * The generator's Lua code (gen/lua/) never touches the file system through Lua's io library:
 * everything it reads or writes goes through the functions of `mgen_host` (fileio.c), so that
 * writes are atomic (temporary file + rename) and only happen when the content changed. A
 * `name` argument is one path component: names with "/" or NUL are refused, and so is NUL in
 * any path (C would cut the path there).
 */
#ifndef MGEN_FILEIO_H
#define MGEN_FILEIO_H

#include <stddef.h>

#include <lua.h>

/* One file embedded at build time by mgen_embed (embed.c). `name` is the path relative to the
 * source root ("gen/lua/emit.lua", "templates/mma/kernel.cu.tpl"); `data[size]` is a NUL byte. */
typedef struct mgen_embedded_file {
  const char *name;
  const unsigned char *data;
  size_t size;
} mgen_embedded_file;

/* Defined by the generated mgen_embedded.c: sorted by name, followed by a {NULL} entry. */
extern const mgen_embedded_file mgen__embedded[];
extern const size_t mgen__embedded_count;

/* The embedded file called `name`, or NULL. */
const mgen_embedded_file *mgen__find_embedded(const char *name);

/* lua_CFunction opening module `mgen_host`: pushes its table.
 *   embedded(name)            -> string | nil      an embedded file
 *   embedded_names()          -> { name... }       all embedded names, sorted
 *   read_file(path)           -> string            raises "path: reason"
 *   stage_file(dir, name, s[, force]) -> tmp | false   unless dir/name holds s already (or
 *                                                   `force`): writes s to a new hidden file
 *                                                   beside it (mkstemp), synced
 *   commit_file(tmp, dir, name)                    renames a staged file over dir/name
 *   make_dirs(path)           -> { dir... }        mkdir -p; the folders it created
 *   remove_file(path)                              raises on failure other than ENOENT
 *   remove_dir(path)                               rmdir; raises on failure
 *   real_path(path)           -> string            realpath(3); raises "path: reason"
 *   list_dir(path)            -> { entry... }      sorted; directories end in "/"; a missing
 *                                                   directory lists as {}
 *   fnmatch(pattern, s)       -> boolean           POSIX fnmatch, no flags
 *   fnv1a32(s), fnv1a64(s)    -> integer           FNV-1a (64-bit as a wrapped Lua integer)
 *   running(file)             -> previous          declares the spec or template now running
 *                                                   (nil: none), for the limits' messages
 */
int mgen__open_host(lua_State *L);

/* The registry field holding what mgen_host.running declared (budget.c reads it). */
#define MGEN_RUNNING_KEY "mgen.running"

/* Puts every embedded gen/lua/<mod>.lua into package.preload (chunk name "@gen/lua/<mod>.lua",
 * so that errors point at the sources) and `mgen_host` with them. Needs the package library
 * open. marlin-gen's main and the generator's fuzzers (tests/fuzz) set up their states so. */
void mgen__register_modules(lua_State *L);

#endif /* MGEN_FILEIO_H */
