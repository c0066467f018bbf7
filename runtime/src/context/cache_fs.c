/* cache_fs.c -- the file-system side of mgen_cache_save (cache_fs.h): links, the target's type,
 * the writers' lock file and the temporary files.
 */
#include "context/cache_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache_file.h"

#define MAX_LINKS 16
#define LOCK_MAGIC "mgen-cache-lock pid "

mgen_status mgen__cache_follow_links(mgen_ctx *ctx, const char *path, char real[PATH_MAX]) {
  char target[PATH_MAX];
  if (snprintf(real, PATH_MAX, "%s", path) >= PATH_MAX)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "cache path too long: %s", path);
  for (int hops = 0;; hops++) {
    struct stat sb;
    if (lstat(real, &sb) != 0)
      return errno == ENOENT ? MGEN_OK
                             : mgen__fail(ctx, MGEN_ERR_IO, "cannot stat cache %s: %s", real,
                                          strerror(errno));
    if (!S_ISLNK(sb.st_mode)) return MGEN_OK;
    if (hops == MAX_LINKS)
      return mgen__fail(ctx, MGEN_ERR_IO, "cache %s: more than %d levels of symbolic links",
                        path, MAX_LINKS);
    ssize_t len = readlink(real, target, sizeof target);
    if (len <= 0)
      return mgen__fail(ctx, MGEN_ERR_IO, "cannot read the link %s: %s", real, strerror(errno));
    const char *slash = strrchr(real, '/');
    size_t keep = target[0] != '/' && slash != NULL ? (size_t)(slash - real) + 1 : 0;
    if (keep + (size_t)len >= PATH_MAX) /* also a target readlink cut at sizeof target */
      return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "cache path too long: %s", path);
    memcpy(real + keep, target, (size_t)len);
    real[keep + (size_t)len] = '\0';
  }
}

mgen_status mgen__cache_check_target(mgen_ctx *ctx, const char *real) {
  struct stat sb;
  if (lstat(real, &sb) != 0)
    return errno == ENOENT ? MGEN_OK
                           : mgen__fail(ctx, MGEN_ERR_IO, "cannot stat cache %s: %s", real,
                                        strerror(errno));
  if (!S_ISREG(sb.st_mode)) /* a FIFO, a device, a directory: never replaced */
    return mgen__fail(ctx, MGEN_ERR_IO, "cache %s is not a regular file", real);
  if (sb.st_size == 0) return MGEN_OK;
  char *text = NULL, why[MGEN_ERROR_SIZE];
  size_t size = 0;
  mgen__cache_header hdr;
  mgen_status st = mgen__cache_read_file(real, &text, &size, why, sizeof why, NULL);
  if (st != MGEN_OK) return mgen__fail(ctx, st, "%s", why);
  st = mgen__cache_parse_header(text, size, real, &hdr, why, sizeof why);
  free(text);
  if (st == MGEN_ERR_CACHE_FORMAT && hdr.format == 0)
    return mgen__fail(ctx, MGEN_ERR_CACHE_FORMAT, "refusing to replace %s: it is not an mgen "
                      "cache (%s)", real, why);
  return MGEN_OK; /* anything else is the save's to judge, under the lock */
}

/* ---------------------------------------------------------------- lock */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double lock_timeout(void) {
  const char *env = getenv("MGEN_CACHE_LOCK_TIMEOUT");
  char *end;
  double s = env != NULL ? strtod(env, &end) : -1;
  return env != NULL && end != env && *end == '\0' && s >= 0 && s <= 86400
             ? s
             : MGEN__CACHE_LOCK_TIMEOUT_S;
}

/* The lock file's text (at most size - 1 bytes); "" if unreadable. */
static void lock_text(int fd, char *buf, size_t size) {
  ssize_t n = pread(fd, buf, size - 1, 0);
  buf[n > 0 ? n : 0] = '\0';
}

/* Whether fd is still the file at `path` (the holder that let it go removed it). */
static int still_there(int fd, const char *path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

mgen_status mgen__cache_lock(mgen_ctx *ctx, const char *real, mgen__cache_lock_file *lock) {
  lock->fd = -1;
  if (snprintf(lock->path, sizeof lock->path, "%s.lock", real) >= (int)sizeof lock->path)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "cache path too long: %s", real);
  const double timeout = lock_timeout(), start = now_s();
  char text[64];
  useconds_t nap = 1000;
  for (;;) {
    /* O_NONBLOCK: a FIFO there is refused, not waited on; O_NOFOLLOW: a link is refused. */
    int fd = open(lock->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
    struct stat sb;
    if (fd < 0)
      return mgen__fail(ctx, MGEN_ERR_IO, "cannot create the lock file %s: %s", lock->path,
                        strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
      close(fd);
      return mgen__fail(ctx, MGEN_ERR_IO, "the lock file %s is not a regular file", lock->path);
    }
    int got = 0;
    for (;;) {
      if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        got = 1;
        break;
      }
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        int e = errno;
        close(fd);
        return mgen__fail(ctx, MGEN_ERR_IO, "cannot lock %s: %s", lock->path, strerror(e));
      }
      if (!still_there(fd, lock->path)) break; /* its holder let go of it: open the new one */
      if (now_s() - start >= timeout) {
        lock_text(fd, text, sizeof text);
        long pid = strncmp(text, LOCK_MAGIC, strlen(LOCK_MAGIC)) == 0
                       ? strtol(text + strlen(LOCK_MAGIC), NULL, 10)
                       : 0;
        close(fd);
        char holder[48] = "";
        if (pid > 0) snprintf(holder, sizeof holder, " (process %ld)", pid);
        return mgen__fail(ctx, MGEN_ERR_IO, "cache %s not saved: another save%s has held its "
                          "lock %s for %.1f s (MGEN_CACHE_LOCK_TIMEOUT sets the wait)", real,
                          holder, lock->path, now_s() - start);
      }
      usleep(nap);
      if (nap < 50000) nap *= 2;
    }
    if (got && still_there(fd, lock->path)) {
      lock->fd = fd;
      break;
    }
    close(fd); /* the lock of a file its holder removed: it guards nothing, try again */
  }
  /* Ours now. Empty (just created, or left by a save that was killed) or ours to reuse; any
   * other content is someone else's file of that name: leave it alone. */
  lock_text(lock->fd, text, sizeof text);
  if (text[0] != '\0' && strncmp(text, LOCK_MAGIC, strlen(LOCK_MAGIC)) != 0) {
    close(lock->fd);
    lock->fd = -1;
    return mgen__fail(ctx, MGEN_ERR_IO, "%s exists and is not an mgen cache lock: not touched "
                      "(remove it if no other program uses it)", lock->path);
  }
  int n = snprintf(text, sizeof text, LOCK_MAGIC "%ld\n", (long)getpid());
  if (ftruncate(lock->fd, 0) != 0 || pwrite(lock->fd, text, (size_t)n, 0) != n) {
    /* Only the holder's name is lost: the lock itself holds. */
  }
  return MGEN_OK;
}

void mgen__cache_unlock(mgen__cache_lock_file *lock) {
  if (lock->fd < 0) return;
  /* Removed while still held, so no other save can take a lock on it meanwhile (one waiting on
   * it sees it gone and opens a new one); removed only if it is still ours. */
  if (still_there(lock->fd, lock->path)) unlink(lock->path);
  close(lock->fd);
  lock->fd = -1;
}

/* ---------------------------------------------------------------- temporaries */

static const char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static int is_alnum(char ch) {
  return ch != '\0' && strchr(kAlnum, ch) != NULL;
}

void mgen__cache_clean_temps(mgen_ctx *ctx, const char *real) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", real);
  char *slash = strrchr(dir, '/');
  const char *base = slash != NULL ? real + (slash - dir) + 1 : real;
  if (slash == NULL) snprintf(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = '\0';
  else *slash = '\0';
  size_t blen = strlen(base);
  DIR *d = opendir(dir);
  if (d == NULL) return;
  const time_t now = time(NULL);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const char *name = e->d_name;
    if (strncmp(name, base, blen) != 0 || strncmp(name + blen, ".tmp.", 5) != 0) continue;
    const char *x = name + blen + 5;
    int ok = strlen(x) == 6;
    for (int i = 0; ok && i < 6; i++) ok = is_alnum(x[i]);
    struct stat sb;
    if (!ok || fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
        now - sb.st_mtime < MGEN__CACHE_STALE_TEMP_S)
      continue;
    if (unlinkat(dirfd(d), name, 0) == 0)
      mgen__log(ctx, MGEN_LOG_WARN, "mgen: cache %s: removed %s/%s, the temporary file of a save "
                "that did not finish", real, dir, name);
  }
  closedir(d);
}

int mgen__cache_temp_open(const char *real, int mode, char tmp[PATH_MAX]) {
  static unsigned long counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)tmp;
  for (int tries = 0; tries < 100; tries++) {
    x += 0x9e3779b97f4a7c15ULL * (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) + 1);
    uint64_t h = x;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    char suffix[7];
    for (int i = 0; i < 6; i++, h /= 62) suffix[i] = kAlnum[h % 62];
    suffix[6] = '\0';
    if (snprintf(tmp, PATH_MAX, "%s.tmp.%s", real, suffix) >= PATH_MAX) {
      errno = ENAMETOOLONG;
      return -1;
    }
    /* 0666: the umask decides a new file's mode, as for any file the process creates. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd >= 0 && mode >= 0) (void)fchmod(fd, (mode_t)mode); /* an existing file's, kept */
    return fd;
  }
  errno = EEXIST;
  return -1;
}
