/* fileio.c -- file IO and embedded files for marlin-gen's Lua code (module `mgen_host`). */
#define _XOPEN_SOURCE 700 /* realpath */

#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

const mgen_embedded_file *mgen__find_embedded(const char *name) {
  size_t lo = 0, hi = mgen__embedded_count; /* sorted by name: binary search */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, mgen__embedded[mid].name);
    if (c == 0) return &mgen__embedded[mid];
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

/* Raises "path: reason" (without luaL_error's position of the calling Lua code). */
static int io_fail(lua_State *L, const char *path) {
  lua_pushfstring(L, "%s: %s", path, strerror(errno));
  return lua_error(L);
}

/* Reads a whole file into a Lua string on the stack; returns 0, or -1 with errno set. */
static int push_file(lua_State *L, const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return -1;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t got;
  do {
    char *p = luaL_prepbuffer(&b);
    got = fread(p, 1, LUAL_BUFFERSIZE, f);
    luaL_addsize(&b, got);
  } while (got == LUAL_BUFFERSIZE);
  int err = ferror(f) ? errno : 0;
  fclose(f);
  luaL_pushresult(&b);
  if (err != 0) {
    lua_pop(L, 1);
    errno = err;
    return -1;
  }
  return 0;
}

/* 1 if the file at `path` holds exactly data[size]. */
static int same_content(const char *path, const char *data, size_t size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 0;
  char buf[8192];
  size_t off = 0, got;
  int same = 1;
  while (same && (got = fread(buf, 1, sizeof buf, f)) > 0) {
    same = off + got <= size && memcmp(buf, data + off, got) == 0;
    off += got;
  }
  same = same && !ferror(f) && off == size;
  fclose(f);
  return same;
}

/* A path argument: a string without NUL (C would cut it there). */
static const char *check_path(lua_State *L, int arg) {
  size_t len;
  const char *path = luaL_checklstring(L, arg, &len);
  if (strlen(path) != len) luaL_argerror(L, arg, "path holds a NUL byte");
  return path;
}

/* A file name argument: one path component (no "/", no NUL, not "", "." or ".."), so that
 * writes stay in the folder given beside it. */
static const char *check_name(lua_State *L, int arg) {
  size_t len;
  const char *name = luaL_checklstring(L, arg, &len);
  if (len == 0 || strlen(name) != len || strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
      strcmp(name, "..") == 0)
    luaL_argerror(L, arg, "not a file name (one path component without '/' or NUL)");
  return name;
}

static int l_embedded(lua_State *L) {
  const mgen_embedded_file *f = mgen__find_embedded(luaL_checkstring(L, 1));
  if (f == NULL)
    lua_pushnil(L);
  else
    lua_pushlstring(L, (const char *)f->data, f->size);
  return 1;
}

static int l_embedded_names(lua_State *L) {
  lua_createtable(L, (int)mgen__embedded_count, 0);
  for (size_t i = 0; i < mgen__embedded_count; i++) {
    lua_pushstring(L, mgen__embedded[i].name);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int l_read_file(lua_State *L) {
  const char *path = check_path(L, 1);
  if (push_file(L, path) != 0) return io_fail(L, path);
  return 1;
}

/* mkdir -p `path`; pushes the list of the folders it created, outermost first. On failure it
 * removes them again and raises. */
static int l_make_dirs(lua_State *L) {
  const char *path = check_path(L, 1);
  char *buf = (char *)lua_newuserdatauv(L, strlen(path) + 2, 0);
  strcpy(buf, path);
  strcat(buf, "/");
  lua_newtable(L);
  int n = 0;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/' || p[-1] == '/') continue;
    *p = '\0';
    struct stat st;
    if (mkdir(buf, 0777) == 0) {
      lua_pushstring(L, buf);
      lua_rawseti(L, -2, ++n);
    } else if (errno != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
      int err = errno == EEXIST ? ENOTDIR : errno;
      for (int i = n; i >= 1; i--) {
        lua_rawgeti(L, -1, i);
        rmdir(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      errno = err;
      return io_fail(L, path);
    }
    *p = '/';
  }
  return 1;
}

static int l_remove_dir(lua_State *L) {
  const char *path = check_path(L, 1);
  if (rmdir(path) != 0) return io_fail(L, path);
  return 0;
}

/* Writes data[size] to fd; returns 0 or an errno. */
static int write_all(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t put = write(fd, data, size);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return put < 0 ? errno : EIO;
    data += put;
    size -= (size_t)put;
  }
  return 0;
}

/* stage_file(dir, name, data[, force]) -> temporary path | false. The temporary is a new file
 * beside dir/name (mkstemp: O_CREAT|O_EXCL, so never an existing file or a link's target),
 * written in full and synced, so that commit_file can rename it over dir/name. */
static int l_stage_file(lua_State *L) {
  const char *dir = check_path(L, 1);
  const char *name = check_name(L, 2);
  size_t size;
  const char *data = luaL_checklstring(L, 3, &size);
  const int force = lua_toboolean(L, 4);
  const char *path = lua_pushfstring(L, "%s/%s", dir, name);
  if (!force && same_content(path, data, size)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  /* Hidden (a leading "."), so that no listing of generated files takes it for one. */
  char *tmp = (char *)lua_newuserdatauv(L, strlen(dir) + strlen(name) + 16, 0);
  sprintf(tmp, "%s/.%s.XXXXXX", dir, name);
  int fd = mkstemp(tmp);
  if (fd < 0) return io_fail(L, path);
  /* mkstemp makes 0600 files; generated files get what a plain creat() would give. */
  mode_t mask = umask(0);
  umask(mask);
  int err = fchmod(fd, 0666 & ~mask) != 0 ? errno : 0;
  if (err == 0) err = write_all(fd, data, size);
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    unlink(tmp);
    errno = err;
    return io_fail(L, path);
  }
  lua_pushstring(L, tmp);
  return 1;
}

/* commit_file(tmp, dir, name): renames a staged temporary over dir/name. */
static int l_commit_file(lua_State *L) {
  const char *tmp = check_path(L, 1);
  const char *dir = check_path(L, 2);
  const char *name = check_name(L, 3);
  const char *path = lua_pushfstring(L, "%s/%s", dir, name);
  if (rename(tmp, path) != 0) return io_fail(L, path);
  return 0;
}

/* real_path(path) -> the absolute path with links resolved; raises "path: reason". */
static int l_real_path(lua_State *L) {
  const char *path = check_path(L, 1);
  char *real = (char *)lua_newuserdatauv(L, PATH_MAX, 0);
  if (realpath(path, real) == NULL) return io_fail(L, path);
  lua_pushstring(L, real);
  return 1;
}

static int l_remove_file(lua_State *L) {
  const char *path = check_path(L, 1);
  if (remove(path) != 0 && errno != ENOENT) return io_fail(L, path);
  return 0;
}

static int by_string(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int l_list_dir(lua_State *L) {
  const char *path = check_path(L, 1);
  lua_newtable(L);
  DIR *d = opendir(path);
  if (d == NULL) {
    if (errno == ENOENT) return 1;
    return io_fail(L, path);
  }
  /* Collect into the Lua table first (so nothing leaks if a push fails), then sort. */
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    const char *full = lua_pushfstring(L, "%s/%s", path, e->d_name);
    struct stat st;
    int is_dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
    lua_pop(L, 1);
    lua_pushfstring(L, "%s%s", e->d_name, is_dir ? "/" : "");
    lua_rawseti(L, -2, ++n);
  }
  closedir(d);
  const char **names = (const char **)lua_newuserdatauv(L, sizeof *names * (size_t)(n + 1), 0);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, -2, i + 1);
    names[i] = lua_tostring(L, -1); /* the string stays alive in the table */
    lua_pop(L, 1);
  }
  qsort(names, (size_t)n, sizeof *names, by_string);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int l_fnmatch(lua_State *L) {
  const char *pattern = luaL_checkstring(L, 1);
  const char *s = luaL_checkstring(L, 2);
  lua_pushboolean(L, fnmatch(pattern, s, 0) == 0);
  return 1;
}

static int l_fnv1a32(lua_State *L) {
  size_t n;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  lua_pushinteger(L, (lua_Integer)h);
  return 1;
}

static int l_fnv1a64(lua_State *L) {
  size_t n;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  uint64_t h = 14695981039346656037u;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211u;
  lua_pushinteger(L, (lua_Integer)h); /* wraps: format with "%016x" */
  return 1;
}

static int l_running(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) luaL_checkstring(L, 1);
  lua_settop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, MGEN_RUNNING_KEY);
  lua_pushvalue(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, MGEN_RUNNING_KEY);
  return 1;
}

int mgen__open_host(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"embedded", l_embedded},   {"embedded_names", l_embedded_names},
      {"read_file", l_read_file}, {"stage_file", l_stage_file},
      {"commit_file", l_commit_file}, {"make_dirs", l_make_dirs},
      {"remove_file", l_remove_file}, {"remove_dir", l_remove_dir},
      {"real_path", l_real_path}, {"list_dir", l_list_dir},
      {"fnmatch", l_fnmatch},     {"fnv1a32", l_fnv1a32},
      {"fnv1a64", l_fnv1a64},     {"running", l_running},
      {NULL, NULL},
  };
  luaL_newlib(L, funcs);
  return 1;
}

/* package.preload[<mod>]: loads the embedded gen/lua/<mod>.lua (fileio.h). */
static int load_embedded_module(lua_State *L) {
  const mgen_embedded_file *f = &mgen__embedded[lua_tointeger(L, lua_upvalueindex(1))];
  const char *chunkname = lua_pushfstring(L, "@%s", f->name);
  if (luaL_loadbufferx(L, (const char *)f->data, f->size, chunkname, "t") != LUA_OK)
    return lua_error(L);
  lua_pushvalue(L, 1); /* module name */
  lua_call(L, 1, 1);
  return 1;
}

void mgen__register_modules(lua_State *L) {
  static const char prefix[] = "gen/lua/", suffix[] = ".lua";
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (size_t i = 0; i < mgen__embedded_count; i++) {
    const char *name = mgen__embedded[i].name;
    size_t len = strlen(name), plen = sizeof prefix - 1, slen = sizeof suffix - 1;
    if (len <= plen + slen || strncmp(name, prefix, plen) != 0 ||
        strcmp(name + len - slen, suffix) != 0)
      continue;
    const char *module = lua_pushlstring(L, name + plen, len - plen - slen);
    lua_pushinteger(L, (lua_Integer)i);
    lua_pushcclosure(L, load_embedded_module, 1);
    lua_setfield(L, -3, module);
    lua_pop(L, 1); /* the module name */
  }
  lua_pushcfunction(L, mgen__open_host);
  lua_setfield(L, -2, "mgen_host");
  lua_pop(L, 1);
}
